import TestSupport
import Testing

@testable import TartilCore

@Suite struct CrossCheckTests {
    /// Fingerprints by letter: `a` is the right file, `b` another ayah's, `c` a copy with one byte changed early in
    /// the file (same size, another full hash), `d` the right file with bytes appended.
    static let prints: [Character: FileFingerprint] = [
        "a": FileFingerprint(bytes: 13_582, sha256: String(repeating: "a", count: 64)),
        "b": FileFingerprint(bytes: 13_164, sha256: String(repeating: "b", count: 64)),
        "c": FileFingerprint(bytes: 13_582, sha256: String(repeating: "c", count: 64)),
        "d": FileFingerprint(bytes: 13_600, sha256: String(repeating: "d", count: 64)),
    ]

    /// One report to the machine: `d0a` = downloaded from mirror 0, fingerprint a; `p1b` = mirror 1 probed, b;
    /// `p1-` = mirror 1 could not answer.
    static func apply(_ step: String, to check: inout CrossCheck) -> CrossCheck.Action {
        let characters = Array(step)
        let mirror = Int(String(characters[1]))!
        switch characters[0] {
        case "d": return check.downloaded(from: mirror, prints[characters[2]]!)
        default:
            return check.probed(mirror, characters[2] == "-" ? .unavailable("HTTP 404") : .fingerprint(prints[characters[2]]!))
        }
    }

    static func describe(_ action: CrossCheck.Action) -> String {
        switch action {
        case .probe(let mirror): "probe \(mirror)"
        case .download(let mirror): "download \(mirror)"
        case .keep(let mark): "keep \(mark.rawValue)"
        case .dispute: "dispute"
        }
    }

    /// (mirrors, reports in order, the action after each report)
    static let table: [(Int, [String], [String])] = [
        // One mirror: nothing to compare with.
        (1, ["d0a"], ["keep single-source"]),
        // Two mirrors that agree on the whole file.
        (2, ["d0a", "p1a"], ["probe 1", "keep cross-checked"]),
        // The other mirror cannot answer.
        (2, ["d0a", "p1-"], ["probe 1", "keep single-source"]),
        // Two mirrors that disagree (another ayah's file, a change early in the file, bytes appended): no one to
        // break the tie, so nothing is kept.
        (2, ["d0b", "p1a"], ["probe 1", "dispute"]),
        (2, ["d0c", "p1a"], ["probe 1", "dispute"]),
        (2, ["d0a", "p1d"], ["probe 1", "dispute"]),
        // Mirror 0 serves another ayah's file; 1 and 2 agree: the file comes from 1, and agrees with 2.
        (3, ["d0b", "p1a", "p2a", "d1a"], ["probe 1", "probe 2", "download 1", "keep cross-checked"]),
        // Mirror 0 changed a byte early; 1 is down; 2 agrees with nobody… then 3 agrees with 2.
        (4, ["d0c", "p1-", "p2a", "p3a", "d2a"], ["probe 1", "probe 2", "probe 3", "download 2", "keep cross-checked"]),
        // The copy in hand is confirmed by the third mirror: kept, without downloading again.
        (3, ["d0a", "p1b", "p2a"], ["probe 1", "probe 2", "keep cross-checked"]),
        // All three disagree.
        (3, ["d0a", "p1b", "p2c"], ["probe 1", "probe 2", "dispute"]),
        // Two of three answer and disagree; the third is down: no majority.
        (3, ["d0a", "p1c", "p2-"], ["probe 1", "probe 2", "dispute"]),
        // 1 and 2 agree, but 1's download then differs from its probe (an inconsistent mirror): its download
        // replaces what it said, no two mirrors agree any more: disputed.
        (3, ["d0b", "p1a", "p2a", "d1c"], ["probe 1", "probe 2", "download 1", "dispute"]),
        // The first download came from mirror 1 (mirror 0 was failing): probing starts after it and wraps.
        (3, ["d1a", "p2-", "p0a"], ["probe 2", "probe 0", "keep cross-checked"]),
        // Only unavailable answers: single-source.
        (3, ["d0a", "p1-", "p2-"], ["probe 1", "probe 2", "keep single-source"]),
        // Two against two, four mirrors: no majority.
        (4, ["d0a", "p1b", "p2c", "p3a"], ["probe 1", "probe 2", "probe 3", "dispute"]),
        // Two of three against the copy: the file comes from them.
        (4, ["d0a", "p1b", "p2b", "d1b"], ["probe 1", "probe 2", "download 1", "keep cross-checked"]),
    ]

