import TartilSession
import TartilCore

/// Every command tartil understands, in the order help lists them. Each is made when it is first asked for (its
/// syntax, options and help are static lets): a run of tartil makes only the command it runs, not the sixty-odd
/// of the whole table (which `help`, completions and the man page make). `CommandTableTests` checks that each
/// entry's path is its command's.
struct CommandTable: Sendable {
    /// A command's path and how to get its spec.
    struct Entry: Sendable {
        let path: [String]
        let spec: @Sendable () -> CommandSpec

        init(_ path: [String], _ spec: @escaping @Sendable () -> CommandSpec) {
            self.path = path
            self.spec = spec
        }
    }
    let entries: [Entry]

    /// Every command, made.
    var commands: [CommandSpec] { entries.map { $0.spec() } }

    static let standard = CommandTable(entries: [
        .init(["help"]) { InfoCommands.help },
        .init(["version"]) { InfoCommands.version },
        .init(["surahs"]) { InfoCommands.surahs },
        .init(["reciters"]) { InfoCommands.reciters },
        .init(["resolve"]) { ResolveCommand.resolve },
        .init(["play"]) { PlayCommands.play },
        .init(["resume"]) { PlayCommands.resume },
        .init(["render"]) { PlayCommands.render },
        .init(["pause"]) { PlayCommands.pause },
        .init(["toggle"]) { PlayCommands.toggle },
        .init(["stop"]) { PlayCommands.stop },
        .init(["next"]) { PlayCommands.next },
        .init(["prev"]) { PlayCommands.prev },
        .init(["seek"]) { PlayCommands.seek },
        .init(["set"]) { PlayCommands.set },
        .init(["loop"]) { PlayCommands.loop },
        .init(["sleep"]) { PlayCommands.sleep },
        .init(["stop-after"]) { PlayCommands.stopAfter },
        .init(["speed"]) { PlayCommands.speed },
        .init(["volume"]) { PlayCommands.volume },
        .init(["status"]) { PlayCommands.status },
        .init(["wait"]) { PlayCommands.wait },
        .init(["events"]) { PlayCommands.events },
        .init(["watch"]) { PlayCommands.watch },
        .init(["positions"]) { JournalCommands.positions },
        .init(["history"]) { JournalCommands.history },
        .init(["bookmark"]) { JournalCommands.bookmark },
        .init(["bookmark", "rm"]) { JournalCommands.bookmarkRemove },
        .init(["bookmark", "note"]) { JournalCommands.bookmarkNote },
        .init(["bookmarks"]) { JournalCommands.bookmarks },
        .init(["hifz"]) { HifzCommands.group },
        .init(["hifz", "plan"]) { HifzCommands.plan },
        .init(["hifz", "today"]) { HifzCommands.today },
        .init(["hifz", "play"]) { HifzCommands.play },
        .init(["hifz", "status"]) { HifzCommands.status },
        .init(["hifz", "mark"]) { HifzCommands.mark },
        .init(["prefetch"]) { PrefetchCommand.prefetch },
        .init(["cache"]) { CacheCommands.group },
        .init(["cache", "ls"]) { CacheCommands.ls },
        .init(["cache", "du"]) { CacheCommands.du },
        .init(["cache", "verify"]) { CacheCommands.verify },
        .init(["cache", "choose"]) { CacheCommands.choose },
        .init(["cache", "pin"]) { CacheCommands.pin },
        .init(["cache", "unpin"]) { CacheCommands.unpin },
        .init(["cache", "import"]) { CacheCommands.importFiles },
        .init(["journal"]) { JournalCommands.group },
        .init(["journal", "export"]) { JournalCommands.export },
        .init(["journal", "merge"]) { JournalCommands.merge },
        .init(["journal", "sync"]) { JournalCommands.sync },
        .init(["journal", "backup"]) { JournalCommands.backup },
        .init(["journal", "stats"]) { JournalCommands.stats },
        .init(["journal", "check"]) { JournalCommands.check },
        .init(["table"]) { TableCommands.group },
        .init(["table", "build"]) { TableCommands.build },
        .init(["table", "relearn"]) { TableCommands.relearn },
        .init(["completions"]) { CompletionCommands.completions },
        .init(["manpage"]) { CompletionCommands.manpage },
        .init(["quit"]) { InfoCommands.quit },
        .init(["exit"]) { InfoCommands.exit },
    ])

    /// The command named by the longest prefix of `words`, and how many words named it.
    func find(_ words: [String]) -> (CommandSpec, Int)? {
        var best: Entry?
        for entry in entries where entry.path.count <= words.count && entry.path.count > (best?.path.count ?? 0) {
            if words.starts(with: entry.path) { best = entry }
        }
        return best.map { ($0.spec(), $0.path.count) }
    }

    /// The commands directly below `command` (`table build` below `table`).
    func subcommands(of command: CommandSpec) -> [CommandSpec] {
        entries.filter { $0.path.count == command.path.count + 1 && $0.path.starts(with: command.path) }.map { $0.spec() }
    }

    /// Names of the top-level commands, for "unknown command" messages.
    var topLevelNames: [String] { commands.filter { $0.path.count == 1 && !$0.hidden }.map(\.name) }
}
