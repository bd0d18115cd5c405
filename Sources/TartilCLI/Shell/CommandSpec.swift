import TartilCore

/// One command of the command table: its words, help text, arguments, options and what it does. The same table
/// parses argv, `-c` scripts, standard input and REPL lines, and generates every help page.
struct CommandSpec: Sendable {
    /// A positional argument.
    struct Argument: Sendable {
        let name: String
        let help: String
        var repeating = false
        var optional = false

        var usage: String {
            let base = "<\(name)>" + (repeating ? "..." : "")
            return optional ? "[\(base)]" : base
        }
    }

    /// An option: a flag (`--force`) or one that takes a value (`--reciter <id>`).
    struct Option: Sendable {
        let names: [String]
        let valueName: String?
        let help: String
        var required = false
        /// For an option whose value may be left out (`--stepped`, `--stepped window=3`): the next word is its
        /// value only when it starts with this; else the value is empty.
        var optionalValuePrefix: String? = nil
        /// Old spellings still accepted, each with a note on standard error saying what to write instead; never
        /// shown in help, completions or the man page (`render --output FILE` is now `render --to FILE`).
        var formerNames: [String] = []

        /// Whether the option takes a value (given or, for an optional one, left out).
        var takesValue: Bool { valueName != nil }

        var label: String { names.joined(separator: ", ") + (valueName.map { optionalValuePrefix == nil ? " <\($0)>" : " [<\($0)>]" } ?? "") }
        var usage: String {
            let text = names.last! + (valueName.map { optionalValuePrefix == nil ? " <\($0)>" : " [<\($0)>]" } ?? "")
            return required ? text : "[\(text)]"
        }
    }

    /// The words that name the command (`["table", "build"]`).
    let path: [String]
    let overview: String
    var discussion: String? = nil
    var arguments: [Argument] = []
    var options: [Option] = []
    var examples: [String] = []
    /// Hidden from listings (aliases such as `exit`).
    var hidden = false
    /// What the command does; nil for a group that only holds subcommands.
    let run: (@Sendable (Invocation, Context) throws -> Void)?

    var name: String { path.joined(separator: " ") }

    var usage: String {
        var parts = ["tartil"] + path
        parts += arguments.map(\.usage)
        parts += options.map(\.usage)
        return parts.joined(separator: " ")
    }
}

/// A command's parsed words: positional arguments and option values.
struct Invocation: Sendable {
    let command: CommandSpec
    var arguments: [String] = []
    /// Option values by canonical name (the option's last name, e.g. `--reciter`); flags map to "".
    var values: [String: String] = [:]
    /// Notes for standard error from parsing (an option given by a former name).
    var notes: [String] = []

