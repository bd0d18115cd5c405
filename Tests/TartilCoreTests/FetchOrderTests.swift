import Testing
@testable import TartilCore
import TestSupport

@Suite struct FetchOrderTests {
    static let a = AyahRef(unchecked: 1, 1), b = AyahRef(unchecked: 112, 1), c = AyahRef(unchecked: 112, 2), d = AyahRef(unchecked: 112, 3)

    static let cases: [(wanted: [AyahRef], missing: Set<AyahRef>, headArrived: Bool, expected: [AyahRef], why: String)] = [
        ([a, b, c, d], [a, b, c, d], false, [a], "a cold start asks for the first file alone"),
        ([a, b, c, d], [b, c, d], false, [], "the first file is in flight: the rest wait for it"),
        ([a, b, c, d], [b, c, d], true, [b, c, d], "the first file is here: the rest follow, in order"),
        ([a, b, c, d], [d, b], true, [b, d], "in the order heard, not the order found missing"),
        ([a, b, c, d], [], true, [], "nothing missing"),
        ([a, b, c, d], [c], false, [], "a missing file ahead waits while the first is still coming"),
        ([], [a], true, [], "nothing wanted"),
        ([a, b, a], [a, b], true, [a, b], "a file wanted twice (a repeat) is asked for once"),
    ]

    @Test(arguments: cases.indices) func theFileNeededNowGoesAlone(index: Int) {
        let row = Self.cases[index]
        #expect(FetchOrder.requests(wanted: row.wanted, missing: row.missing, headArrived: row.headArrived) == row.expected, "\(row.why)")
    }

    /// Seeded property: what is asked for is always missing and wanted, never twice, and is everything missing
    /// once the first file has arrived, or at most that file before.
    @Test func requestsAreWantedMissingAndHeadFirst() {
        var random = SeededRandom(seed: 0x7461_7274_696c)
        let pool = (1...6).map { AyahRef(unchecked: 2, $0) }
        for _ in 0..<2000 {
            let wanted = (0..<random.below(6)).map { _ in pool[random.below(pool.count)] }
            let missing = Set(pool.filter { _ in random.below(2) == 0 })
            let arrived = random.below(2) == 0
            let asked = FetchOrder.requests(wanted: wanted, missing: missing, headArrived: arrived)
            #expect(Set(asked).count == asked.count)
            #expect(asked.allSatisfy { missing.contains($0) && wanted.contains($0) })
            if arrived {
                #expect(Set(asked) == missing.intersection(wanted))
            } else {
                #expect(asked.count <= 1 && asked.allSatisfy { $0 == wanted.first })
            }
        }
    }
}
