import TartilCore

/// What a cached file must be: the table's size and hash for a pinned ayah, the recorded ones for an unpinned
/// ayah seen before, or only a size limit for an ayah never downloaded.
public struct FileExpectation: Sendable, Hashable {
    /// Exact size, when known.
    public let bytes: Int?
    /// SHA-256, when known.
    public let sha256: String?
    /// Most bytes the file may have.
    public let maxBytes: Int
    /// Where the expectation comes from: `table`, `recorded` or `none`.
    public let source: String

    /// The table's row: exact size and hash; `source` names the row in a mismatch (`table`, or a learned surah's
    /// `PlayableParts.rowSource`).
    public static func pinned(_ file: PinnedFile, source: String = "table") -> FileExpectation {
        FileExpectation(bytes: file.bytes, sha256: file.sha256, maxBytes: file.bytes, source: source)
    }

    /// A hash recorded on the first verified download (trust on first use).
    public static func recorded(bytes: Int, sha256: String) -> FileExpectation {
        FileExpectation(bytes: bytes, sha256: sha256, maxBytes: bytes, source: "recorded")
    }

    /// Nothing known: the file must decode as MPEG audio and stay under `maxBytes`.
    public static func unknown(maxBytes: Int) -> FileExpectation {
        FileExpectation(bytes: nil, sha256: nil, maxBytes: maxBytes, source: "none")
    }

    /// Whether size and hash are known (so no decode check is needed).
    public var isKnown: Bool { sha256 != nil }

    /// Why `bytes`/`sha256` do not meet the expectation, or nil when they do.
    public func mismatch(bytes actualBytes: Int, sha256 actualHash: String) -> String? {
        if let bytes, bytes != actualBytes { return "size \(actualBytes) bytes, expected \(bytes) (\(source))" }
        if let sha256, sha256 != actualHash { return "sha256 \(actualHash.prefix(16))…, expected \(sha256.prefix(16))… (\(source))" }
        if actualBytes > maxBytes { return "size \(actualBytes) bytes is over the limit of \(maxBytes)" }
        return nil
    }
}
