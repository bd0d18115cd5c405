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
    /// An unpinned file already cached as single-source, to be cross-checked again: it is downloaded and compared
    /// afresh (its expectation is unknown), and the copy that wins replaces the one cached.
    public let recheck: Bool
    /// The bytes of the mirror's file that are this file (an ayah's part of a surah's file, asked for with
    /// `Range: bytes=first-last`); nil for the whole file. The expectation is then the range's.
    public let window: ClosedRange<Int>?
    /// For a surah's whole file fetched at once (`SurahFetch.wholeFile`): the surah, and the parts it is cut into
    /// once it is checked. `ayah` is then the first part's (what the events name), `expectation` the whole file's,
    /// and the file is written to `Cache.surahFileWriter`, never under a part's name.
    public let wholeFile: Cache.SurahFileCut?
    /// For a run of parts asked for together (`PartRequests.Step.run`, from a server that ignores ranges): the
    /// parts before this request's own (`ayah` and `window`, the run's last), in file order. One request asks for
    /// the run's whole span; each part is cut from the body and stored alone, checked against its own
    /// expectation, as soon as the body has passed it (`CarriedParts`), and reported then.
    public let carried: [Cache.SurahFilePart]

    public init(
        reciter: ReciterID, ayah: AyahRef, mirrors: [Mirror], expectation: FileExpectation, priority: Priority, recheck: Bool = false,
        window: ClosedRange<Int>? = nil, wholeFile: Cache.SurahFileCut? = nil, carried: [Cache.SurahFilePart] = []
    ) {
        precondition(carried.isEmpty || window != nil, "a run's last part is a window")
        self.wholeFile = wholeFile
        self.carried = carried
        self.reciter = reciter
        self.ayah = ayah
        self.mirrors = mirrors
        self.expectation = expectation
        self.priority = priority
        self.recheck = recheck
        self.window = window
    }
}

extension DownloadRequest {
    /// Whether this asks for one part of a surah's file alone, by its range (not a run, a whole file or a recheck).
    public var isRangedPart: Bool { window != nil && carried.isEmpty && wholeFile == nil && !recheck }

    /// The part this asks for alone by its range, if it does (`isRangedPart`).
    public var rangedPart: AyahRef? { isRangedPart ? ayah : nil }

    /// A part this run carries as a request of its own: the same reciter, mirrors and priority, the part's range.
    public func alone(_ part: Cache.SurahFilePart) -> DownloadRequest {
        DownloadRequest(reciter: reciter, ayah: part.ayah, mirrors: mirrors, expectation: part.expectation, priority: priority, window: part.bytes)
    }

    /// One request for `parts` (at least one) of one surah's file, in file order: named by the last, whose range
    /// it asks for, the ones before it carried (a run: its body is cut into all of them as it passes); one part is
    /// asked for alone.
    public static func run(of parts: [Cache.SurahFilePart], reciter: ReciterID, mirrors: [Mirror], priority: Priority) -> DownloadRequest {
        let last = parts.last!
        return DownloadRequest(
            reciter: reciter, ayah: last.ayah, mirrors: mirrors, expectation: last.expectation, priority: priority, window: last.bytes,
            carried: Array(parts.dropLast()))
    }
}

extension PartRequests.PrefetchStep {
    /// The request this step is, of `requests` (those `PartRequests.regrouped` was given, in order).
    public func request(of requests: [DownloadRequest]) -> DownloadRequest {
        switch self {
        case .request(let index):
            return requests[index]
        case .run(let indices):
            let first = requests[indices[0]]
            return .run(
                of: indices.map { Cache.SurahFilePart(ayah: requests[$0].ayah, bytes: requests[$0].window!, expectation: requests[$0].expectation) },
                reciter: first.reciter, mirrors: first.mirrors, priority: first.priority)
        }
    }
}

/// A question about a file that is not downloaded: its size and first bytes (`firstBytes`), for working out its
/// length without downloading it (`LengthEstimate`). Asked of the reciter's mirrors in order, at the lowest
/// priority: only while no download is waiting, at most half the transfers (two for the player's four), and never
/// in the last free transfer slot, so a file the player wants starts at once.
public struct HeadRequest: Sendable, Hashable {
    /// How much of each file is asked for: its ID3v2 tag's header, and its first frame (with a Xing or Info frame
    /// count) when the tag is small.
    public static let firstBytes = 1024

    public let reciter: ReciterID
    public let ayah: AyahRef
    public let mirrors: [Mirror]

    public init(reciter: ReciterID, ayah: AyahRef, mirrors: [Mirror]) {
        self.reciter = reciter
        self.ayah = ayah
        self.mirrors = mirrors
    }
}

/// A mirror's answer to a `HeadRequest`.
public struct FileHead: Sendable, Hashable {
    public let ayah: AyahRef
    /// The whole file's size.
    public let bytes: Int
    /// Its first bytes (up to `HeadRequest.firstBytes`).
    public let first: [UInt8]
}
