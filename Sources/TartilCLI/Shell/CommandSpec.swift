import TartilSession
import TartilCore

/// One command of the command table: its syntax (words, help text, arguments, options; `CommandSyntax`, shared
/// with the control socket) and what it does. The same table parses argv, `-c` scripts, standard input and REPL
/// lines, and generates every help page.
struct CommandSpec: Sendable {
    typealias Argument = CommandSyntax.Argument
    typealias Option = CommandSyntax.Option

    let syntax: CommandSyntax
    /// What the command does; nil for a group that only holds subcommands.
    let run: (@Sendable (Invocation, Context) throws -> Void)?

    init(
        path: [String], overview: String, discussion: @autoclosure @escaping @Sendable () -> String? = nil, arguments: [Argument] = [],
        options: [Option] = [], examples: [String] = [], hidden: Bool = false, run: (@Sendable (Invocation, Context) throws -> Void)?
    ) {
        syntax = CommandSyntax(
            path: path, overview: overview, discussion: discussion(), arguments: arguments, options: options, examples: examples,
            hidden: hidden, isGroup: run == nil)
        self.run = run
    }

    /// A command whose syntax is given (a control verb's, from TartilSession), with `more` options of the CLI's own.
    init(_ syntax: CommandSyntax, adding more: [Option] = [], run: @escaping @Sendable (Invocation, Context) throws -> Void) {
        self.syntax = syntax.adding(more)
        self.run = run
    }

    var path: [String] { syntax.path }
    var overview: String { syntax.overview }
    var discussion: String? { syntax.discussion }
    var arguments: [Argument] { syntax.arguments }
    var options: [Option] { syntax.options }
    var examples: [String] { syntax.examples }
    var hidden: Bool { syntax.hidden }
    var name: String { syntax.name }
    var usage: String { syntax.usage }

    /// Parses the words after the command's path; global options found anywhere are applied to `settings`.
    func parse(_ words: [String], settings: inout Settings) throws(UsageError) -> Invocation {
        let invocation = try syntax.parse(words, globals: GlobalOption.lookup)
        for (name, value) in invocation.globals { GlobalOption.named(name)?.apply(value, &settings) }
        return invocation
    }

    static func looksLikeOption(_ word: String) -> Bool { CommandSyntax.looksLikeOption(word) }

    static func splitAttached(_ word: String, takesValue: (String) -> Bool) -> (String, String?) {
        CommandSyntax.splitAttached(word, takesValue: takesValue)
    }

    /// Whether the option `name` (of this command, or a global one) takes a value.
    func takesValue(_ name: String) -> Bool { syntax.takesValue(name, globals: GlobalOption.lookup) }
}

// MARK: - Global options

/// The options every command accepts, anywhere on its line.
struct GlobalOption: Sendable {
    let name: String
    let valueName: String
    let variable: String?
    let help: String
    let apply: @Sendable (String, inout Settings) -> Void

    var takesValue: Bool { !valueName.isEmpty }
    var label: String { name + (takesValue ? " <\(valueName)>" : "") }

    static let all: [GlobalOption] = [
        GlobalOption(
            name: "--json", valueName: "", variable: nil,
            help: "Print one JSON value per command (streams: one JSON object per line); --format json where a command takes --format.",
            apply: { _, settings in settings.json = true }),
        GlobalOption(
            name: "--mirrors", valueName: "file", variable: "TARTIL_MIRRORS",
            help: "The mirrors file (default: $XDG_CONFIG_HOME/tartil/mirrors.json if present, else the bundled one).",
            apply: { value, settings in settings.mirrorsOption = value }),
        GlobalOption(
            name: "--tables", valueName: "dir", variable: "TARTIL_TABLES",
            help: "The reciter tables directory (default: $XDG_DATA_HOME/tartil/reciter-tables, then the bundled tables).",
            apply: { value, settings in settings.tablesOption = value }),
        GlobalOption(
            name: "--cache-dir", valueName: "dir", variable: "TARTIL_CACHE_DIR",
            help: "The audio cache (default: $XDG_CACHE_HOME/tartil).",
            apply: { value, settings in settings.cacheDirectoryOption = value }),
        GlobalOption(
            name: "--journal", valueName: "file", variable: "TARTIL_JOURNAL",
            help: "The positions journal (default: $XDG_DATA_HOME/tartil/journal.sqlite).",
            apply: { value, settings in settings.journalOption = value }),
        GlobalOption(
            name: "--socket", valueName: "path", variable: "TARTIL_SOCKET",
            help: "The control socket (default: $XDG_RUNTIME_DIR/tartil/control.sock, else /tmp/tartil-UID/control.sock). Its folder must be yours, mode 0700; a folder named here is never made or changed, and only a stale tartil socket is replaced.",
            apply: { value, settings in settings.socketOption = value }),
        GlobalOption(
            name: "--ca-bundle", valueName: "file", variable: "SSL_CERT_FILE",
            help: "Trust the CA certificates in this PEM file for HTTPS downloads instead of the system's (also CURL_CA_BUNDLE; SSL_CERT_DIR adds a directory; verification stays on).",
            apply: { value, settings in settings.caBundleOption = value }),
        GlobalOption(
            name: "--no-mpris", valueName: "", variable: nil,
            help: "Do not appear on the session bus as an MPRIS media player (also TARTIL_MPRIS=0).",
            apply: { _, settings in settings.noMPRIS = true }),
    ]

    static func named(_ name: String) -> GlobalOption? { all.first { $0.name == name } }

    /// The global options as a command's parse looks them up.
    static let lookup = CommandSyntax.GlobalOptions(names: all.map(\.name)) { name in
        named(name).map { ($0.takesValue, $0.valueName) }
    }
}
