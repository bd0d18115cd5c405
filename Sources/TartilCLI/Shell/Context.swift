import TartilCore
import TartilPlayer

/// What a running command may use: the settings in force for it, the console, and the loaded reciter library.
struct Context: Sendable {
    let settings: Settings
    let console: Console
    let table: CommandTable

    /// Loads `mirrors.json` and locates the tables as the settings say.
    func library() throws(TartilError) -> ReciterLibrary {
        let mirrors = try settings.mirrorsFile()
        return try ReciterLibrary(mirrorsFile: mirrors.path, tableDirectories: settings.tableDirectories)
    }

    /// The reciter named by `--reciter` (or `TARTIL_RECITER`), validated.
    func reciterID(_ invocation: Invocation) throws(TartilError) -> ReciterID {
        guard let text = invocation.value("--reciter") ?? settings.defaultReciter else {
            throw .usage("\(invocation.command.name) needs --reciter <id> (or TARTIL_RECITER); `tartil reciters` lists them")
        }
        return try ReciterID(text)
    }
}
