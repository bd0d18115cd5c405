import CCurl
import FoundationEssentials
import TartilCache
import TartilCore

/// One cross-check probe: asks a mirror for an unpinned file's size and last `CrossCheck.tailBytes` bytes with
/// one ranged request (`Range: bytes=-16384`), into memory. A `206`'s `Content-Range` gives the size and its body
/// is the tail; a server that ignores ranges answers `200` with the whole file, which serves as well (up to the
/// file's size limit). Anything else is no answer. Lives on the download thread, like `Transfer`.
final class Probe {
    let handle: UnsafeMutableRawPointer
    let mirror: Int
    private let maxBytes: Int
    private var status = 0
    private var contentRange: String?
    private var body: [UInt8] = []
    private var tooLarge = false

    init(url: String, mirror: Int, maxBytes: Int, limits: DownloadLimits) throws(CacheError) {
        guard let handle = ccurl_easy_init() else { throw CacheError(.io, "curl_easy_init failed") }
        self.handle = handle
        self.mirror = mirror
        self.maxBytes = maxBytes
        let me = Unmanaged.passUnretained(self).toOpaque()
        try Transfer.configure(handle, url: url, owner: me, write: Probe.writeCallback, header: Probe.headerCallback, limits: limits)
        try Transfer.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", "-\(CrossCheck.tailBytes)")
    }

    deinit { ccurl_easy_cleanup(handle) }

    private static let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<Probe>.fromOpaque(user!).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
        guard probe.body.count + bytes.count <= probe.maxBytes else {
            probe.tooLarge = true
            return 0
        }
        probe.body.append(contentsOf: bytes)
        return bytes.count
    }

    private static let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<Probe>.fromOpaque(user!).takeUnretainedValue()
        let line = UnsafeRawBufferPointer(start: data, count: size * count)
        let text = String(decoding: line, as: UTF8.self)
        if Transfer.hasPrefix(line, "HTTP/", ignoringCase: false) {
            let fields = text.split(separator: " ")
            probe.status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            probe.contentRange = nil
            probe.body.removeAll()  // a redirect's body is not the file
        } else if Transfer.hasPrefix(line, "content-range:", ignoringCase: true) {
            probe.contentRange = String(text.dropFirst("content-range:".count)).trimmedWhitespace
        }
        return line.count
    }

    /// What the mirror told, once the transfer ended with `result`.
    func observation(for result: CURLcode) throws(CacheError) -> CrossCheck.Observation {
        if tooLarge { return .unavailable("more than \(maxBytes) bytes") }
        guard result == CURLE_OK else { return .unavailable(String(cString: ccurl_easy_strerror(result))) }
        switch status {
        case 200:
            let tail = body.suffix(CrossCheck.tailBytes)
            return .fingerprint(FileFingerprint(bytes: body.count, tailSHA256: try SHA256.hash(Data(tail))))
        case 206:
            // "bytes START-END/TOTAL": the range must be the file's last min(TOTAL, tailBytes) bytes.
            guard let contentRange, contentRange.hasPrefix("bytes ") else { return .unavailable("206 without a Content-Range") }
            let parts = contentRange.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" })
            guard parts.count == 3, let start = Int(parts[0]), let end = Int(parts[1]), let total = Int(parts[2]),
                end == total - 1, end - start + 1 == body.count, body.count == min(total, CrossCheck.tailBytes)
            else {
                return .unavailable("Content-Range '\(contentRange)' is not the file's last \(CrossCheck.tailBytes) bytes")
            }
            return .fingerprint(FileFingerprint(bytes: total, tailSHA256: try SHA256.hash(Data(body))))
        default:
            return .unavailable("HTTP \(status)")
        }
    }
}

@available(*, unavailable) extension Probe: Sendable {}
