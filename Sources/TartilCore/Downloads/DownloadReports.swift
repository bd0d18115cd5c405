/// What downloads run under and what they report: plain values the front ends set and show.

/// Limits and settings every transfer runs under.
public struct DownloadLimits: Sendable, Hashable {
    /// Connections to each server (`--jobs`): over HTTP/1.1, transfers at once to it, one per connection; over
    /// HTTP/2, the most it may open, each carrying up to `streams` requests (so one, unless the server allows
    /// fewer streams per connection, or `streams` is below `parallel`).
    public var parallel: Int
    /// Requests in flight to a server that speaks HTTP/2 (`--streams`), all on one connection while the server
    /// allows that many (libcurl's CURLMOPT_MAX_CONCURRENT_STREAMS), as curl --parallel does. An https server is
    /// taken to multiplex until an answer shows HTTP/1.1 (`TransferSlots`); a plain http one gets `parallel`.
    public var streams: Int
    /// The CA certificates to trust (a PEM file: `--ca-bundle`, `SSL_CERT_FILE`, `CURL_CA_BUNDLE`), instead of
    /// libcurl's default bundle; nil for the default. Verification stays on either way.
    public var caBundle: String?
    /// Directories of CA certificates named by their hash, trusted besides the bundle (`SSL_CERT_DIR`; several
    /// separated by colons); nil for libcurl's default.
    public var caDirectory: String?
    /// Seconds to establish a connection.
    public var connectTimeout: Double
    /// A transfer slower than `stallBytesPerSecond` for this many seconds is abandoned.
    public var stallSeconds: Int
    public var stallBytesPerSecond: Int
    /// Redirects followed at most (http and https only).
    public var maxRedirects: Int

    public init(
        parallel: Int = 8, streams: Int = DownloadLimits.defaultStreams, caBundle: String? = nil, connectTimeout: Double = 10,
        stallSeconds: Int = 15, stallBytesPerSecond: Int = 512, maxRedirects: Int = 5
    ) {
        self.parallel = parallel
        self.streams = streams
        self.caBundle = caBundle
        self.connectTimeout = connectTimeout
        self.stallSeconds = stallSeconds
        self.stallBytesPerSecond = stallBytesPerSecond
        self.maxRedirects = maxRedirects
    }

    /// The default of `streams` (see the README for the measurements it comes from).
    public static let defaultStreams = 64

    // MARK: - Timeouts

    /// What `--connect-timeout` and the config key `connect-timeout` take: 1 s to 5 min.
    public static let connectTimeoutRange: ClosedRange<Double> = 1...300
    /// What `--stall-timeout` and the config key `stall-timeout` take: 1 s to 10 min (whole seconds, rounded up).
    public static let stallTimeoutRange: ClosedRange<Double> = 1...600

    /// The options every command that downloads takes (play, render, resume, prefetch, cache verify, resolve).
    public static let timeoutOptions: [CommandSyntax.Option] = [
        .init(
            names: ["--connect-timeout"], valueName: "time",
            help: "Give up connecting to a mirror after this long, 1 s to 5 min (10, 2.5s, 1m; default 10 s) [config: connect-timeout]."),
        .init(
            names: ["--stall-timeout"], valueName: "time",
            help: "Abandon a transfer that stays under 512 bytes/s this long (over HTTP/2: a server whose requests together do), 1 s to 10 min (default 15 s) [config: stall-timeout]."),
    ]

    /// These limits with a connect timeout and a stall timeout, each given as a duration text (nil: unchanged);
    /// `source` names where each came from in errors (`--connect-timeout`, `config:3: connect-timeout`).
    public func with(
        connectTimeout: (text: String, source: String)?, stallTimeout: (text: String, source: String)?
    ) throws(TartilError) -> DownloadLimits {
        var limits = self
        if let connectTimeout {
            limits.connectTimeout = try DurationText.parse(connectTimeout.text, in: Self.connectTimeoutRange, for: connectTimeout.source)
        }
        if let stallTimeout {
            limits.stallSeconds = Int(try DurationText.parse(stallTimeout.text, in: Self.stallTimeoutRange, for: stallTimeout.source).rounded(.up))
        }
        return limits
    }

    /// These limits with `invocation`'s `--connect-timeout` and `--stall-timeout`, when given.
    public func with(_ invocation: Invocation) throws(TartilError) -> DownloadLimits {
        try with(
            connectTimeout: invocation.value("--connect-timeout").map { ($0, "--connect-timeout") },
            stallTimeout: invocation.value("--stall-timeout").map { ($0, "--stall-timeout") })
    }

    /// Transfers in flight in all, over every server (each holds an open file): room for a full share on two
    /// servers, as when files fail over from one mirror to the next.
    public var transfersInFlight: Int { 2 * max(parallel, streams) }
}

/// What the downloader reports, from its own thread.
public enum DownloadEvent: Sendable, Hashable {
    /// An attempt started on a mirror.
    case started(AyahRef, mirror: String)
    /// An attempt failed; another follows after `delay` seconds.
    case retrying(AyahRef, mirror: String, reason: String, delay: Double)
    /// An unpinned file was cross-checked against the reciter's other mirrors before it was committed (it comes
    /// just before its `.cached`). `detail` names what each mirror told, for a `disputed` file.
    case marked(AyahRef, SourceMark, detail: String)
    /// The file is verified in the cache (downloaded now, or found there).
    case cached(AyahRef, bytes: Int, alreadyCached: Bool)
    /// Every mirror failed: `reason` names each mirror's last problem.
    case failed(AyahRef, reason: String)
    /// Stopped by `cancel()` (partial bytes are kept for the next run).
    case cancelled(AyahRef)
    /// Another tartil process has held the file's lock (it is downloading it) for `DownloadScheduler.heldElsewhereNotice`
    /// seconds: this run goes on with its other files and looks again every 0.2 s, taking the file when that process
    /// has it cached or lets go of it. Comes once per wait, and only for a wait that long (two runs that overlap
    /// briefly say nothing), so a process stopped with Ctrl-Z, or one far slower, is not waited for in silence.
    case heldElsewhere(AyahRef)
    /// A mirror is given up for the rest of the run (its certificate does not verify): no file is asked of it
    /// again. Comes once per mirror, before the failures it causes.
    case mirrorAbandoned(mirror: String, reason: String)
}

/// What the downloader's connections did, summed over its finished transfers (libcurl's CURLINFO_NUM_CONNECTS
/// and CURLINFO_HTTP_VERSION).
public struct DownloadStatistics: Sendable, Hashable {
    /// Transfers that ended (successful or not).
    public var transfers = 0
    /// Connections opened (a transfer that reused a connection opened none).
    public var connections = 0
    /// Transfers answered over HTTP/2.
    public var http2Transfers = 0
    /// The most transfers that were in flight at once.
    public var mostInFlight = 0

    public init() {}
}

