/// Decides when a connection that many requests share has stalled. Over HTTP/2 a server sends its streams'
/// data largely one stream after another (nginx does), so on a slow link a request can wait tens of seconds
/// for its first byte while the connection is busy with the others: judged one by one, as libcurl's
/// CURLOPT_LOW_SPEED_LIMIT does, it would be taken for a stall and retried, and the retry would wait again. A
/// stall is judged instead on everything its shared connections received (there is usually one) while requests
/// sent on them are in flight: the server has stalled when, for the last `seconds` without a break, it sent
/// under `bytesPerSecond` in all.
///
/// A pure value: the downloader reports each server's running total of bytes received and whether requests
/// that share a connection are in flight to it, and stops those requests when `observe` says it stalled.
public struct StallWatch: Sendable, Hashable {
    /// How long a rate under `bytesPerSecond` makes a stall.
    public let seconds: Double
    public let bytesPerSecond: Int
    /// Samples are kept at most this often (the downloader observes on every wake-up).
    static let sampleInterval = 0.25

    private struct Sample: Sendable, Hashable {
        let time: Double
        let bytes: Int
    }

    /// Per busy server: samples covering the last `seconds` (the oldest at or before the window's start).
    private var samples: [String: [Sample]] = [:]

    public init(seconds: Double, bytesPerSecond: Int) {
        precondition(seconds > 0 && bytesPerSecond > 0, "a stall needs a time and a rate")
        self.seconds = seconds
        self.bytesPerSecond = bytesPerSecond
    }

    /// Records that `server`'s requests have received `bytes` in all so far (a running total that never goes
    /// down) at `now` (seconds, any monotonic origin), and whether requests sharing a connection are in flight to
    /// it (`busy`). Returns whether it has stalled: busy for the whole of the last `seconds`, with fewer than
    /// `bytesPerSecond` × the time received in them. A server that is not busy starts afresh.
    public mutating func observe(_ server: String, bytes: Int, busy: Bool, now: Double) -> Bool {
        guard busy else {
            samples[server] = nil
            return false
        }
        var kept = samples[server] ?? []
        // At most a sample every `sampleInterval`; between samples the judgement uses the current total all the same.
        if kept.last.map({ now - $0.time >= Self.sampleInterval }) ?? true {
            kept.append(Sample(time: now, bytes: bytes))
        }
        let windowStart = now - seconds
        while kept.count >= 2, kept[1].time <= windowStart { kept.removeFirst() }
        samples[server] = kept
        guard let first = kept.first, first.time <= windowStart else { return false }  // not busy that long yet
        return Double(bytes - first.bytes) < Double(bytesPerSecond) * (now - first.time)
    }

    /// Forgets `server` (its requests were stopped as stalled): its next requests get a whole window.
    public mutating func reset(_ server: String) {
        samples[server] = nil
    }
}
