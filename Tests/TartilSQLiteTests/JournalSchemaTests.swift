import Foundation
import TestSupport
import Testing

@testable import TartilJournal
@testable import TartilSQLite

/// `Journal.currentSchema` (Sources/TartilJournal/JournalSchema.swift) is the schema this build's migrations make,
/// read from `sqlite_master` of a scratch database they were applied to. Run with TARTIL_UPDATE_GOLDEN=1 to write
/// it again after a migration is added, and review the diff.
@Suite struct JournalSchemaTests {
    static let path = TestPaths.repository + "/Sources/TartilJournal/JournalSchema.swift"

    @Test func theWrittenSchemaIsTheMigrationsSchema() throws {
        let made = try Journal.expectedSchema()
        if ProcessInfo.processInfo.environment["TARTIL_UPDATE_GOLDEN"] == "1" {
            try Self.source(made).write(toFile: Self.path, atomically: true, encoding: .utf8)
            return
        }
        #expect(Journal.currentSchema == made, "JournalSchema.swift is not what the migrations make; TARTIL_UPDATE_GOLDEN=1 rewrites it")
        #expect(try String(contentsOfFile: Self.path, encoding: .utf8) == Self.source(made))
    }

    /// A journal made by this build passes its own check, and one object changed in it does not.
    @Test func aJournalWithOneObjectChangedIsRefused() throws {
        let path = TestPaths.makeTemporaryDirectory() + "/journal.sqlite"
        #expect(try Journal(path: path).close() == nil)
        #expect(try Journal(path: path, readOnly: true).close() == nil)
        let connection = try TartilSQLite.Connection(path: path)
        try connection.execute("DROP TRIGGER events_no_delete; CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT 1; END;")
        try connection.close()
        #expect(throws: JournalError.self) { try Journal(path: path, readOnly: true) }
    }

    static func source(_ schema: [Journal.SchemaObject]) -> String {
        func literal(_ text: String) -> String {
            if !text.contains(where: { $0 == "\"" || $0 == "\\" || $0 == "\n" }) { return "\"\(text)\"" }
            var hashes = "#"
            while text.contains("\"" + hashes) { hashes += "#" }
            return text.contains("\n") ? "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)" : "\(hashes)\"\(text)\"\(hashes)"
        }
        var lines = [
            "// Written by JournalSchemaTests (TARTIL_UPDATE_GOLDEN=1) from the migrations in JournalDatabase.swift: do not edit.",
            "",
            "extension Journal {",
            "    /// The schema this build's migrations make, as `sqlite_master` holds it (type, name, table, SQL; in that order),",
            "    /// which a journal opened as this device's must have (`checkOwnSchema`).",
            "    static let currentSchema: [SchemaObject] = [",
        ]
        for object in schema {
            lines.append(
                "        SchemaObject(type: \(literal(object.type)), name: \(literal(object.name)), table: \(literal(object.table)), sql: \(literal(object.sql))),")
        }
        lines += ["    ]", "}", ""]
        return lines.joined(separator: "\n")
    }
}
