import TestSupport
import Testing

@testable import TartilCore

/// How a prefetch of a surah-file reciter asks for what is missing: a surah whose missing parts are at least half
/// its file comes whole, in one request; the rest come by range, each part once, in the order asked.
@Suite struct SurahFetchTests {
    /// Surah 112 as four parts of 100 bytes each (a 0-99 basmala, then 100-199, …) in a 400-byte file; 113 as two of
    /// 300 in a 600-byte file.
    static let ranges: [AyahRef: ClosedRange<Int>] = {
        var ranges: [AyahRef: ClosedRange<Int>] = [:]
        for ayah in 0...3 { ranges[AyahRef(unchecked: 112, ayah)] = (ayah * 100)...(ayah * 100 + 99) }
        for ayah in 1...2 { ranges[AyahRef(unchecked: 113, ayah)] = ((ayah - 1) * 300)...((ayah - 1) * 300 + 299) }
        return ranges
    }()
    static let sizes = [112: 400, 113: 600]

    static func refs(_ pairs: [(Int, Int)]) -> [AyahRef] { pairs.map { AyahRef(unchecked: $0.0, $0.1) } }

    @Test(arguments: [
        // (missing, expected steps: surah 0 = a part by itself, else the surah whole with its parts)
        ([(112, 0), (112, 1), (112, 2), (112, 3)], [(112, [(112, 0), (112, 1), (112, 2), (112, 3)])]),
        ([(112, 2), (112, 3)], [(112, [(112, 2), (112, 3)])]),  // exactly half: whole
        ([(112, 3)], [(0, [(112, 3)])]),
        ([(113, 2), (112, 1)], [(113, [(113, 2)]), (0, [(112, 1)])]),  // 300 of 600 is half
        ([(112, 1), (113, 1), (112, 3), (113, 2)], [(112, [(112, 1), (112, 3)]), (113, [(113, 1), (113, 2)])]),
        ([(114, 1), (112, 0)], [(0, [(114, 1)]), (0, [(112, 0)])]),  // 114 has no range or size: by itself
    ] as [([(Int, Int)], [(Int, [(Int, Int)])])])
    func halfAFileOrMoreComesWhole(missing: [(Int, Int)], expected: [(Int, [(Int, Int)])]) {
        let steps = SurahFetch.plan(missing: Self.refs(missing), ranges: Self.ranges, fileBytes: Self.sizes)
        let wanted: [SurahFetch] = expected.map { surah, parts in
            surah == 0 ? .part(Self.refs(parts)[0]) : .wholeFile(surah: surah, parts: Self.refs(parts))
        }
        #expect(steps == wanted)
    }

    /// Any missing list: every part is in exactly one step, the steps keep the order asked (a whole file where its
    /// first part was), and a surah is whole exactly when its missing parts are half its file or more.
    @Test(arguments: 0..<200)
    func everyPartIsFetchedOnceInOrder(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let all = Self.ranges.keys.sorted() + [AyahRef(unchecked: 114, 1)]
        let missing = all.filter { _ in Bool.random(using: &random) }.shuffled(using: &random)
        let steps = SurahFetch.plan(missing: missing, ranges: Self.ranges, fileBytes: Self.sizes)
        let covered = steps.flatMap(\.parts)
        #expect(covered.sorted() == missing.sorted())
        let firsts = steps.map { $0.parts[0] }
        #expect(firsts == missing.filter { firsts.contains($0) }, "in the order asked")
        for surah in [112, 113] {
            let bytes = missing.filter { $0.surah == surah }.reduce(0) { $0 + Self.ranges[$1]!.count }
            let whole = steps.contains { if case .wholeFile(surah, _) = $0 { true } else { false } }
            #expect(whole == (bytes > 0 && bytes * 2 >= Self.sizes[surah]!), "surah \(surah), \(bytes) bytes missing")
        }
    }

    /// A whole file's events, for the parts it stands for: one settles every part (sizes of their own), a start
    /// or retry stays one event.
    @Test func aWholeFilesEventsStandForEachPart() {
        let parts = Self.refs([(112, 1), (112, 3)])
        let bytes = [parts[0]: 100, parts[1]: 100]
        #expect(DownloadEvent.cached(parts[0], bytes: 400, alreadyCached: false).spread(over: parts, bytes: bytes)
            == parts.map { .cached($0, bytes: 100, alreadyCached: false) })
        #expect(DownloadEvent.failed(parts[0], reason: "HTTP 404").spread(over: parts, bytes: bytes) == parts.map { .failed($0, reason: "HTTP 404") })
        #expect(DownloadEvent.cancelled(parts[0]).spread(over: parts, bytes: bytes) == parts.map { .cancelled($0) })
        let retry = DownloadEvent.retrying(parts[0], mirror: "a", reason: "HTTP 503", delay: 1)
        #expect(retry.spread(over: parts, bytes: bytes) == [retry])
        #expect(retry.ayah == parts[0] && !retry.settlesRequest && DownloadEvent.cancelled(parts[0]).settlesRequest)
        #expect(DownloadEvent.mirrorAbandoned(mirror: "a", reason: "TLS").ayah == nil)
    }
}
