import TartilCore
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilJournal
@testable import TartilSQLite

/// Merges from files that are not what they claim, unknown kinds, interrupted merges, and the writer's loud
/// failures.
@Suite struct JournalSafetyTests {
    /// A closed journal at `path` with `count` bookmarks (self-contained: its log is checkpointed at close).
    func makeJournal(_ path: String, count: Int, note: String = "n") throws {
        let journal = try Journal(path: path)
        try journal.append(contentsOf: (0..<count).map { EventDraft(kind: .bookmark, surah: 2, ayah: 1 + $0 % 286, note: "\(note)\($0)") })
        journal.close()
    }

    /// Changes `path` with raw SQL (check constraints off, as a crafted file would be made), then closes it.
    func craft(_ path: String, _ sql: String) throws {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA ignore_check_constraints = ON")
        try connection.execute(sql)
        try connection.close()
    }

    static let insert = """
        INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason, note)
        """

    /// Each crafted change, and how the merge must refuse it.
    static let craftedFiles: [(name: String, sql: String, code: JournalError.Code)] = [
        ("a view over a recursive CTE", """
            DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; ALTER TABLE events RENAME TO old_events;
            CREATE VIEW events AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
                SELECT hex(randomblob(16)) AS event_id, 'd' AS device_id, n AS device_seq, n AS ts_ms, 'bookmark' AS kind,
                       NULL AS reciter, 1 AS surah, 1 AS ayah, NULL AS offset_samples, NULL AS offset_ms, NULL AS reason,
                       NULL AS note FROM r;
            """, .notAJournal),
        ("an extra column", "ALTER TABLE events ADD COLUMN extra TEXT", .notAJournal),
        ("a missing column", "ALTER TABLE events DROP COLUMN note", .notAJournal),
        ("a missing trigger", "DROP TRIGGER events_no_delete", .notAJournal),
        ("an extra trigger", "CREATE TRIGGER spy AFTER INSERT ON events BEGIN SELECT 1; END", .notAJournal),
        ("an extra table", "CREATE TABLE more(x)", .notAJournal),
        ("no meta", "DROP TRIGGER meta_no_update; DROP TRIGGER meta_no_delete; DROP TABLE meta", .notAJournal),
        ("no device id", """
            DROP TRIGGER meta_no_delete; DELETE FROM meta;
            CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta
                BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
            """, .notAJournal),
        ("an unknown migration", "INSERT INTO migrations VALUES ('v9-from-the-future', 0)", .notAJournal),
        ("a time far in the future", insert + " VALUES ('e1', 'd', 1, 9000000000000000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", .refused),
        ("a time a day ahead", insert + " VALUES ('e1', 'd', 1, CAST((julianday('now') - 2440587.5 + 1) * 86400000 AS INTEGER), 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", .refused),
        ("a huge note", insert + " VALUES ('e1', 'd', 1, 1000, 'bookmark', NULL, 1, 1, NULL, NULL, NULL, hex(zeroblob(2049)))", .refused),
        ("an unknown kind", insert + " VALUES ('e1', 'd', 1, 1000, 'highlight', NULL, 1, 1, NULL, NULL, NULL, NULL)", .refused),
        ("an unknown reason", insert + " VALUES ('e1', 'd', 1, 1000, 'position', 'r', 1, 1, 0, 0, 'boredom', NULL)", .refused),
        ("a negative offset", insert + " VALUES ('e1', 'd', 1, 1000, 'position', 'r', 1, 1, -5, -1, 'pause', NULL)", .refused),
        ("surah 115", insert + " VALUES ('e1', 'd', 1, 1000, 'bookmark', NULL, 115, 1, NULL, NULL, NULL, NULL)", .refused),
        ("ayah 112:9", insert + " VALUES ('e1', 'd', 1, 1000, 'bookmark', NULL, 112, 9, NULL, NULL, NULL, NULL)", .refused),
        ("a time that is text", insert + " VALUES ('e1', 'd', 1, 'soon', 'bookmark', NULL, 1, 1, NULL, NULL, NULL, NULL)", .refused),
        ("a position without a place", insert + " VALUES ('e1', 'd', 1, 1000, 'position', 'r', NULL, NULL, 0, 0, 'pause', NULL)", .refused),
    ]

    @Test(arguments: craftedFiles.indices)
    func mergeRefusesACraftedFileAndChangesNothing(index: Int) throws {
        let (name, sql, code) = Self.craftedFiles[index]
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        try makeJournal(other, count: 5, note: "other")
        try craft(other, sql)
        let otherBytes = try Data(contentsOf: URL(fileURLWithPath: other))
        try makeJournal(directory + "/journal.sqlite", count: 3)
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        let before = try journal.events()
        let started = Date()
        #expect(throws: JournalError.self, "\(name)") { try journal.merge(from: other) }
        do {
            try journal.merge(from: other)
        } catch {
            #expect(error.code == code, "\(name): \(error.message)")
        }
        #expect(Date().timeIntervalSince(started) < 10, "\(name) took too long")
        #expect(try journal.events() == before, "\(name)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == otherBytes)
        #expect(!FileManager.default.fileExists(atPath: other + "-wal") && !FileManager.default.fileExists(atPath: other + "-shm"))
        // Still usable afterwards (the other file was detached).
        try makeJournal(directory + "/fine.sqlite", count: 2, note: "fine")
        #expect(try journal.merge(from: directory + "/fine.sqlite") == 2)
    }

