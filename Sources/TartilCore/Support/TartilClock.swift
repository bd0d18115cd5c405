/// A moment on a monotonic clock: nanoseconds since an arbitrary start that never moves back.
public struct ClockInstant: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// This moment `seconds` later (earlier when negative; never before the clock's start). Saturates instead
    /// of trapping: a wait of 1e300 seconds (or infinity) ends 10^18 ns (about 31 years) from now at the latest,
    /// and NaN seconds are none.
    public func adding(seconds: Double) -> ClockInstant {
        guard !seconds.isNaN else { return self }
        let delta = seconds * 1e9
        if delta >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(min(delta, 1e18)))
            return ClockInstant(nanoseconds: overflow ? .max : sum)
        }
        let back = UInt64(min(-delta, 1e18))
        return ClockInstant(nanoseconds: back > nanoseconds ? 0 : nanoseconds - back)
    }

    /// Seconds from `earlier` to this moment (negative when `earlier` is later).
    public func seconds(since earlier: ClockInstant) -> Double {
        nanoseconds >= earlier.nanoseconds
            ? Double(nanoseconds - earlier.nanoseconds) / 1e9 : -Double(earlier.nanoseconds - nanoseconds) / 1e9
    }

    public static func < (left: ClockInstant, right: ClockInstant) -> Bool { left.nanoseconds < right.nanoseconds }

    public var description: String { "\(Double(nanoseconds) / 1e9) s" }
}

/// The one source of time for the session, its timers, the player and the downloader. The process uses the
/// system's clock (`SystemClock` in TartilSystem); tests that are not about real time use a manual one, advanced
/// by hand, so what they check does not depend on how busy the machine is.
///
/// ```swift
/// let deadline = clock.now.adding(seconds: 0.5)
/// clock.sleep(until: deadline)          // a manual clock returns once it has been advanced that far
/// ```
public protocol TartilClock: Sendable {
    /// Monotonic time (CLOCK_MONOTONIC for the system's clock): for intervals, deadlines and pacing.
    var now: ClockInstant { get }
    /// Wall-clock time in milliseconds since 1970 (UTC): for timestamps that people and other devices read.
    var wallMilliseconds: Int64 { get }
    /// Blocks the calling thread until `deadline` has come.
    func sleep(until deadline: ClockInstant)
    /// Calls `wake` whenever the clock moves other than by the passing of real time (a manual clock that is
    /// advanced), so that a thread waiting for a deadline on this clock looks again; the system's clock never
    /// calls it. Returns a token for `removeWaker`.
    func addWaker(_ wake: @escaping @Sendable () -> Void) -> Int
    func removeWaker(_ token: Int)
    /// True for the system's clock: a deadline can then be waited for with the kernel's timed waits.
    var isRealTime: Bool { get }
}

extension TartilClock {
    /// Blocks the calling thread for `seconds` of this clock's time.
    public func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        sleep(until: now.adding(seconds: seconds))
    }

    /// Seconds since `instant` by this clock.
    public func seconds(since instant: ClockInstant) -> Double { now.seconds(since: instant) }
}
