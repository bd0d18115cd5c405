import TartilControl
import TartilCore
import TartilSession

/// What a running command may use: the settings in force for it, the console, the session, and what the front
/// end running it provides (how to follow playback until it ends, whether it was interrupted).
struct Context: Sendable {
    let settings: Settings
    let console: Console
    let table: CommandTable
    /// The session of this process: the one owner of its playback.
    let session: Session
    /// Where `events on` and `--events` print.
    let events: EventsOutput
    /// True when tartil runs one command from its arguments: `play` then blocks until playback ends.
    let blocking: Bool
    /// True at the interactive prompt: control commands print the status line once they took effect.
    var interactive = false
    /// True when standard input is a terminal: `play` then reads keys.
    var inputIsTerminal = false
    /// The front end's ways: interrupts, and following playback until it ends.
    let frontEnd: FrontEnd

    /// True once Ctrl-C or SIGTERM came.
    var isCancelled: @Sendable () -> Bool { frontEnd.isCancelled }

    /// What ends a wait on another process (Ctrl-C, SIGTERM, standard output closing).
    var cancellation: ControlClient.Cancellation {
        ControlClient.Cancellation(isCancelled: frontEnd.isCancelled, wakeDescriptor: frontEnd.wakeDescriptor, output: console.outputDescriptor)
    }

    /// True when the reader of standard output has gone (a closed pipe).
    func outputClosed() -> Bool { frontEnd.outputClosed(console.outputDescriptor) }

    /// Blocks until playback ends, reading keys (`keys`) and drawing the live line (`progress`), as the front end
    /// does it; Ctrl-C stops playback and throws `.interrupted`.
    func follow(keys: Bool, progress: Bool) throws { try frontEnd.follow(self, keys, progress) }

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

/// What the front end that runs commands (the shell: argv, `-c`, standard input, the prompt) gives them.
struct FrontEnd: Sendable {
    var isCancelled: @Sendable () -> Bool
    /// Readable when an interrupt arrives (-1: none).
    var wakeDescriptor: Int32
    var outputClosed: @Sendable (Int32) -> Bool
    /// Blocks until the session's playback ends, with keys and the live line as asked.
    var follow: @Sendable (Context, _ keys: Bool, _ progress: Bool) throws -> Void
}
