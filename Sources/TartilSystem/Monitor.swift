import Glibc
import TartilCore

/// State guarded by a POSIX mutex, with a condition variable for threads that wait until it changes.
///
/// ```swift
/// let queue = Monitor<[Int]>([])
/// queue.update { $0.append(1) }                          // wakes waiters
/// let first = queue.wait(until: { !$0.isEmpty }) { $0.removeFirst() }
/// ```
/// Every `update` and `wait` wakes all waiters when it returns, so a waiter's predicate is re-checked after any
/// change. The mutex and condition live in memory of their own (a pthread object must not move).
public final class Monitor<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Wakes every waiter, changing nothing (a manual clock moved: waits with a deadline look again).
    private func wakeAll() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Reads the state under the lock, waking no one.
    public func read<Result>(_ body: (State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(state)
    }

    /// Reads or changes the state under the lock and wakes every waiter.
    @discardableResult
    public func update<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Changes the state under the lock and wakes the waiters only when `wakeIf` holds afterwards: for hand-offs
    /// busy enough that a wake-up per change would cost more than the work.
    @discardableResult
    public func update<Result>(wakeIf: (State) -> Bool, _ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if wakeIf(state) { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Blocks until `predicate` holds, then runs `body` under the same lock and wakes every waiter (unless
    /// `wake` is false). While it waits, the count at `waiters` (if given) includes it, so that others can tell
    /// whether a wake-up is needed.
    @discardableResult
    public func wait<Result>(
        until predicate: (State) -> Bool, countingIn waiters: WritableKeyPath<State, Int>? = nil, wake: Bool = true,
        then body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if wake { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        if !predicate(state) {
            if let waiters { state[keyPath: waiters] += 1 }
            while !predicate(state) { pthread_cond_wait(condition, mutex) }
            if let waiters { state[keyPath: waiters] -= 1 }
        }
        return try body(&state)
    }

    /// Like `wait(until:then:)`, but gives up after `seconds` of `clock`'s time; `body` then runs with the
    /// predicate still false and gets `false` as its second argument.
    @discardableResult
    public func wait<Result>(
        until predicate: (State) -> Bool, timeout seconds: Double, clock: any TartilClock = SystemClock.shared,
        then body: (inout State, Bool) throws -> Result
    ) rethrows -> Result {
        try wait(until: predicate, deadline: clock.now.adding(seconds: max(0, seconds)), clock: clock, then: body)
    }

    /// Like `wait(until:then:)`, but gives up at `deadline` on `clock`; `body` then runs with the predicate still
    /// false and gets `false` as its second argument. On a manual clock the wait ends when the clock is advanced
    /// past the deadline.
    @discardableResult
    public func wait<Result>(
        until predicate: (State) -> Bool, deadline: ClockInstant, clock: any TartilClock,
        then body: (inout State, Bool) throws -> Result
    ) rethrows -> Result {
        var waker: Int?
        var timespecDeadline = timespec(
            tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
            if let waker { clock.removeWaker(waker) }
        }
        var holds = predicate(state)
        // A manual clock wakes this wait when it is advanced; the waker is registered under the mutex, so an
        // advance between the check and the wait cannot be missed (its broadcast takes the mutex).
        var registeredAt = clock.now
        if !holds && !clock.isRealTime && registeredAt < deadline { waker = clock.addWaker { [self] in self.wakeAll() } }
        while !holds {
            if clock.isRealTime {
                if pthread_cond_timedwait(condition, mutex, &timespecDeadline) == ETIMEDOUT {
                    holds = predicate(state)
                    break
                }
            } else {
                let now = clock.now
                if now >= deadline { break }
                if now != registeredAt, let registered = waker {
                    // The clock was advanced and the deadline is still ahead: this wait begins again (a manual
                    // clock counts it, so a test knows the waiter has taken in the new time).
                    clock.removeWaker(registered)
                    waker = clock.addWaker { [self] in self.wakeAll() }
                    registeredAt = now
                }
                pthread_cond_wait(condition, mutex)
            }
            holds = predicate(state)
        }
        return try body(&state, holds)
    }
}
