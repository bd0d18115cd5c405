import Glibc
import Synchronization
import TartilCore
import TartilSession
import TartilSystem

/// A source of command lines: the prompt (with line editing) or standard input.
public protocol LineSource {
    /// The next line, or nil at the end (Ctrl-D, end of input).
    func next(prompt: String) -> LineInput?
}

/// A line read, or one over the limit (refused whole).
public enum LineInput: Equatable, Sendable {
    case text(String)
    case tooLong(bytes: Int)
}

/// An exit code whose reason was already reported.
public struct ExitCodeError: Error {
    public let code: Int32
}

/// tartil's command language: one command table serving argv, `-c "…; …"`, a script on standard input and the
/// interactive prompt. It parses each command, runs it against the session and renders its result; the shell
/// (TartilShell) hosts it in a process and a terminal (signals, the prompt's line editing, keys).
public final class CommandRunner: Sendable {
    let table: CommandTable
    public let console: Console
    /// Whether standard input is a terminal (`play` from the command line then reads keys).
    let inputIsTerminal: Bool
    /// The session the commands of one prompt or script share (and the control socket serves).
    public let session: Session
    /// Where `events on` prints.
    let events = EventsOutput()
    /// The host's ways: interrupts, the prompt, following playback.
    let frontEnd: FrontEnd

    public init(console: Console, inputIsTerminal: Bool, frontEnd: FrontEnd, session: Session = Session()) {
        table = .standard
        self.console = console
        self.inputIsTerminal = inputIsTerminal
        self.frontEnd = frontEnd
        self.session = session
    }

    /// The settings the environment and the config file give (the bundled data found beside `executablePath`),
    /// or the exit code of what was wrong with them (reported).
    public func settings(environment: Environment, executablePath: String?) throws(ExitCodeError) -> Settings {
        let dataDirectory = Settings.findBundledDataDirectory(environment: environment, executablePath: executablePath)
        var settings = Settings(environment: environment, bundledDataDirectory: dataDirectory)
        do {
            settings.config = try settings.loadConfig()
            if let config = settings.config, let output = config.value("output"), OutputChoice.parse(output, device: "default") == nil {
                throw TartilError.usage(
                    "\(config.location("output")): output takes \(OutputChoice.forms), not '\(output)'" + Suggestion.hint(for: output, among: OutputChoice.names))
            }
        } catch {
            throw ExitCodeError(code: ExitStatus.report(error, command: nil, console: console))
        }
        return settings
    }

    /// Runs `arguments` (without the program name): leading global options, then `-c SCRIPT`, a command, or
    /// (none) the lines `lines` gives (the prompt on a terminal, else standard input). Returns the exit code.
    public func main(arguments: [String], settings given: Settings, lines: (Settings) -> any LineSource) -> Int32 {
        var settings = given
        // Leading options: the global ones, -c, --help and --version.
        var script: String?
        var index = 0
        while index < arguments.count, CommandSpec.looksLikeOption(arguments[index]) {
            let (name, attached) = CommandSpec.splitAttached(arguments[index]) { $0 == "-c" || GlobalOption.named($0)?.takesValue == true }
            index += 1
            switch name {
            case "--":
                break
            case "-h", "--help":
                return execute(["help"] + arguments[index...], settings: settings)
            case "--version":
                return execute(["version"], settings: settings)
            case "-c":
                if let attached {
                    script = attached
                    continue
                }
                guard index < arguments.count else {
                    return ExitStatus.report(UsageError(message: "-c needs a value <commands>", command: nil), command: nil, console: console)
                }
                script = arguments[index]
                index += 1
            default:
                guard let option = GlobalOption.named(name) else {
                    let leading = GlobalOption.all.map(\.name) + ["-c", "--help", "--version"]
                    let hint = Suggestion.hint(for: name, among: leading)
                    return ExitStatus.report(
                        UsageError(
                            message: "unknown option '\(name)'\(hint) (before a command: \(leading.joined(separator: ", ")); a command's own options come after it)",
                            command: nil),
                        command: nil, console: console)
                }
                if !option.takesValue && attached != nil {
                    return ExitStatus.report(UsageError(message: "\(name) takes no value", command: nil), command: nil, console: console)
                }
                var value = attached ?? ""
                if option.takesValue && attached == nil {
                    guard index < arguments.count, !arguments[index].isEmpty else {
                        return ExitStatus.report(
                            UsageError(message: "\(name) needs a value <\(option.valueName)>", command: nil),
                            command: nil, console: console)
                    }
                    value = arguments[index]
                    index += 1
                }
                option.apply(value, &settings)
            }
            if name == "--" { break }
        }
        let words = Array(arguments[index...])

        if let script {
            guard words.isEmpty else {
                return ExitStatus.report(
                    UsageError(message: "-c takes its commands as one argument; unexpected '\(words[0])'", command: nil),
                    command: nil, console: console)
            }
            return runScript(script, settings: settings)
        }
        if !words.isEmpty {
            return execute(words, settings: settings)
        }
        return runLines(lines(settings), interactive: inputIsTerminal, settings: settings)
    }

