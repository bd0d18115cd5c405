import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Which surah a player of a surah-file reciter learns next while it plays, and how a surah learned joins the
/// parts it plays.
@Suite struct LearningOrderTests {
    static func refs(_ pairs: [(Int, Int)]) -> [AyahRef] { pairs.map { AyahRef(unchecked: $0.0, $0.1) } }

    /// The plan `112, 113, 114` of a surah-file reciter: each surah's basmala part, then its ayat.
    static let plan: [AyahRef] = refs([
        (112, 0), (112, 1), (112, 2), (112, 3), (112, 4), (113, 0), (113, 1), (113, 2), (113, 3), (113, 4), (113, 5),
        (114, 0), (114, 1), (114, 2), (114, 3), (114, 4), (114, 5), (114, 6),
    ])

    @Test(arguments: [
        // (wanted, the surahs that need learning, the one learned next: 0 for none)
        ([(112, 0), (112, 1), (112, 2)], [112, 113, 114], 112),  // what playback waits for comes first
        ([(112, 0), (112, 1), (112, 2)], [113, 114], 113),  // then the next surah, while this one plays
        ([(112, 0), (112, 1), (112, 2)], [114], 0),  // never further ahead than the next
        ([(112, 4), (113, 0), (113, 1)], [113, 114], 113),  // the wanted files reach into the next surah
        ([(112, 4), (113, 0), (113, 1)], [114], 114),  // the next surah after the wanted files'
        ([(113, 0), (113, 1)], [112], 0),  // a surah already played past is not learned
        ([(114, 5), (114, 6)], [112, 113], 0),  // the last surah of the plan: nothing follows
        ([(113, 2), (112, 1)], [112], 112),  // a wanted surah out of plan order (a seek back) still comes first
        ([], [112], 112),  // nothing wanted yet: the first upcoming surah
    ] as [([(Int, Int)], [Int], Int)])
    func theSurahWaitedForThenTheNextOneAndNoFurther(wanted: [(Int, Int)], needing: [Int], expected: Int) throws {
        let wantedRefs = Self.refs(wanted)
        let from = wantedRefs.first.flatMap { Self.plan.firstIndex(of: $0) } ?? 0
        let next = LearningOrder.next(wanted: wantedRefs, upcoming: Array(Self.plan[from...]), needsLearning: { needing.contains($0) })
        #expect(next == (expected == 0 ? nil : expected))
    }

    /// Any plan position and any set of surahs needing learning (seeded): the surah named needs learning, and it is
    /// either a wanted file's (the first such in the wanted order) or, when none of those needs it, the first surah
    /// of the upcoming files after the wanted ones'.
    @Test(arguments: 0..<200)
    func theChoiceIsAlwaysTheWaitedOrTheNext(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let surahs = (0..<(1 + random.below(5))).map { _ in 100 + random.below(15) }
        var plan: [AyahRef] = []
        for surah in surahs { for ayah in 0...(1 + random.below(3)) { plan.append(AyahRef(unchecked: surah, ayah)) } }
        let from = random.below(plan.count)
        let wanted = Array(plan[from..<min(plan.count, from + random.below(4))])
        let needing = Set(surahs.filter { _ in random.below(2) == 0 })
        let next = LearningOrder.next(wanted: wanted, upcoming: Array(plan[from...]), needsLearning: { needing.contains($0) })
        if let waited = wanted.first(where: { needing.contains($0.surah) }) {
            #expect(next == waited.surah)
        } else {
            let following = plan[from...].first { file in !wanted.contains { $0.surah == file.surah } }
            #expect(next == following.flatMap { needing.contains($0.surah) ? $0.surah : nil })
        }
        if let next { #expect(needing.contains(next)) }
    }

    /// Which learned surahs a prefetch compares again with the mirrors: those asked for with a part only one mirror
    /// vouched for, once each and in order, unless this run just learned them, when a mirror listed now is
    /// another than the one its file came from (by URL: a mirror renamed is the same; two mirrors, when that
    /// one was not recorded); parts cross-checked, chosen or of a pinned surah (no mark) are left alone.
    @Test(arguments: [
        // (asked, learned now, mirrors' URLs, each surah's parts as mark@url ("-" for none), the surahs compared)
        ([112, 113], [], ["a", "b"], [112: ["single@a", "single@a"], 113: ["cross@a"]], ["112"]),
        ([113, 112, 113, 112], [], ["a", "b"], [112: ["single@a"], 113: ["single@b"]], ["112", "113"]),  // in order, each once
        ([112], [112], ["a", "b"], [112: ["single@a"]], []),  // learned by this run: compared as it was learned
        ([112], [], ["a"], [112: ["single@a"]], []),  // only the mirror it came from is listed
        ([112], [], ["b"], [112: ["single@a"]], ["112"]),  // the one mirror listed now is another one
        ([112], [], ["a"], [112: ["single@-"]], []),  // which mirror served it is not known: two are needed
        ([112], [], ["a", "b"], [112: ["single@-"]], ["112"]),
        ([112], [], ["a", "b", "c"], [112: ["-@b", "single@a"]], ["112"]),  // a part fetched again by range (no mark) does not hide it
        ([112], [], ["a", "b"], [112: ["single@a", "single@b"]], []),  // every mirror listed served some of it
        ([112, 113, 114], [], ["a", "b"], [112: ["-@a", "-@a"], 113: ["chosen@a"], 114: ["cross@a", "cross@a"]], []),
        ([114], [], ["a", "b"], [112: ["single@a"]], []),  // not asked for
    ] as [([Int], Set<Int>, [String], [Int: [String]], [String])])
    func aSurahLearnedFromOneMirrorIsComparedAgain(asked: [Int], learnedNow: Set<Int>, urls: [String], parts: [Int: [String]], expected: [String]) {
        let marks: [String: SourceMark] = ["single": .singleSource, "cross": .crossChecked, "chosen": .chosen]
        let learned = parts.mapValues { texts in
            texts.map { text in
                let halves = text.split(separator: "@").map(String.init)
                return LearningOrder.LearnedPart(mark: marks[halves[0]], url: halves[1] == "-" ? nil : halves[1])
            }
        }
        let due = LearningOrder.toCompareAgain(asked: asked, learnedNow: learnedNow, urls: { _ in urls }) { learned[$0] ?? [] }
        #expect(due.map(String.init) == expected)
    }

    /// A surah learned while playing joins the parts played: its rows win over any it had, the other surahs' rows
    /// are kept, and the result is what one table of all of them gives.
    @Test func aLearnedSurahJoinsThePartsPlayed() throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/surah-table.tsv")))
        let table = try SurahTable.parse(bytes: bytes, file: "surah-table.tsv")
        let whole = table.playableParts()
        for surah in table.files.map(\.surah) {
            let without = SurahTable(reciter: table.reciter, source: table.source, files: table.files.filter { $0.surah != surah })
            let only = SurahTable(reciter: table.reciter, source: "", files: table.files.filter { $0.surah == surah })
            let joined = without.playableParts().adding(only.playableParts())
            #expect(Array(joined.pinned.files.map { $0.0 }) == Array(whole.pinned.files.map { $0.0 }))
            #expect(joined.pinned.files.values == whole.pinned.files.values)
            #expect(joined.windows == whole.windows && joined.byteRanges == whole.byteRanges && joined.surahFiles == whole.surahFiles)
            // Learned again (its file replaced upstream): the new rows replace the old ones.
            let again = whole.adding(only.playableParts())
            #expect(again.pinned.files.values == whole.pinned.files.values && again.windows == whole.windows)
        }
    }
}
