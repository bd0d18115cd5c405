import TestSupport
import Testing

@testable import TartilCore

/// A prefetch of parts of surah files asked for by their ranges (`PartRequests.probe`, `PartRequests.regrouped`):
/// the first part probes how the mirrors treat ranges; from a server that ignores them, the rest of each surah's
/// parts go as runs, so about the file moves once, not the file up to each part for every part.
@Suite struct PrefetchPartsTests {
    static func ref(_ surah: Int, _ ayah: Int) -> AyahRef { AyahRef(unchecked: surah, ayah) }
    /// The requests: (surah, ayah) a part asked for by its range, nil anything else (a whole file, a recheck).
    static func ranged(_ items: [(Int, Int)?]) -> [AyahRef?] { items.map { $0.map { ref($0.0, $0.1) } } }
    static let ranges = PartRunTests.ranges

    @Test(arguments: [
        // (the requests, the probe)
        ([(112, 1), (112, 2)], 0 as Int?),
        ([nil, (112, 1), nil, (113, 1)], 1),  // a whole file first: the probe is the first ranged part
        ([(112, 1)], nil),  // one part: nothing to gain
        ([nil, nil], nil),
        ([nil, (112, 3), nil], nil),
        ([], nil),
    ] as [([(Int, Int)?], Int?)])
    func theFirstRangedPartProbesWhenAnotherFollows(requests: [(Int, Int)?], probe: Int?) {
        #expect(PartRequests.probe(in: Self.ranged(requests)) == probe)
    }

    @Test(arguments: [
        // (the requests after the probe, what the server showed, the steps: one index a request as it is, more a run)
        ([(112, 2), (112, 3), (112, 4)], PartRequests.RangeSupport.ignored, [[0, 1, 2]]),
        ([(112, 2), (112, 3), (112, 4)], .honoured, [[0], [1], [2]]),  // each its range, as before
        ([(112, 2), (112, 3), (112, 4)], .unknown, [[0], [1], [2]]),
        // A whole file between them stays where it was; a run of each surah starts where its first part was.
        ([(112, 2), nil, (112, 4), (113, 1), (113, 2)], .ignored, [[0, 2], [1], [3, 4]]),
        // A part earlier in the file than the one before it starts a run of its own.
        ([(112, 3), (112, 4), (112, 1), (112, 2)], .ignored, [[0, 1], [2, 3]]),
        ([(112, 4)], .ignored, [[0]]),
        ([nil], .ignored, [[0]]),
        ([(1, 1), (1, 2)], .ignored, [[0], [1]]),  // no ranges known: alone
        ([], .ignored, []),
    ] as [([(Int, Int)?], PartRequests.RangeSupport, [[Int]])])
    func theRestGoesAsTheServerShowed(requests: [(Int, Int)?], support: PartRequests.RangeSupport, steps: [[Int]]) {
        let got = PartRequests.regrouped(Self.ranged(requests), support: support, ranges: Self.ranges)
        #expect(got == steps.map { $0.count == 1 ? .request($0[0]) : .run($0) })
    }

    /// Any requests (parts of three surahs in any order, some asked twice, whole files between them): every
    /// request is in exactly one step, the steps in the order of their first requests; a run holds only parts asked
    /// for by range, of one surah, in file order, and only when ranges are ignored; then a new request starts only
    /// where the parts go to another surah or back in the file (or around a part that comes again: it goes alone,
    /// and a run stops before it), and a prefetch's parts
    /// (by surah, in file order) go as one request per surah: an ignoring server sends each surah's file up to its
    /// last part once.
    @Test func seededPrefetchesMoveAboutOneFileFromAServerThatIgnoresRanges() {
        var ranges: [AyahRef: ClosedRange<Int>] = [:]
        for surah in 1...3 {
            for ayah in 0...20 { ranges[Self.ref(surah, ayah)] = max(0, ayah * 1000 - 200)...(ayah * 1000 + 999) }
        }
        for seed in 0..<2000 {
            var random = SeededRandom(seed: UInt64(seed))
            var requests: [AyahRef?] = (0..<random.below(30)).map { _ in
                random.below(5) == 0 ? nil : Self.ref(1 + random.below(3), random.below(21))
            }
            let asPrefetch = random.below(2) == 0
            if asPrefetch {  // as a prefetch asks: each part once, by surah and in file order, whole files after
                requests = Set(requests.compactMap { $0 }).sorted { ($0.surah, $0.ayah) < ($1.surah, $1.ayah) } + requests.filter { $0 == nil }
            }
            let parts = requests.compactMap { $0 }
            for support in [PartRequests.RangeSupport.ignored, .honoured, .unknown] {
                let steps = PartRequests.regrouped(requests, support: support, ranges: ranges)
                #expect(steps.flatMap(\.requests).sorted() == Array(requests.indices), "seed \(seed): \(steps)")
                #expect(steps.map { $0.requests[0] } == steps.map { $0.requests[0] }.sorted(), "seed \(seed): in order")
                for case .run(let members) in steps {
                    let run = members.map { requests[$0] }
                    #expect(support == .ignored && members.count > 1, "seed \(seed)")
                    #expect(run.allSatisfy { $0 != nil && $0!.surah == run[0]!.surah }, "seed \(seed): \(run)")
                    let starts = run.map { ranges[$0!]!.lowerBound }
                    #expect(zip(starts, starts.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed): \(run)")
                }
                guard support == .ignored, !parts.isEmpty else {
                    #expect(steps.allSatisfy { $0.requests.count == 1 })
                    continue
                }
                let partSteps = steps.filter { step in step.requests.contains { requests[$0] != nil } }.count
                let breaks = zip(parts, parts.dropFirst()).filter { $1.surah != $0.surah || ranges[$1]!.lowerBound <= ranges[$0]!.lowerBound }.count
                let again = parts.count - Set(parts).count
                #expect(partSteps <= breaks + 1 + 2 * again, "seed \(seed): \(partSteps) requests for \(parts): \(steps)")
                if asPrefetch {
                    #expect(partSteps == Set(parts.map(\.surah)).count, "seed \(seed): one request per surah: \(steps)")
                }
            }
        }
    }
}