    @Test(arguments: table.indices)
    func decisions(row: Int) {
        let (mirrors, reports, expected) = Self.table[row]
        var check = CrossCheck(mirrorCount: mirrors)
        let actions = reports.map { Self.describe(Self.apply($0, to: &check)) }
        #expect(actions == expected, "\(reports)")
    }

    @Test func theAgreementIsAStrictMajorityOfTwoOrMore() {
        var check = CrossCheck(mirrorCount: 5)
        _ = check.downloaded(from: 0, Self.prints["a"]!)
        #expect(check.agreement == nil)
        _ = check.probed(1, .fingerprint(Self.prints["a"]!))
        #expect(check.agreement == Self.prints["a"])
        _ = check.probed(2, .fingerprint(Self.prints["b"]!))
        _ = check.probed(3, .fingerprint(Self.prints["b"]!))
        #expect(check.agreement == nil)
        _ = check.probed(4, .unavailable("x"))
        #expect(check.agreement == nil)
    }

    @Test func theDisputeMessageNamesEveryMirrorAndTheCommand() {
        let message = CrossCheck.disputeMessage(
            try! AyahRef(36, 5), reciter: "loose", copies: [("a", Self.prints["a"]!), ("b", Self.prints["b"]!)])
        #expect(message.contains("36:5 is disputed"))
        #expect(message.contains("a: 13582 bytes, sha256 aaaaaaaaaaaa…; b: 13164 bytes, sha256 bbbbbbbbbbbb…"))
        #expect(message.contains("it is not played"))
        #expect(message.hasSuffix("tartil cache choose 36:5 --reciter loose --mirror NAME"))
    }

    /// Seeded runs: each mirror serves a file (the right one, a wrong one shared with others, one of its own) or
    /// nothing, sometimes differently on a second request. Whatever they do, the check ends within one probe per
    /// other mirror and one download per mirror; it keeps a copy as cross-checked only when that copy's hash is
    /// a strict majority of two or more of the last answers; it disputes only when two or more answered with no
    /// majority; single-source only when no other mirror answered; and when a strict majority of consistent
    /// mirrors serve the right file, that is what it keeps.
    @Test func seededRuns() {
        let letters: [Character] = ["a", "b", "c", "d"]
        for seed in 0..<2000 {
            var random = SeededRandom(seed: UInt64(seed))
            let mirrors = 1 + random.below(5)
            // What each mirror serves: a letter, or "-" for nothing; a fickle mirror may serve another letter next.
            let serves: [Character] = (0..<mirrors).map { _ in random.below(5) == 0 ? "-" : letters[random.below(letters.count)] }
            let fickle = (0..<mirrors).map { _ in random.below(6) == 0 }
            var answer = serves
            func request(_ mirror: Int) -> Character {
                defer { if fickle[mirror] { answer[mirror] = letters[random.below(letters.count)] } }
                return answer[mirror]
            }
            guard let first = (0..<mirrors).first(where: { serves[$0] != "-" }) else { continue }
            var check = CrossCheck(mirrorCount: mirrors)
            var action = check.downloaded(from: first, Self.prints[request(first)]!)
            var probes = 0
            var downloads = 1
            var final: CrossCheck.Action?
            while final == nil {
                switch action {
                case .keep, .dispute: final = action
                case .probe(let mirror):
                    probes += 1
                    let served = request(mirror)
                    action = check.probed(mirror, served == "-" ? .unavailable("down") : .fingerprint(Self.prints[served]!))
                case .download(let mirror):
                    downloads += 1
                    let served = request(mirror)
                    // A mirror that serves nothing when downloaded from fails the attempt: the real scheduler
                    // then fails over; here the run stops, having bounded its work.
                    guard served != "-" else { final = .keep(.singleSource); break }
                    action = check.downloaded(from: mirror, Self.prints[served]!)
                }
                #expect(probes <= mirrors - 1 && downloads <= mirrors + 1, "seed \(seed): \(probes) probes, \(downloads) downloads")
                if probes > mirrors || downloads > mirrors + 1 { break }
            }
            var told: [FileFingerprint: Int] = [:]
            for case .fingerprint(let print) in check.observations.values { told[print, default: 0] += 1 }
            let answered = told.values.reduce(0, +)
            let kept: FileFingerprint? = check.candidate.flatMap { if case .fingerprint(let p)? = check.observations[$0] { p } else { nil } }
            switch final {
            case .keep(.crossChecked)?:
                let count = kept.map { told[$0] ?? 0 } ?? 0
                #expect(count >= 2 && 2 * count > answered, "seed \(seed): kept \(String(describing: kept)) without a majority: \(told)")
            case .dispute?:
                #expect(answered >= 2 && check.agreement == nil, "seed \(seed): disputed with \(told)")
            case .keep(.singleSource)?:
                break
            default:
                Issue.record("seed \(seed): ended with \(String(describing: final))")
            }
            let steady = (0..<mirrors).filter { !fickle[$0] }
            let right = steady.filter { serves[$0] == "a" }.count
            if right >= 2, 2 * right > mirrors, fickle.allSatisfy({ !$0 }) {
                #expect(final == .keep(.crossChecked) && kept == Self.prints["a"], "seed \(seed): \(serves) ended \(String(describing: final))")
            }
        }
    }

