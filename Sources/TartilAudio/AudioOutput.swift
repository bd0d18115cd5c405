import Glibc
import TartilCore
import TartilSystem

/// Where decoded PCM goes: a sound device (`ALSAOutput`), a WAV file (`WAVOutput`) or nowhere (`NullOutput`).
/// An output is owned by the audio thread.
public protocol AudioOutput: AnyObject {
    /// What the user named (`alsa:default`, `wav:out.wav`, `null`), for messages.
    var name: String { get }
    /// Prepares for `format`. Called before the first write and again whenever the format changes.
    func configure(_ format: PCMFormat) throws(AudioError)
    /// Writes whole frames of interleaved signed 16-bit PCM. A device blocks while its buffer is full, which
    /// paces playback; files and `null` return at once.
    func write(_ pcm: UnsafeRawBufferPointer) throws(AudioError)
    /// Frames written that have not been heard yet (a device's buffer); 0 for files and `null`.
    var unplayedFrames: Int { get }
    /// True when writes take as long as the sound lasts (a device): the player then writes small chunks, so that
    /// commands act at once.
    var isPaced: Bool { get }
    /// Drops what is buffered but not yet heard (for pause, seek and stop to act at once).
    func discard()
    /// Waits until every frame written has been heard (the end of playback), then closes.
    func finish() throws(AudioError)
    /// Ends without finishing: drops what is buffered, and a file output removes what it wrote.
    func abandon()
    /// For an output that keeps time by a clock (`silent`): when a write of `frames` more could go without waiting
    /// (nil: now). The player waits for that moment where a command can reach it, instead of inside `write`.
    func readyForWriting(_ frames: Int) -> ClockInstant?
    /// For such an output: when everything written will have been heard (nil: `finish` waits, as a device does).
    var drainedAt: ClockInstant? { get }
}

extension AudioOutput {
    public func readyForWriting(_ frames: Int) -> ClockInstant? { nil }
    public var drainedAt: ClockInstant? { nil }
}

extension OutputChoice {
    /// Opens the output (a WAV file is created here); `silent` keeps time by `clock`.
    public func open(clock: any TartilClock = SystemClock.shared) throws(AudioError) -> any AudioOutput {
        switch self {
        case .alsa(let device): try ALSAOutput(device: device)
        case .wav(let path): try WAVOutput(path: path)
        case .null: NullOutput()
        case .silent: SilentOutput(clock: clock)
        }
    }
}

/// Discards PCM at the pace a sound card would play it, with a sound card's 200 ms buffer: playing without a
/// sound card (a headless machine, a test of a script, measuring what real-time playback costs). ALSA's `null`
/// device, by contrast, takes everything at once.
public final class SilentOutput: AudioOutput {
    public let name = "silent"
    private let clock: any TartilClock
    private var sampleRate = 22050
    private var channels = 1
    /// The device clock: when frame 0 of the current stream was (or would have been) heard.
    private var start: ClockInstant
    private var framesWritten = 0
    private static let bufferSeconds = 0.2

    /// A silent device that keeps time by `clock` (a manual clock in tests).
    public init(clock: any TartilClock = SystemClock.shared) {
        self.clock = clock
        start = clock.now
    }

    public let isPaced = true

    public func configure(_ format: PCMFormat) throws(AudioError) {
        // The player waits for `drainedAt` before a new format (where a command can reach it); what is still
        // unplayed here is dropped, as a sound card's drop would.
        sampleRate = format.sampleRate
        channels = format.channels
        restart()
    }

    public func write(_ pcm: UnsafeRawBufferPointer) throws(AudioError) {
        let played = playedFrames
        if played >= framesWritten { restartAt(played: framesWritten) }  // an underrun: the clock waited for us
        framesWritten += pcm.count / 2 / max(1, channels)
        // Block while more than the buffer's worth is waiting to be "heard".
        let ahead = framesWritten - Int(Self.bufferSeconds * Double(sampleRate))
        if ahead > playedFrames { clock.sleep(until: start.adding(seconds: Double(ahead) / Double(sampleRate))) }
    }

    public var unplayedFrames: Int { max(0, framesWritten - playedFrames) }

    public func readyForWriting(_ frames: Int) -> ClockInstant? {
        let played = playedFrames
        guard played < framesWritten else { return nil }  // an underrun: it takes what comes at once
        let ahead = framesWritten + frames - Int(Self.bufferSeconds * Double(sampleRate))
        guard ahead > played else { return nil }
        return start.adding(seconds: Double(ahead) / Double(sampleRate))
    }

    public var drainedAt: ClockInstant? {
        framesWritten > playedFrames ? start.adding(seconds: Double(framesWritten) / Double(sampleRate)) : nil
    }

    public func discard() { restart() }
    public func abandon() { restart() }

    public func finish() throws(AudioError) {
        if unplayedFrames > 0 { clock.sleep(until: start.adding(seconds: Double(framesWritten) / Double(sampleRate))) }
    }

    /// Frames heard since `start`, counted exactly: ⌊elapsed nanoseconds × rate / 10⁹⌋.
    private var playedFrames: Int {
        let now = clock.now.nanoseconds
        guard now > start.nanoseconds else { return 0 }
        let product = (now - start.nanoseconds).multipliedFullWidth(by: UInt64(sampleRate))
        return Int(UInt64(1_000_000_000).dividingFullWidth(product).quotient)
    }