    @Test func mergeOpensTheOtherFileWithoutSideFilesAndRefusesOneWithALogBeside() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        try makeJournal(other, count: 4)
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        #expect(try journal.merge(from: other) == 4)
        #expect(!FileManager.default.fileExists(atPath: other + "-wal") && !FileManager.default.fileExists(atPath: other + "-shm"))
        // Merging a journal into itself adds nothing (its own log beside it is not a reason to refuse).
        #expect(try journal.merge(from: directory + "/journal.sqlite") == 0)
        // A log beside it may hold events the file lacks: refused (unreadable for now, not bad input), nothing merged.
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: other + "-wal"))
        #expect { try journal.merge(from: other) } throws: { ($0 as? JournalError)?.code == .unreadable }
        // An empty file, or one that is not a regular file, is not a journal.
        #expect(FileManager.default.createFile(atPath: directory + "/empty.sqlite", contents: Data()))
        for path in [directory + "/empty.sqlite", "/dev/null", directory] {
            #expect(throws: JournalError.self) { try journal.merge(from: path) }
            do { try journal.merge(from: path) } catch { #expect(error.code == .notAJournal, "\(path): \(error.message)") }
        }
        #expect(try journal.events().count == 4)
    }

    /// Stopping a merge at any point (as Ctrl-C does) rolls it back and detaches the other file, so the next merge
    /// works: the rollback runs before the DETACH.
    @Test func aMergeStoppedAtAnyPointChangesNothingAndTheNextOneWorks() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        try makeJournal(other, count: 6000)
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        var stopsAt = 1
        var interrupted = 0
        while true {
            let calls = Atomic<Int>(0)
            let limit = stopsAt
            do {
                let added = try journal.merge(from: other, shouldStop: { calls.add(1, ordering: .relaxed).newValue >= limit })
                #expect(added == 6000)
                break
            } catch {
                #expect(error.code == .interrupted, "stopped at call \(stopsAt): \(error.message)")
                #expect(try journal.events().count == 1)
                interrupted += 1
            }
            stopsAt = stopsAt * 3 / 2 + 1
        }
        #expect(interrupted >= 8)
        #expect(try journal.problems().isEmpty)
    }

    @Test func anUnknownKindIsAnErrorNeverABookmark() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        try makeJournal(path, count: 1)
        try craft(path, Self.insert + " VALUES ('e1', 'd', 1, 1000, 'highlight', NULL, 1, 1, NULL, NULL, NULL, NULL)")
        let journal = try Journal(path: path)
        defer { journal.close() }
        #expect { try journal.events() } throws: { ($0 as? JournalError)?.message.contains("'highlight'") == true }
        #expect(try journal.problems().contains { $0.contains("1 event has a kind or reason this build does not know") })
        #expect(try journal.stats().events == 2)
    }

    @Test func appendingToAClosedWriterFailsLoudly() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reported = Mutex<[String]>([])
        let writer = JournalWriter(path: directory + "/journal.sqlite") { error, _ in reported.withLock { $0.append(error.message) } }
        writer.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        #expect(writer.flush() == nil)
        writer.close()
        writer.append(EventDraft(kind: .bookmark, surah: 1, ayah: 2))
        #expect(writer.failedEvents == 1)
        #expect(writer.flush()?.message.contains("closed") == true)
        #expect(reported.withLock { $0 }.count == 1)
        #expect(throws: JournalError.self) { try writer.withJournal { _ in 0 } }
        let journal = try Journal(path: directory + "/journal.sqlite", readOnly: true)
        defer { journal.close() }
        #expect(try journal.events().count == 1)
    }

    @Test func aMergeThroughTheWriterLeavesItOpen() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try makeJournal(directory + "/other.sqlite", count: 3, note: "other")
        let writer = JournalWriter(path: directory + "/journal.sqlite")
        writer.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        let added = try writer.withJournal { journal throws(JournalError) in try journal.merge(from: directory + "/other.sqlite") }
        #expect(added == 3)
        writer.append(EventDraft(kind: .bookmark, surah: 1, ayah: 2))
        #expect(writer.flush() == nil)
        writer.close()
        let journal = try Journal(path: directory + "/journal.sqlite", readOnly: true)
        defer { journal.close() }
        #expect(try journal.events().count == 5)
    }

    @Test func aNewJournalAppearsComplete() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        let journal = try Journal(path: path)
        // The file was linked into place whole: the schema and the device id are in the file itself.
        let copy = try Connection(uri: Connection.readOnlyURI(path, immutable: true), mode: .readOnly)
        #expect(try copy.scalarText("SELECT value FROM meta WHERE key = 'device_id'") == journal.deviceID)
        #expect(try Migrator.applied(copy) == ["v1-events", "v2-bookmark-edits", "v3-hifz"])
        try copy.close()
        journal.close()
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["journal.sqlite"])
    }
}
