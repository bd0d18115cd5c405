import TartilControl
import TartilCore
import TartilSession

/// What a running command may use: the settings in force for it, the console, the session, and what the front
/// end running it provides (how to follow playback until it ends, whether it was interrupted).
public struct Context: Sendable {
    public let settings: Settings
    public let console: Console
    let table: CommandTable
    /// The session of this process: the one owner of its playback.
    public let session: Session
    /// Where `events on` and `--events` print.
    let events: EventsOutput
    /// True when tartil runs one command from its arguments: `play` then blocks until playback ends.
    let blocking: Bool
    /// True at the interactive prompt: control commands print the status line once they took effect.
    var interactive = false
    /// True when standard input is a terminal: `play` then reads keys.
    public internal(set) var inputIsTerminal = false
    /// The front end's ways: interrupts, and following playback until it ends.
    let frontEnd: FrontEnd

    init(
        settings: Settings, console: Console, table: CommandTable, session: Session, events: EventsOutput, blocking: Bool,
        frontEnd: FrontEnd
    ) {
        self.settings = settings
        self.console = console
        self.table = table
        self.session = session
        self.events = events
        self.blocking = blocking
        self.frontEnd = frontEnd
    }

    /// True once Ctrl-C or SIGTERM came.
    public var isCancelled: @Sendable () -> Bool { frontEnd.isCancelled }

    /// What ends a wait on another process (Ctrl-C, SIGTERM, standard output closing).
    var cancellation: ControlClient.Cancellation {
        ControlClient.Cancellation(isCancelled: frontEnd.isCancelled, wakeDescriptor: frontEnd.wakeDescriptor, output: console.outputDescriptor)
    }

    /// True when the reader of standard output has gone (a closed pipe).
    func outputClosed() -> Bool { frontEnd.outputClosed(console.outputDescriptor) }

    /// Blocks until playback ends, reading keys where they may be read (`keysAllowed`: not with `--events` or
    /// `--json`) and drawing the live line (`progress`), as the front end does it; Ctrl-C stops playback and
    /// throws `.interrupted`.
    func follow(keysAllowed: Bool, progress: Bool) throws { try frontEnd.follow(self, keysAllowed, progress) }

    /// Whether `request` may go to the player another process serves: any control command, and a `play` only from
    /// the command line (at the prompt and in scripts, `play` plays here).
    func mayForward(_ request: ControlRequest) -> Bool {
        switch request {
        case .play, .resume(_, plain: false): blocking
        default: true
        }
    }

    /// Loads `mirrors.json` and locates the tables as the settings say.
    func library() throws(TartilError) -> ReciterLibrary { try settings.library() }

    /// The reciter named by `--reciter` (or the default reciter), as mirrors.json spells its id.
    func reciterID(_ invocation: Invocation) throws(TartilError) -> ReciterID {
        try settings.reciterID(named: invocation.value("--reciter"), for: invocation.command.name)
    }
}

/// What the host of the command language (the shell: a process on a terminal) gives the commands it runs.
public struct FrontEnd: Sendable {
    /// True once Ctrl-C or SIGTERM came (until `resetInterrupt`).
    public var isCancelled: @Sendable () -> Bool
    /// Readable when an interrupt arrives (-1: none).
    public var wakeDescriptor: Int32
    public var resetInterrupt: @Sendable () -> Void
    /// The prompt starts or stops waiting for a line (Ctrl-C there only prints a hint).
    public var setAtPrompt: @Sendable (Bool) -> Void
    /// True when the reader of the descriptor has gone (a closed pipe).
    public var outputClosed: @Sendable (Int32) -> Bool
    /// Blocks until the session's playback ends, with keys (where allowed) and the live line (`progress`).
    public var follow: @Sendable (Context, _ keysAllowed: Bool, _ progress: Bool) throws -> Void

    public init(
        isCancelled: @escaping @Sendable () -> Bool, wakeDescriptor: Int32, resetInterrupt: @escaping @Sendable () -> Void,
        setAtPrompt: @escaping @Sendable (Bool) -> Void, outputClosed: @escaping @Sendable (Int32) -> Bool,
        follow: @escaping @Sendable (Context, _ keysAllowed: Bool, _ progress: Bool) throws -> Void
    ) {
        self.isCancelled = isCancelled
        self.wakeDescriptor = wakeDescriptor
        self.resetInterrupt = resetInterrupt
        self.setAtPrompt = setAtPrompt
        self.outputClosed = outputClosed
        self.follow = follow
    }
}
