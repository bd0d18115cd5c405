import CCurl
import Glibc
import TartilCache
import TartilCore

/// One attempt at one file on one mirror: a libcurl easy handle and what its callbacks learn. Lives on the
/// download thread.
final class Transfer {
    let handle: UnsafeMutableRawPointer
    let writer: CacheWriter
    let mirror: Int
    let url: String
    /// The server asked (`https://host:port`), for `TransferSlots`.
    let server: String
    /// Whether it may share its connection with other requests (HTTP/2): its stall is then the connection's,
    /// judged by the downloader's `StallWatch`, not by libcurl.
    private(set) var sharesConnection: Bool
    /// `received` as of the last `takeUncounted`.
    private var counted = 0
    /// Status of the response block being received (a redirect starts a new block).
    private(set) var status = 0
    /// The status line of the response block being received, when it did not read as one (not three digits).
    private var unreadableStatus: String?
    /// `Content-Range` of the response block being received: nil when absent, `.some(nil)` when unreadable.
    private var contentRange: HTTPHeaderLine.ContentRange??
    private var bodyStarted = false
    /// The bytes of the remote file this transfer is for (nil: all of it); and, when the server sends more than
    /// was asked (the whole file, ignoring the range, or a range that starts earlier or ends later), that the
    /// window is cut out of the body as it comes, and where in the file the next body byte is.
    private let window: ClosedRange<Int>?
    private var cutsWindow = false
    private var bodyOffset = 0
    /// The window was received whole from a server that sent more (the transfer was stopped there).
    private var windowComplete = false
    /// For a run of parts (`DownloadRequest.carried`): how the body is cut, and the carried parts' writers.
    private var carrying: Carrying?
    /// A problem the callbacks found, which stops the transfer.
    private(set) var problem: DownloadFailure?
    /// Bytes received in this attempt.
    private(set) var received = 0
    let counter: (Int) -> Void
    /// Called with whether the server answered over HTTP/2, at the first answer's status line.
    private var heard: ((Bool) -> Void)?
    /// libcurl's own words for a failure (CURLOPT_ERRORBUFFER: "SSL certificate problem: unable to get local
    /// issuer certificate" where curl_easy_strerror says only "SSL peer certificate … was not OK").
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(
        url: String, mirror: Int, writer: CacheWriter, limits: DownloadLimits, window: ClosedRange<Int>? = nil, sharesConnection: Bool = false,
        carrying: Carrying? = nil, counter: @escaping (Int) -> Void, heard: @escaping (Bool) -> Void
    ) throws(CacheError) {
        self.window = window
        self.carrying = carrying
        guard let handle = ccurl_easy_init() else { throw CacheError(.io, "curl_easy_init failed") }
        self.handle = handle
        self.writer = writer
        self.mirror = mirror
        self.url = url
        self.server = TransferSlots.server(of: url)
        self.sharesConnection = sharesConnection
        self.counter = counter
        self.heard = heard
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let me = Unmanaged.passUnretained(self).toOpaque()
        try Self.configure(
            handle, url: url, owner: me, write: Transfer.writeCallback, header: Transfer.headerCallback, limits: limits,
            judgesItsOwnStalls: !sharesConnection)
        try Self.check(ccurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText), "CURLOPT_ERRORBUFFER")
        // Over https a server may offer HTTP/2: wait for its answer and multiplex on one connection. Over plain
        // http (HTTP/1.1) waiting would queue transfers behind each other instead of opening connections.
        if url.lowercased().hasPrefix("https://") { try Self.set(handle, CURLOPT_PIPEWAIT, "CURLOPT_PIPEWAIT", 1) }
        try Self.set(handle, CURLOPT_BUFFERSIZE, "CURLOPT_BUFFERSIZE", 32768)
        if let carrying {
            let span = carrying.stream.range
            try Self.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", "\(span.lowerBound)-\(span.upperBound)")
        } else if let window {
            try Self.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", "\(window.lowerBound + writer.offset)-\(window.upperBound)")
        } else if writer.offset > 0 {
            try Self.set(handle, CURLOPT_RANGE, "CURLOPT_RANGE", "\(writer.offset)-")
        }
    }

    /// Has libcurl abandon the transfer once it stays under the stall rate for the stall time.
    static func judgeStalls(_ handle: UnsafeMutableRawPointer, _ limits: DownloadLimits) throws(CacheError) {
        try set(handle, CURLOPT_LOW_SPEED_LIMIT, "CURLOPT_LOW_SPEED_LIMIT", limits.stallBytesPerSecond)
        try set(handle, CURLOPT_LOW_SPEED_TIME, "CURLOPT_LOW_SPEED_TIME", limits.stallSeconds)
    }

    /// The request turned out to have a connection of its own (an https server that answered over HTTP/1.1):
    /// libcurl judges its stalls from now on, as it does a request started that way.
    func stopSharing(_ limits: DownloadLimits) {
        guard sharesConnection else { return }
        sharesConnection = false
        try? Self.judgeStalls(handle, limits)  // options libcurl took at the start; they cannot fail now
    }

    /// Bytes received since the last call (for the downloader's count of what a shared connection moved).
    func takeUncounted() -> Int {
        defer { counted = received }
        return received - counted
    }

    /// A libcurl write or header callback: `(bytes, size, count, owner) -> bytes taken`.
    typealias Callback = @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

    /// The options every request of tartil's sets (a download, a cross-check probe): its URL and owner, its
    /// callbacks, redirects and protocols limited to http and https (an https request's redirects to https only),
    /// timeouts (a stall judged by libcurl unless
    /// the request shares its connection), TLS verification on. Every option
    /// is checked: one that fails (an option this libcurl does not know) fails the request with the reason,
    /// rather than letting it run without, say, the http/https restriction.
    static func configure(
        _ handle: UnsafeMutableRawPointer, url: String, owner: UnsafeMutableRawPointer, write: Callback, header: Callback,
        limits: DownloadLimits, judgesItsOwnStalls: Bool = true
    ) throws(CacheError) {
        try set(handle, CURLOPT_URL, "CURLOPT_URL", url)
        try check(ccurl_easy_setopt_pointer(handle, CURLOPT_PRIVATE, owner), "CURLOPT_PRIVATE")
        try check(ccurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, owner), "CURLOPT_WRITEDATA")
        try check(ccurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, owner), "CURLOPT_HEADERDATA")
        try check(ccurl_easy_setopt_write_function(handle, write), "CURLOPT_WRITEFUNCTION")
        try check(ccurl_easy_setopt_header_function(handle, header), "CURLOPT_HEADERFUNCTION")
        try set(handle, CURLOPT_FOLLOWLOCATION, "CURLOPT_FOLLOWLOCATION", 1)
        try set(handle, CURLOPT_MAXREDIRS, "CURLOPT_MAXREDIRS", limits.maxRedirects)
        try set(handle, CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", "http,https")
        // An https mirror's redirects stay on https: a redirect to http (a downgrade, which anyone on the way
        // could answer) is refused, like one to another scheme.
        let secure = url.prefix(8).lowercased() == "https://"
        try set(handle, CURLOPT_REDIR_PROTOCOLS_STR, "CURLOPT_REDIR_PROTOCOLS_STR", secure ? "https" : "http,https")
        // A reply without a status line (HTTP/0.9) is refused ("not an HTTP response"), whatever this libcurl's
        // default: it could be any bytes at all.
        try set(handle, CURLOPT_HTTP09_ALLOWED, "CURLOPT_HTTP09_ALLOWED", 0)
        try set(handle, CURLOPT_CONNECTTIMEOUT_MS, "CURLOPT_CONNECTTIMEOUT_MS", Int(limits.connectTimeout * 1000))
        // A request with a connection of its own stalls by its own rate; one that shares a connection (HTTP/2
        // streams) by the connection's, which the downloader watches (`StallWatch`).
        if judgesItsOwnStalls { try judgeStalls(handle, limits) }
        try set(handle, CURLOPT_SSL_VERIFYPEER, "CURLOPT_SSL_VERIFYPEER", 1)
        try set(handle, CURLOPT_SSL_VERIFYHOST, "CURLOPT_SSL_VERIFYHOST", 2)
        if let bundle = limits.caBundle {
            // libcurl with OpenSSL reads neither SSL_CERT_FILE nor CURL_CA_BUNDLE: tartil passes the bundle
            // chosen from them (or --ca-bundle), for the servers and for an https:// proxy alike.
            try set(handle, CURLOPT_CAINFO, "CURLOPT_CAINFO", bundle)
            try set(handle, CURLOPT_PROXY_CAINFO, "CURLOPT_PROXY_CAINFO", bundle)
        }
        if let directory = limits.caDirectory {
            // SSL_CERT_DIR, which libcurl does not read either.
            try set(handle, CURLOPT_CAPATH, "CURLOPT_CAPATH", directory)
            try set(handle, CURLOPT_PROXY_CAPATH, "CURLOPT_PROXY_CAPATH", directory)
        }
        // A proxy's answer to CONNECT is not the server's: the header callback sees only the server's lines.
        try set(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, "CURLOPT_SUPPRESS_CONNECT_HEADERS", 1)
        // Proxies: libcurl reads http_proxy, https_proxy (or HTTPS_PROXY), all_proxy and no_proxy itself.
        try set(handle, CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1)
        try set(handle, CURLOPT_TCP_KEEPALIVE, "CURLOPT_TCP_KEEPALIVE", 1)
        try set(handle, CURLOPT_USERAGENT, "CURLOPT_USERAGENT", "tartil/0.1")
    }

    /// Sets a whole-number option; throws with its name and libcurl's reason when libcurl refuses it.
    static func set(_ handle: UnsafeMutableRawPointer, _ option: CURLoption, _ name: String, _ value: Int) throws(CacheError) {
        try check(ccurl_easy_setopt_long(handle, option, value), name)
    }

    /// Sets a string option (libcurl copies it); throws with its name and libcurl's reason when refused.
    static func set(_ handle: UnsafeMutableRawPointer, _ option: CURLoption, _ name: String, _ value: String) throws(CacheError) {
        try check(ccurl_easy_setopt_string(handle, option, value), name)
    }

    private static func check(_ code: CURLcode, _ name: String) throws(CacheError) {
        try NetworkLibrary.check(code, "curl_easy_setopt(\(name))")
    }

    deinit {
        ccurl_easy_cleanup(handle)
        errorText.deallocate()  // after the handle, which may write to it until then
    }

    // MARK: - Callbacks (on the download thread, inside ccurl_multi_perform)

    private static let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
    }

    private static let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, user in
        let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
        transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    /// Reads the two header lines that matter straight from curl's bytes, through the bounded header parser: the
    /// status line (a redirect starts a new response block) and `Content-Range`. Other lines cost no allocation.
    private func receiveHeader(_ line: UnsafeRawBufferPointer) {
        switch HTTPHeaderLine.parse(line) {
        case .status(let code, let http2):
            status = code ?? 0
            unreadableStatus = code == nil ? Self.shown(line) : nil
            contentRange = nil
            if let heard {
                self.heard = nil
                heard(http2)
            }
        case .contentRange(let range):
            contentRange = .some(range)
        case .contentLength, .other:
            break
        }
    }

    /// A header line as a message shows it: printable ASCII, at most 60 characters.
    static func shown(_ line: UnsafeRawBufferPointer) -> String {
        let printable = HTTPHeaderLine.trimmed(line[...]).prefix(60).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return String(decoding: printable, as: UTF8.self) + (line.count > 62 ? "…" : "")
    }

    /// Returns false to abort the transfer (after recording why).
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !bodyStarted {
            bodyStarted = true
            guard startBody() else { return false }
        }
        if carrying != nil { return receiveRun(bytes) }
        if cutsWindow, let window {
            // More than the window is coming: keep only the window's bytes, and stop once they are all here.
            let (keep, complete) = WindowCut.cut(chunk: bytes.count, bodyOffset: bodyOffset, window: window, kept: writer.offset)
            bodyOffset += bytes.count
            received += bytes.count
            counter(bytes.count)
            if !keep.isEmpty {
                do { try writer.append(UnsafeRawBufferPointer(rebasing: bytes[keep])) } catch {
                    problem = error.code == .tooLarge ? .mirrorUnusable("oversized body: \(error.message)") : .transient(error.message, retryAfter: nil)
                    return false
                }
            }
            windowComplete = complete
            return !complete
        }
        do {
            try writer.append(bytes)
        } catch {
            problem = error.code == .tooLarge ? .mirrorUnusable("oversized body: \(error.message)") : .transient(error.message, retryAfter: nil)
            return false
        }
        received += bytes.count
        counter(bytes.count)
        return true
    }

    /// Decides, from the final response's status, whether its body is the file (or the requested rest of it).
    private func startBody() -> Bool {
        if carrying != nil { return startRun() }
        switch status {
        case 200:
            // The server ignored the range: the whole file comes, from its start (a window is cut out of it).
            cutsWindow = window != nil
            if writer.offset > 0 {
                do { try writer.restart() } catch {
                    problem = .transient(error.message, retryAfter: nil)
                    return false
                }
            }
            return true
        case 206:
            // A window asked for with its start inside a range the server chose: cut, as from a whole file.
            if let window, let range = contentRange ?? nil, let first = range.first, let last = range.last,
                first <= window.lowerBound + writer.offset, last >= window.lowerBound + writer.offset,
                first != window.lowerBound + writer.offset || last != window.upperBound
            {
                cutsWindow = true
                bodyOffset = first
                return true
            }
            if let problem = rangeProblem() {
                self.problem = .transient(problem, retryAfter: nil)
                try? writer.restart()
                return false
            }
            return true
        default:
            return false  // the status decides the failure in `failure(for:)`
        }
    }

    /// Why a 206's `Content-Range` does not continue the partial file, or nil when it does.
    private func rangeProblem() -> String? {
        guard let contentRange else { return "206 without a Content-Range" }
        guard let range = contentRange, let first = range.first, let last = range.last else { return "unreadable Content-Range" }
        if let window {
            let start = window.lowerBound + writer.offset
            guard first == start, last == window.upperBound else {
                return "Content-Range 'bytes \(first)-\(last)' is not the range asked for (\(start)-\(window.upperBound))"
            }
            return nil
        }
        guard first == writer.offset else { return "Content-Range starts at \(first), not \(writer.offset)" }
        if let total = range.total, let expected = writer.expectation.bytes, total != expected || last != expected - 1 {
            return "Content-Range 'bytes \(first)-\(last)/\(total)' does not match the expected size \(expected)"
        }
        return nil
    }

    // MARK: - A run of parts

    /// A run's cut of the body (`PartStream`: the carried parts, then the transfer's own window, which is
    /// `writer`'s) and the carried parts' writers: each opened when the body reaches it (`open`, nil to pass it
    /// over: another process is writing it, say) and handed on whole (`cut`), so a part is stored while the body
    /// goes on.
    struct Carrying {
        var stream: PartStream
        let open: (Int) -> CacheWriter?
        let cut: (Int, CacheWriter) -> Void
        var writers: [Int: CacheWriter] = [:]
        var passedOver: Set<Int> = []

        init(stream: PartStream, open: @escaping (Int) -> CacheWriter?, cut: @escaping (Int, CacheWriter) -> Void) {
            self.stream = stream
            self.open = open
            self.cut = cut
        }

        /// Part `index`'s writer, opened now if it is not yet.
        mutating func writer(_ index: Int) -> CacheWriter? {
            if let writer = writers[index] { return writer }
            guard !passedOver.contains(index) else { return nil }
            guard let writer = open(index) else {
                passedOver.insert(index)
                return nil
            }
            writers[index] = writer
            return writer
        }
    }

    /// Whether the body can give the run: the whole file (200), or a range from at or before the first byte wanted
    /// to at or past the last (206).
    private func startRun() -> Bool {
        switch status {
        case 200:
            return carrying!.stream.start(at: 0)
        case 206:
            let span = carrying!.stream.range
            guard let range = contentRange ?? nil, let first = range.first, let last = range.last else {
                problem = .transient(contentRange == nil ? "206 without a Content-Range" : "unreadable Content-Range", retryAfter: nil)
                return false
            }
            guard last >= span.upperBound, carrying!.stream.start(at: first) else {
                problem = .transient("Content-Range 'bytes \(first)-\(last)' is not the range asked for (\(span.lowerBound)-\(span.upperBound))", retryAfter: nil)
                return false
            }
            return true
        default:
            return false  // the status decides the failure in `failure(for:)`
        }
    }

    /// A chunk of a run's body: each part's bytes go to its writer, a carried part whole is handed on, and the
    /// transfer stops once its own window is whole (the last part).
    private func receiveRun(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += bytes.count
        counter(bytes.count)
        let (actions, finished) = carrying!.stream.on(chunk: bytes.count)
        let last = carrying!.stream.windows.count - 1
        for action in actions {
            switch action {
            case .append(let index, let range) where index == last:
                do { try writer.append(UnsafeRawBufferPointer(rebasing: bytes[range])) } catch {
                    problem = error.code == .tooLarge ? .mirrorUnusable("oversized body: \(error.message)") : .transient(error.message, retryAfter: nil)
                    return false
                }
            case .append(let index, let range):
                guard let part = carrying!.writer(index) else { continue }
                do { try part.append(UnsafeRawBufferPointer(rebasing: bytes[range])) } catch {
                    // Not this run's to store: it is fetched alone afterwards (`CarriedParts`).
                    part.abandon(keepPartial: false)
                    carrying!.writers[index] = nil
                    carrying!.passedOver.insert(index)
                }
            case .complete(let index) where index == last:
                break
            case .complete(let index):
                guard let part = carrying!.writers.removeValue(forKey: index) else { continue }
                part.finishWriting()
                carrying!.cut(index, part)
            }
        }
        windowComplete = finished
        return !finished
    }

    /// Lets go of the carried parts still being written (the transfer ended or was stopped before they were
    /// whole); a later attempt cuts them again.
    func abandonCarried() {
        guard carrying != nil else { return }
        for writer in carrying!.writers.values { writer.abandon(keepPartial: false) }
        carrying!.writers.removeAll()
    }

    // MARK: - Outcome

    /// What libcurl tells of the finished transfer's connection: whether it opened one, and whether the answer
    /// came over HTTP/2.
    var connectionInfo: (opened: Bool, http2: Bool) {
        var connects = 0
        var version = 0
        if ccurl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects) != CURLE_OK { connects = 0 }
        if ccurl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version) != CURLE_OK { version = 0 }
        return (connects > 0, version == Int(CURL_HTTP_VERSION_2_0))
    }

    /// Whether libcurl has sent the request (or is about to): false while the transfer waits in libcurl's queue for
    /// a connection, when taking it back costs nothing.
    var requestSent: Bool {
        var pretransfer: curl_off_t = 0
        if ccurl_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &pretransfer) != CURLE_OK { return true }
        return pretransfer > 0 || status > 0
    }

    /// What libcurl reports as CURLE_OUT_OF_MEMORY for a header line past its limit (CURL_MAX_HTTP_HEADER):
    /// not memory.
    static let headerTooLarge = "header too large (a header line over libcurl's limit of 100 KiB)"

    /// Words for the codes whose libcurl text hides what happened (a refused redirect, a reply that is not HTTP,
    /// a header line past libcurl's limit), after the status `status` (0: none read); nil for every other code.
    /// `detail`: libcurl's own words for the reply, added to "not an HTTP response".
    static func plainReason(for result: CURLcode, status: Int, bodyStarted: Bool, detail: String) -> String? {
        switch result {
        case CURLE_UNSUPPORTED_PROTOCOL where (300...399).contains(status):
            "redirect refused: to a URL that is not http or https, or from https to http (a downgrade)"
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY:
            // libcurl's words for a reply without a status line ("Received HTTP/0.9 when not allowed") or with a
            // status that is not three digits ("Unsupported response code in HTTP response").
            "not an HTTP response" + (detail.isEmpty ? "" : " (\(detail))")
        case CURLE_OUT_OF_MEMORY where !bodyStarted: headerTooLarge
        default: nil
        }
    }

    /// What happened, in words, when a request that is not a download (a probe) ends with `result` after the
    /// status `status` and `bodyBytes` of body: what `failure(for:)` says for the same codes.
    /// Whether a transfer that ended with `result` could not reach its server or stopped receiving (the connect
    /// or stall timeout): the mirror is not asked again at once, since that would cost another timeout.
    static func isUnreachable(_ result: CURLcode) -> Bool {
        result == CURLE_OPERATION_TIMEDOUT || result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST
    }

    static func reason(for result: CURLcode, status: Int, bodyBytes: Int) -> String {
        plainReason(for: result, status: status, bodyStarted: bodyBytes > 0, detail: "")
            ?? String(cString: ccurl_easy_strerror(result))
    }

    /// The failure a finished transfer stands for, or nil when its body is the complete file.
    func failure(for result: CURLcode) -> DownloadFailure? {
        if let problem { return problem }
        if windowComplete && (status == 200 || status == 206) { return nil }
        var retryAfter: curl_off_t = 0
        if ccurl_easy_getinfo_off_t(handle, CURLINFO_RETRY_AFTER, &retryAfter) != CURLE_OK { retryAfter = 0 }
        if let unreadableStatus, result == CURLE_OK || result == CURLE_WRITE_ERROR {
            return .mirrorUnusable("not an HTTP response: the status line '\(unreadableStatus)' has no three-digit status")
        }
        if result == CURLE_OK || (status >= 300 && result == CURLE_WRITE_ERROR) {
            switch status {
            case 200, 206: return nil
            case 408, 425, 429, 500...599:
                return .transient("HTTP \(status)", retryAfter: retryAfter > 0 ? Double(retryAfter) : nil)
            default:
                return .mirrorUnusable("HTTP \(status)")
            }
        }
        let message = String(cString: ccurl_easy_strerror(result))
        let detail = String(cString: errorText)
        if let words = Self.plainReason(for: result, status: status, bodyStarted: bodyStarted, detail: detail.isEmpty ? message : detail) {
            return .mirrorUnusable(words)
        }
        switch result {
        case CURLE_TOO_MANY_REDIRECTS:
            return .mirrorUnusable("redirect loop (more than the allowed redirects)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .untrusted("TLS: the server's certificate does not verify: \(detail.isEmpty ? message : detail)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM:
            return .mirrorUnusable("TLS: \(message)")
        case CURLE_OPERATION_TIMEDOUT:
            return .unreachable(received > 0 ? "stalled (too slow for too long)" : "timed out")
        case _ where Self.isUnreachable(result):
            return .unreachable("cannot connect: \(message)")
        case CURLE_PARTIAL_FILE:
            return .transient("connection closed before the end of the body", retryAfter: nil)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return .transient("connection reset: \(message)", retryAfter: nil)
        default:
            return .transient(message, retryAfter: nil)
        }
    }
}

@available(*, unavailable) extension Transfer: Sendable {}