    /// What Tab completes at the prompt for `line` with the cursor at `cursor` (characters).
    public func promptCompletions(line: String, cursor: Int, settings: Settings) -> PromptCompletionAnswer {
        nonisolated(unsafe) var reciters: [String]?
        return Completions.prompt(line: line, cursor: cursor, table: table, reciters: {
            if let reciters { return reciters }
            let ids = (try? settings.library())?.reciters.map(\.id.rawValue) ?? []
            reciters = ids
            return ids
        })
    }

    /// The outcome of one command.
    enum Outcome: Equatable {
        case finished(Int32)
        case quit
    }

    /// Runs one command given as words; returns its exit code (`quit` counts as success).
    func execute(_ words: [String], settings: Settings) -> Int32 {
        defer {
            session.flushJournal()
            events.drain()
        }
        switch run(words, settings: settings, blocking: true) {
        case .finished(let code): return code
        case .quit: return ExitStatus.success
        }
    }

    /// `-c "a; b; c"`: runs the commands in order and stops at the first that fails, returning its code.
    func runScript(_ script: String, settings: Settings) -> Int32 {
        let commands: [[String]]
        do {
            commands = try CommandLineSplitter.split(script)
        } catch {
            return reportLineError(error, settings: settings)
        }
        for words in commands {
            switch run(words, settings: settings) {
            case .finished(let code) where code != ExitStatus.success:
                session.stopAndWait()
                return code
            case .finished: continue
            case .quit:
                session.stopAndWait()
                return ExitStatus.success
            }
        }
        return waitForPlayback(settings: settings) ?? ExitStatus.success
    }

    /// A script that ends while playback goes on waits for it, as if it ended with `wait`; returns the failure
    /// of that playback (skipped ayat, Ctrl-C), if any.
    private func waitForPlayback(settings: Settings) -> Int32? {
        guard session.lastStatus != nil else { return nil }
        defer { session.flushJournal() }
        let context = Context(
            settings: settings, console: console, table: table, session: session, events: events, blocking: false, frontEnd: frontEnd)
        do {
            try frontEnd.follow(context, false, false)
            events.drain()
            try PlayCommands.checkEnd(session.lastStatus, context)
            if let loss = session.journalLosses() { throw loss }
            return nil
        } catch {
            return ExitStatus.report(error, command: nil, console: console)
        }
    }

    /// The prompt (interactive) or a script on standard input: every line runs, errors are reported and the next
    /// line runs. Returns 0 when every command succeeded, else the first failure's code (130 if interrupted).
    func runLines(_ reader: any LineSource, interactive: Bool, settings: Settings) -> Int32 {
        var firstFailure: Int32?
        if interactive {
            console.writeError("tartil \(Help.version) — type 'help' for commands, 'quit' or Ctrl-D to leave.\n")
        }
        // The number of the line being run, for errors in a script (not at the prompt).
        var lineNumber = 0
        while true {
            frontEnd.setAtPrompt(interactive)
            let line = reader.next(prompt: "tartil> ")
            lineNumber += 1
            let scriptLine = interactive ? nil : lineNumber
            frontEnd.setAtPrompt(false)
            if frontEnd.isCancelled() {
                frontEnd.resetInterrupt()
                // Ctrl-C at the prompt abandons the line; in a script it ends tartil.
                if !interactive {
                    session.stopAndWait()
                    return ExitStatus.interrupted
                }
                continue
            }
            guard let line else { break }
            let commands: [[String]]
            do throws(CommandLineError) {
                switch line {
                case .text(let text): commands = try CommandLineSplitter.split(text)
                case .tooLong(let bytes): throw CommandLineSplitter.tooLong(bytes: bytes)
                }
            } catch {
                let code = reportLineError(error, settings: settings, line: scriptLine)
                if !interactive { firstFailure = firstFailure ?? code }
                continue
            }
            for words in commands {
                switch run(words, settings: settings, interactive: interactive, line: scriptLine) {
                case .quit:
                    session.stopAndWait()
                    return firstFailure ?? ExitStatus.success
                case .finished(let code):
                    if code != ExitStatus.success && firstFailure == nil && !interactive { firstFailure = code }
                    if code == ExitStatus.interrupted {
                        if !interactive {
                            session.stopAndWait()
                            return code
                        }
                        frontEnd.resetInterrupt()  // Ctrl-C ended that command (a `wait`); the prompt goes on
                    }
                }
            }
        }
        if interactive {
            // Leaving the prompt (Ctrl-D) ends playback with it.
            console.writeError("\n")
            session.stopAndWait()
            return firstFailure ?? ExitStatus.success
        }
        let playback = waitForPlayback(settings: settings)
        return firstFailure ?? playback ?? ExitStatus.success
    }

