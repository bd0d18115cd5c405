/// What the sound device still holds, counted in the recording's own frames: the device holds frames at the
/// speed they were stretched to, and the playback machine counts in recording frames. Each write is logged with
/// its speed, so the device's unplayed frames convert exactly even across a speed change (1.5 s of device audio
/// written at 2× is 3 s of recording). At 1× throughout it is the identity.
///
/// ```swift
/// var ledger = SpeedLedger()
/// ledger.wrote(1000, at: 2.0)
/// ledger.wrote(500, at: 1.0)
/// ledger.recordingFrames(unplayed: 800)   // 500 × 1 + 300 × 2 = 1100
/// ```
public struct SpeedLedger: Sendable {
    /// Runs of device frames written at one speed, oldest first.
    private var runs: [(frames: Int, speed: Double)] = []

    public init() {}

    /// `frames` device frames were written, stretched at `speed`.
    public mutating func wrote(_ frames: Int, at speed: Double) {
        guard frames > 0 else { return }
        if let last = runs.last, last.speed == speed {
            runs[runs.count - 1].frames += frames
        } else {
            runs.append((frames, speed))
        }
    }

    /// The recording frames the last `unplayed` device frames hold (rounded); runs older than them (heard) are
    /// forgotten.
    public mutating func recordingFrames(unplayed: Int) -> Int {
        var left = max(0, unplayed)
        var recording = 0.0
        var index = runs.count
        while left > 0 && index > 0 {
            index -= 1
            let taken = min(left, runs[index].frames)
            recording += Double(taken) * runs[index].speed
            left -= taken
            if left == 0 && taken < runs[index].frames { runs[index].frames = taken }
        }
        runs.removeFirst(index)
        return Int(recording.rounded())
    }

    /// The device dropped what it held (a seek, a pause).
    public mutating func clear() { runs.removeAll() }

}
