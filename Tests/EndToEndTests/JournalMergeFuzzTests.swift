import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Fuzzing `tartil journal merge`: many mutated copies of a real journal (byte flips, truncations, crafted schemas
/// and events), each merged by the built binary into a target journal. Every input must end in exit 0 (merged),
/// 64 (not a tartil journal, or events that cannot be true) or 1 (the other file cannot be read, or has a log
/// beside it), never a crash, a signal or a hang; a refused input must leave the target byte for byte as it was,
/// and no input may get `-wal` or `-shm` files beside it.
///
/// Seeded, so a failure is replayed by its seed and input number. 200 inputs by default (well under a minute);
/// `TARTIL_FUZZ_MERGES=N` runs N inputs instead (e.g. `TARTIL_FUZZ_MERGES=5000 swift test --filter JournalMergeFuzz`; `tools/fuzz` runs 2,000).
@Suite struct JournalMergeFuzzTests {
    static let budget = ProcessInfo.processInfo.environment["TARTIL_FUZZ_MERGES"].flatMap(Int.init) ?? 200

    /// Crafted changes applied with sqlite3 to a copy of the real journal, and the exit each must get.
    static let crafted: [(name: String, sql: String, status: Int32)] = {
        let insert = "PRAGMA ignore_check_constraints = ON; INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason, note) VALUES"
        return [
            ("untouched", "SELECT 1", 0),
            ("recursive view", """
                DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; ALTER TABLE events RENAME TO old;
                CREATE VIEW events AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
                SELECT hex(randomblob(16)) AS event_id, 'd' AS device_id, n AS device_seq, n AS ts_ms, 'bookmark' AS kind,
                NULL AS reciter, 1 AS surah, 1 AS ayah, NULL AS offset_samples, NULL AS offset_ms, NULL AS reason, NULL AS note FROM r;
                """, 64),
            ("extra column", "ALTER TABLE events ADD COLUMN extra TEXT", 64),
            ("missing column", "ALTER TABLE events DROP COLUMN note", 64),
            ("missing trigger", "DROP TRIGGER events_no_update", 64),
            ("missing meta trigger", "DROP TRIGGER meta_no_update", 64),
            ("extra trigger", "CREATE TRIGGER t AFTER INSERT ON events BEGIN SELECT 1; END", 64),
            ("missing index", "DROP INDEX events_by_time", 64),
            ("extra table", "CREATE TABLE x(y)", 64),
            ("analyzed", "ANALYZE", 64),
            ("no meta", "DROP TRIGGER meta_no_update; DROP TRIGGER meta_no_delete; DROP TABLE meta", 64),
            ("no migrations", "DROP TABLE migrations", 64),
            ("unknown migration", "INSERT INTO migrations VALUES ('v2-unknown', 0)", 64),
            ("no migration rows", "DELETE FROM migrations", 64),
            ("future time", insert + " ('f1', 'd', 1, 9000000000000000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("an hour ahead", insert + " ('f1', 'd', 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 3600000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("huge note", insert + " ('f1', 'd', 1, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, hex(zeroblob(100000)))", 64),
            ("unknown kind", insert + " ('f1', 'd', 1, 1000, 'highlight', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("blob kind", insert + " ('f1', 'd', 1, 1000, x'00ff', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("negative offset", insert + " ('f1', 'd', 1, 1000, 'position', 'r', 1, 1, -1, -1, 'pause', NULL)", 64),
            // Found by a review: accepted before, then `positions` trapped or other journals refused this one.
            ("huge offsets", insert + " ('f1', 'd', 1, 1000, 'position', 'r', 112, 4, 9223372036854775807, 9223372036854775807, 'seek', NULL)", 64),
            ("huge sequence", insert + " ('f1', 'd', 9223372036854775807, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("escapes in a note", insert + " ('f1', 'd', 1, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, char(27) || '[2J' || char(13) || 'fake')", 64),
            ("escapes in a reciter", insert + " ('f1', 'd', 1, 1000, 'position', char(27) || ']0;x', 1, 1, 0, 0, 'seek', NULL)", 64),
            ("a path for an id", insert + " ('../../etc/passwd', 'd', 1, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("bad surah", insert + " ('f1', 'd', 1, 1000, 'bookmark', NULL, 0, 1, NULL, NULL, NULL, NULL)", 64),
            ("bad ayah", insert + " ('f1', 'd', 1, 1000, 'bookmark', NULL, 1, 8, NULL, NULL, NULL, NULL)", 64),
            ("empty event id", insert + " ('', 'd', 1, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("real time", insert + " ('f1', 'd', 1, 1000.5, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
            ("negative time", insert + " ('f1', 'd', 1, -1, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", 64),
        ]
    }()

    @Test func mergeSurvivesMutatedJournals() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let base = directory + "/base.sqlite"
        let target = directory + "/target.sqlite"
        let script = (1...30).map { "bookmark \(1 + $0 % 114):1 --note base\($0)" }.joined(separator: "; ")
        #expect(try runTartil(["-c", script, "--journal", base], home: directory).status == 0)
        #expect(try runTartil(["-c", "bookmark 1:1; bookmark 36:1", "--journal", target], home: directory).status == 0)
        let baseBytes = try Data(contentsOf: URL(fileURLWithPath: base))
        let targetBytes = try Data(contentsOf: URL(fileURLWithPath: target))
        var random = SeededRandom(seed: 0x7A27_11C0_FFEE)
        var outcomes: [Int32: Int] = [:]
        for number in 0..<Self.budget {
            let input = "\(directory)/input-\(number).sqlite"
            var expected: Int32?
            var what: String
            switch random.below(4) {
            case 0:  // byte flips
                var bytes = baseBytes
                let flips = 1 + random.below(8)
                for _ in 0..<flips { bytes[random.below(bytes.count)] ^= UInt8(1 + random.below(255)) }
                try bytes.write(to: URL(fileURLWithPath: input))
                what = "\(flips) byte flips"
            case 1:  // a truncation (sometimes to nothing)
                let length = random.below(4) == 0 ? random.below(200) : random.below(baseBytes.count)
                try baseBytes.prefix(length).write(to: URL(fileURLWithPath: input))
                what = "truncated to \(length) bytes"
                if length == 0 { expected = 64 }
            case 2:  // a flip in the header or the schema page
                var bytes = baseBytes
                bytes[random.below(min(bytes.count, 4096))] ^= UInt8(1 + random.below(255))
                try bytes.write(to: URL(fileURLWithPath: input))
                what = "a flip in the first page"
            default:  // crafted
                let (name, sql, status) = Self.crafted[random.below(Self.crafted.count)]
                try baseBytes.write(to: URL(fileURLWithPath: input))
                let crafting = ChildProcess()
                crafting.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
                crafting.arguments = [input, sql]
                crafting.standardError = FileHandle.nullDevice
                crafting.standardOutput = FileHandle.nullDevice
                try crafting.run()
                crafting.waitUntilExit()
                #expect(crafting.terminationStatus == 0, "crafting \(name) failed")
                try? FileManager.default.removeItem(atPath: input + "-wal")
                try? FileManager.default.removeItem(atPath: input + "-shm")
                what = "crafted: \(name)"
                expected = status
            }
            let inputBytes = try Data(contentsOf: URL(fileURLWithPath: input))
            let run = try runTartilWithDeadline(["journal", "merge", input, "--journal", target], deadline: 30, home: directory)
            let status = run.result.status
            outcomes[status, default: 0] += 1
            let label = "input \(number) (\(what))"
            #expect(!run.hung, "\(label) hung")
            #expect(!run.signalled, "\(label) ended by a signal: \(run.result.stderr)")
            #expect([0, 1, 64].contains(status), "\(label) exit \(status): \(run.result.stderr)")
            if let expected { #expect(status == expected, "\(label): \(run.result.stderr)") }
            #expect(!run.result.stderr.contains("Fatal error"), "\(label): \(run.result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == inputBytes, "\(label): the input was written to")
            #expect(!FileManager.default.fileExists(atPath: input + "-wal") && !FileManager.default.fileExists(atPath: input + "-shm"), "\(label)")
            let now = try Data(contentsOf: URL(fileURLWithPath: target))
            if status != 0 {
                #expect(now == targetBytes, "\(label): refused with \(status) but the target changed")
            } else if now != targetBytes {
                // Merged: the target must still pass its check and every reader and writer must still work on it
                // (an accepted event must never break the journal); then it goes back to how it was.
                let check = try runTartil(["journal", "check", "--journal", target], home: directory)
                #expect(check.status == 0, "\(label): \(check.stderr)")
                for reader in [["positions"], ["history"], ["journal", "export"], ["bookmark", "1:2"], ["resume", "--output", "null"]] {
                    let used = try runTartilWithDeadline(reader + ["--journal", target], deadline: 30, home: directory)
                    #expect(!used.hung && !used.signalled, "\(label): \(reader) after the merge: \(used.result.stderr)")
                    #expect(!used.result.stderr.contains("Fatal error"), "\(label): \(reader): \(used.result.stderr)")
                }
                try targetBytes.write(to: URL(fileURLWithPath: target))
            }
            // The same file named as the journal itself: refused or read, never a hang or a crash.
            let opened = try runTartilWithDeadline(["positions", "--journal", input], deadline: 30, home: directory)
            #expect(!opened.hung && !opened.signalled, "\(label) as --journal: \(opened.result.stderr)")
            #expect([0, 1, 64].contains(opened.result.status), "\(label) as --journal: \(opened.result.stderr)")
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: input + "-wal")
            try? FileManager.default.removeItem(atPath: input + "-shm")
        }
        // The mix reached both outcomes that matter.
        #expect(outcomes[64, default: 0] > 0 && outcomes[0, default: 0] > 0, "\(outcomes)")
    }
}
