import CCurl
import TartilCache
import TartilCore

/// One request into memory: a file, or its size and first bytes, from one mirror. Two kinds:
/// - the cross-check's probe asks for an unpinned file whole (up to its size limit), to hash it and walk its
///   frames: its SHA-256 is compared with the other mirrors' (`CrossCheck`), and the bytes are kept aside when the
///   mirrors disagree;
/// - a length probe asks for a file's size and first `HeadRequest.firstBytes` bytes (`Range: bytes=0-1023`):
///   `head(for:)`.
/// Anything else is no answer. Lives on the download thread, like `Transfer`. A whole file fetched outside the
/// downloader (`WholeFile`) is a probe too, its body in memory or, for a large one, written to a file with no name
/// as it arrives (`ScratchFile`).
final class Probe {
    let handle: UnsafeMutableRawPointer
    let mirror: Int
    /// The server asked (`https://host:port`), for stopping what a stalled connection carries.
    let server: String
    private let maxBytes: Int
    private var status = 0
    /// `Content-Range`: nil when absent, `.some(nil)` when unreadable.
    private var contentRange: HTTPHeaderLine.ContentRange??
    private var contentLength: Int?
    /// The body, up to `maxBytes`, when it is kept in memory.
    private var body: [UInt8] = []
    /// Where the body goes instead, when it is written to a file.
    private let file: ScratchFile?
    /// Bytes of the body received so far (of the last answer: a redirect's body is not the file).
    private var received = 0
    /// Why the body could not be written to `file` (the transfer was stopped there).
    private var fileError: CacheError?
    /// True when the body went past `maxBytes` (the transfer was stopped there).
    private var tooLarge = false

    /// A cross-check probe (the whole file); `maxBytes`: the most it may have.
    convenience init(url: String, mirror: Int, maxBytes: Int, limits: DownloadLimits) throws(CacheError) {
        try self.init(url: url, mirror: mirror, range: nil, maxBytes: maxBytes, limits: limits)
    }

    /// A whole file written to `file` as it arrives (emptied first, and again when a new answer starts).
    convenience init(url: String, into file: ScratchFile, maxBytes: Int, limits: DownloadLimits) throws(CacheError) {
        try file.restart()
        try self.init(url: url, mirror: 0, range: nil, maxBytes: maxBytes, limits: limits, file: file)
    }

    /// A length probe (the file's first bytes).
    convenience init(headOf url: String, mirror: Int, limits: DownloadLimits) throws(CacheError) {
        try self.init(url: url, mirror: mirror, range: "0-\(HeadRequest.firstBytes - 1)", maxBytes: HeadRequest.firstBytes, limits: limits)
    }

    private init(
        url: String, mirror: Int, range: String?, maxBytes: Int, limits: DownloadLimits, file: ScratchFile? = nil
    ) throws(CacheError) {
        guard let handle = ccurl_easy_init() else { throw CacheError(.io, "curl_easy_init failed") }
        self.handle = handle
        self.file = file
        self.mirror = mirror
        self.server = TransferSlots.server(of: url)
        self.maxBytes = maxBytes
        let me = Unmanaged.passUnretained(self).toOpaque()
        try Transfer.configure(handle, url: url, owner: me, write: Probe.writeCallback, header: Probe.headerCallback, limits: limits)
        if let range { try Transfer.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", range) }
    }

    deinit { ccurl_easy_cleanup(handle) }

    private static let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<Probe>.fromOpaque(user!).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
        guard probe.received + bytes.count <= probe.maxBytes else {
            if probe.file == nil { probe.body.append(contentsOf: bytes.prefix(probe.maxBytes - probe.body.count)) }
            probe.received = probe.maxBytes
            probe.tooLarge = true
            return 0
        }
        if let file = probe.file {
            do throws(CacheError) { try file.append(bytes) } catch {
                probe.fileError = error
                return 0
            }
        } else {
            probe.body.append(contentsOf: bytes)
        }
        probe.received += bytes.count
        return bytes.count
    }

