/// What a prefetch has done so far, counted from the downloader's events: what the progress bar, the event
/// lines and the summary show.
public struct PrefetchProgress: Sendable, Hashable {
    public let requested: Int
    public var downloaded = 0
    public var alreadyCached = 0
    public var cancelled = 0
    /// Bytes received so far, over all transfers.
    public var bytes = 0
    /// What the connections did (for the summary).
    public var connections = DownloadStatistics()
    public var failed: [Failure] = []
    /// Latest problem per mirror, for the progress bar.
    public var mirrorProblems: [String: String] = [:]
    /// Unpinned files by the cross-check's mark, and what the mirrors told about disputed ones.
    public var marks: [SourceMark: [AyahRef]] = [:]
    public var disputeDetails: [Failure] = []
    /// Surahs of a surah-file reciter learned first (their timings and whole files fetched, their parts cut from
    /// them into the cache): those parts count as downloaded, and the files' bytes are in `bytes`.
    public var learnedSurahs: [Int] = []
    /// Those of `learnedSurahs` only one mirror could serve (single-source), in order.
    public var learnedSingleSource: [Int] = []
    /// Surahs of a surah-file reciter learned before from one mirror only, compared again with its mirrors
    /// (`LearningOrder.toCompareAgain`), in order.
    public var comparedSurahs: [ComparedSurah] = []

    /// A learned surah compared again: its mark now (cross-checked once two mirrors serve its file), and why the
    /// comparison did not settle it, if it did not (the mirrors serve another file, or none answered).
    public struct ComparedSurah: Sendable, Hashable {
        public let surah: Int
        public let mark: SourceMark
        public let problem: String?

        public init(surah: Int, mark: SourceMark, problem: String?) {
            self.surah = surah
            self.mark = mark
            self.problem = problem
        }
    }

    /// An ayah and why (why it failed, or what the mirrors told of it).
    public struct Failure: Sendable, Hashable {
        public let ayah: AyahRef
        public let reason: String

        public init(ayah: AyahRef, reason: String) {
            self.ayah = ayah
            self.reason = reason
        }
    }

    public init(requested: Int) { self.requested = requested }

    /// Files settled so far: downloaded, found in the cache, or failed.
    public var done: Int { downloaded + alreadyCached + failed.count }

    /// Applies an event; returns true when it settles a file.
    @discardableResult
    public mutating func apply(_ event: DownloadEvent) -> Bool {
        switch event {
        case .cached(_, _, let already):
            if already { alreadyCached += 1 } else { downloaded += 1 }
            return true
        case .failed(let ayah, let reason):
            failed.append(Failure(ayah: ayah, reason: reason))
            return true
        case .cancelled:
            cancelled += 1
            return true
        case .retrying(_, let mirror, let reason, _):
            mirrorProblems[mirror] = reason
            return false
        case .marked(let ayah, let mark, let detail):
            marks[mark, default: []].append(ayah)
            if mark == .disputed { disputeDetails.append(Failure(ayah: ayah, reason: detail)) }
            return false
        case .started, .mirrorAbandoned, .heldElsewhere:
            return false
        }
    }

    /// Ayat of unpinned files by the cross-check's mark, in order.
    public func marked(_ mark: SourceMark) -> [AyahRef] { (marks[mark] ?? []).sorted() }
}
