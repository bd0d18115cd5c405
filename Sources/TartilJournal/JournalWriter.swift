import TartilCore

/// Appends to the journal on a thread of its own, so that the player's threads never wait for an fsync: the
/// player hands positions over with `append` and goes on; `flush` waits until everything handed over is durable
/// (before tartil exits, after Ctrl-C or `quit`). Events handed over while an earlier batch is being written go
/// into the journal together, in one transaction (group commit).
public final class JournalWriter: Sendable {
    private struct State: Sendable {
        var queue: [EventDraft] = []
        var handedOver = 0
        var written = 0
        var opened: Result<String, JournalError>?
        var closing = false
        var closed = false
        /// The first append that failed (the journal's disk full, say): reported once by `flush`.
        var failure: JournalError?

        var isFailedOpen: Bool {
            if case .failure? = opened { return true }
            return false
        }
    }

    private let state = Monitor(State())
    public let path: String

    /// Starts opening the journal on the writer's thread and returns at once: `opened()` waits for the outcome
    /// (so a command can read its tables meanwhile).
    public init(path: String) {
        self.path = path
        let state = self.state
        NativeThread.start(stackSize: 256 << 10) {
            let journal: Journal
            do throws(JournalError) {
                journal = try Journal(path: path)
            } catch {
                state.update { $0.opened = .failure(error) }
                return
            }
            state.update { $0.opened = .success(journal.deviceID) }
            while true {
                let (drafts, closing) = state.wait(until: { !$0.queue.isEmpty || $0.closing }) { box in
                    defer { box.queue.removeAll() }
                    return (box.queue, box.closing)
                }
                // What arrived while the last batch was being made durable goes in one transaction: one fsync.
                do throws(JournalError) {
                    try journal.append(contentsOf: drafts)
                } catch {
                    state.update { if $0.failure == nil { $0.failure = error } }
                }
                state.update { $0.written += drafts.count }
                if closing && drafts.isEmpty { break }
            }
            journal.close()
            state.update { $0.closed = true }
        }
    }

    /// Waits until the journal is open; throws what opening it threw (a file that is not a journal, say).
    public func opened() throws(JournalError) {
        if case .failure(let error) = state.wait(until: { $0.opened != nil }, then: { $0.opened! }) { throw error }
    }

    /// The journal's device id (empty when it could not be opened).
    public var deviceID: String {
        (try? state.wait(until: { $0.opened != nil }) { $0.opened! }.get()) ?? ""
    }

    /// Hands an event over; it is appended (and made durable) on the writer's thread.
    public func append(_ draft: EventDraft) {
        state.update { box in
            guard !box.closing else { return }
            box.queue.append(draft)
            box.handedOver += 1
        }
    }

    /// Waits until every event handed over so far is durable; returns the first append that failed, if any.
    @discardableResult
    public func flush() -> JournalError? {
        let target = state.read { $0.handedOver }
        return state.wait(until: { $0.written >= target || $0.closed || $0.isFailedOpen }) { box in
            defer { box.failure = nil }
            return box.failure
        }
    }

    /// Flushes and closes the journal.
    public func close() {
        _ = flush()
        state.update { $0.closing = true }
        state.wait(until: { $0.closed || $0.isFailedOpen }) { _ in }
    }
}
