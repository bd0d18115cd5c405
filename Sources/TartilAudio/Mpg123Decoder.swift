import CMpg123
import Glibc

/// Decodes one MP3 file to interleaved signed 16-bit PCM at the file's own rate and channel count, with mpg123's
/// gapless trimming on (encoder delay and padding from a LAME/Info tag are removed, as `mpg123` itself does).
///
/// The handle is owned by this instance and confined to one thread at a time.
/// The corresponding C functions are `mpg123_new`, `mpg123_open`, `mpg123_read` and `mpg123_delete`.
public final class Mpg123Decoder {
    public typealias Format = PCMFormat

    private let handle: OpaquePointer
    private var isOpen = false
    /// The bytes being decoded when the file was opened from memory (`open(bytes:name:)`).
    private var memory: MemoryReader?
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
        try check(mpg123_replace_reader_handle(handle, nil, nil, nil), "mpg123_replace_reader_handle")
        let result = mpg123_open(handle, path)
        guard result == MPG123_OK.rawValue else {
            throw AudioError(.decode, "\(path): mpg123_open: \(errorMessage(result))")
        }
        isOpen = true
        try readFormat(path)
    }

    /// Opens a file already in memory (a cached file read and verified in one step, so that what is decoded is
    /// exactly what was hashed). `name` is for messages.
    public func open(bytes: [UInt8], name: String) throws(AudioError) {
        try open(MemoryReader(.array(bytes)), name: name)
    }

    /// Opens bytes in memory that the caller keeps valid until `close` (a file mapped into memory, or part of
    /// one). `passing` is told how far mpg123 has read, as it reads (so that the pages of a mapped file behind
    /// that can be let go: `MappedFile.passed`). `name` is for messages.
    public func open(buffer: UnsafeRawBufferPointer, name: String, passing: ((Int) -> Void)? = nil) throws(AudioError) {
        try open(MemoryReader(.buffer(buffer, passing: passing)), name: name)
    }

    private func open(_ reader: MemoryReader, name: String) throws(AudioError) {
        close()
        try check(mpg123_replace_reader_handle(handle, MemoryReader.read, MemoryReader.seek, nil), "mpg123_replace_reader_handle")
        let result = mpg123_open_handle(handle, Unmanaged.passUnretained(reader).toOpaque())
        guard result == MPG123_OK.rawValue else {
            throw AudioError(.decode, "\(name): mpg123_open_handle: \(errorMessage(result))")
        }
        memory = reader
        isOpen = true
        try readFormat(name)
    }

    private func readFormat(_ name: String) throws(AudioError) {
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        let formatResult = mpg123_getformat(handle, &rate, &channels, &encoding)
        guard formatResult == MPG123_OK.rawValue else {
            close()
            throw AudioError(.decode, "\(name): not MPEG audio (mpg123_getformat: \(errorMessage(formatResult)))")
        }
        format = Format(sampleRate: rate, channels: Int(channels))
    }

    /// Closes the open file, if any.
    public func close() {
        if isOpen {
            mpg123_close(handle)
            isOpen = false
        }
        memory = nil
    }

    /// Decodes and drops the next `frames` PCM frames, so that the next `read` starts that much further on: right
    /// after `open`, the next `read` then returns exactly the samples a full decode gives at frame `frames`.
    /// Returns the frames actually passed over (fewer at the end of the file).
    ///
    /// Why not `mpg123_seek`: it lands on the right sample, but what follows differs from a full decode, by a
    /// few hundred samples after the target and by ±1 here and there well after it (measured on the real
    /// recordings: the synthesis filter restarts empty, and its double buffer can end up on the other half).
    /// Per-ayah files are short, and decoding runs at hundreds of times real time, so decoding from the start
    /// costs little and is exact by construction.
    @discardableResult
    public func skip(frames: Int) throws(AudioError) -> Int {
        precondition(isOpen, "Mpg123Decoder.skip without an open file")
        var remaining = frames >= Int.max / 8 ? Int.max : frames * format.frameBytes
        guard remaining > 0 else { return 0 }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 15, alignment: 16)
        defer { scratch.deallocate() }
        var skipped = 0
        while remaining > 0 {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(remaining, scratch.count)]))
            if count == 0 { break }
            remaining -= count
            skipped += count
        }
        return skipped / format.frameBytes
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
        return try countRemaining(path)
    }

    /// The same for a file in memory.
    public func countSamples(bytes: [UInt8], name: String) throws(AudioError) -> (format: Format, samples: Int) {
        try open(bytes: bytes, name: name)
        defer { close() }
        return try countRemaining(name)
    }

    /// The same for bytes in memory that the caller keeps valid (`passing` as for `open(buffer:name:passing:)`).
    public func countSamples(buffer: UnsafeRawBufferPointer, name: String, passing: ((Int) -> Void)? = nil) throws(AudioError) -> (format: Format, samples: Int) {
        try open(buffer: buffer, name: name, passing: passing)
        defer { close() }
        return try countRemaining(name)
    }

    private func countRemaining(_ name: String) throws(AudioError) -> (format: Format, samples: Int) {
        let frames: Int
        do {
            frames = try skip(frames: Int.max)
        } catch {
            throw AudioError(error.code, "\(name): \(error.message)")
        }
        guard frames > 0 else { throw AudioError(.decode, "\(name): no MPEG audio frames decoded") }
        return (format, frames)
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

/// The format of decoded PCM: signed 16-bit little-endian, interleaved.
public struct PCMFormat: Sendable, Hashable, CustomStringConvertible {
    public let sampleRate: Int
    public let channels: Int

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Bytes per PCM frame (one sample for each channel).
    public var frameBytes: Int { 2 * channels }

    public var description: String { "\(sampleRate) Hz, \(channels == 1 ? "mono" : "\(channels) channels")" }
}

/// Bytes mpg123 reads through its handle callbacks, as if from a file.
private final class MemoryReader {
    enum Source {
        case array([UInt8])
        /// Memory the caller keeps valid, and whom to tell how far it has been read.
        case buffer(UnsafeRawBufferPointer, passing: ((Int) -> Void)?)
    }

    let source: Source
    let count: Int
    var position = 0

    init(_ source: Source) {
        self.source = source
        switch source {
        case .array(let bytes): count = bytes.count
        case .buffer(let buffer, _): count = buffer.count
        }
    }

    static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int = { handle, buffer, count in
        let reader = Unmanaged<MemoryReader>.fromOpaque(handle!).takeUnretainedValue()
        let available = max(0, min(count, reader.count - reader.position))
        if available > 0, let buffer {
            switch reader.source {
            case .array(let bytes):
                bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: source.baseAddress! + reader.position, byteCount: available)
                }
            case .buffer(let source, let passing):
                buffer.copyMemory(from: source.baseAddress! + reader.position, byteCount: available)
                passing?(reader.position + available)
            }
            reader.position += available
        }
        return available
    }

    static let seek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { handle, offset, whence in
        let reader = Unmanaged<MemoryReader>.fromOpaque(handle!).takeUnretainedValue()
        let base = switch whence {
        case SEEK_SET: 0
        case SEEK_CUR: reader.position
        case SEEK_END: reader.count
        default: -1
        }
        let target = base + Int(offset)
        guard base >= 0, target >= 0, target <= reader.count else { return -1 }
        reader.position = target
        return off_t(target)
    }
}