    /// (mirrors, reports in order, the letters whose copy the check may still keep after the last report)
    static let keepable: [(Int, [String], String)] = [
        // One mirror: its copy is the one.
        (1, ["d0a"], "a"),
        // Two mirrors agree: only that copy.
        (2, ["d0a", "p1a"], "a"),
        // The copy in hand, the other mirror not asked yet: it, or (should the other serve it too) nothing else
        // that has been seen; a file nobody served yet could only be single-source if the first had not answered.
        (2, ["d0a"], "a"),
        // Two disagree, a third to ask: either may win.
        (3, ["d0a", "p1b"], "ab"),
        // Two disagree and nobody is left: neither can be kept.
        (2, ["d0a", "p1b"], ""),
        // Three disagree, one left to ask: none can reach a majority (2 of 4 is not more than the others).
        (4, ["d0a", "p1b", "p2c"], ""),
        // Five mirrors, a, b and c served, two left: any of the three can still win (three of five, should both serve it).
        (5, ["d0a", "p1b", "p2c"], "abc"),
        // The other mirror is down: single-source.
        (2, ["d0a", "p1-"], "a"),
        // One down, two disagree, one left: either can still win 2 to 1.
        (4, ["d0a", "p1-", "p2b"], "ab"),
        // A majority elsewhere: only its copy.
        (3, ["d0a", "p1b", "p2b"], "b"),
    ]

    @Test(arguments: keepable.indices)
    func whichCopiesTheCheckMayStillKeep(row: Int) {
        let (mirrors, reports, expected) = Self.keepable[row]
        var check = CrossCheck(mirrorCount: mirrors)
        for report in reports { _ = Self.apply(report, to: &check) }
        let keepable = String("abcd".filter { check.mayStillKeep(Self.prints[$0]!) })
        #expect(keepable == expected, "\(reports)")
    }

    /// Seeded runs as `SurahLearning` makes them (each mirror asked once, a `.download` taking the copy its probe
    /// fetched): a copy the check said it could no longer keep is never the one it keeps, and the one it keeps was
    /// keepable at every step; so letting go of the others as soon as they are not loses nothing.
    @Test func aCopyLetGoOfIsNeverTheOneKept() {
        let letters: [Character] = ["a", "b", "c"]
        for seed in 0..<3000 {
            var random = SeededRandom(seed: UInt64(seed))
            let mirrors = 1 + random.below(6)
            let serves: [Character] = (0..<mirrors).map { _ in random.below(4) == 0 ? "-" : letters[random.below(letters.count)] }
            guard let first = serves.firstIndex(where: { $0 != "-" }) else { continue }
            var check = CrossCheck(mirrorCount: mirrors)
            var action = check.downloaded(from: first, Self.prints[serves[first]]!)
            for failed in 0..<first { action = check.probed(failed, .unavailable("down")) }
            var dropped: Set<Character> = []
            var final: CrossCheck.Action?
            var steps = 0
            while final == nil, steps < 4 * mirrors {
                steps += 1
                for letter in letters where !check.mayStillKeep(Self.prints[letter]!) { dropped.insert(letter) }
                switch action {
                case .keep, .dispute: final = action
                case .probe(let mirror):
                    action = check.probed(mirror, serves[mirror] == "-" ? .unavailable("down") : .fingerprint(Self.prints[serves[mirror]]!))
                case .download(let mirror):
                    action = check.downloaded(from: mirror, Self.prints[serves[mirror]]!)
                }
            }
            guard case .keep? = final else {
                #expect(final == .dispute, "seed \(seed): \(serves) did not end")
                continue
            }
            let kept = serves[check.candidate!]
            #expect(!dropped.contains(kept), "seed \(seed): \(serves) kept \(kept), let go of earlier")
        }
    }
}
