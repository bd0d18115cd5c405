import TartilSession
import TartilCore

/// Every command tartil understands, in the order help lists them.
struct CommandTable: Sendable {
    let commands: [CommandSpec]

    static let standard = CommandTable(commands: [
        InfoCommands.help,
        InfoCommands.version,
        InfoCommands.surahs,
        InfoCommands.reciters,
        ResolveCommand.resolve,
        PlayCommands.play,
        PlayCommands.resume,
        PlayCommands.render,
        PlayCommands.pause,
        PlayCommands.toggle,
        PlayCommands.stop,
        PlayCommands.next,
        PlayCommands.prev,
        PlayCommands.seek,
        PlayCommands.set,
        PlayCommands.loop,
        PlayCommands.sleep,
        PlayCommands.stopAfter,
        PlayCommands.speed,
        PlayCommands.volume,
        PlayCommands.status,
        PlayCommands.wait,
        PlayCommands.events, PlayCommands.watch,
        JournalCommands.positions,
        JournalCommands.history,
        JournalCommands.bookmark,
        JournalCommands.bookmarkRemove,
        JournalCommands.bookmarkNote,
        JournalCommands.bookmarks,
        HifzCommands.group,
        HifzCommands.plan,
        HifzCommands.today,
        HifzCommands.play,
        HifzCommands.status,
        HifzCommands.mark,
        PrefetchCommand.prefetch,
        CacheCommands.group,
        CacheCommands.ls,
        CacheCommands.du,
        CacheCommands.verify,
        CacheCommands.choose,
        CacheCommands.pin,
        CacheCommands.unpin,
        CacheCommands.importFiles,
        JournalCommands.group,
        JournalCommands.export,
        JournalCommands.merge,
        JournalCommands.sync,
        JournalCommands.backup,
        JournalCommands.stats,
        JournalCommands.check,
        TableCommands.group,
        TableCommands.build,
        CompletionCommands.completions,
        CompletionCommands.manpage,
        InfoCommands.quit,
        InfoCommands.exit,
    ])

    /// The command named by the longest prefix of `words`, and how many words named it.
    func find(_ words: [String]) -> (CommandSpec, Int)? {
        var best: (CommandSpec, Int)?
        for command in commands where command.path.count <= words.count {
            if Array(words.prefix(command.path.count)) == command.path, command.path.count > (best?.1 ?? 0) {
                best = (command, command.path.count)
            }
        }
        return best
    }

    /// The commands directly below `command` (`table build` below `table`).
    func subcommands(of command: CommandSpec) -> [CommandSpec] {
        commands.filter { $0.path.count == command.path.count + 1 && Array($0.path.prefix(command.path.count)) == command.path }
    }

    /// Names of the top-level commands, for "unknown command" messages.
    var topLevelNames: [String] { commands.filter { $0.path.count == 1 && !$0.hidden }.map(\.name) }
}
