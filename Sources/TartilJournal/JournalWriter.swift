import TartilCore
import TartilSystem

/// Appends to the journal on a thread of its own, so that the player's threads never wait for an fsync: the
/// player hands positions over with `append` and goes on; `flush` waits until everything handed over is durable
/// (before tartil exits, after Ctrl-C or `quit`). Events handed over while an earlier batch is being written go
/// into the journal together, in one transaction (group commit).
///
/// The writer's thread is the journal connection's only owner: other work on the same journal (`journal merge`)
/// runs there too, through `withJournal`, so it never has to close the writer.
///
/// Nothing handed over is dropped silently: an append that fails (the disk is full, say), or that comes after
/// `close`, is counted in `failedEvents`, returned by the next `flush`, and passed to the `failures` handler.
public final class JournalWriter: Sendable {
    private struct State: Sendable {
        var queue: [EventDraft] = []
        var tasks: [@Sendable (Journal) -> Void] = []
        var handedOver = 0
        var written = 0
        var opened: Result<Void, JournalError>?
        var closing = false
        /// Why the log stayed beside the journal at close, if it did.
        var closeProblem: JournalError?
        var closed = false
        /// The first failure since the last `flush` (the journal's disk full, say): reported once by `flush`.
        var failure: JournalError?
        /// Events that were handed over and are not in the journal, since the writer started.
        var failedEvents = 0

        var isFailedOpen: Bool {
            if case .failure? = opened { return true }
            return false
        }
    }

    private let state = Monitor(State())
    private let failures: (@Sendable (JournalError, Int) -> Void)?
    public let path: String

    /// Starts opening the journal on the writer's thread and returns at once: `opened()` waits for the outcome
    /// (so a command can read its tables meanwhile). `failures`, when given, is called on the writer's thread
    /// after each batch of events that could not be made durable, with the error and how many events that
    /// batch held. The journal's events get `clock`'s wall time.
    public init(
        path: String, clock: any TartilClock = SystemClock.shared,
        failures: (@Sendable (JournalError, Int) -> Void)? = nil
    ) {
        self.path = path
        self.failures = failures
        let state = self.state
        NativeThread.start(stackSize: 256 << 10) {
            let journal: Journal
            do throws(JournalError) {
                journal = try Journal(path: path, clock: clock)
            } catch {
                state.update { $0.opened = .failure(error) }
                return
            }
            state.update { $0.opened = .success(()) }
            while true {
                let (drafts, tasks, closing) = state.wait(until: { !$0.queue.isEmpty || !$0.tasks.isEmpty || $0.closing }) { box in
                    defer {
                        box.queue.removeAll()
                        box.tasks.removeAll()
                    }
                    return (box.queue, box.tasks, box.closing)
                }
                // What arrived while the last batch was being made durable goes in one transaction: one fsync.
                if !drafts.isEmpty {
                    do throws(JournalError) {
                        try journal.append(contentsOf: drafts)
                        state.update { $0.written += drafts.count }
                    } catch {
                        state.update { box in
                            if box.failure == nil { box.failure = error }
                            box.failedEvents += drafts.count
                            box.written += drafts.count
                        }
                        failures?(error, drafts.count)
                    }
                }
                for task in tasks { task(journal) }
                if closing && drafts.isEmpty && tasks.isEmpty { break }
            }
            let problem = journal.close()
            state.update { box in
                box.closed = true
                box.closeProblem = problem
            }
        }
    }

    /// Waits until the journal is open; throws what opening it threw (a file that is not a journal, say).
    public func opened() throws(JournalError) {
        if case .failure(let error) = state.wait(until: { $0.opened != nil }, then: { $0.opened! }) { throw error }
    }

    /// Events handed over since the writer started that are not in the journal (failed appends, appends after
    /// `close`).
    public var failedEvents: Int { state.read { $0.failedEvents } }

    /// Hands an event over; it is appended (and made durable) on the writer's thread. After `close` (or when the
    /// journal could not be opened) the event is not recorded: it counts as failed, and the next `flush` says so.
    public func append(_ draft: EventDraft) { append(contentsOf: [draft]) }

    /// Hands events over together: they go into the journal in the same transaction (one fsync), in this order.
    public func append(contentsOf drafts: [EventDraft]) {
        guard !drafts.isEmpty else { return }
        let refused = state.update { box -> JournalError? in
            if box.closing || box.closed || box.isFailedOpen {
                let error = JournalError(.failed, "cannot append to the journal \(path): its writer is closed (the event was not recorded)")
                if box.failure == nil { box.failure = error }
                box.failedEvents += drafts.count
                return error
            }
            box.queue.append(contentsOf: drafts)
            box.handedOver += drafts.count
            return nil
        }
        if let refused { failures?(refused, drafts.count) }
    }

    /// Waits until every event handed over so far is durable; returns the first append that failed since the
    /// last `flush`, if any.
    @discardableResult
    public func flush() -> JournalError? {
        let target = state.read { $0.handedOver }
        return state.wait(until: { $0.written >= target || $0.closed || $0.isFailedOpen }) { box in
            defer { box.failure = nil }
            return box.failure
        }
    }

    /// Runs `body` with the journal on the writer's thread, after every event handed over before it, and returns
    /// its result: the way to do other work on the journal (a merge) without a second connection or closing the
    /// writer.
    public func withJournal<T: Sendable>(_ body: @escaping @Sendable (Journal) throws(JournalError) -> T) throws(JournalError) -> T {
        try opened()
        let outcome = Monitor<Result<T, JournalError>?>(nil)
        let accepted = state.update { box -> Bool in
            guard !box.closing && !box.closed else { return false }
            box.tasks.append { journal in
                let result: Result<T, JournalError>
                do throws(JournalError) {
                    result = .success(try body(journal))
                } catch {
                    result = .failure(error)
                }
                outcome.update { $0 = result }
            }
            return true
        }
        guard accepted else { throw JournalError(.failed, "the journal \(path) is closed") }
        return try outcome.wait(until: { $0 != nil }) { $0! }.get()
    }

    /// Flushes and closes the journal (its log is checkpointed into the journal file). Appends after this fail.
    /// Flushes, closes, and returns why the journal file does not hold every event on its own, if it does not
    /// (its log could not be folded in: see `Journal.close`).
    @discardableResult
    public func close() -> JournalError? {
        _ = flush()
        state.update { $0.closing = true }
        return state.wait(until: { $0.closed || $0.isFailedOpen }) { $0.closeProblem }
    }
}
