/// How hard to try for each file.
public struct DownloadPolicy: Sendable, Hashable {
    /// Attempts per file across all mirrors (the first try included).
    public var maxAttempts: Int
    /// First backoff delay in seconds; each retry on the same mirror doubles it, with full jitter.
    public var baseDelay: Double
    /// The longest backoff delay.
    public var maxDelay: Double
    /// The longest `Retry-After` honoured; a mirror that asks for more is passed over for this file.
    public var maxRetryAfter: Double
    /// Consecutive failures after which a mirror is demoted (tried after the others) …
    public var failuresToDemote: Int
    /// … for this many seconds.
    public var demotionSeconds: Double
    /// Whether a mirror that could not be reached (`.unreachable`: no connection within the connect timeout, a
    /// refused connection, a transfer stalled past the stall timeout) is tried again for the same file, with
    /// backoff within `maxAttempts` (prefetch: true), or passed over at once (play: false), so that a listener
    /// waits at most one connect or stall timeout per mirror before the file fails over or is given up.
    public var retriesUnreachable: Bool
    /// With `retriesUnreachable` false: for this many seconds after a mirror could not be reached, no other file
    /// asks it either (each would wait the same timeout again); the mirrors left are tried, and with none left the
    /// file is given up at once.
    public var unreachableSeconds: Double

    public init(
        maxAttempts: Int = 6, baseDelay: Double = 0.25, maxDelay: Double = 30, maxRetryAfter: Double = 60,
        failuresToDemote: Int = 3, demotionSeconds: Double = 60, retriesUnreachable: Bool = true, unreachableSeconds: Double = 30
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.failuresToDemote = failuresToDemote
        self.demotionSeconds = demotionSeconds
        self.retriesUnreachable = retriesUnreachable
        self.unreachableSeconds = unreachableSeconds
    }

    /// What the player downloads with: a mirror that cannot be reached is passed over at once (and for
    /// `unreachableSeconds` by the files after it), so `play` fails over or gives up within one connect or stall
    /// timeout per mirror instead of retrying a dead mirror.
    public static let playback = DownloadPolicy(retriesUnreachable: false)
}

/// Why one attempt at one file failed.
public enum DownloadFailure: Sendable, Hashable {
    /// Worth retrying, on this mirror or another: a 5xx or 429, a reset, a body cut short.
    /// `retryAfter` is the server's `Retry-After` in seconds.
    case transient(String, retryAfter: Double?)
    /// The mirror could not be reached, or stopped sending: no connection within the connect timeout, a refused
    /// connection or an unknown host, a transfer under the stall rate for the stall time. Retried like
    /// `.transient`, unless the policy passes over unreachable mirrors (`DownloadPolicy.retriesUnreachable`).
    case unreachable(String)
    /// The mirror's bytes are not the file: their size or SHA-256 differs from the table's (or the recorded)
    /// one. Tried once more on the same mirror (a copy damaged on the way, or a mirror caught mid-update), then
    /// the mirror cannot give this file.
    case wrongBytes(String)
    /// This mirror cannot give this file: 404, an unpinned file that is not audio, an oversized body, a redirect
    /// loop or a redirect to a scheme other than http(s). Other mirrors may still.
    case mirrorUnusable(String)
    /// This mirror's TLS certificate does not verify (an unknown CA, another name, expired): no retry changes
    /// that, and it is the same for every file, so the mirror is given up for the whole run (`MirrorHealth`).
    case untrusted(String)

    public var reason: String {
        switch self {
        case .transient(let reason, _), .unreachable(let reason), .wrongBytes(let reason), .mirrorUnusable(let reason), .untrusted(let reason): reason
        }
    }
}

/// How each mirror of a reciter has been doing: a mirror that keeps failing is demoted for a while, so other
/// files try the healthy ones first; a mirror whose certificate does not verify is given up for the whole run.
public struct MirrorHealth: Sendable, Hashable {
    private var consecutiveFailures: [Int]
    private var demotedUntil: [Double]
    /// Mirrors passed over as unreachable until then, with why (only when the policy does not retry them).
    private var unreachableUntil: [Int: Unreachable] = [:]
    /// Mirrors given up for the run, with why (an `.untrusted` failure).
    public private(set) var abandoned: [Int: String] = [:]
    let policy: DownloadPolicy

