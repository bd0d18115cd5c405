import Foundation
import TestSupport
import Testing

@testable import TartilJournal
@testable import TartilSQLite

@Suite struct ConnectionTests {
    @Test func executesPreparesAndBinds() throws {
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t(a INTEGER, b TEXT)")
        let insert = try connection.prepare("INSERT INTO t VALUES (?, ?)")
        try insert.bind([.integer(7), .text("سبعة")])
        try insert.step()
        try insert.bind([.integer(8), .null])
        try insert.step()
        let select = try connection.prepare("SELECT a, b FROM t ORDER BY a")
        #expect(try select.step())
        #expect(select.integer(at: 0) == 7)
        #expect(select.text(at: 1) == "سبعة")
        #expect(try select.step())
        #expect(select.text(at: 1) == nil)
        #expect(try select.step() == false)
    }

    @Test func errorsCarryTheCodeMessageAndSQL() throws {
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        do {
            try connection.execute("SELEC 1")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .error)
            #expect(error.sql == "SELEC 1")
            #expect(error.message.contains("syntax error"))
        }
    }

    @Test func transactionsRollBackOnThrow() throws {
        struct Stop: Error {}
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t(a)")
        #expect(throws: Stop.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                throw Stop()
            }
        }
        #expect(try connection.scalarText("SELECT count(*) FROM t") == "0")
    }
}

@Suite struct JournalDatabaseTests {
    @Test func newJournalIsWALWithFullSyncAndAppendOnlyEvents() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try JournalDatabase(path: directory + "/journal.sqlite")
        defer { try? journal.close() }
        let connection = journal.connection
        #expect(try connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try connection.scalarText("PRAGMA synchronous") == "2")  // FULL
        try connection.execute(
            "INSERT INTO events(event_id, device_id, ts_ms, kind) VALUES ('e1', 'd1', 1, 'session')")
        do {
            try connection.execute("UPDATE events SET kind = 'x'")
            Issue.record("UPDATE should be refused")
        } catch {
            #expect(error.message.contains("append-only"))
        }
        do {
            try connection.execute("DELETE FROM events")
            Issue.record("DELETE should be refused")
        } catch {
            #expect(error.message.contains("append-only"))
        }
        #expect(try connection.scalarText("SELECT count(*) FROM events") == "1")
    }

    @Test func foreignDatabaseIsRefusedAndLeftAlone() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/other.sqlite"
        let other = try Connection(path: path)
        try other.execute("CREATE TABLE notes(x)")
        try other.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try JournalDatabase(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func textFileIsNotADatabase() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/notes.txt"
        try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try JournalDatabase(path: path) }
    }
}
