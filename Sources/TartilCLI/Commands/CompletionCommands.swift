import TartilSession
import TartilCore

/// `tartil completions` and `tartil manpage`: generated from the command table (Shell/Completions.swift,
/// Shell/ManPage.swift).
enum CompletionCommands {
    static let completions = CommandSpec(
        path: ["completions"], overview: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, options, option values, surah names and reciter ids; reciter ids come \
            from 'tartil completions --list reciters' when you press Tab, so your mirrors.json is honoured.
            bash: tartil completions bash > ~/.local/share/bash-completion/completions/tartil
            zsh:  add 'source <(tartil completions zsh)' to ~/.zshrc, after compinit
            fish: tartil completions fish > ~/.config/fish/completions/tartil.fish
            """,
        arguments: [.init(name: "bash|zsh|fish", help: "The shell.", optional: true)],
        options: [
            .init(names: ["--list"], valueName: "reciters|surahs",
                  help: "Print the reciter ids or the surah names one per line instead (what the scripts call)."),
        ],
        examples: ["tartil completions bash > ~/.local/share/bash-completion/completions/tartil", "tartil completions --list reciters"],
        run: { invocation, context in
            if let list = invocation.value("--list") {
                guard invocation.arguments.isEmpty else { throw TartilError.usage("completions --list takes no shell") }
                switch list {
                case "reciters":
                    let library = try context.library()
                    context.console.writeOut(library.reciters.map { $0.id.rawValue + "\n" }.joined())
                case "surahs":
                    context.console.writeOut(Completions.surahWords.map { $0 + "\n" }.joined())
                default:
                    throw Suggestion.unknownValue(list, for: "--list", among: ["reciters", "surahs"])
                }
                return
            }
            guard let shell = invocation.arguments.first else {
                throw TartilError.usage("completions needs a shell: bash, zsh or fish")
            }
            guard let script = Completions.script(for: shell, context.table) else {
                throw Suggestion.unknownValue(shell, for: "completions", among: ["bash", "zsh", "fish"])
            }
            context.console.writeOut(script)
        })

    static let manpage = CommandSpec(
        path: ["manpage"], overview: "Print the tartil(1) man page (roff), generated from the same table as help.",
        examples: ["tartil manpage > ~/.local/share/man/man1/tartil.1"],
        run: { _, context in context.console.writeOut(ManPage.render(context.table)) })
}
