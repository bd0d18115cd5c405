import TartilCore
import Foundation
import TestSupport
import Testing

@testable import TartilSQLite

@Suite struct BackupTests {
    @Test func copiesEveryPageOfAWALDatabaseWhileAnotherConnectionHoldsUncommittedWork() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try Connection(path: directory + "/source.sqlite")
        defer { try? source.close() }
        try source.enableWAL()
        try source.execute("CREATE TABLE t(x INTEGER); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO t SELECT i FROM n")
        // A second connection with a write transaction open: the copy is of the last commit, not of its work.
        let writer = try Connection(path: directory + "/source.sqlite")
        defer { try? writer.close() }
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (-1)")
        let copy = try Connection(path: directory + "/copy.sqlite")
        let pages = try source.backup(into: copy, busyTimeoutMilliseconds: 1000)
        #expect(pages > 1)
        #expect(try copy.scalarText("SELECT count(*) FROM t") == "5000")
        #expect(try copy.scalarText("PRAGMA quick_check") == "ok")
        try copy.close()
        try writer.execute("ROLLBACK")
    }

    @Test func aDestinationThatCannotBeWrittenIsAnErrorNamingTheStep() throws {
        let source = try Connection(path: ":memory:")
        defer { try? source.close() }
        try source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ro.sqlite"
        let made = try Connection(path: path)
        try made.execute("CREATE TABLE y(z)")
        try made.close()
        let readOnly = try Connection(path: path, mode: .readOnly)
        defer { try? readOnly.close() }
        do {
            try source.backup(into: readOnly, busyTimeoutMilliseconds: 100)
            Issue.record("a backup into a read-only connection succeeded")
        } catch {
            #expect(error.code.primary == .readonly, "\(error)")
            #expect(error.sql == "sqlite3_backup_step")
        }
    }
}
