import Foundation
import TestSupport
import Testing

/// `journal backup`: a consistent, self-contained copy made while another process appends.
@Suite struct JournalBackupTests {
    let environment = DownloadEnvironment.shared

    func tartil(_ arguments: [String], in directory: String) throws -> RunResult {
        try runTartil(arguments + ["--journal", directory + "/journal.sqlite"], home: directory)
    }

    /// Events in `path` read alone: immutable, so a `-wal` beside it (there should be none) is not read.
    func eventsInTheFileAlone(_ path: String) throws -> Int {
        let count = try shell("sqlite3 'file:\(path)?mode=ro&immutable=1' 'SELECT count(*) FROM events' 2>/dev/null")
        return Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aBackupTakenWhileAnotherProcessAppendsIsConsistentAndMergesAsNothingNew() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = directory + "/journal.sqlite"
        #expect(try tartil(["bookmark", "1:1"], in: directory).status == 0)
        signal(SIGPIPE, SIG_IGN)
        // A prompt appending bookmarks, each durable before its "bookmarked" line.
        let writer = ChildProcess()
        writer.executableURL = URL(fileURLWithPath: TestPaths.executable)
        writer.arguments = ["--journal", journal]
        writer.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "XDG_STATE_HOME": directory + "/state"]
        let input = Pipe()
        let output = Pipe()
        writer.standardInput = input
        writer.standardOutput = output
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        let lines = (1...1500).map { "bookmark 2:\(1 + $0 % 286) --note n\($0)\n" }.joined()
        DispatchQueue.global().async {
            try? input.fileHandleForWriting.write(contentsOf: Data(lines.utf8))
            try? input.fileHandleForWriting.close()
        }
        // Backups only once appends are under way.
        let first = output.fileHandleForReading.availableData
        var backups: [(path: String, events: Int)] = []
        for round in 0..<4 {
            let path = "\(directory)/backup-\(round).sqlite"
            let result = try tartil(["journal", "backup", path, "--json"], in: directory)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            backups.append((path, object["events"] as? Int ?? -1))
        }
        let printed = String(decoding: first + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(printed.split(separator: "\n").count == 1500)
        // The copies were taken while the journal grew (not all before or after the appends).
        #expect(backups.contains { $0.events > 1 && $0.events < 1501 }, "\(backups)")
        for backup in backups {
            #expect(!FileManager.default.fileExists(atPath: backup.path + "-wal"))
            #expect(try eventsInTheFileAlone(backup.path) == backup.events)
            let check = try runTartil(["journal", "check", "--journal", backup.path], home: directory)
            #expect(check.status == 0 && check.stdout.contains("ok"), "\(check.stderr)")
            let merge = try tartil(["journal", "merge", backup.path], in: directory)
            #expect(merge.status == 0 && merge.stdout.hasPrefix("0 new events"), "\(merge.stdout) \(merge.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/backup-0.sqlite.tmp"))
        let temporaries = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
        #expect(temporaries.isEmpty, "\(temporaries)")
        // Merged into an empty journal, a backup gives its events.
        let other = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: other) }
        let merged = try tartil(["journal", "merge", backups[3].path], in: other)
        #expect(merged.stdout.hasPrefix("\(backups[3].events) new events"), "\(merged.stdout) \(merged.stderr)")
    }

    @Test func aBackupNeverReplacesTheJournalNorAFileWithoutForce() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = directory + "/journal.sqlite"
        #expect(try tartil(["bookmark", "36:1"], in: directory).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: journal))
        for target in [journal, directory + "/./journal.sqlite"] {
            let itself = try tartil(["journal", "backup", target, "--force"], in: directory)
            #expect(itself.status == 64 && itself.stderr.contains("is the journal itself"), "\(itself.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == before)
        let existing = directory + "/old.sqlite"
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: existing))
        let refused = try tartil(["journal", "backup", existing], in: directory)
        #expect(refused.status == 64 && refused.stderr.contains("exists: add --force to replace it"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me\n")
        let directoryTarget = try tartil(["journal", "backup", directory], in: directory)
        #expect(directoryTarget.status == 64 && directoryTarget.stderr.contains("is a directory"))
        let forced = try tartil(["journal", "backup", existing, "--force"], in: directory)
        #expect(forced.status == 0 && forced.stdout.hasPrefix("backed up 1 event to \(existing)"), "\(forced.stderr)")
        #expect(try eventsInTheFileAlone(existing) == 1)
        let none = try runTartil(["journal", "backup", directory + "/x.sqlite", "--journal", directory + "/none.sqlite"], home: directory)
        #expect(none.status == 1 && none.stderr.contains("there is no journal"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/none.sqlite"))
    }
}
