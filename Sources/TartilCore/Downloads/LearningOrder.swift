/// Which surah a player of a surah-file reciter learns next (`SurahLearning`: the surah's published timings and
/// its whole file, cut into parts), one surah at a time, while it plays: the surah of the first wanted file that
/// still needs learning (playback waits for it), else the first surah after the wanted files' that the plan
/// plays and that needs learning (learned while the one before it plays, so the join between them does not wait).
/// No further ahead: a surah's whole file is fetched to learn it, and a listener who stops early should not have
/// paid for more than the next one.
///
/// ```swift
/// LearningOrder.next(wanted: [2:286, 3:1], upcoming: [2:286, 3:1, …, 4:1, …]) { $0 != 2 }  // 3
/// LearningOrder.next(wanted: [2:284, 2:285], upcoming: [2:284, …, 3:1, …, 4:1]) { $0 == 4 }  // nil: 3 comes first
/// ```
public enum LearningOrder {
    /// `wanted`: the files playback wants now (current first); `upcoming`: the plan's files from the current one
    /// on, in the order played; `needsLearning`: whether a surah is neither covered by a table nor learned nor
    /// failed to be learned.
    public static func next(wanted: [AyahRef], upcoming: [AyahRef], needsLearning: (Int) -> Bool) -> Int? {
        for file in wanted where needsLearning(file.surah) { return file.surah }
        let current = Set(wanted.map(\.surah))
        guard let following = upcoming.first(where: { !current.contains($0.surah) }) else { return nil }
        return needsLearning(following.surah) ? following.surah : nil
    }
}

extension LearningOrder {
    /// A cached part of a learned surah as the cross-check left it: its mark, and the URL its file came from.
    public struct LearnedPart: Sendable, Hashable {
        public let mark: SourceMark?
        public let url: String?

        public init(mark: SourceMark?, url: String?) {
            self.mark = mark
            self.url = url
        }
    }

    /// The surahs a prefetch compares again with the reciter's mirrors, as it compares an unpinned per-ayah file
    /// only one mirror vouched for: of `asked`, those learned before from one mirror only (a part of theirs in the
    /// cache is single-source) that a mirror listed now may vouch for too (`canCompare`; the mirrors as the URLs of
    /// the surah's file, `urls`). A surah in `learnedNow` was compared as this run learned it; one a table pins, or
    /// one not learned, has no part marked; one the listener chose (`cache choose`) stays as chosen. In order, each
    /// once.
    ///
    /// ```swift
    /// let single = LearningOrder.LearnedPart(mark: .singleSource, url: "a/112.mp3")
    /// LearningOrder.toCompareAgain(asked: [113, 112], learnedNow: [], urls: { _ in ["a/112.mp3", "b/112.mp3"] }) { $0 == 112 ? [single] : [] }
    /// // [112]; with only "a/112.mp3" listed, []: the one mirror listed is the one it came from
    /// ```
    public static func toCompareAgain(asked: [Int], learnedNow: Set<Int>, urls: (Int) -> [String], parts: (Int) -> [LearnedPart]) -> [Int] {
        Set(asked).subtracting(learnedNow).sorted().filter { canCompare(parts($0), urls: urls($0)) }
    }

    /// Whether a learned surah whose cached parts are `parts` can be compared with a mirror listed now (`urls`,
    /// each mirror's URL of the surah's file): one other than those its single-source parts came from (a mirror
    /// renamed is the same mirror); for parts learned before the URL was recorded, two mirrors, since the one that
    /// served it is not known.
    public static func canCompare(_ parts: [LearnedPart], urls: [String]) -> Bool {
        let single = parts.filter { $0.mark == .singleSource }
        guard !single.isEmpty else { return false }
        let servedBy = Set(single.compactMap(\.url))
        return servedBy.isEmpty ? urls.count > 1 : urls.contains { !servedBy.contains($0) }
    }
}
