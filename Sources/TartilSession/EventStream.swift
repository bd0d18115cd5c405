import TartilCore
import TartilSystem

/// What the session tells its subscribers, in order.
public enum SessionEvent: Sendable, Hashable {
    /// A player began (a `play`, from any front end); its status as it starts.
    case started(PlayerStatus)
    /// One of the current player's events.
    case player(PlayerEvent)
}

/// A subscriber's queue of session events: the session offers events without ever waiting (a subscriber that
/// falls `capacity` events behind is cut off, once, with `overflowed` set); the subscriber takes them on its own
/// thread, waiting as long as it likes.
///
/// ```swift
/// let stream = session.subscribe()
/// while let event = stream.next(timeout: 0.2) { … }
/// ```
public final class EventStream: Sendable {
    /// Events that may wait for a slow subscriber before it is cut off.
    public static let capacity = 4096

    private struct Queue: Sendable {
        var events: [SessionEvent] = []
        var overflowed = false
        var closed = false
    }

    private let queue = Monitor(Queue())

    init() {}

    /// Called by the session (never blocks).
    func offer(_ event: SessionEvent) {
        queue.update { box in
            guard !box.overflowed, !box.closed else { return }
            guard box.events.count < Self.capacity else {
                box.overflowed = true
                box.events.removeAll()
                return
            }
            box.events.append(event)
        }
    }

    /// The next event, waiting at most `seconds` (of real time); nil when none came, or the stream was cut off or
    /// closed (see `overflowed`, `isClosed`).
    public func next(timeout seconds: Double) -> SessionEvent? {
        queue.wait(until: { !$0.events.isEmpty || $0.overflowed || $0.closed }, timeout: seconds) { box, ready -> SessionEvent? in
            guard ready, !box.overflowed, !box.events.isEmpty else { return nil }
            return box.events.removeFirst()
        }
    }

    /// Every event waiting now, without waiting.
    public func drain() -> [SessionEvent] {
        queue.update { box in
            defer { box.events.removeAll() }
            return box.overflowed ? [] : box.events
        }
    }

    /// True once the subscriber fell too far behind: its events stopped.
    public var overflowed: Bool { queue.read { $0.overflowed } }

    /// True once `close` was called (by the subscriber, or by the session when it ended).
    public var isClosed: Bool { queue.read { $0.closed } }

    /// Ends the stream; waiting `next` calls return nil.
    public func close() { queue.update { $0.closed = true } }
}
