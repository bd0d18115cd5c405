import CCurl

/// Facts about the libcurl this build links: the only module that does (the network fence).
public enum NetworkLibrary {
    /// libcurl's version, TLS library and protocols, e.g. `libcurl 7.88.1 (OpenSSL/3.0.19; http, https, …)`.
    public static var versionDescription: String {
        guard let info = ccurl_version_info_now() else { return "libcurl (version unknown)" }
        let version = String(cString: info.pointee.version)
        let tls = info.pointee.ssl_version.map { String(cString: $0) } ?? "no TLS"
        let http2 = (info.pointee.features & CURL_VERSION_HTTP2) != 0 ? ", HTTP/2" : ""
        return "libcurl \(version) (\(tls)\(http2))"
    }
}
