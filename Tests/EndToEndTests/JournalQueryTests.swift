import Foundation
import TestSupport
import Testing

/// `positions` and `history` filters, and reciters and surahs that do not exist.
@Suite struct JournalQueryTests {
    func tartil(_ arguments: [String], in directory: String) throws -> RunResult {
        try runTartil(arguments + ["--journal", directory + "/journal.sqlite"], home: directory)
    }

    func json(_ arguments: [String], in directory: String) throws -> [[String: Any]] {
        let result = try tartil(arguments + ["--json"], in: directory)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout)")
    }

    /// A journal with two sessions of two reciters (session ends name no reciter), a bookmark, a position ten
    /// days old and one of a reciter mirrors.json does not list.
    func makeJournal() throws -> String {
        let directory = TestPaths.makeTemporaryDirectory()
        #expect(try tartil(["bookmark", "1:1"], in: directory).status == 0)
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let old = now - 10 * 86_400_000
        let a = "alafasy-128"
        let b = "abdulbasit-murattal-192"
        let rows = [
            "('e0', 'dev', 1, \(old), 'position', '\(a)', 2, 1, 0, 0, 'pause', NULL)",
            "('e1', 'dev', 2, \(now), 'session-start', '\(a)', NULL, NULL, NULL, NULL, NULL, 'play 36')",
            "('e2', 'dev', 3, \(now + 1), 'position', '\(a)', 36, 1, 0, 0, 'ayah-start', NULL)",
            "('e3', 'dev', 4, \(now + 2), 'position', '\(a)', 36, 5, 100, 4, 'pause', NULL)",
            "('e4', 'dev', 5, \(now + 3), 'session-end', NULL, NULL, NULL, NULL, NULL, NULL, 'stopped')",
            "('e5', 'dev', 6, \(now + 4), 'session-start', '\(b)', NULL, NULL, NULL, NULL, NULL, 'play 67')",
            "('e6', 'dev', 7, \(now + 5), 'position', '\(b)', 67, 1, 0, 0, 'ayah-start', NULL)",
            "('e7', 'dev', 8, \(now + 6), 'session-end', NULL, NULL, NULL, NULL, NULL, NULL, 'finished')",
            "('e8', 'dev', 9, \(now + 7), 'bookmark', '\(a)', 36, 12, NULL, NULL, NULL, 'here')",
            "('e9', 'dev', 10, \(now + 8), 'position', 'gone-reciter', 18, 1, 0, 0, 'stop', NULL)",
        ]
        let sql = "INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason, note) VALUES "
            + rows.joined(separator: ", ") + ";"
        _ = try shell("sqlite3 '\(directory)/journal.sqlite' \"\(sql)\"")
        return directory
    }

    @Test func positionsFilterBySinceReciterAndSurahNames() throws {
        let directory = try makeJournal()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try json(["positions"], in: directory).map { $0["surah"] as? Int } == [18, 67, 36, 2])
        #expect(try json(["positions", "--since", "7d"], in: directory).map { $0["surah"] as? Int } == [18, 67, 36])
        let yasin = try json(["positions", "--surah", "yasin"], in: directory)
        #expect(yasin.count == 1 && yasin[0]["ayah"] as? Int == 5)
        #expect(try json(["positions", "--reciter", "abdulbasit-murattal-192"], in: directory).map { $0["surah"] as? Int } == [67])
        // A reciter no longer in mirrors.json but in the journal is still one to ask for.
        #expect(try json(["positions", "--reciter", "gone-reciter"], in: directory).map { $0["surah"] as? Int } == [18])
        let csv = try tartil(["positions", "--since", "7d", "--csv", "--surah", "36"], in: directory)
        #expect(csv.status == 0 && csv.stdout.split(separator: "\n").count == 2)
    }

    @Test func historyFiltersAndSessionEndsBelongToTheirReciter() throws {
        let directory = try makeJournal()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let alafasy = try json(["history", "--reciter", "alafasy-128"], in: directory)
        #expect(alafasy.map { $0["event_id"] as? String } == ["e0", "e1", "e2", "e3", "e4", "e8"])
        let abdulbasit = try json(["history", "--reciter", "abdulbasit-murattal-192"], in: directory)
        #expect(abdulbasit.map { $0["event_id"] as? String } == ["e5", "e6", "e7"])
        #expect(try json(["history", "--surah", "yasin"], in: directory).map { $0["event_id"] as? String } == ["e2", "e3", "e8"])
        #expect(try json(["history", "--kind", "position", "--limit", "2"], in: directory).map { $0["event_id"] as? String } == ["e6", "e9"])
        // (The last is the bookmark at 1:1 that made the journal.)
        let ends = try json(["history", "--kind", "session-end,bookmark", "--since", "7d"], in: directory)
        #expect(ends.map { $0["event_id"] as? String }.prefix(3) == ["e4", "e7", "e8"] && ends.count == 4)
        #expect(try json(["history", "--until", "7d"], in: directory).map { $0["event_id"] as? String } == ["e0"])
        let text = try tartil(["history", "--reciter", "alafasy-128"], in: directory).stdout
        #expect(text.contains("ended (stopped)") && !text.contains("ended (finished)"), "\(text)")
    }

    @Test func reciterAndSurahThatDoNotExistAreUsageErrorsAndWriteNothing() throws {
        let directory = try makeJournal()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = try tartil(["journal", "export"], in: directory).stdout
        let cases: [([String], String)] = [
            (["positions", "--reciter", "nosuch"], "no reciter 'nosuch'"),
            (["positions", "--surah", "115"], "--surah"),
            (["positions", "--surah", "nosuchname"], "no surah is named 'nosuchname'"),
            (["positions", "--since", "soon"], "--since takes"),
            (["history", "--reciter", "nosuch"], "no reciter 'nosuch'"),
            (["history", "--surah", "0"], "--surah"),
            (["history", "--kind", "positions"], "--kind takes"),
            (["history", "--limit", "0"], "--limit"),
            (["history", "--until", "tomorrow"], "--until takes"),
            (["bookmarks", "--reciter", "nosuch"], "no reciter 'nosuch'"),
            (["bookmark", "36:5", "--reciter", "nosuch"], "no reciter 'nosuch'"),
        ]
        for (arguments, message) in cases {
            let result = try tartil(arguments, in: directory)
            #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(try tartil(["journal", "export"], in: directory).stdout == before)
        // With no journal at all, a bad reciter is refused too, and no journal is made.
        let empty = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(try tartil(["bookmark", "36:5", "--reciter", "nosuch"], in: empty).status == 64)
        #expect(try tartil(["positions", "--reciter", "nosuch"], in: empty).status == 64)
        #expect(!FileManager.default.fileExists(atPath: empty + "/journal.sqlite"))
        #expect(try tartil(["bookmark", "36:5", "--reciter", "alafasy-128"], in: empty).status == 0)
    }
}
