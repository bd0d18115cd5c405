import CCurl
import TartilCache
import TartilCore

/// One file fetched whole, outside the downloader, with every option a download has (TLS verification, the CA
/// bundle, proxies, http/https only, connect and stall timeouts): what a reciter of one file per surah needs once
/// per surah before its table can be made — the published timing file (into memory) and the surah's file (written
/// to a file with no name as it arrives, hashed as it is written: `SurahLearning`).
public enum WholeFile {
    /// The body of `url` (a 200 reply of at most `maxBytes` bytes, its `Content-Length` met), or why there is none.
    /// Returns early, with an interruption, once `isCancelled` says so.
    public static func fetch(
        _ url: String, maxBytes: Int, limits: DownloadLimits, isCancelled: () -> Bool = { false }
    ) throws(CacheError) -> [UInt8] {
        try NetworkLibrary.load()  // libcurl is loaded on first use
        let probe = try Probe(url: url, mirror: 0, maxBytes: maxBytes, limits: limits)
        return try probe.body(for: try run(probe, isCancelled: isCancelled)).get()
    }

    /// Writes the body of `url` (a 200 reply of at most `maxBytes` bytes, its `Content-Length` met) to `file`,
    /// which is emptied first; returns nil when the whole body is there, else why the server did not give it.
    /// Throws what is not the server's doing: the file could not be written (`file`'s error), libcurl could not
    /// start, or `isCancelled` said so (an interruption).
    public static func fetch(
        _ url: String, into file: ScratchFile, maxBytes: Int, limits: DownloadLimits, isCancelled: () -> Bool = { false }
    ) throws(CacheError) -> CacheError? {
        try NetworkLibrary.load()
        let probe = try Probe(url: url, into: file, maxBytes: maxBytes, limits: limits)
        let result = try run(probe, isCancelled: isCancelled)
        if let failure = probe.writeFailure { throw failure }
        return probe.failure(for: result)
    }

    /// Runs `probe`'s transfer to its end on a multi handle of its own; its result.
    private static func run(_ probe: Probe, isCancelled: () -> Bool) throws(CacheError) -> CURLcode {
        guard let multi = ccurl_multi_init() else { throw CacheError(.io, "curl_multi_init failed") }
        defer { _ = ccurl_multi_cleanup(multi) }
        try NetworkLibrary.check(ccurl_multi_add_handle(multi, probe.handle), "curl_multi_add_handle")
        defer { _ = ccurl_multi_remove_handle(multi, probe.handle) }
        var result: CURLcode?
        while result == nil {
            if isCancelled() { throw CacheError(.io, "interrupted") }
            var running: Int32 = 0
            try NetworkLibrary.check(ccurl_multi_perform(multi, &running), "curl_multi_perform")
            var remaining: Int32 = 0
            while let message = ccurl_multi_info_read(multi, &remaining) {
                if message.pointee.msg == CURLMSG_DONE { result = message.pointee.data.result }
            }
            if result == nil { try NetworkLibrary.check(ccurl_multi_poll(multi, 100), "curl_multi_poll") }
        }
        return result!
    }
}
