import Testing

@testable import TartilCore

@Suite struct CrossCheckTests {
    /// Fingerprints by letter: `a` is the right file, `b` another ayah's, `c` a copy with a flipped bit.
    static let prints: [Character: FileFingerprint] = [
        "a": FileFingerprint(bytes: 13_582, tailSHA256: String(repeating: "a", count: 64)),
        "b": FileFingerprint(bytes: 13_164, tailSHA256: String(repeating: "b", count: 64)),
        "c": FileFingerprint(bytes: 13_582, tailSHA256: String(repeating: "c", count: 64)),
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
        }
    }

    /// (mirrors, reports in order, the action after each report)
    static let table: [(Int, [String], [String])] = [
        // One mirror: nothing to compare with.
        (1, ["d0a"], ["keep single-source"]),
        // Two mirrors that agree.
        (2, ["d0a", "p1a"], ["probe 1", "keep cross-checked"]),
        // The other mirror cannot answer.
        (2, ["d0a", "p1-"], ["probe 1", "keep single-source"]),
        // Two mirrors that disagree (a size, or a flipped bit in the tail): no one to break the tie.
        (2, ["d0b", "p1a"], ["probe 1", "keep disputed"]),
        (2, ["d0c", "p1a"], ["probe 1", "keep disputed"]),
        // Mirror 0 serves another ayah's file; 1 and 2 agree: the file comes from 1, and agrees with 2.
        (3, ["d0b", "p1a", "p2a", "d1a"], ["probe 1", "probe 2", "download 1", "keep cross-checked"]),
        // Mirror 0 flips a bit; 1 is down; 2 agrees with nobody… then 3 agrees with 2.
        (4, ["d0c", "p1-", "p2a", "p3a", "d2a"], ["probe 1", "probe 2", "probe 3", "download 2", "keep cross-checked"]),
        // The copy in hand is confirmed by the third mirror: kept, without downloading again.
        (3, ["d0a", "p1b", "p2a"], ["probe 1", "probe 2", "keep cross-checked"]),
        // All three disagree.
        (3, ["d0a", "p1b", "p2c"], ["probe 1", "probe 2", "keep disputed"]),
        // 1 and 2 agree, but 1's download then differs from its probe (an inconsistent mirror): its download
        // replaces what it said, no two mirrors agree any more, and the copy in hand is kept, disputed.
        (3, ["d0b", "p1a", "p2a", "d1c"], ["probe 1", "probe 2", "download 1", "keep disputed"]),
        // The first download came from mirror 1 (mirror 0 was failing): probing starts after it and wraps.
        (3, ["d1a", "p2-", "p0a"], ["probe 2", "probe 0", "keep cross-checked"]),
        // Only unavailable answers: single-source.
        (3, ["d0a", "p1-", "p2-"], ["probe 1", "probe 2", "keep single-source"]),
    ]

    @Test(arguments: table.indices)
    func decisions(row: Int) {
        let (mirrors, reports, expected) = Self.table[row]
        var check = CrossCheck(mirrorCount: mirrors)
        let actions = reports.map { Self.describe(Self.apply($0, to: &check)) }
        #expect(actions == expected, "\(reports)")
    }

    /// However the mirrors answer, the check ends: at most one probe per other mirror and one download each.
    @Test func alwaysEnds() {
        for seed in 0..<500 {
            var random = UInt64(seed * 2 + 1)
            func next(_ bound: Int) -> Int {
                random ^= random << 13; random ^= random >> 7; random ^= random << 17
                return Int(random % UInt64(bound))
            }
            let letters: [Character] = ["a", "b", "c"]
            let mirrors = 1 + next(5)
            var check = CrossCheck(mirrorCount: mirrors)
            var action = check.downloaded(from: next(mirrors), Self.prints[letters[next(3)]]!)
            var steps = 0
            while steps < 4 * mirrors {
                steps += 1
                switch action {
                case .keep: steps = 1000
                case .probe(let mirror):
                    action = check.probed(mirror, next(4) == 0 ? .unavailable("x") : .fingerprint(Self.prints[letters[next(3)]]!))
                case .download(let mirror):
                    action = check.downloaded(from: mirror, Self.prints[letters[next(3)]]!)
                }
            }
            #expect(steps == 1000, "seed \(seed) did not end")
        }
    }
}
