/// What a command looks like: the words that name it, its help text, its positional arguments and its options.
/// One syntax parses a command wherever it comes from (argv, `-c`, standard input, the prompt, a request on the
/// control socket), and generates its help, completions and man page entry.
///
/// ```swift
/// let seek = CommandSyntax(path: ["seek"], overview: "Move playback.", arguments: [.init(name: "target", help: "3:20")])
/// let invocation = try seek.parse(["3:20"])     // invocation.arguments == ["3:20"]
/// ```
public struct CommandSyntax: Sendable {
    /// A positional argument.
    public struct Argument: Sendable {
        public let name: String
        public let help: String
        public var repeating = false
        public var optional = false

        public init(name: String, help: String, repeating: Bool = false, optional: Bool = false) {
            self.name = name
            self.help = help
            self.repeating = repeating
            self.optional = optional
        }

        public var usage: String {
            let base = "<\(name)>" + (repeating ? "..." : "")
            return optional ? "[\(base)]" : base
        }
    }

    /// An option: a flag (`--force`) or one that takes a value (`--reciter <id>`).
    public struct Option: Sendable {
        public let names: [String]
        public let valueName: String?
        public let help: String
        public var required = false
        /// For an option whose value may be left out (`--stepped`, `--stepped window=3`): the next word is its
        /// value only when it starts with this; else the value is empty.
        public var optionalValuePrefix: String? = nil
        /// Old spellings still accepted, each with a note on standard error saying what to write instead; never
        /// shown in help, completions or the man page (`render --output FILE` is now `render --to FILE`).
        public var formerNames: [String] = []

        public init(
            names: [String], valueName: String?, help: String, required: Bool = false, optionalValuePrefix: String? = nil,
            formerNames: [String] = []
        ) {
            self.names = names
            self.valueName = valueName
            self.help = help
            self.required = required
            self.optionalValuePrefix = optionalValuePrefix
            self.formerNames = formerNames
        }

        /// Whether the option takes a value (given or, for an optional one, left out).
        public var takesValue: Bool { valueName != nil }

        /// The option's canonical name (its last), under which `Invocation.values` keeps its value.
        public var canonical: String { names.last! }

        public var label: String {
            names.joined(separator: ", ") + (valueName.map { optionalValuePrefix == nil ? " <\($0)>" : " [<\($0)>]" } ?? "")
        }

        public var usage: String {
            let text = names.last! + (valueName.map { optionalValuePrefix == nil ? " <\($0)>" : " [<\($0)>]" } ?? "")
            return required ? text : "[\(text)]"
        }
    }

    /// What a parse does with an option that is not the command's own: one of the global options (`--json`,
    /// `--journal FILE`…) taking a value or not, or none (an unknown option, a usage error).
    public struct GlobalOptions: Sendable {
        /// The global options' names, each with whether it takes a value (and its value's name).
        public let lookup: @Sendable (String) -> (takesValue: Bool, valueName: String)?
        /// Every global option's name, for did-you-mean.
        public let names: [String]

        public init(names: [String], lookup: @escaping @Sendable (String) -> (takesValue: Bool, valueName: String)?) {
            self.names = names
            self.lookup = lookup
        }

        /// None: the control socket takes a command's own options only.
        public static let none = GlobalOptions(names: []) { _ in nil }
    }

    /// The words that name the command (`["table", "build"]`).
    public let path: [String]
    public let overview: String
    /// The help page's text, made each time it is asked for (help, the man page), not when the command table is
    /// built: many discussions spell out tables (keys, fields, plan forms), and making them all cost every start
    /// of tartil about 1.5 million instructions, a third of a short command's whole run.
    public var discussion: String? { makeDiscussion() }
    private let makeDiscussion: @Sendable () -> String?
    public var arguments: [Argument] = []
    public var options: [Option] = []
    public var examples: [String] = []
    /// Hidden from listings (aliases such as `exit`).
    public var hidden = false
    /// A group such as `table`, which only holds subcommands.
    public var isGroup = false

