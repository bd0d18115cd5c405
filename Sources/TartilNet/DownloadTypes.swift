import TartilCache
import TartilCore

/// One file to fetch into the cache.
public struct DownloadRequest: Sendable, Hashable {
    /// Who asks: the player's queue-ahead goes before bulk prefetch.
    public enum Priority: Int, Sendable, Hashable, Comparable {
        case playback = 0
        case prefetch = 1
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public let reciter: ReciterID
    public let ayah: AyahRef
    /// The reciter's mirrors, in order of preference (they serve byte-identical files).
    public let mirrors: [Mirror]
    public let expectation: FileExpectation
    public let priority: Priority

    public init(reciter: ReciterID, ayah: AyahRef, mirrors: [Mirror], expectation: FileExpectation, priority: Priority) {
        self.reciter = reciter
        self.ayah = ayah
        self.mirrors = mirrors
        self.expectation = expectation
        self.priority = priority
    }
}

/// Limits every transfer runs under.
public struct DownloadLimits: Sendable, Hashable {
    /// Transfers at once (8 suits per-ayah files: small, many, often from one host).
    public var parallel: Int
    /// Seconds to establish a connection.
    public var connectTimeout: Double
    /// A transfer slower than `stallBytesPerSecond` for this many seconds is abandoned.
    public var stallSeconds: Int
    public var stallBytesPerSecond: Int
    /// Redirects followed at most (http and https only).
    public var maxRedirects: Int

    public init(parallel: Int = 8, connectTimeout: Double = 10, stallSeconds: Int = 15, stallBytesPerSecond: Int = 512, maxRedirects: Int = 5) {
        self.parallel = parallel
        self.connectTimeout = connectTimeout
        self.stallSeconds = stallSeconds
        self.stallBytesPerSecond = stallBytesPerSecond
        self.maxRedirects = maxRedirects
    }
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
}
