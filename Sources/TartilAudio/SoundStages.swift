/// What happens to decoded PCM on its way to the output: the speed (`SpeedStretcher`), then the volume and its
/// limiter (`GainStage`). At speed 1 and volume 100 the decode passes through untouched (the same bytes: no copy,
/// no libsonic).
///
/// Confined to the audio thread; `process` returns a buffer valid until the next call.
public final class SoundStages {
    public private(set) var speed = 1.0
    public var volume: Int {
        get { gain.volume }
        set { gain.volume = newValue }
    }
    private let gain = GainStage(volume: 100)
    private var stretcher: SpeedStretcher?
    private var format: PCMFormat?
    private var processed: [Int16] = []

    public init() {}

    /// The decoded frames the stages hold and have not given out yet (libsonic's look-ahead), in the recording's
    /// frames.
    public var heldFrames: Int { stretcher?.heldFrames ?? 0 }

    /// True once the limiter has had to lower the gain.
    public var hasLimited: Bool { gain.hasLimited }

    /// The format of the frames to come. Call after `flush` when it changes (held frames are in the old one).
    public func configure(_ newFormat: PCMFormat) throws(AudioError) {
        guard newFormat != format else { return }
        format = newFormat
        stretcher = speed == 1 ? nil : try SpeedStretcher(format: newFormat, speed: speed)
    }

    /// Changes the speed of what is processed from now on. Going back to 1 gives out what libsonic held first (in
    /// the returned buffer, to be written before anything else).
    public func setSpeed(_ newSpeed: Double) throws(AudioError) -> UnsafeRawBufferPointer {
        guard newSpeed != speed else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        speed = newSpeed
        if newSpeed == 1 {
            let tail = try flush()
            stretcher = nil
            return tail
        }
        if let stretcher {
            stretcher.speed = newSpeed
        } else if let format {
            stretcher = try SpeedStretcher(format: format, speed: newSpeed)
        }
        return UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Decoded PCM (whole frames) in, what to write out: the same buffer at speed 1 and volume 100.
    public func process(_ pcm: UnsafeRawBufferPointer) throws(AudioError) -> UnsafeRawBufferPointer {
        guard let format else { return pcm }
        if let stretcher {
            processed.removeAll(keepingCapacity: true)
            try stretcher.process(pcm.assumingMemoryBound(to: Int16.self), into: &processed)
            return gained(format)
        }
        guard !gain.isIdentity else { return pcm }
        processed.removeAll(keepingCapacity: true)
        processed.append(contentsOf: pcm.assumingMemoryBound(to: Int16.self))
        return gained(format)
    }

    /// Everything libsonic still holds, processed (before the output drains at the end of the plan).
    public func flush() throws(AudioError) -> UnsafeRawBufferPointer {
        processed.removeAll(keepingCapacity: true)
        guard let stretcher, let format else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        try stretcher.flush(into: &processed)
        return gained(format)
    }

    /// Drops what libsonic holds (a seek, a pause: nothing stale may be heard after).
    public func discard() throws(AudioError) {
        try stretcher?.discard()
    }

    private func gained(_ format: PCMFormat) -> UnsafeRawBufferPointer {
        processed.withUnsafeMutableBufferPointer { buffer in
            gain.apply(to: buffer, channels: format.channels, sampleRate: format.sampleRate)
        }
        return processed.withUnsafeBytes { UnsafeRawBufferPointer(start: $0.baseAddress, count: $0.count) }
    }
}

@available(*, unavailable) extension SoundStages: Sendable {}