    public init(
        path: [String], overview: String, discussion: @autoclosure @escaping @Sendable () -> String? = nil, arguments: [Argument] = [],
        options: [Option] = [], examples: [String] = [], hidden: Bool = false, isGroup: Bool = false
    ) {
        self.path = path
        self.overview = overview
        self.makeDiscussion = discussion
        self.arguments = arguments
        self.options = options
        self.examples = examples
        self.hidden = hidden
        self.isGroup = isGroup
    }

    public var name: String { path.joined(with: " ") }

    public var usage: String {
        var parts = ["tartil"] + path
        parts += arguments.map(\.usage)
        parts += options.map(\.usage)
        return parts.joined(separator: " ")
    }

    /// This syntax with `more` options after its own (a front end's own options: `--format`, `--output`…).
    public func adding(_ more: [Option]) -> CommandSyntax {
        var syntax = self
        syntax.options += more
        return syntax
    }

    /// This syntax without the options named (what the control socket does not take from another process).
    public func removing(_ names: Set<String>) -> CommandSyntax {
        var syntax = self
        syntax.options.removeAll { !names.isDisjoint(with: $0.names) }
        return syntax
    }
}

/// A command's parsed words: positional arguments and option values.
public struct Invocation: Sendable {
    public let command: CommandSyntax
    public var arguments: [String] = []
    /// Option values by canonical name (the option's last name, e.g. `--reciter`); flags map to "".
    public var values = OptionValues()
    /// Global options found among the words, in order, with their values ("" for a flag).
    public var globals: [(name: String, value: String)] = []
    /// Notes for standard error from parsing (an option given by a former name).
    public var notes: [String] = []

    public init(command: CommandSyntax, arguments: [String] = [], values: OptionValues = [:]) {
        self.command = command
        self.arguments = arguments
        self.values = values
    }

    public func value(_ name: String) -> String? { values[name] }
    public func flag(_ name: String) -> Bool { values[name] != nil }

    /// The whole number given to option `name`, checked against `range` (nil when the option is absent).
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(TartilError) -> Int? {
        guard let text = value(name) else { return nil }
        return try NumberText.whole(text, in: range, for: name)
    }

    /// The surah given to option `name` as a number or a name (`--surah 36`, `--surah yasin`), through
    /// `ReferenceParser` (nil when the option is absent).
    public func surah(_ name: String) throws(TartilError) -> Int? {
        guard let text = value(name) else { return nil }
        do {
            return try ReferenceParser.surah(named: text).number
        } catch {
            throw TartilError.usage("\(name): \(error.message)")
        }
    }

    /// The length of time given to option `name` in any form `DurationText` reads (`90`, `90s`, `1:30`, `2m`),
    /// in seconds, checked against `range` (nil when the option is absent).
    public func duration(_ name: String, in range: ClosedRange<Double>) throws(TartilError) -> Double? {
        guard let text = value(name) else { return nil }
        return try DurationText.parse(text, in: range, for: name)
    }

    /// The decimal number given to option `name`, checked against `range` (nil when the option is absent).
    public func decimal(_ name: String, in range: ClosedRange<Double>) throws(TartilError) -> Double? {
        guard let text = value(name) else { return nil }
        return try NumberText.decimal(text, in: range, for: name)
    }

    /// The words that give this invocation again (its own options in a fixed order, then `--`, then its
    /// arguments), leaving out the options named in `dropping`: what a client sends for a command the control
    /// socket parses again with the same syntax.
    public func words(dropping: [String] = []) -> [String] {
        var words = command.path
        for option in command.options where !dropping.contains(option.canonical) {
            guard let value = values[option.canonical] else { continue }
            if option.takesValue && (option.optionalValuePrefix == nil || !value.isEmpty) {
                words.append(option.canonical + "=" + value)
            } else {
                words.append(option.canonical)
            }
        }
        if !arguments.isEmpty { words += ["--"] + arguments }
        return words
    }
}

/// A malformed command line: the message, and the command whose usage line to show.
public struct UsageError: Error, Sendable {
    public let message: String
    public let command: CommandSyntax?

