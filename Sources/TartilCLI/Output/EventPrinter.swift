import Synchronization
import TartilCore
import TartilSession
import TartilSystem

/// Prints playback events as JSON lines on a thread of its own, so that a reader that is slow, or never reads,
/// holds up neither the player nor the journal. Up to `capacity` lines wait; past that the reader is dropped
/// (its events stop, with one note on standard error). A reader that has gone (a closed pipe: EPIPE, since
/// SIGPIPE is ignored) just ends the stream; playback, its positions and its exit status go on.
final class EventPrinter: Sendable {
    /// Lines that may wait for a slow reader before it is dropped.
    static let capacity = 4096

    private struct Queue: Sendable {
        var lines: [String] = []
        var writing = false
        var dropped = false
        var closed = false
    }

    private let queue = Monitor(Queue())
    private let console: Console

    init(console: Console) {
        self.console = console
        let queue = self.queue
        NativeThread.start(stackSize: 128 << 10) {
            while true {
                let (lines, closed) = queue.wait(until: { !$0.lines.isEmpty || $0.closed }) { box in
                    defer {
                        box.lines.removeAll(keepingCapacity: true)
                        box.writing = true
                    }
                    return (box.lines, box.closed)
                }
                if !lines.isEmpty { console.writeOut(lines.joined()) }
                queue.update { $0.writing = false }
                if closed { break }
            }
        }
    }

    /// Queues one line (its newline is added); never blocks.
    func offer(_ line: String) {
        let dropNow = queue.update { box -> Bool in
            guard !box.dropped else { return false }
            guard box.lines.count < Self.capacity else {
                box.dropped = true
                box.lines.removeAll()
                return true
            }
            box.lines.append(line + "\n")
            return false
        }
        if dropNow {
            console.writeError("Error: the events reader is not keeping up (\(Self.capacity) lines waiting); its events stop here, playback goes on\n")
        }
    }

    /// Ends the printer's thread once what is queued is written.
    func close() {
        queue.update { $0.closed = true }
    }

    /// Waits until every queued line is written, for at most `seconds` (a reader that never reads cannot hold
    /// tartil's exit longer).
    func drain(timeout seconds: Double = 2) {
        queue.wait(until: { $0.lines.isEmpty && !$0.writing }, timeout: seconds) { _, _ in }
    }
}

/// Where `events on` and `play --events` print the session's events: one printer at a time, subscribed to the
/// session while on.
final class EventsOutput: Sendable {
    private let current = Mutex<(printer: EventPrinter, token: Int, session: Session)?>(nil)

    init() {}

    /// Prints the player's events as JSON lines on `console` from now on (or stops printing them).
    func set(_ on: Bool, session: Session, console: Console) {
        if on {
            guard current.withLock({ $0 == nil }) else { return }
            let printer = EventPrinter(console: console)
            let token = session.subscribe { event in
                if case .player(let playerEvent) = event { printer.offer(SessionJSON.json(playerEvent).rendered()) }
            }
            current.withLock { $0 = (printer, token, session) }
            return
        }
        guard let (printer, token, session) = current.withLock({ state in defer { state = nil }; return state }) else { return }
        session.unsubscribe(token)
        printer.drain()
        printer.close()
    }

    /// Waits (briefly: see `EventPrinter.drain`) until the events queued for printing are written.
    func drain() {
        current.withLock { $0?.printer }?.drain()
    }
}
