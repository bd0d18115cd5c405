import CCurl
import TartilCache

/// The libcurl TartilNet uses: the only module that does (the network fence). It is loaded on first use (see
/// CCurl.h), so commands that download nothing start without it.
public enum NetworkLibrary {
    /// Loads libcurl (once); throws when it cannot be.
    static func load() throws(CacheError) {
        SharedLibcrypto.prepare()  // libcurl's TLS initializes OpenSSL: without its exit handler
        if let reason = ccurl_load() { throw CacheError(.io, String(cString: reason)) }
    }

    /// The oldest libcurl tartil works with (`CCURL_MINIMUM_VERSION` in CCurl.h, the one place it is stated);
    /// loading refuses an older one.
    public static let minimumVersion = CCURL_MINIMUM_VERSION

    /// Throws, naming the call and libcurl's reason, unless `code` is `CURLE_OK`.
    static func check(_ code: CURLcode, _ call: @autoclosure () -> String) throws(CacheError) {
        guard code != CURLE_OK else { return }
        throw CacheError(.io, "\(call()) failed: \(String(cString: ccurl_easy_strerror(code)))")
    }

    /// Throws, naming the call and libcurl's reason, unless `code` is `CURLM_OK`.
    static func check(_ code: CURLMcode, _ call: @autoclosure () -> String) throws(CacheError) {
        guard code != CURLM_OK else { return }
        throw CacheError(.io, "\(call()) failed: \(multiReason(code))")
    }

    /// libcurl's text for a multi-interface code (curl_multi_strerror is not loaded: the codes tartil can meet
    /// are few).
    static func multiReason(_ code: CURLMcode) -> String {
        switch code {
        case CURLM_BAD_HANDLE: "bad multi handle"
        case CURLM_BAD_EASY_HANDLE: "bad easy handle"
        case CURLM_OUT_OF_MEMORY: "out of memory"
        case CURLM_INTERNAL_ERROR: "internal error"
        case CURLM_UNKNOWN_OPTION: "unknown option (libcurl too old?)"
        case CURLM_ADDED_ALREADY: "easy handle already added"
        case CURLM_RECURSIVE_API_CALL: "called from within a callback"
        case CURLM_WAKEUP_FAILURE: "wakeup failed"
        default: "CURLMcode \(code.rawValue)"
        }
    }

    /// libcurl's version, TLS library and protocols, e.g. `libcurl 7.88.1 (OpenSSL/3.0.19; http, https, …)`.
    public static var versionDescription: String {
        do { try load() } catch { return error.message }
        guard let info = ccurl_version_info_now() else { return "libcurl (version unknown)" }
        let version = String(cString: info.pointee.version)
        let tls = info.pointee.ssl_version.map { String(cString: $0) } ?? "no TLS"
        let http2 = (info.pointee.features & CURL_VERSION_HTTP2) != 0 ? ", HTTP/2" : ""
        return "libcurl \(version) (\(tls)\(http2))"
    }

    /// Whether this libcurl can speak HTTP/2 (built with nghttp2): HTTPS downloads then multiplex.
    public static var supportsHTTP2: Bool {
        guard (try? load()) != nil, let info = ccurl_version_info_now() else { return false }
        return (info.pointee.features & CURL_VERSION_HTTP2) != 0
    }

    /// The CA bundle libcurl trusts when tartil names none (CURLINFO_CAINFO, built in), or nil when unknown.
    public static var defaultCABundle: String? {
        guard (try? load()) != nil, let handle = ccurl_easy_init() else { return nil }
        defer { ccurl_easy_cleanup(handle) }
        var path: UnsafeMutablePointer<CChar>?
        guard ccurl_easy_getinfo_string(handle, CURLINFO_CAINFO, &path) == CURLE_OK, let path else { return nil }
        return String(cString: path)
    }
}