    public init(message: String, command: CommandSyntax?) {
        self.message = message
        self.command = command
    }
}

// MARK: - Parsing

extension CommandSyntax {
    /// Parses the words after the command's path. Global options found anywhere are kept in
    /// `Invocation.globals`; `--` ends options. When `-h`/`--help` is among the words, arity is not checked and the
    /// invocation carries the `--help` flag.
    public func parse(_ words: [String], globals: GlobalOptions = .none) throws(UsageError) -> Invocation {
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
            let (name, attached) = Self.splitAttached(word) { takesValue($0, globals: globals) }
            func takeValue(_ valueName: String) throws(UsageError) -> String {
                if let attached { return attached }
                guard index < words.count else {
                    throw UsageError(message: "\(name) needs a value <\(valueName)>", command: self)
                }
                index += 1
                return words[index - 1]
            }
            if let option = options.first(where: { $0.names.contains(name) || $0.formerNames.contains(name) }) {
                let canonical = option.canonical
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
            } else if let global = globals.lookup(name) {
                if global.takesValue {
                    let value = try takeValue(global.valueName)
                    if value.isEmpty { throw UsageError(message: "\(name) needs a non-empty value", command: self) }
                    invocation.globals.append((name, value))
                } else {
                    if attached != nil { throw UsageError(message: "\(name) takes no value", command: self) }
                    invocation.globals.append((name, ""))
                }
            } else if name == "-h" || name == "--help" {
                invocation.values["--help"] = ""
            } else {
                let names = options.flatMap(\.names) + globals.names + ["--help"]
                let hint = Suggestion.hint(for: name, among: names)
                let known = (options.flatMap(\.names) + (globals.names.contains("--json") ? ["--json"] : []) + ["--help"])
                    .joined(separator: ", ")
                throw UsageError(message: "unknown option '\(name.prefix(80))' for '\(self.name)'\(hint) (options: \(known))", command: self)
            }
        }
        if invocation.flag("--help") { return invocation }
        try checkArity(invocation)
        for option in options where option.required && invocation.values[option.canonical] == nil {
            throw UsageError(message: "\(self.name) needs \(option.canonical) <\(option.valueName ?? "")>", command: self)
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
            throw UsageError(message: "unexpected argument '\(extra.prefix(80))': \(name) \(what)", command: self)
        }
    }

    /// Whether the option `name` (of this command, or a global one) takes a value.
    public func takesValue(_ name: String, globals: GlobalOptions = .none) -> Bool {
        if let option = options.first(where: { $0.names.contains(name) || $0.formerNames.contains(name) }) { return option.takesValue }
        return globals.lookup(name)?.takesValue ?? false
    }

    /// `--x`, `-x` and `--x=v` are options; `-`, `-10` and `-1:30` are values (negative offsets for `seek`).
    public static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !second.isNumber
    }

    /// An option word's name and its attached value, as getopt_long and clap read them: `--name=value`; and for a
    /// short option that takes a value, `-xVALUE` and `-x=VALUE` (`-j4`, `-o/tmp/a.wav`). Anything else is the
    /// name alone (`-jx` for an `-j` that takes no value is the unknown option `-jx`).
    public static func splitAttached(_ word: String, takesValue: (String) -> Bool) -> (String, String?) {
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

/// A command line's option values by name, in the order given, each name once (a name given again replaces its
/// value). A handful of names, found by comparing them: not a `[String: String]`, whose first instantiation in a
/// process costs a scan of every protocol conformance in the binary (see `Array.joined(with:)`).
public struct OptionValues: Sendable, ExpressibleByDictionaryLiteral {
    private var entries: [(name: String, value: String)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    public subscript(_ name: String) -> String? {
        get { entries.first { $0.name == name }?.value }
        set {
            let index = entries.firstIndex { $0.name == name }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((name: name, value: value))
            case (nil, nil): break
            }
        }
    }

    /// The names given, in order.
    public var names: [String] { entries.map(\.name) }
    public var isEmpty: Bool { entries.isEmpty }
}
