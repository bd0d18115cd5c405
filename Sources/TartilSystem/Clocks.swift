import Glibc
import TartilCore

/// The system's clock: CLOCK_MONOTONIC for `now`, CLOCK_REALTIME for `wallMilliseconds`.
public struct SystemClock: TartilClock {
    public init() {}

    /// The clock every part of a running tartil shares unless a test gives another.
    public static let shared = SystemClock()

    public var now: ClockInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return ClockInstant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    public var wallMilliseconds: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    public func sleep(until deadline: ClockInstant) {
        var target = timespec(
            tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        // clock_nanosleep returns the error number itself (EINTR: a signal came; sleep on to the same deadline).
        _ = try? SystemCall.returningError { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) }
    }

    public func addWaker(_ wake: @escaping @Sendable () -> Void) -> Int { 0 }
    public func removeWaker(_ token: Int) {}
    public var isRealTime: Bool { true }
}

/// A clock that moves only when told to (`advance`): tests run the player, its timers and the session on it, so
/// that "two seconds of playback" takes no time and gives the same samples on a busy machine as on an idle one.
/// Threads sleeping on it, and `Monitor` waits with a deadline on it, wake when it is advanced past their
/// deadline.
///
/// ```swift
/// let clock = ManualClock()
/// let session = Session(configuration: configuration, clock: clock)
/// try session.play(request)
/// clock.advance(by: 2)       // the silent output "plays" two seconds
/// ```
public final class ManualClock: TartilClock, @unchecked Sendable {
    // @unchecked: every field is read and written under `lock`.
    private struct State {
        var now: UInt64
        var wall: Int64
        var wakers: [Int: @Sendable () -> Void] = [:]
        var nextToken = 1
        /// Sleeps and deadline waits that had to wait (their deadline was ahead of the clock), ever: a test that
        /// advanced the clock waits until one more began, which means the sleeper has caught up with the new time.
        var blockedSleeps = 0
    }

    private let lock = Monitor(State(now: 0, wall: 0))

    /// A clock at `start` seconds, whose wall clock reads `wallMilliseconds` then.
    public init(start: Double = 1000, wallMilliseconds: Int64 = 1_764_000_000_000) {
        lock.update { $0 = State(now: UInt64(start * 1e9), wall: wallMilliseconds) }
    }

    public var now: ClockInstant { ClockInstant(nanoseconds: lock.read { $0.now }) }

    public var wallMilliseconds: Int64 { lock.read { $0.wall } }

    public var isRealTime: Bool { false }

    /// Moves the clock on by `seconds` (the wall clock with it) and wakes whoever waits on it.
    public func advance(by seconds: Double) {
        let nanoseconds = UInt64(min(max(0, seconds) * 1e9, 1e18))  // saturates as ClockInstant.adding does
        let wakers = lock.update { state -> [@Sendable () -> Void] in
            state.now += nanoseconds
            state.wall += Int64(nanoseconds / 1_000_000)
            return Array(state.wakers.values)
        }
        for wake in wakers { wake() }
    }

    public func sleep(until deadline: ClockInstant) {
        // The time it started waiting at is read with the check, so an advance in between cannot be missed.
        guard var seen = lock.update({ state -> UInt64? in
            guard state.now < deadline.nanoseconds else { return nil }
            state.blockedSleeps += 1
            return state.now
        }) else { return }
        // Each advance that leaves the deadline ahead counts as another sleep that has to wait: a test that
        // advanced the clock then sees this sleeper has taken in the new time.
        while true {
            let done = lock.wait(until: { $0.now != seen }) { state -> Bool in
                seen = state.now
                if state.now >= deadline.nanoseconds { return true }
                state.blockedSleeps += 1
                return false
            }
            if done { return }
        }
    }

    /// How many sleeps have had to wait so far.
    public var blockedSleeps: Int { lock.read { $0.blockedSleeps } }

    /// Waits (in real time, at most `timeout` seconds) until a sleep that has to wait begins after the first
    /// `count`: the sleeper (a silent output keeping time) has done all it could at the clock's time. False when
    /// none began in time.
    @discardableResult
    public func waitForSleep(after count: Int, timeout: Double = 5) -> Bool {
        lock.wait(until: { $0.blockedSleeps > count }, timeout: timeout, clock: SystemClock.shared) { _, began in began }
    }

    /// A wait with a deadline on this clock begins (a `Monitor` wait that blocks): it counts as a sleep that had
    /// to wait.
    public func addWaker(_ wake: @escaping @Sendable () -> Void) -> Int {
        lock.update { state in
            defer { state.nextToken += 1 }
            state.wakers[state.nextToken] = wake
            state.blockedSleeps += 1
            return state.nextToken
        }
    }

    public func removeWaker(_ token: Int) {
        lock.update { _ = $0.wakers.removeValue(forKey: token) }
    }
}

/// Local time as the C library reads it (TZ, /etc/localtime).
public enum LocalTime {
    /// Seconds east of UTC of local time at `milliseconds` since 1970 (summer time included).
    public static func offsetSeconds(atMilliseconds milliseconds: Int64) -> Int {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}
