import Glibc
import Synchronization
import TartilCLI
import TartilControl
import TartilCore
import TartilMPRIS
import TartilSession
import TartilSystem

/// tartil as a process on a terminal: signals (Ctrl-C, SIGTERM, SIGPIPE), the prompt's line editing (libedit), the
/// keys and live line while `play` runs, and the front ends a playing process serves besides its command line
/// (the control socket and MPRIS). The command language itself is TartilCLI's `CommandRunner`.
public enum Tartil {
    /// Runs tartil with `arguments` (without the program name) and returns the process exit code.
    public static func run(
        arguments: [String], environment: Environment = .process, console: Console = .terminal,
        inputIsTerminal: Bool = isatty(0) == 1, executablePath: String? = currentExecutablePath()
    ) -> Int32 {
        Interrupt.install()
        let runner = CommandRunner(console: console, inputIsTerminal: inputIsTerminal, frontEnd: frontEnd)
        let settings: Settings
        do {
            settings = try runner.settings(environment: environment, executablePath: executablePath)
        } catch {
            return error.code
        }
        let session = runner.session
        let frontEnds = FrontEnds()
        session.setNotices { [console] message in
            console.writeError((console.errorIsTerminal ? "\r\u{1B}[K" : "") + message + "\n")
        }
        // The first player started here serves the control socket and appears on the session bus (when another
        // live player already serves this user, the socket is left to it).
        session.whenFirstPlayerStarts { [session] in
            guard let settings = session.playSettings else { return }
            frontEnds.start(session: session, settings: settings, console: console)
        }
        // Every position handed over is on disk before tartil exits, and the journal is closed: its write-ahead log
        // is checkpointed into the journal file, which then holds every event on its own (see JournalDatabase).
        defer {
            frontEnds.stop()
            if let note = session.closeJournal() { console.writeError(note + "\n") }
        }
        return runner.main(arguments: arguments, settings: settings) { settings in
            if inputIsTerminal { PromptCompletion.install(runner: runner, settings: settings) }
            return LineReader(interactive: inputIsTerminal, historyFile: inputIsTerminal ? settings.historyFile : nil)
        }
    }

    /// Marks the first line of the executable's code in the start-up trace (`StartTrace`: `TARTIL_TRACE_START=1`).
    public static func traceMain() { StartTrace.mark("main") }

    /// The running executable's path, from `/proc/self/exe`.
    public static func currentExecutablePath() -> String? {
        FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments.first
    }

    /// What the shell gives the commands it runs.
    static let frontEnd = FrontEnd(
        isCancelled: { Interrupt.isPending }, wakeDescriptor: Interrupt.wakeDescriptor, resetInterrupt: { Interrupt.reset() },
        setAtPrompt: { Interrupt.setAtPrompt($0) },
        outputClosed: { descriptor in
            var entry = pollfd(fd: descriptor, events: 0, revents: 0)
            return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
        },
        follow: { context, keysAllowed, progress in try PlaybackFollower.follow(context, keysAllowed: keysAllowed, progress: progress) })
}

extension Console {
    /// The process's own standard output and error, unbuffered; while the prompt waits for a line, what other
    /// threads write is printed above it (`PromptOutput`).
    public static let terminal = Console(
        writeOut: { if !PromptOutput.queue(1, $0) { writeAll(1, $0) } },
        writeError: { if !PromptOutput.queue(2, $0) { writeAll(2, $0) } },
        errorIsTerminal: isatty(2) == 1, outputIsTerminal: isatty(1) == 1, columns: { RawTerminal.columns(of: $0) })
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
