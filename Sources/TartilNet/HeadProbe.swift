import CCurl
import FoundationEssentials
import TartilCache
import TartilCore

/// One length probe: asks a mirror for a file's size and first `HeadRequest.firstBytes` bytes with one ranged
/// request (`Range: bytes=0-1023`), into memory, so that its length can be worked out without downloading it
/// (`LengthEstimate`). A `206`'s `Content-Range` gives the size; a server that ignores ranges answers `200`, whose
/// `Content-Length` gives it, and the transfer stops after the first bytes. Anything else is no answer. Lives on
/// the download thread, like `Transfer` and `Probe`.
final class HeadProbe {
    let handle: UnsafeMutableRawPointer
    let mirror: Int
    private var status = 0
    private var contentRange: String?
    private var contentLength: Int?
    private var body: [UInt8] = []

    init(url: String, mirror: Int, limits: DownloadLimits) throws(CacheError) {
        guard let handle = ccurl_easy_init() else { throw CacheError(.io, "curl_easy_init failed") }
        self.handle = handle
        self.mirror = mirror
        let me = Unmanaged.passUnretained(self).toOpaque()
        try Transfer.configure(
            handle, url: url, owner: me, write: HeadProbe.writeCallback, header: HeadProbe.headerCallback, limits: limits)
        try Transfer.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", "0-\(HeadRequest.firstBytes - 1)")
    }

    deinit { ccurl_easy_cleanup(handle) }

    private static let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<HeadProbe>.fromOpaque(user!).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
        probe.body.append(contentsOf: bytes.prefix(HeadRequest.firstBytes - probe.body.count))
        return probe.body.count >= HeadRequest.firstBytes ? 0 : bytes.count  // enough: stop a whole-file answer here
    }

    private static let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let probe = Unmanaged<HeadProbe>.fromOpaque(user!).takeUnretainedValue()
        let line = UnsafeRawBufferPointer(start: data, count: size * count)
        let text = String(decoding: line, as: UTF8.self)
        if Transfer.hasPrefix(line, "HTTP/", ignoringCase: false) {
            let fields = text.split(separator: " ")
            probe.status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            probe.contentRange = nil
            probe.contentLength = nil
            probe.body.removeAll()  // a redirect's body is not the file
        } else if Transfer.hasPrefix(line, "content-range:", ignoringCase: true) {
            probe.contentRange = String(text.dropFirst("content-range:".count)).trimmedWhitespace
        } else if Transfer.hasPrefix(line, "content-length:", ignoringCase: true) {
            probe.contentLength = Int(String(text.dropFirst("content-length:".count)).trimmedWhitespace)
        }
        return line.count
    }

    /// The file's size and first bytes, once the transfer ended with `result`; nil when the mirror gave neither.
    func answer(for result: CURLcode) -> (bytes: Int, first: [UInt8])? {
        let stoppedByUs = result == CURLE_WRITE_ERROR && body.count >= HeadRequest.firstBytes
        guard result == CURLE_OK || stoppedByUs else { return nil }
        switch status {
        case 200:
            guard let contentLength, contentLength > 0, contentLength <= 1 << 40 else { return nil }
            return (contentLength, body)
        case 206:
            // "bytes 0-END/TOTAL": the file's first bytes.
            guard let contentRange, contentRange.hasPrefix("bytes ") else { return nil }
            let parts = contentRange.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" })
            guard parts.count == 3, parts[0] == "0", let end = Int(parts[1]), let total = Int(parts[2]), total > 0, total <= 1 << 40,
                end == min(total, HeadRequest.firstBytes) - 1, body.count == end + 1
            else { return nil }
            return (total, body)
        default:
            return nil
        }
    }
}

@available(*, unavailable) extension HeadProbe: Sendable {}
