import CMpg123
import Foundation

/// Decodes one MP3 file to interleaved signed 16-bit PCM at the file's own rate and channel count, with mpg123's
/// gapless trimming on (encoder delay and padding from a LAME/Info tag are removed, as `mpg123` itself does).
///
/// The handle is owned by this instance and confined to one thread at a time.
/// The corresponding C functions are `mpg123_new`, `mpg123_open`, `mpg123_read` and `mpg123_delete`.
public final class Mpg123Decoder {
    /// The output format of an opened file.
    public struct Format: Sendable, Hashable {
        public let sampleRate: Int
        public let channels: Int
    }

    private let handle: OpaquePointer
    private var isOpen = false
    /// The format of the open file (known after `open`).
    public private(set) var format = Format(sampleRate: 0, channels: 0)

    /// Creates a decoder with gapless trimming on, quiet (errors are reported through exceptions), and
    /// signed 16-bit output at every rate MPEG audio uses.
    public init() throws(AudioError) {
        Self.initializeLibrary
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw AudioError(.library, "mpg123_new: \(String(cString: mpg123_plain_strerror(error)))")
        }
        self.handle = handle
        let flags = Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue)
        try check(mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0), "mpg123_param2(MPG123_ADD_FLAGS)")
        try check(mpg123_format_none(handle), "mpg123_format_none")
        for rate in [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] {
            let channels = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
            try check(mpg123_format(handle, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue)), "mpg123_format")
        }
    }

    deinit {
        if isOpen { mpg123_close(handle) }
        mpg123_delete(handle)
    }

    /// `mpg123_init` is needed once per process by mpg123 before 1.27 and harmless after.
    private static let initializeLibrary: Void = { _ = mpg123_init() }()

    /// Opens `path` and reads the first frame's format. Throws `.decode` when the file cannot be read or holds no
    /// MPEG audio.
    public func open(_ path: String) throws(AudioError) {
        close()
        let result = mpg123_open(handle, path)
        guard result == MPG123_OK.rawValue else {
            throw AudioError(.decode, "\(path): mpg123_open: \(errorMessage(result))")
        }
        isOpen = true
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        let formatResult = mpg123_getformat(handle, &rate, &channels, &encoding)
        guard formatResult == MPG123_OK.rawValue else {
            close()
            throw AudioError(.decode, "\(path): not MPEG audio (mpg123_getformat: \(errorMessage(formatResult)))")
        }
        format = Format(sampleRate: rate, channels: Int(channels))
    }

    /// Closes the open file, if any.
    public func close() {
        if isOpen {
            mpg123_close(handle)
            isOpen = false
        }
    }

    /// Decodes up to `buffer.count` bytes of PCM into `buffer`; returns the number of bytes written, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioError) -> Int {
        precondition(isOpen, "Mpg123Decoder.read without an open file")
        while true {
            var done = 0
            let result = mpg123_read(handle, buffer.baseAddress, buffer.count, &done)
            switch result {
            case MPG123_OK.rawValue:
                return done
            case MPG123_DONE.rawValue:
                return done
            case MPG123_NEW_FORMAT.rawValue:
                // The format is fixed by the format table above; a change mid-file means a different stream.
                var rate = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                _ = mpg123_getformat(handle, &rate, &channels, &encoding)
                let newFormat = Format(sampleRate: rate, channels: Int(channels))
                if done > 0 || newFormat == format { if done > 0 { return done } else { continue } }
                throw AudioError(
                    .decode,
                    "the stream changes format mid-file (\(format.sampleRate) Hz → \(rate) Hz, \(format.channels) → \(channels) channels)")
            default:
                throw AudioError(.decode, "mpg123_read: \(errorMessage(result))")
            }
        }
    }

    /// Decodes the whole of `path` and returns its format and the number of PCM frames (samples per channel)
    /// mpg123 produces with gapless trimming: the number a reciter table pins.
    public func countSamples(_ path: String) throws(AudioError) -> (format: Format, samples: Int) {
        try open(path)
        defer { close() }
        let bufferSize = 1 << 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var bytes = 0
        while true {
            let count: Int
            do {
                count = try read(into: buffer)
            } catch {
                throw AudioError(error.code, "\(path): \(error.message)")
            }
            if count == 0 { break }
            bytes += count
        }
        let frameBytes = 2 * format.channels
        guard bytes > 0 else { throw AudioError(.decode, "\(path): no MPEG audio frames decoded") }
        return (format, bytes / frameBytes)
    }

    private func check(_ result: Int32, _ call: String) throws(AudioError) {
        guard result == MPG123_OK.rawValue else {
            throw AudioError(.library, "\(call): \(errorMessage(result))")
        }
    }

    private func errorMessage(_ result: Int32) -> String {
        if result == MPG123_ERR.rawValue { return String(cString: mpg123_strerror(handle)) }
        return String(cString: mpg123_plain_strerror(result))
    }
}

@available(*, unavailable) extension Mpg123Decoder: Sendable {}
