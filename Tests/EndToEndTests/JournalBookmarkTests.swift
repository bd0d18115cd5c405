import Foundation
import TestSupport
import Testing

/// `bookmarks`, `bookmark rm` and `bookmark note`: changes are appended events that merge like any other.
@Suite struct JournalBookmarkTests {
    func tartil(_ arguments: [String], in directory: String) throws -> RunResult {
        try runTartil(arguments + ["--journal", directory + "/journal.sqlite"], home: directory)
    }

    func bookmarks(in directory: String, _ options: [String] = []) throws -> [[String: Any]] {
        let result = try tartil(["bookmarks", "--json"] + options, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
    }

    func eventCount(in directory: String) throws -> Int {
        try tartil(["journal", "export"], in: directory).stdout.split(separator: "\n").count
    }

    @Test func listRemoveAndEditNotes() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try tartil(["bookmark", "36:12", "--note", "first", "--reciter", "alafasy-128"], in: directory).status == 0)
        #expect(try tartil(["bookmark", "2:255", "--note", "kursi"], in: directory).status == 0)
        #expect(try tartil(["bookmark", "36:1"], in: directory).status == 0)
        let all = try bookmarks(in: directory)
        #expect(all.map { "\($0["surah"]!):\($0["ayah"]!)" } == ["2:255", "36:1", "36:12"])
        #expect(try bookmarks(in: directory, ["--surah", "36"]).count == 2)
        #expect(try bookmarks(in: directory, ["--reciter", "alafasy-128"]).map { $0["note"] as? String } == ["first"])
        let kursi = try #require(all[0]["event_id"] as? String)
        let text = try tartil(["bookmarks"], in: directory).stdout
        #expect(text.contains(String(kursi.prefix(8))) && text.contains("— kursi"), "\(text)")

        let edited = try tartil(["bookmark", "note", String(kursi.prefix(6)), "Ayat al-Kursi"], in: directory)
        #expect(edited.status == 0 && edited.stdout.contains("— Ayat al-Kursi"), "\(edited.stderr)")
        #expect(try bookmarks(in: directory, ["--surah", "2"]).first?["note"] as? String == "Ayat al-Kursi")
        #expect(try tartil(["bookmark", "note", kursi, ""], in: directory).status == 0)
        #expect(try bookmarks(in: directory, ["--surah", "2"]).first?["note"] is NSNull)

        let removed = try tartil(["bookmark", "rm", kursi, "--json"], in: directory)
        #expect(removed.status == 0 && removed.stdout.contains("\"removed\":true"), "\(removed.stderr)")
        #expect(try bookmarks(in: directory).count == 2)
        // The bookmark and the events about it stay in the journal: it is append-only.
        let kinds = try tartil(["journal", "export"], in: directory).stdout
        #expect(kinds.contains("\"kind\":\"bookmark-removed\"") && kinds.contains("\"target_id\":\"\(kursi)\""))
        #expect(try tartil(["journal", "check"], in: directory).status == 0)