    public init(mirrorCount: Int, policy: DownloadPolicy) {
        consecutiveFailures = Array(repeating: 0, count: mirrorCount)
        demotedUntil = Array(repeating: -.infinity, count: mirrorCount)
        self.policy = policy
    }

    /// An attempt on `mirror` failed with `failure`; an `.untrusted` one gives the mirror up for the run, and an
    /// `.unreachable` one (when the policy does not retry those) passes it over for `unreachableSeconds`.
    public mutating func recordFailure(_ mirror: Int, _ failure: DownloadFailure? = nil, now: Double) {
        if case .untrusted(let reason)? = failure, abandoned[mirror] == nil { abandoned[mirror] = reason }
        if case .unreachable(let reason)? = failure, !policy.retriesUnreachable {
            unreachableUntil[mirror] = Unreachable(until: now + policy.unreachableSeconds, reason: reason)
        }
        consecutiveFailures[mirror] += 1
        if consecutiveFailures[mirror] >= policy.failuresToDemote {
            demotedUntil[mirror] = now + policy.demotionSeconds
        }
    }

    public mutating func recordSuccess(_ mirror: Int) {
        consecutiveFailures[mirror] = 0
        demotedUntil[mirror] = -.infinity
        unreachableUntil[mirror] = nil
    }

    /// Why `mirror` is passed over as unreachable at `now`, or nil when it is not.
    public func unreachableReason(_ mirror: Int, now: Double) -> String? {
        guard let entry = unreachableUntil[mirror], entry.until > now else { return nil }
        return entry.reason
    }

    public func isDemoted(_ mirror: Int, now: Double) -> Bool { demotedUntil[mirror] > now }

    /// Why `mirror` was given up for the run, or nil when it was not.
    public func abandonedReason(_ mirror: Int) -> String? { abandoned[mirror] }

    private struct Unreachable: Sendable, Hashable {
        let until: Double
        let reason: String
    }
}

/// The decisions for downloading one file: which mirror to try next, how long to wait first, and when to give
/// up. A pure state machine: the downloader reports what happened and carries out the returned action.
public struct DownloadPlan: Sendable, Hashable {
    /// What the downloader should do next.
    public enum Action: Sendable, Hashable {
        /// Start an attempt on `mirror` after `delay` seconds (0: now).
        case start(mirror: Int, delay: Double)
        /// Stop: the file cannot be had. `reason` sums up the last failures.
        case giveUp(reason: String)
    }

    public let mirrorCount: Int
    public let policy: DownloadPolicy
    /// Attempts made so far.
    public private(set) var attempts = 0
    /// Attempts on each mirror (for backoff).
    private var attemptsOnMirror: [Int]
    /// Mirrors that cannot serve this file.
    public private(set) var unusable: Set<Int> = []
    /// Mirrors whose bytes were not the file once already (`.wrongBytes`): a second time makes them unusable.
    public private(set) var sentWrongBytes: Set<Int> = []
    /// What went wrong on each mirror, latest last.
    public private(set) var failures: [(mirror: Int, failure: DownloadFailure)] = []
    private var lastMirror: Int?

    public init(mirrorCount: Int, policy: DownloadPolicy) {
        precondition(mirrorCount > 0, "a reciter has at least one mirror")
        self.mirrorCount = mirrorCount
        self.policy = policy
        attemptsOnMirror = Array(repeating: 0, count: mirrorCount)
    }

    public static func == (lhs: DownloadPlan, rhs: DownloadPlan) -> Bool {
        lhs.attempts == rhs.attempts && lhs.unusable == rhs.unusable && lhs.lastMirror == rhs.lastMirror
            && lhs.failures.map(\.mirror) == rhs.failures.map(\.mirror)
            && lhs.failures.map(\.failure) == rhs.failures.map(\.failure)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(attempts)
        hasher.combine(unusable)
        hasher.combine(lastMirror)
    }

    /// The first action: the first healthy mirror, now; `.giveUp` naming each mirror's reason when every one
    /// was given up for the run.
    public mutating func begin(health: MirrorHealth, now: Double) -> Action {
        guard let mirror = nextMirror(after: nil, health: health, now: now) else {
            let reason = summary(health: health, now: now)
            return .giveUp(reason: reason.isEmpty ? "no mirror" : reason)
        }
        return start(mirror, delay: 0)
    }

