import CALSA
import Glibc

/// Plays PCM on an ALSA device (`default`, `hw:0`, `null`, …). Writes block while the device's buffer (about
/// 200 ms) is full, which paces playback; an underrun is recovered from and playing goes on.
///
/// The handle is owned by this instance and confined to the audio thread.
/// The corresponding C functions are `snd_pcm_open`, `snd_pcm_set_params`, `snd_pcm_writei`, `snd_pcm_delay`,
/// `snd_pcm_drop`, `snd_pcm_drain` and `snd_pcm_close`.
public final class ALSAOutput: AudioOutput {
    public let name: String
    public let isPaced = true
    private let device: String
    private var pcm: OpaquePointer?
    private var format: PCMFormat?
    /// The device's buffer, in microseconds: short enough that pause and seek act at once, long enough to ride
    /// over a busy moment of the machine.
    private static let latencyMicroseconds: UInt32 = 200_000

    /// Opens `device` for playback (what to do without a sound card is the session's advice, added to the message).
    public init(device: String) throws(AudioError) {
        self.device = device
        name = "alsa:\(device)"
        if let failure = Self.loadFailure { throw AudioError(.output, "cannot open the ALSA device '\(device)': \(failure)") }
        var handle: OpaquePointer?
        let result = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard result == 0, let handle else {
            throw AudioError(
                .output,
                "cannot open the ALSA device '\(device)': \(Self.message(result))")  // the session adds what to do instead
        }
        pcm = handle
    }

    /// Why ALSA could not be loaded (`calsa_load`: on first use, once), or nil when it was.
    static let loadFailure: String? = calsa_load().map { String(cString: $0) }

    deinit {
        if let pcm { snd_pcm_close(pcm) }
    }

    public func configure(_ format: PCMFormat) throws(AudioError) {
        guard let pcm, format != self.format else { return }
        if self.format != nil { snd_pcm_drain(pcm) }  // play out the old format first
        let result = snd_pcm_set_params(
            pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(format.channels), UInt32(format.sampleRate),
            1, Self.latencyMicroseconds)
        guard result == 0 else {
            throw AudioError(.output, "the ALSA device '\(device)' cannot play \(format): \(Self.message(result))")
        }
        self.format = format
    }

    public func write(_ pcm: UnsafeRawBufferPointer) throws(AudioError) {
        guard let handle = self.pcm, let format else { throw AudioError(.output, "\(name): written before it was configured") }
        let total = pcm.count / format.frameBytes
        var done = 0
        while done < total {
            let result = snd_pcm_writei(handle, pcm.baseAddress! + done * format.frameBytes, snd_pcm_uframes_t(total - done))
            if result >= 0 {
                done += Int(result)
                continue
            }
            // An underrun (-EPIPE), a suspend (-ESTRPIPE) or a signal (-EINTR): recover and write the rest.
            let recovered = snd_pcm_recover(handle, Int32(result), 1)
            guard recovered == 0 else {
                throw AudioError(.output, "cannot write to the ALSA device '\(device)': \(Self.message(Int32(result)))")
            }
        }
    }

    public var unplayedFrames: Int {
        guard let pcm else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &delay) == 0 else { return 0 }
        return max(0, Int(delay))
    }

    public func discard() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
    }

    public func abandon() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
        self.pcm = nil
    }

    public func finish() throws(AudioError) {
        guard let pcm else { return }
        if format != nil { snd_pcm_drain(pcm) }
        snd_pcm_close(pcm)
        self.pcm = nil
    }

    private static func message(_ result: Int32) -> String { String(cString: snd_strerror(result)) }
}

@available(*, unavailable) extension ALSAOutput: Sendable {}