    func value(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { values[name] != nil }

    /// The whole number given to option `name`, checked against `range` (nil when the option is absent).
    func integer(_ name: String, in range: ClosedRange<Int>) throws(TartilError) -> Int? {
        guard let text = value(name) else { return nil }
        return try NumberText.whole(text, in: range, for: name)
    }

    /// The surah given to option `name` as a number or a name (`--surah 36`, `--surah yasin`), through
    /// `ReferenceParser` (nil when the option is absent).
    func surah(_ name: String) throws(TartilError) -> Int? {
        guard let text = value(name) else { return nil }
        do {
            return try ReferenceParser.surah(named: text).number
        } catch {
            throw TartilError.usage("\(name): \(error.message)")
        }
    }

    /// The length of time given to option `name` in any form `DurationText` reads (`90`, `90s`, `1:30`, `2m`),
    /// in seconds, checked against `range` (nil when the option is absent).
    func duration(_ name: String, in range: ClosedRange<Double>) throws(TartilError) -> Double? {
        guard let text = value(name) else { return nil }
        return try DurationText.parse(text, in: range, for: name)
    }

    /// The decimal number given to option `name`, checked against `range` (nil when the option is absent).
    func decimal(_ name: String, in range: ClosedRange<Double>) throws(TartilError) -> Double? {
        guard let text = value(name) else { return nil }
        return try NumberText.decimal(text, in: range, for: name)
    }
}

/// A malformed command line: the message, and the command whose usage line to show.
struct UsageError: Error, Sendable {
    let message: String
    let command: CommandSpec?
}

// MARK: - Parsing

extension CommandSpec {
    /// Parses the words after the command's path. Global options found anywhere are applied to `settings`;
    /// `--` ends options. When `-h`/`--help` is among the words, arity is not checked and the invocation carries
    /// the `--help` flag.
    func parse(_ words: [String], settings: inout Settings) throws(UsageError) -> Invocation {
        var invocation = Invocation(command: self)
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !Self.looksLikeOption(word) {
                invocation.arguments.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            let (name, attached) = Self.splitAttached(word, takesValue: takesValue)
            func takeValue(_ valueName: String) throws(UsageError) -> String {
                if let attached { return attached }
                guard index < words.count else {
                    throw UsageError(message: "\(name) needs a value <\(valueName)>", command: self)
                }
                index += 1
                return words[index - 1]
            }
            if let option = options.first(where: { $0.names.contains(name) || $0.formerNames.contains(name) }) {
                let canonical = option.names.last!
                if option.formerNames.contains(name) {
                    invocation.notes.append("\(self.name) \(name) is now \(option.names.joined(separator: "/")); \(name) still works for now")
                }
                if let prefix = option.optionalValuePrefix {
                    if let attached {
                        invocation.values[canonical] = attached
                    } else if index < words.count && words[index].hasPrefix(prefix) {
                        invocation.values[canonical] = words[index]
                        index += 1
                    } else if index < words.count, let equals = words[index].firstIndex(of: "="),
                        !Suggestion.closest(to: String(words[index][...equals]), among: [prefix]).isEmpty
                    {
                        // `--stepped windw=3`: a misspelt value, not a reference.
                        let meant = prefix + words[index][words[index].index(after: equals)...]
                        throw UsageError(message: "\(name) takes [\(option.valueName ?? "")], not '\(words[index])'; did you mean \(meant)?", command: self)
                    } else {
                        invocation.values[canonical] = ""
                    }
                } else if let valueName = option.valueName {
                    let value = try takeValue(valueName)
                    if value.isEmpty { throw UsageError(message: "\(name) needs a non-empty value", command: self) }
                    invocation.values[canonical] = value
                } else {
                    if attached != nil { throw UsageError(message: "\(name) takes no value", command: self) }
                    invocation.values[canonical] = ""
                }
            } else if let global = GlobalOption.named(name) {
                if global.takesValue {
                    let value = try takeValue(global.valueName)
                    if value.isEmpty { throw UsageError(message: "\(name) needs a non-empty value", command: self) }
                    global.apply(value, &settings)
                } else {
                    if attached != nil { throw UsageError(message: "\(name) takes no value", command: self) }
                    global.apply("", &settings)
                }
            } else if name == "-h" || name == "--help" {
                invocation.values["--help"] = ""
            } else {
                let names = options.flatMap(\.names) + GlobalOption.all.map(\.name) + ["--help"]
                let hint = Suggestion.hint(for: name, among: names)
                let known = (options.flatMap(\.names) + ["--json", "--help"]).joined(separator: ", ")
                throw UsageError(message: "unknown option '\(name)' for '\(self.name)'\(hint) (options: \(known))", command: self)
            }
        }
        if invocation.flag("--help") { return invocation }
        try checkArity(invocation)
        for option in options where option.required && invocation.values[option.names.last!] == nil {
            throw UsageError(message: "\(self.name) needs \(option.names.last!) <\(option.valueName ?? "")>", command: self)
        }
        return invocation
    }

    private func checkArity(_ invocation: Invocation) throws(UsageError) {
        let given = invocation.arguments.count
        let required = arguments.filter { !$0.optional }
        if given < required.count {
            let missing = required[given]
            throw UsageError(message: "\(name) needs <\(missing.name)>: \(missing.help)", command: self)
        }
        let accepts = arguments.contains(where: \.repeating) ? Int.max : arguments.count
        if given > accepts {
            let extra = invocation.arguments[accepts]
            let what = arguments.isEmpty ? "takes no arguments" : "takes \(arguments.map(\.usage).joined(separator: " "))"
            throw UsageError(message: "unexpected argument '\(extra)': \(name) \(what)", command: self)
        }
    }

    /// Whether the option `name` (of this command, or a global one) takes a value.
    func takesValue(_ name: String) -> Bool {
        if let option = options.first(where: { $0.names.contains(name) || $0.formerNames.contains(name) }) { return option.takesValue }
        return GlobalOption.named(name)?.takesValue ?? false
    }

    /// `--x`, `-x` and `--x=v` are options; `-`, `-10` and `-1:30` are values (negative offsets for `seek`).
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !second.isNumber
    }

    /// An option word's name and its attached value, as getopt_long and clap read them: `--name=value`; and for a
    /// short option that takes a value, `-xVALUE` and `-x=VALUE` (`-j4`, `-o/tmp/a.wav`). Anything else is the
    /// name alone (`-jx` for an `-j` that takes no value is the unknown option `-jx`).
    static func splitAttached(_ word: String, takesValue: (String) -> Bool) -> (String, String?) {
        if word.hasPrefix("--") {
            guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
            return (String(word[..<equals]), String(word[word.index(after: equals)...]))
        }
        guard word.hasPrefix("-"), word.count > 2 else { return (word, nil) }
        let short = String(word.prefix(2))
        guard takesValue(short) else { return (word, nil) }
        var value = word.dropFirst(2)
        if value.first == "=" { value = value.dropFirst() }
        return (short, String(value))
    }
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
            help: "The control socket (default: $XDG_RUNTIME_DIR/tartil/control.sock, else /tmp/tartil-UID/control.sock).",
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
}