    private func restart() {
        framesWritten = 0
        start = clock.now
    }

    /// Moves the clock so that `played` frames count as heard now.
    private func restartAt(played: Int) {
        start = clock.now.adding(seconds: -Double(played) / Double(sampleRate))
    }
}

/// Discards PCM as fast as it comes (benchmarks, and checking a range decodes without playing it).
public final class NullOutput: AudioOutput {
    public let name = "null"
    public let isPaced = false
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private var format = PCMFormat(sampleRate: 0, channels: 1)

    public init() {}

    public func configure(_ format: PCMFormat) throws(AudioError) { self.format = format }
    public func write(_ pcm: UnsafeRawBufferPointer) throws(AudioError) { framesWritten += pcm.count / format.frameBytes }
    public var unplayedFrames: Int { 0 }
    public func discard() {}
    public func finish() throws(AudioError) {}
    public func abandon() {}
}

/// Writes the exact PCM to a WAV file (RIFF, 16-bit PCM; RF64 past 4 GiB, see `WAVHeader`), unpaced. A regular
/// file is written under a temporary name, its header's sizes filled in by `finish`, and renamed into place then,
/// so a stopped render leaves no half-written file under the name asked for. A path that is not a regular file (`/dev/stdout`, a pipe,
/// `/dev/null`) is written straight through, with the streaming header's "unknown" sizes.
public final class WAVOutput: AudioOutput {
    public let name: String
    public let isPaced = false
    private let path: String
    /// Where the bytes go until `finish`: a temporary file beside `path`, or nil when writing `path` directly.
    private let temporaryPath: String?
    private var descriptor: Int32
    private var format: PCMFormat?
    private var dataBytes = 0

    public init(path: String) throws(AudioError) {
        self.path = path
        name = "wav:\(path)"
        var existing = stat()
        if stat(path, &existing) == 0 && (existing.st_mode & S_IFMT) != S_IFREG {
            temporaryPath = nil
            descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC)
        } else {
            // Its folder is made when missing, as `table build -o` makes a table's.
            let directory = Path.parent(path).isEmpty ? "." : Path.parent(path)
            do throws(TartilError) { try FileSystem.createDirectories(directory) } catch {
                throw AudioError(.output, "cannot write \(path): cannot create \(directory): \(error.cause ?? error.message)")
            }
            let temporary = Path.join(directory, ".\(Path.name(path)).\(getpid()).part")
            temporaryPath = temporary
            descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else {
            throw AudioError(.output, "cannot write \(path): \(Errno.current)")
        }
    }

    deinit { abandon() }

    public func configure(_ format: PCMFormat) throws(AudioError) {
        if let current = self.format {
            guard current == format else {
                throw AudioError(.output, "\(path): the audio changes format (\(current) → \(format)), which one WAV file cannot hold")
            }
            return
        }
        self.format = format
        // The sizes are filled in by `finish` (the header is rewritten in place, RF64 past 4 GiB); a stream keeps
        // the "unknown length" sizes.
        try writeAll(temporaryPath == nil ? WAVHeader.stream(format: format) : WAVHeader.file(format: format, dataBytes: 0))
    }

    public func write(_ pcm: UnsafeRawBufferPointer) throws(AudioError) {
        try writeAll(pcm)
        dataBytes += pcm.count
    }

    /// Leaves `bytes` of silence as a hole in the file (it reads as zeros and takes no disk space), as if that
    /// much PCM had been written: how tests make a WAV past 4 GiB in a moment. Only for a file, not a stream.
    func skip(bytes: Int) throws(AudioError) {
        precondition(temporaryPath != nil && bytes >= 0 && bytes % 2 == 0)
        guard lseek(descriptor, off_t(bytes), SEEK_CUR) >= 0 else { throw failure("lseek") }
        dataBytes += bytes
    }

    public var unplayedFrames: Int { 0 }
    public func discard() {}

    public func abandon() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        if let temporaryPath { unlink(temporaryPath) }
    }

    public func finish() throws(AudioError) {
        guard descriptor >= 0 else { return }
        if format == nil { try configure(PCMFormat(sampleRate: 22050, channels: 1)) }  // nothing played: an empty WAV
        guard let temporaryPath else {
            close(descriptor)
            descriptor = -1
            return
        }
        let header = WAVHeader.file(format: format!, dataBytes: dataBytes)
        var problem: Errno?
        header.withUnsafeBytes { bytes in
            do throws(Errno) { try SystemCall.writeAll(descriptor, bytes, at: 0) } catch { problem = error }
        }
        if let problem { throw failure("pwrite", problem) }
        guard fsync(descriptor) == 0 else { throw failure("fsync") }
        close(descriptor)
        descriptor = -1
        guard rename(temporaryPath, path) == 0 else {
            let error = failure("rename")
            unlink(temporaryPath)
            throw error
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(AudioError) {
        do throws(Errno) { try SystemCall.writeAll(descriptor, bytes) } catch { throw failure("write", error) }
    }

    private func writeAll(_ bytes: [UInt8]) throws(AudioError) {
        var failure: AudioError?
        bytes.withUnsafeBytes { buffer in
            do throws(AudioError) { try writeAll(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func failure(_ call: String, _ error: Errno = .current) -> AudioError {
        AudioError(.output, "\(path): \(call): \(error)")
    }
}
