import FoundationEssentials
import Glibc
import Synchronization
import TartilControl
import TartilCore
import TartilMPRIS
import TartilSession

/// tartil's command-line front end: one command table serving argv, `-c "…; …"`, a script on standard input
/// and the interactive prompt.
public enum Tartil {
    /// Runs tartil with `arguments` (without the program name) and returns the process exit code.
    public static func run(
        arguments: [String], environment: [String: String], console: Console = .standard,
        inputIsTerminal: Bool = isatty(0) == 1, executablePath: String? = currentExecutablePath()
    ) -> Int32 {
        Interrupt.install()
        let dataDirectory = Settings.findBundledDataDirectory(environment: environment, executablePath: executablePath)
        var settings = Settings(environment: environment, bundledDataDirectory: dataDirectory)
        do {
            settings.config = try settings.loadConfig()
            if let config = settings.config, let output = config.value("output"), OutputChoice.parse(output, device: "default") == nil {
                throw TartilError.usage(
                    "\(config.location("output")): output takes \(OutputChoice.forms), not '\(output)'" + Suggestion.hint(for: output, among: OutputChoice.names))
            }
        } catch {
            return ExitStatus.report(error, command: nil, console: console)
        }
        let shell = Shell(table: .standard, console: console, inputIsTerminal: inputIsTerminal)
        let frontEnds = FrontEnds()
        shell.session.setNotices { [console] message in
            console.writeError((console.errorIsTerminal ? "\r\u{1B}[K" : "") + message + "\n")
        }
        // The first player started here serves the control socket and appears on the session bus (when another
        // live player already serves this user, the socket is left to it).
        shell.session.whenFirstPlayerStarts { [session = shell.session] in
            guard let settings = session.playSettings else { return }
            frontEnds.start(session: session, settings: settings, console: console)
        }
        // Every position handed over is on disk before tartil exits, and the journal is closed: its write-ahead log
        // is checkpointed into the journal file, which then holds every event on its own (see JournalDatabase).
        defer {
            frontEnds.stop()
            if let note = shell.session.closeJournal() { console.writeError(note + "\n") }
        }

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
                return shell.execute(["help"] + arguments[index...], settings: settings)
            case "--version":
                return shell.execute(["version"], settings: settings)
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
            return shell.runScript(script, settings: settings)
        }
        if !words.isEmpty {
            return shell.execute(words, settings: settings)
        }
        if inputIsTerminal { PromptCompletion.install(table: shell.table, settings: settings) }
        return shell.runLines(
            LineReader(interactive: inputIsTerminal, historyFile: inputIsTerminal ? settings.historyFile : nil),
            interactive: inputIsTerminal, settings: settings)
    }

    /// The running executable's path, from `/proc/self/exe`.
    public static func currentExecutablePath() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }
}

/// Runs commands from the table and reports their errors.
struct Shell {
    let table: CommandTable
    let console: Console
    /// Whether standard input is a terminal (`play` from the command line then reads keys).
    var inputIsTerminal = false
    /// The session the commands of one prompt or script share (and the control socket serves).
    let session: Session
    /// Where `events on` prints.
    let events = EventsOutput()

    init(table: CommandTable, console: Console, inputIsTerminal: Bool = false, session: Session = Session()) {
        self.table = table
        self.console = console
        self.inputIsTerminal = inputIsTerminal
        self.session = session
    }

    /// The front end's ways, for commands.
    static let frontEnd = FrontEnd(
        isCancelled: { Interrupt.isPending }, wakeDescriptor: Interrupt.wakeDescriptor,
        outputClosed: { descriptor in
            var entry = pollfd(fd: descriptor, events: 0, revents: 0)
            return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
        },
        follow: { context, keys, progress in try PlayCommands.follow(context, keys: keys, progress: progress) })

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
            settings: settings, console: console, table: table, session: session, events: events, blocking: false, frontEnd: Self.frontEnd)
        do {
            try PlayCommands.waitForEnd(context, stopOnInterrupt: true)
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
    func runLines(_ reader: LineReader, interactive: Bool, settings: Settings) -> Int32 {
        var firstFailure: Int32?
        if interactive {
            console.writeError("tartil \(Help.version) — type 'help' for commands, 'quit' or Ctrl-D to leave.\n")
        }
        // The number of the line being run, for errors in a script (not at the prompt).
        var lineNumber = 0
        while true {
            Interrupt.setAtPrompt(interactive)
            let line = reader.next(prompt: "tartil> ")
            lineNumber += 1
            let scriptLine = interactive ? nil : lineNumber
            Interrupt.setAtPrompt(false)
            if Interrupt.isPending {
                Interrupt.reset()
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
                        Interrupt.reset()  // Ctrl-C ended that command (a `wait`); the prompt goes on
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
        let printed = Atomic<Bool>(false)
        let console = Console(
            writeOut: { [console] text in
                printed.store(true, ordering: .relaxed)
                console.writeOut(text)
            },
            writeError: self.console.writeError, errorIsTerminal: self.console.errorIsTerminal,
            outputIsTerminal: self.console.outputIsTerminal, outputDescriptor: self.console.outputDescriptor)
        func failed(_ error: any Error, _ command: CommandSpec?) -> Outcome {
            let code = ExitStatus.report(error, command: command, console: console, line: line)
            if json && !printed.load(ordering: .relaxed) {
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
                frontEnd: Self.frontEnd)
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

/// The front ends a process with a player serves besides its own command line: the control socket and MPRIS,
/// started with the first player, stopped at exit.
final class FrontEnds: Sendable {
    private let started = Mutex<(server: ControlServer?, mpris: MPRISService?)>((nil, nil))

    func start(session: Session, settings: Settings, console: Console) {
        let server = ControlServer.start(ControlSocketPath(settings), session: session) { note in console.note(note) }
        let mpris = MPRISService.start(session: session, environment: settings.environment, enabled: settings.mprisEnabled)
        started.withLock { $0 = (server, mpris) }
    }

    func stop() {
        let (server, mpris) = started.withLock { $0 }
        server?.stop()
        mpris?.stop()
    }
}