    /// An attempt on `mirror` failed: decide what comes next. `random` gives a number in [0, 1) for jitter.
    public mutating func failed(
        _ failure: DownloadFailure, on mirror: Int, health: MirrorHealth, now: Double, random: () -> Double
    ) -> Action {
        failures.append((mirror, failure))
        var retryAfter: Double?
        switch failure {
        case .mirrorUnusable:
            unusable.insert(mirror)
        case .untrusted:
            unusable.insert(mirror)
            // Refused before any request was sent: it costs no attempt, so the next mirror is tried at once even
            // with no retries left.
            attempts -= 1
            attemptsOnMirror[mirror] -= 1
        case .transient(_, let requested):
            if let requested, requested > policy.maxRetryAfter {
                unusable.insert(mirror)  // asks us to wait longer than we will for one file
            } else {
                retryAfter = requested
            }
        case .unreachable:
            if !policy.retriesUnreachable { unusable.insert(mirror) }  // one timeout per mirror: on to the next
        case .wrongBytes:
            if sentWrongBytes.insert(mirror).inserted {
                // Once more from the same mirror, at once: a copy damaged on the way is not damaged twice.
                guard attempts < policy.maxAttempts else { return .giveUp(reason: summary(health: health, now: now)) }
                return start(mirror, delay: 0)
            }
            unusable.insert(mirror)
        }
        guard let next = nextMirror(after: mirror, health: health, now: now) else { return .giveUp(reason: summary(health: health, now: now)) }
        guard attempts < policy.maxAttempts else { return .giveUp(reason: summary(health: health, now: now)) }
        // A mirror not yet tried for this file starts at once (fail over); one tried before waits as its server
        // asked, or backs off exponentially with full jitter.
        let tries = attemptsOnMirror[next]
        let delay: Double
        if tries == 0 {
            delay = 0
        } else if next == mirror, let retryAfter {
            delay = max(0, retryAfter)
        } else {
            let ceiling = min(policy.maxDelay, policy.baseDelay * Double(1 << min(tries - 1, 20)))
            delay = ceiling * random()
        }
        return start(next, delay: delay)
    }

    /// Another check (the cross-check of an unpinned file) wants the file from `mirror`: an attempt there now,
    /// counted like any other, or `.giveUp` when the attempts are spent.
    public mutating func switchTo(_ mirror: Int) -> Action {
        guard attempts < policy.maxAttempts else { return .giveUp(reason: summary.isEmpty ? "no attempts left" : summary) }
        return start(mirror, delay: 0)
    }

    /// What went wrong, mirror by mirror, for the final report: `mirror 1: HTTP 503; mirror 2: hash mismatch`.
    public var summary: String { summary(health: nil) }

    /// `summary`, with the reason of each mirror given up for the run, or passed over as unreachable at `now`,
    /// that this file did not try (the same words as the file that found it, so a surah's ayat given up for one
    /// dead mirror read as one range).
    public func summary(health: MirrorHealth?, now: Double = -.infinity) -> String {
        var latest: [Int: String] = health?.abandoned ?? [:]
        for mirror in 0..<mirrorCount where latest[mirror] == nil {
            if let reason = health?.unreachableReason(mirror, now: now) { latest[mirror] = reason }
        }
        for (mirror, failure) in failures { latest[mirror] = failure.reason }
        return latest.keys.sorted().map { "mirror \($0 + 1): \(latest[$0]!)" }.joined(separator: "; ")
    }

    private mutating func start(_ mirror: Int, delay: Double) -> Action {
        attempts += 1
        attemptsOnMirror[mirror] += 1
        lastMirror = mirror
        return .start(mirror: mirror, delay: delay)
    }

    /// The next usable mirror in order after `current` (wrapping), preferring mirrors that are not demoted;
    /// never one given up for the run.
    private func nextMirror(after current: Int?, health: MirrorHealth, now: Double) -> Int? {
        let first = current.map { ($0 + 1) % mirrorCount } ?? 0
        let order = (0..<mirrorCount).map { (first + $0) % mirrorCount }
            .filter { !unusable.contains($0) && health.abandonedReason($0) == nil && health.unreachableReason($0, now: now) == nil }
        return order.first { !health.isDemoted($0, now: now) } ?? order.first
    }
}
