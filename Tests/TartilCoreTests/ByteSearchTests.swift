import Testing
import TestSupport
@testable import TartilCore

/// `[UInt8].contains(bytes:)`: a table of edges, and seeded haystacks over a small alphabet (so near-misses and
/// overlapping prefixes are common) against a search written the obvious way.
struct ByteSearchTests {
    @Test(arguments: [
        ("", "", true), ("abc", "", true), ("", "a", false), ("a", "a", true), ("a", "b", false),
        ("abc", "abc", true), ("abc", "abcd", false), ("xxabc", "abc", true), ("abcxx", "abc", true),
        ("aab", "ab", true), ("aaab", "aab", true), ("abab", "abb", false), ("{\"exit_code\":0}", "\"exit_code\"", true),
        ("{\"exit_cod\":0}", "\"exit_code\"", false),
    ])
    func table(haystack: String, needle: String, expected: Bool) {
        #expect(Array(haystack.utf8).contains(bytes: Array(needle.utf8)) == expected)
    }

    @Test func agreesWithTheObviousSearch() {
        var random = SeededRandom(seed: 24)
        for _ in 0..<5000 {
            let haystack = (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }
            let needle = (0..<Int.random(in: 0...5, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }
            let obvious = needle.isEmpty || (haystack.count >= needle.count
                && (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle })
            #expect(haystack.contains(bytes: needle) == obvious, "\(haystack) \(needle)")
        }
    }
}
