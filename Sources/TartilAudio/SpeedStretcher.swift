import CSonic

/// Changes the speed of signed 16-bit PCM without changing its pitch, with libsonic (the speech-oriented
/// time-stretch ExoPlayer's speed control is built on). Frames go in, fewer (faster) or more (slower) come out, a
/// little later: the stream holds up to about two `blockFrames` of input while it looks for pitch periods.
///
/// The stream is owned by this instance and confined to one thread (the audio thread).
/// The corresponding C functions are `sonicCreateStream`, `sonicWriteShortToStream`, `sonicReadShortFromStream`,
/// `sonicFlushStream` and `sonicDestroyStream`.
public final class SpeedStretcher {
    public let format: PCMFormat
    private var stream: sonicStream
    /// The speed frames written from now on are stretched to.
    public var speed: Double {
        didSet { sonicSetSpeed(stream, Float(speed)) }
    }
    /// Input frames taken since the stream was last emptied, and output frames read, each counted in input
    /// frames at the speed it was read (what `heldFrames` is worked out from).
    private var framesIn = 0
    private var framesOutAsInput = 0.0

    /// A stream for `format` at `speed`.
    public init(format: PCMFormat, speed: Double) throws(AudioError) {
        guard let stream = sonicCreateStream(Int32(format.sampleRate), Int32(format.channels)) else {
            throw AudioError(.library, "sonicCreateStream: out of memory")
        }
        self.format = format
        self.stream = stream
        self.speed = speed
        sonicSetSpeed(stream, Float(speed))
    }

    deinit { sonicDestroyStream(stream) }

    /// libsonic's block at `sampleRate`: the longest pitch period it searches, twice (`2 · rate / 65` frames). The
    /// stream holds up to about two of them, and its output's length is within one of input ÷ speed.
    public static func blockFrames(sampleRate: Int) -> Int { 2 * sampleRate / Int(SONIC_MIN_PITCH) }

    /// Input frames taken but not yet given out (in the recording's frames): what a listener has not heard yet
    /// although it was decoded.
    public var heldFrames: Int { max(0, framesIn - Int(framesOutAsInput.rounded())) }

    /// Takes `input` (whole frames) and appends what is ready to `output` (samples, interleaved).
    public func process(_ input: UnsafeBufferPointer<Int16>, into output: inout [Int16]) throws(AudioError) {
        guard input.count > 0 else { return }
        let frames = input.count / format.channels
        let accepted = sonicWriteShortToStream(stream, UnsafeMutablePointer(mutating: input.baseAddress!), Int32(frames))
        guard accepted != 0 else { throw AudioError(.library, "sonicWriteShortToStream: out of memory") }
        framesIn += frames
        read(into: &output)
    }

    /// Gives out everything held (the end of the plan, or before the speed goes back to 1): libsonic pads with
    /// silence internally and keeps only the frames the input accounts for.
    public func flush(into output: inout [Int16]) throws(AudioError) {
        guard sonicFlushStream(stream) != 0 else { throw AudioError(.library, "sonicFlushStream: out of memory") }
        read(into: &output)
        framesIn = 0
        framesOutAsInput = 0
    }

    /// Drops everything held (a seek, a pause): a new stream at the same speed, since libsonic has no reset.
    public func discard() throws(AudioError) {
        guard let fresh = sonicCreateStream(Int32(format.sampleRate), Int32(format.channels)) else {
            throw AudioError(.library, "sonicCreateStream: out of memory")
        }
        sonicDestroyStream(stream)
        stream = fresh
        sonicSetSpeed(stream, Float(speed))
        framesIn = 0
        framesOutAsInput = 0
    }

    private func read(into output: inout [Int16]) {
        let channels = format.channels
        while true {
            let available = Int(sonicSamplesAvailable(stream))
            guard available > 0 else { return }
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: available * channels))
            let got = output.withUnsafeMutableBufferPointer { buffer in
                Int(sonicReadShortFromStream(stream, buffer.baseAddress! + start, Int32(available)))
            }
            output.removeLast((available - got) * channels)
            framesOutAsInput += Double(got) * speed
            if got == 0 { return }
        }
    }
}

@available(*, unavailable) extension SpeedStretcher: Sendable {}
