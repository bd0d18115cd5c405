import CCurl
import TartilCache

/// The libcurl TartilNet uses: the only module that does (the network fence). It is loaded on first use (see
/// CCurl.h), so commands that download nothing start without it.
public enum NetworkLibrary {
    /// Loads libcurl (once); throws when it cannot be.
    static func load() throws(CacheError) {
        SHA256.prepareLibrary()  // libcurl initializes OpenSSL: without its exit handler, as TartilCache does
        var reason = [CChar](repeating: 0, count: 512)
        guard ccurl_load(&reason, reason.count) == 0 else {
            throw CacheError(.io, String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
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
}