        // Unknown, ambiguous, removed or too short ids: exit 64 and nothing written.
        let before = try eventCount(in: directory)
        for arguments in [["bookmark", "rm", "zzzzzzzz"], ["bookmark", "rm", kursi], ["bookmark", "note", kursi, "x"],
                          ["bookmark", "rm", "ab"], ["bookmark", "note", "nosuch-id", "x"]] {
            let result = try tartil(arguments, in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        #expect(try eventCount(in: directory) == before)
    }

    @Test func aRemovalMergedIntoAnotherJournalRemovesTheBookmarkThere() throws {
        let one = TestPaths.makeTemporaryDirectory()
        let two = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: one); try? FileManager.default.removeItem(atPath: two) }
        #expect(try tartil(["bookmark", "67:1", "--note", "mulk"], in: one).status == 0)
        #expect(try tartil(["bookmark", "1:1"], in: two).status == 0)
        #expect(try tartil(["journal", "merge", one + "/journal.sqlite"], in: two).status == 0)
        let mulk = try #require(try bookmarks(in: two).first { $0["surah"] as? Int == 67 }?["event_id"] as? String)
        #expect(try tartil(["bookmark", "rm", mulk], in: one).status == 0)
        #expect(try tartil(["journal", "merge", one + "/journal.sqlite"], in: two).stdout.hasPrefix("1 new event"))
        #expect(try bookmarks(in: two).map { $0["surah"] as? Int } == [1])
        // And back: both journals now list the same.
        #expect(try tartil(["journal", "merge", two + "/journal.sqlite"], in: one).status == 0)
        #expect(try bookmarks(in: one).map { $0["event_id"] as? String } == bookmarks(in: two).map { $0["event_id"] as? String })
    }

    @Test func theLatestNoteWinsAcrossMergedJournalsInEitherOrder() throws {
        let one = TestPaths.makeTemporaryDirectory()
        let two = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: one); try? FileManager.default.removeItem(atPath: two) }
        #expect(try tartil(["bookmark", "18:10", "--note", "cave"], in: one).status == 0)
        #expect(try tartil(["journal", "merge", one + "/journal.sqlite"], in: two).status == 0)
        let id = try #require(try bookmarks(in: two).first?["event_id"] as? String)
        #expect(try tartil(["bookmark", "note", id, "from one"], in: one).status == 0)
        usleep(20_000)
        #expect(try tartil(["bookmark", "note", id, "from two, later"], in: two).status == 0)
        usleep(20_000)
        #expect(try tartil(["bookmark", "note", id, "one again, latest"], in: one).status == 0)
        #expect(try tartil(["journal", "merge", one + "/journal.sqlite"], in: two).status == 0)
        #expect(try tartil(["journal", "merge", two + "/journal.sqlite"], in: one).status == 0)
        for directory in [one, two] {
            #expect(try bookmarks(in: directory).first?["note"] as? String == "one again, latest")
        }
    }

    /// A journal an older tartil made (schema v1 only, no target_id) is read as it is, merges into a new one, and
    /// is migrated, every event kept, the first time a tartil writes to it.
    @Test func aJournalOfTheFirstSchemaIsReadMergedAndMigrated() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = directory + "/old"
        try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: true)
        let sql = """
            PRAGMA journal_mode=WAL;
            CREATE TABLE migrations(name TEXT PRIMARY KEY, applied_ms INTEGER NOT NULL);
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE events(
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                event_id TEXT NOT NULL UNIQUE,
                device_id TEXT NOT NULL,
                device_seq INTEGER NOT NULL,
                ts_ms INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('position', 'session-start', 'session-end', 'bookmark')),
                reciter TEXT,
                surah INTEGER CHECK (surah BETWEEN 1 AND 114),
                ayah INTEGER CHECK (ayah >= 1),
                offset_samples INTEGER CHECK (offset_samples >= 0),
                offset_ms INTEGER CHECK (offset_ms >= 0),
                reason TEXT CHECK (reason IN ('ayah-start', 'pause', 'seek', 'stop', 'quit', 'end')),
                note TEXT
            );
            CREATE INDEX events_by_time ON events(ts_ms, device_id, event_id);
            CREATE INDEX events_by_device ON events(device_id, device_seq);
            CREATE INDEX events_positions ON events(kind, surah, ts_ms);
            CREATE TRIGGER events_no_update BEFORE UPDATE ON events
                BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be updated'); END;
            CREATE TRIGGER events_no_delete BEFORE DELETE ON events
                BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be deleted'); END;
            CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta
                BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
            CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta
                BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
            INSERT INTO migrations VALUES ('v1-events', 1);
            INSERT INTO meta VALUES ('device_id', 'old-device');
            INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason, note)
                VALUES ('old-1', 'old-device', 1, 1700000000000, 'bookmark', NULL, 2, 255, NULL, NULL, NULL, 'old note'),
                       ('old-2', 'old-device', 2, 1700000001000, 'position', 'r1', 36, 5, 10, 1, 'pause', NULL);
            """
        try sql.write(toFile: directory + "/v1.sql", atomically: true, encoding: .utf8)
        _ = try shell("sqlite3 '\(old)/journal.sqlite' < '\(directory)/v1.sql' >/dev/null")
        // Read as it is (read-only: not migrated).
        #expect(try bookmarks(in: old).first?["note"] as? String == "old note")
        #expect(try tartil(["positions", "--json"], in: old).stdout.contains("\"ayah\":5"))
        #expect(try tartil(["journal", "export"], in: old).stdout.contains("\"target_id\":null"))
        // Merged into a new journal.
        let merged = try tartil(["journal", "merge", old + "/journal.sqlite"], in: directory)
        #expect(merged.stdout.hasPrefix("2 new events"), "\(merged.stdout) \(merged.stderr)")
        // Migrated by the first write, every event kept; then a bookmark edit works on it.
        let id = "old-1"
        let note = try tartil(["bookmark", "note", id, "edited"], in: old)
        #expect(note.status == 0, "\(note.stderr)")
        #expect(try eventCount(in: old) == 3)
        #expect(try tartil(["journal", "check"], in: old).status == 0)
        #expect(try shell("sqlite3 '\(old)/journal.sqlite' 'SELECT group_concat(seq) FROM events'").hasPrefix("1,2,3"))
        #expect(try tartil(["journal", "merge", old + "/journal.sqlite"], in: directory).stdout.hasPrefix("1 new event"))
        #expect(try bookmarks(in: directory).first?["note"] as? String == "edited")
    }

    /// Notes hold no control characters (C0, C1) and no bidirectional overrides or isolates, whether typed, edited
    /// or merged; CSV cells that a spreadsheet would run as a formula start with a quote; an empty note is none
    /// (null) in every format.
    @Test func notesRefuseControlsAndOverridesAndExportSafely() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for note in ["csi \u{9B}2J", "c1 \u{85}", "rlo \u{202E}gpj.exe", "isolate \u{2066}x\u{2069}", "sep \u{2028}", "tab\tx"] {
            let result = try tartil(["bookmark", "1:1", "--note", note], in: directory)
            #expect(result.status == 64 && result.stderr.contains("U+"), "\(note.debugDescription): \(result.stderr)")
        }
        #expect(try eventCount(in: directory) == 0)
        // Marks used in mixed Arabic and Latin text are fine.
        #expect(try tartil(["bookmark", "36:1", "--note", "Yasin \u{200F}يس\u{200F}"], in: directory).status == 0)
        #expect(try tartil(["bookmark", "2:255", "--note", "=HYPERLINK(\"http://x\",\"y\")"], in: directory).status == 0)
        #expect(try tartil(["bookmark", "1:2"], in: directory).status == 0)
        let list = try bookmarks(in: directory)
        let kursi = try #require(list.first { $0["surah"] as? Int == 2 }?["event_id"] as? String)
        let edit = try tartil(["bookmark", "note", kursi, "x\u{202D}y"], in: directory)
        #expect(edit.status == 64 && edit.stderr.contains("U+202D"), "\(edit.stderr)")
        // An empty note is null in JSON, empty in CSV, nothing in text.
        #expect(list.first { $0["surah"] as? Int == 1 }?["note"] is NSNull)
        #expect(try tartil(["bookmark", "note", kursi, ""], in: directory).status == 0)
        let export = try tartil(["journal", "export"], in: directory).stdout
        #expect(!export.contains("\"note\":\"\""), "\(export)")
        let text = try tartil(["bookmarks"], in: directory).stdout
        #expect(!text.contains("—  ") && !text.hasSuffix("— \n"), "\(text)")
        // A formula is written as text in CSV (the bookmarks listing and the export).
        #expect(try tartil(["bookmark", "3:1", "--note", "+1+2"], in: directory).status == 0)
        #expect(try tartil(["bookmark", "3:2", "--note", "@SUM(A1)"], in: directory).status == 0)
        for csv in [try tartil(["bookmarks", "--format", "csv"], in: directory).stdout, try tartil(["journal", "export", "--format", "csv"], in: directory).stdout] {
            #expect(csv.contains(",'+1+2,") || csv.contains(",'+1+2\n"), "\(csv)")
            #expect(csv.contains("'@SUM(A1)"), "\(csv)")
            for line in csv.split(separator: "\n") {
                for cell in line.split(separator: ",", omittingEmptySubsequences: false) {
                    let bare = cell.hasPrefix("\"") ? cell.dropFirst() : cell
                    #expect(!["=", "+", "@"].contains(bare.first.map(String.init) ?? ""), "\(line)")
                }
            }
        }

        // Merged: a journal whose note has an override is refused, nothing merged.
        let other = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: other) }
        #expect(try tartil(["bookmark", "4:1", "--note", "fine"], in: other).status == 0)
        _ = try shell("sqlite3 '\(other)/journal.sqlite' \"INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, surah, ayah, note) SELECT 'crafted-1', value, 2, 1700000000000, 'bookmark', 5, 1, 'a' || char(8238) || 'b' FROM meta WHERE key = 'device_id'\"")
        let before = try eventCount(in: directory)
        let merged = try tartil(["journal", "merge", other + "/journal.sqlite"], in: directory)
        #expect(merged.status == 64 && merged.stderr.contains("bidirectional"), "\(merged.stderr)")
        #expect(try eventCount(in: directory) == before)
    }
}