    private static let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<Probe>.fromOpaque(user!).takeUnretainedValue()
        let line = UnsafeRawBufferPointer(start: data, count: size * count)
        switch HTTPHeaderLine.parse(line) {
        case .status(let code, _):
            probe.status = code ?? 0
            probe.contentRange = nil
            probe.contentLength = nil
            probe.tooLarge = false
            probe.body.removeAll()  // a redirect's body is not the file
            probe.received = 0
            if let file = probe.file, file.count > 0, probe.fileError == nil {
                do throws(CacheError) { try file.restart() } catch { probe.fileError = error }
            }
        case .contentRange(let range):
            probe.contentRange = .some(range)
        case .contentLength(let length):
            probe.contentLength = length
        case .other:
            break
        }
        return line.count
    }

    /// The whole file a cross-check probe received (what is kept aside when the mirrors disagree).
    var wholeFile: [UInt8] { body }

    /// What the mirror told of the whole file, once the transfer ended with `result`: its size and SHA-256, or no
    /// answer (an error, or a body that is not one whole MPEG audio stream).
    func observation(for result: CURLcode) throws(CacheError) -> CrossCheck.Observation {
        if tooLarge { return .unavailable("more than \(maxBytes) bytes") }
        guard result == CURLE_OK else { return .unavailable(Transfer.reason(for: result, status: status, bodyBytes: body.count)) }
        guard status == 200 else { return .unavailable("HTTP \(status)") }
        if let contentLength, contentLength != body.count {
            return .unavailable("\(body.count) bytes, but Content-Length said \(contentLength)")
        }
        if let problem = MPEGStream.problem(in: body) { return .unavailable("not one whole MPEG audio stream: \(problem)") }
        return .fingerprint(FileFingerprint(bytes: body.count, sha256: try SHA256.hash(body)))
    }

    /// The body of a plain whole-file request kept in memory, once the transfer ended with `result`, or why there
    /// is none.
    func body(for result: CURLcode) -> Result<[UInt8], CacheError> {
        if let failure = failure(for: result) { return .failure(failure) }
        return .success(body)
    }

    /// Why a plain whole-file request did not bring the whole file, once the transfer ended with `result`; nil when
    /// it did (in memory, or written to its file). A file that could not be written is `fileError`, not this.
    func failure(for result: CURLcode) -> CacheError? {
        if tooLarge { return CacheError(.tooLarge, "more than \(maxBytes) bytes") }
        guard result == CURLE_OK else {
            return CacheError(Transfer.isUnreachable(result) ? .unreachable : .io, Transfer.reason(for: result, status: status, bodyBytes: received))
        }
        guard status == 200 else { return CacheError(.io, "HTTP \(status)") }
        if let contentLength, contentLength != received {
            return CacheError(.io, "\(received) bytes, but Content-Length said \(contentLength)")
        }
        return nil
    }

    /// Why the body could not be written to its file, if it could not (a full disk): the transfer stopped there.
    var writeFailure: CacheError? { fileError }

    /// A length probe's answer: the file's size and first bytes, or nil when the mirror gave neither. A `200`
    /// (a server that ignores ranges) was stopped after the first bytes, and its `Content-Length` is the size.
    func head(for result: CURLcode) -> (bytes: Int, first: [UInt8])? {
        guard result == CURLE_OK || (result == CURLE_WRITE_ERROR && tooLarge) else { return nil }
        switch status {
        case 200:
            guard let contentLength, contentLength > 0, contentLength <= 1 << 40 else { return nil }
            return (contentLength, body)
        case 206:
            // "bytes 0-END/TOTAL": the file's first bytes.
            guard !tooLarge, let range = contentRange ?? nil, range.first == 0, let end = range.last, let total = range.total,
                total > 0, end == min(total, HeadRequest.firstBytes) - 1, body.count == end + 1
            else { return nil }
            return (total, body)
        default:
            return nil
        }
    }
}

@available(*, unavailable) extension Probe: Sendable {}