    /// A line that could not be split: the message (and with --json its JSON value); returns the exit code.
    private func reportLineError(_ error: CommandLineError, settings: Settings, line: Int? = nil) -> Int32 {
        let code = ExitStatus.report(error, command: nil, console: console, line: line)
        if settings.json { console.json(.object(Self.errorFields(error.message, code: code, line: line))) }
        return code
    }

    /// The JSON object of a failed command: `error`, `exit_code`, and `line` in a script.
    static func errorFields(_ message: String, code: Int32, line: Int?) -> [(String, JSONValue)] {
        [("error", .string(message)), ("exit_code", .int(Int(code)))] + (line.map { [("line", .int($0))] } ?? [])
    }

    /// Finds, parses and runs one command; `line` is its line in a script on standard input, for messages.
    func run(_ words: [String], settings: Settings, blocking: Bool = false, interactive: Bool = false, line: Int? = nil) -> Outcome {
        // With --json, a failed command prints its one JSON value too: the error and the exit code.
        let json = settings.json || OutputFormat.asksForJSON(words)
        // Whether the command printed on standard output (its JSON value, when it has one before failing).
        // (A Monitor, not an Atomic<Bool> or a Mutex, which instantiate Atomic's generic type at the first start:
        // see `Array.joined(with:)` on what that costs.)
        let printed = Monitor(false)
        let console = Console(
            writeOut: { [console] text in
                printed.update { $0 = true }
                console.writeOut(text)
            },
            writeError: self.console.writeError, errorIsTerminal: self.console.errorIsTerminal,
            outputIsTerminal: self.console.outputIsTerminal, outputDescriptor: self.console.outputDescriptor,
            columns: self.console.columnsOf)
        func failed(_ error: any Error, _ command: CommandSpec?) -> Outcome {
            let code = ExitStatus.report(error, command: command, console: console, line: line)
            if json && !printed.read({ $0 }) {
                console.json(.object(Self.errorFields(ExitStatus.describe(error).1, code: code, line: line)))
            }
            return .finished(code)
        }
        guard let (found, used) = table.find(words) else {
            let name = words.first ?? ""
            let hint = Suggestion.hint(for: name, among: table.topLevelNames)
            let error = UsageError(
                message: "unknown command '\(name)'\(hint) (commands: \(table.topLevelNames.joined(separator: ", ")))",
                command: nil)
            return failed(error, nil)
        }
        var command = found
        let rest = Array(words[used...])
        if command.run == nil {
            // A group such as `table`: help, or a usage error naming its subcommands.
            let names = table.subcommands(of: command).map { $0.path.last! }
            if rest.first == "-h" || rest.first == "--help" {
                console.writeOut(Help.command(command, table: table, width: Help.width(for: console)))
                return .finished(ExitStatus.success)
            }
            let message = rest.isEmpty
                ? "\(command.name) needs a subcommand: \(names.joined(separator: ", "))"
                : "unknown subcommand '\(rest[0].prefix(80))' for \(command.name)\(Suggestion.hint(for: rest[0], among: names)) (subcommands: \(names.joined(separator: ", ")))"
            return failed(UsageError(message: message, command: nil), nil)
        }
        command = found
        var commandSettings = settings
        do {
            let invocation = try command.parse(rest, settings: &commandSettings)
            for note in invocation.notes { console.note("note: " + note) }
            if invocation.flag("--help") {
                console.writeOut(Help.command(command, table: table, width: Help.width(for: console)))
                return .finished(ExitStatus.success)
            }
            var context = Context(
                settings: commandSettings, console: console, table: table, session: session, events: events, blocking: blocking,
                frontEnd: frontEnd)
            context.interactive = interactive
            context.inputIsTerminal = inputIsTerminal
            try command.run!(invocation, context)
            return .finished(ExitStatus.success)
        } catch is QuitRequest {
            return .quit
        } catch let quiet as QuietExit {
            return .finished(quiet.code)
        } catch {
            return failed(error, command)
        }
    }
}
