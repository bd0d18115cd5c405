/// A counting semaphore (what `DispatchSemaphore` gives, without linking libdispatch into tartil): `signal` adds
/// one, `wait` blocks until there is one to take.
public final class Semaphore: Sendable {
    private let count: Monitor<Int>

    public init(value: Int = 0) { count = Monitor(value) }

    public func signal() { count.update { $0 += 1 } }

    public func wait() { count.wait(until: { $0 > 0 }) { $0 -= 1 } }
}
