/// Software volume on signed 16-bit PCM, with a peak limiter so that a level above 100 never wraps or clips
/// silently.
///
/// Each sample becomes `round(x · volume / 100)`, exactly, as long as that stays within full scale. Where it would not, the limiter lowers the gain: it looks at the whole
/// chunk before writing it, brings the gain down over at most `attackSeconds` before the loud frame (never more than
/// needed), and lets it rise back over `releaseSeconds`. A final clamp to ±32767 is only a safety.
///
/// Confined to one thread (the audio thread); the limiter's gain carries from one chunk to the next.
public final class GainStage {
    /// The level in percent (0…150); 100 leaves samples untouched.
    public var volume: Int
    /// The limiter's gain now (1 while it is not engaged).
    public private(set) var limiterGain: Float = 1
    /// True when the limiter lowered the gain at least once.
    public private(set) var hasLimited = false

    /// How fast the limiter lowers the gain (from 1 to 0 at most this fast) and lets it rise again.
    public static let attackSeconds = 0.002
    public static let releaseSeconds = 0.5
    static let fullScale: Float = 32767

    private var amplified: [Float] = []
    private var allowed: [Float] = []

    public init(volume: Int) { self.volume = volume }

    /// True when the samples come out exactly as they go in (100 %): nothing needs doing.
    public var isIdentity: Bool { volume == 100 && limiterGain == 1 }

    /// Applies the volume to `samples` in place: `channels` interleaved, at `sampleRate`.
    public func apply(to samples: UnsafeMutableBufferPointer<Int16>, channels: Int, sampleRate: Int) {
        guard !isIdentity, samples.count > 0 else { return }
        let frames = samples.count / channels
        let level = Float(volume)
        if amplified.count < samples.count { amplified = [Float](repeating: 0, count: samples.count) }
        var peak: Float = 0
        for index in 0..<samples.count {
            // x · volume is exact in a Float (below 2^24), and one division by 100 rounds it correctly.
            let value = Float(samples[index]) * level / 100
            amplified[index] = value
            peak = max(peak, abs(value))
        }
        if peak <= Self.fullScale && limiterGain == 1 {
            for index in 0..<samples.count { samples[index] = Int16(amplified[index].rounded()) }
            return
        }
        limit(frames: frames, channels: channels, sampleRate: sampleRate)
        for index in 0..<samples.count {
            let value = (amplified[index] * allowed[index / channels]).rounded()
            samples[index] = Int16(max(-Self.fullScale, min(Self.fullScale, value)))  // a safety only
        }
    }

    /// Works out the limiter's gain for each frame into `allowed`: at most what keeps the frame within full scale,
    /// falling at most `attack` per frame (so it starts falling before a peak) and rising at most `release` per
    /// frame.
    private func limit(frames: Int, channels: Int, sampleRate: Int) {
        if allowed.count < frames { allowed = [Float](repeating: 1, count: frames) }
        let attack = Float(1 / (Self.attackSeconds * Double(sampleRate)))
        let release = Float(1 / (Self.releaseSeconds * Double(sampleRate)))
        // Backwards: the most each frame may have, so the gain can come down in time for every peak after it.
        var next: Float = 1
        for frame in stride(from: frames - 1, through: 0, by: -1) {
            var loudest: Float = 0
            for channel in 0..<channels { loudest = max(loudest, abs(amplified[frame * channels + channel])) }
            let needed = loudest > Self.fullScale ? Self.fullScale / loudest : 1
            next = min(needed, next + attack)
            allowed[frame] = next
        }
        // Forwards: from the gain the last chunk ended with, rising no faster than the release.
        var gain = limiterGain
        for frame in 0..<frames {
            gain = min(allowed[frame], gain + release)
            if gain < 1 { hasLimited = true }
            allowed[frame] = gain
        }
        limiterGain = gain
    }
}

@available(*, unavailable) extension GainStage: Sendable {}
