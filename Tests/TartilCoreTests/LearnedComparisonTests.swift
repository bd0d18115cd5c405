import TestSupport
import Testing

@testable import TartilCore

/// Comparing again a surah learned from one mirror: whom it asks, in what order, and how it settles.
@Suite struct LearnedComparisonTests {
    static let learned = FileFingerprint(bytes: 100, sha256: String(repeating: "a", count: 64))
    static let other = FileFingerprint(bytes: 100, sha256: String(repeating: "b", count: 64))

    /// Runs a comparison over mirrors `urls` (the file came from `servedBy`), each asked mirror answering in turn
    /// from `answers` ("=": the file learned, "x": another file, "-": none); returns the mirrors asked, in order,
    /// and the outcome.
    static func run(urls: [String], servedBy: Set<String>, answers: [Int: [String]]) -> (asked: [Int], outcome: LearnedComparison.Outcome?) {
        var comparison = LearnedComparison(urls: urls, servedBy: servedBy, wanted: learned)
        var left = answers
        var asked: [Int] = []
        var action = comparison.start()
        while case .ask(let index) = action, asked.count < 20 {
            asked.append(index)
            let answer = left[index]?.first ?? "-"
            left[index] = Array((left[index] ?? []).dropFirst())
            action = comparison.answered(index, answer == "=" ? .file(learned) : answer == "x" ? .file(other) : .none)
        }
        guard case .settled(let outcome) = action else { return (asked, nil) }
        return (asked, outcome)
    }

    @Test(arguments: [
        // (mirrors' URLs, the URLs it came from, each mirror's answers, mirrors asked, outcome)
        (["a", "b"], ["a"], [1: ["="]], [1], "cross-checked by 1"),  // the mirror it came from is never asked
        (["a", "b", "c"], ["a"], [1: ["="], 2: ["="]], [1], "cross-checked by 1"),  // one more is enough
        (["b", "a"], ["a"], [0: ["-"]], [0], "unserved: failed 0"),
        (["a"], ["a"], [:], [], "unserved"),  // only the mirror it came from (a renamed one too: its URL)
        (["a", "b"], ["a"], [1: ["x", "="]], [1, 1], "cross-checked by 1"),  // a damaged copy, then the file
        (["a", "b"], ["a"], [1: ["x", "x"]], [1, 1], "another file: 1"),
        (["a", "b"], ["a"], [1: ["x", "-"]], [1, 1], "unserved: failed 1"),  // a damaged copy, then none: not another file
        (["a", "b", "c"], ["a"], [1: ["x", "x"], 2: ["="]], [1, 1, 2], "cross-checked by 2, outvoted 1"),
        (["a", "b", "c"], ["a"], [1: ["-"], 2: ["x", "x"]], [1, 2, 2], "another file: 2"),
        (["b", "c"], [], [0: ["="], 1: ["="]], [0, 1], "cross-checked by 0, 1"),  // not recorded: two of this comparison
        (["b", "c"], [], [0: ["="], 1: ["-"]], [0, 1], "unserved: failed 1, served 0"),
        (["b", "c", "d"], ["a"], [0: ["="]], [0], "cross-checked by 0"),  // the first mirror gone: a new one counts
        (["a", "b"], ["a", "b"], [:], [], "unserved"),  // parts naming two URLs are still one mirror's word
        (["a", "b", "c"], ["a", "b"], [2: ["="]], [2], "cross-checked by 2"),  // …and a third settles it
    ] as [([String], Set<String>, [Int: [String]], [Int], String)])
    func asksTheOtherMirrorsUntilOneServesTheFileLearned(urls: [String], servedBy: Set<String>, answers: [Int: [String]], asked: [Int], expected: String) {
        let (order, outcome) = Self.run(urls: urls, servedBy: servedBy, answers: answers)
        #expect(order == asked)
        let text: String
        switch outcome {
        case .crossChecked(let by, let outvoted)?:
            text = "cross-checked by \(by.map(String.init).joined(separator: ", "))" + (outvoted.isEmpty ? "" : ", outvoted \(outvoted.map(String.init).joined(separator: ", "))")
        case .anotherFile(let others)?: text = "another file: \(others.map(String.init).joined(separator: ", "))"
        case .unserved(let failed, let served)?:
            text = "unserved" + (failed.isEmpty ? "" : ": failed \(failed.map(String.init).joined(separator: ", "))")
                + (served.isEmpty ? "" : ", served \(served.map(String.init).joined(separator: ", "))")
        case nil: text = "not settled"
        }
        #expect(text == expected)
    }

    /// Any mirrors and answers (seeded): it settles; it never asks a mirror the file came from; it asks a mirror at
    /// most twice, the second time right after another file; it is cross-checked exactly when two mirrors in all
    /// served the file learned (those it came from counting as one, however many URLs they are), and then it
    /// stopped asking there; in `canCompare`'s terms it asks a mirror exactly when `canCompare` says it can.
    @Test(arguments: 0..<300)
    func neverAsksTheMirrorItCameFromAndSettlesByTheRule(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let urls = (0..<random.below(5)).map { _ in ["a", "b", "c", "d", "e", "f"][random.below(6)] }
        let unique = Array(Set(urls)).sorted()
        guard unique.count == urls.count else { return }  // mirrors.json refuses the same URL twice
        let servedBy = Set((0..<random.below(3)).map { _ in ["a", "b", "z"][random.below(3)] })
        let answers = Dictionary(uniqueKeysWithValues: urls.indices.map { ($0, (0..<2).map { _ in ["=", "x", "-"][random.below(3)] }) })
        let (asked, outcome) = Self.run(urls: urls, servedBy: servedBy, answers: answers)
        #expect(outcome != nil)
        for index in asked { #expect(!servedBy.contains(urls[index])) }
        var counts: [Int: Int] = [:]
        for (position, index) in asked.enumerated() {
            counts[index, default: 0] += 1
            if counts[index] == 2 { #expect(position > 0 && asked[position - 1] == index && answers[index]![0] == "x") }
        }
        #expect(counts.values.allSatisfy { $0 <= 2 })
        var served = servedBy.isEmpty ? 0 : 1
        let parts = servedBy.map { LearningOrder.LearnedPart(mark: .singleSource, url: $0) }
        #expect(!asked.isEmpty == LearningOrder.canCompare(parts.isEmpty ? [LearningOrder.LearnedPart(mark: .singleSource, url: nil)] : parts, urls: urls) || (servedBy.isEmpty && urls.count == 1 && !asked.isEmpty), "canCompare agrees: \(urls) \(servedBy) \(asked)")
        var seen: [Int: Int] = [:]
        for index in asked {
            let answer = answers[index]![seen[index, default: 0]]
            seen[index, default: 0] += 1
            if answer == "=" { served += 1 }
        }
        if case .crossChecked? = outcome {
            #expect(served >= 2)
            #expect(served - 1 < 2 || asked.isEmpty || answers[asked.last!]![seen[asked.last!]! - 1] == "=", "stopped once two had served it")
        } else {
            #expect(served < 2)
        }
    }
}
