import Glibc

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

    /// Like `wait(until:then:)`, but gives up after `seconds`; `body` then runs with the predicate still false
    /// and gets `false` as its second argument.
    @discardableResult
    public func wait<Result>(
        until predicate: (State) -> Bool, timeout seconds: Double, then body: (inout State, Bool) throws -> Result
    ) rethrows -> Result {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(max(0, seconds) * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        var holds = predicate(state)
        while !holds {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                holds = predicate(state)
                break
            }
            holds = predicate(state)
        }
        return try body(&state, holds)
    }
}
