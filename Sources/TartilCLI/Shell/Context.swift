import FoundationEssentials
import Glibc
import TartilCore
import TartilPlayer

/// What a running command may use: the settings in force for it, the console, and the loaded reciter library.
struct Context: Sendable {
    let settings: Settings
    let console: Console
    let table: CommandTable
    /// The player this prompt or script controls.
    let session: PlaybackSession
    /// True when tartil runs one command from its arguments: `play` then blocks until playback ends.
    let blocking: Bool
    /// True at the interactive prompt: control commands print the status line once they took effect.
    var interactive = false
    /// True when standard input is a terminal: `play` then reads keys.
    var inputIsTerminal = false

    /// Loads `mirrors.json` and locates the tables as the settings say.
    func library() throws(TartilError) -> ReciterLibrary {
        let mirrors = try settings.mirrorsFile()
        if let tables = settings.explicitTablesDirectory {
            var isDirectory = false
            if !FileManager.default.fileExists(atPath: tables, isDirectory: &isDirectory) {
                throw TartilError(.usage, "the tables directory \(tables) does not exist (--tables or TARTIL_TABLES)")
            }
            // A file here would silently pin nothing: every ayah would be trusted on first use.
            guard isDirectory else {
                throw TartilError(.usage, "--tables takes a directory of reciter tables, and \(tables) is a file (--tables or TARTIL_TABLES)")
            }
        }
        var mirrorsIsDirectory = false
        if FileManager.default.fileExists(atPath: mirrors.path, isDirectory: &mirrorsIsDirectory), mirrorsIsDirectory {
            throw TartilError(.usage, "\(mirrors.path) (from \(mirrors.source)) is a directory: give the path of a mirrors.json")
        }
        do {
            return try ReciterLibrary(mirrorsFile: mirrors.path, tableDirectories: settings.tableDirectories)
        } catch where error.code == .notFound && mirrors.source != "bundled" && mirrors.source != "user" {
            // A file the user named that is not there is bad input, not a failure of tartil's own files.
            throw TartilError(.usage, "\(mirrors.path) (from \(mirrors.source)) does not exist: give the path of a mirrors.json")
        }
    }

    /// The reciter named by `--reciter` (or the default reciter), as mirrors.json spells its id: any case, a
    /// unique prefix of an id or words of a name select one.
    func reciterID(_ invocation: Invocation) throws(TartilError) -> ReciterID {
        guard let text = invocation.value("--reciter") ?? settings.defaultReciter else {
            throw .usage("\(invocation.command.name) needs --reciter <id> (or a default reciter: TARTIL_RECITER, or reciter= in the config file); `tartil reciters` lists them")
        }
        return try library().reciter(named: text).id
    }
}
