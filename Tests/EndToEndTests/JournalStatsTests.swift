import Foundation
import TestSupport
import Testing

/// `journal stats`: the sizes of the journal and its log, events by kind and by device, first and last times.
@Suite struct JournalStatsTests {
    func tartil(_ arguments: [String], in directory: String) throws -> RunResult {
        try runTartil(arguments + ["--journal", directory + "/journal.sqlite"], home: directory)
    }

    func stats(in directory: String) throws -> [String: Any] {
        let result = try tartil(["journal", "stats", "--json"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
    }

    func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1 }

    @Test func sizesKindsDevicesAndTimes() throws {
        let one = TestPaths.makeTemporaryDirectory()
        let two = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: one); try? FileManager.default.removeItem(atPath: two) }
        for ayah in 1...3 { #expect(try tartil(["bookmark", "2:\(ayah)"], in: one).status == 0) }
        #expect(try tartil(["bookmark", "36:1"], in: two).status == 0)
        let id = try #require(try JSONSerialization.jsonObject(with: Data(try tartil(["bookmarks", "--json"], in: two).stdout.utf8)) as? [[String: Any]]).first?["event_id"] as? String
        #expect(try tartil(["bookmark", "rm", try #require(id)], in: two).status == 0)
        #expect(try tartil(["journal", "merge", two + "/journal.sqlite"], in: one).status == 0)

        let merged = try stats(in: one)
        #expect(merged["events"] as? Int == 5)
        #expect(merged["bytes"] as? Int == size(one + "/journal.sqlite") && (merged["bytes"] as? Int ?? 0) > 0)
        #expect(merged["wal_bytes"] as? Int == 0)
        let byKind = try #require(merged["by_kind"] as? [[String: Any]])
        let kinds = Dictionary(uniqueKeysWithValues: byKind.map { ($0["kind"] as? String ?? "", $0["events"] as? Int ?? -1) })
        #expect(kinds["bookmark"] == 4 && kinds["bookmark-removed"] == 1 && kinds["position"] == 0)
        let devices = try #require(merged["by_device"] as? [[String: Any]])
        #expect(devices.map { $0["events"] as? Int } == [3, 2])
        #expect(devices[0]["device_id"] as? String == merged["device_id"] as? String)
        let first = try #require(merged["first_ts_ms"] as? Int)
        let last = try #require(merged["last_ts_ms"] as? Int)
        #expect(first <= last && devices.allSatisfy { ($0["first_ts_ms"] as? Int ?? 0) >= first && ($0["last_ts_ms"] as? Int ?? 0) <= last })
        let text = try tartil(["journal", "stats"], in: one).stdout
        #expect(text.contains("(this one)") && text.contains("1 bookmark-removed") && text.contains("; log 0 B)"), "\(text)")

        // While a tartil holds the journal open, its new events are in the log, and stats counts its bytes.
        signal(SIGPIPE, SIG_IGN)
        let prompt = ChildProcess()
        prompt.executableURL = URL(fileURLWithPath: TestPaths.executable)
        prompt.arguments = ["--journal", one + "/journal.sqlite"]
        prompt.environment = ["XDG_RUNTIME_DIR": one + "/run", "HOME": one, "XDG_STATE_HOME": one + "/state"]
        let input = Pipe()
        let output = Pipe()
        prompt.standardInput = input
        prompt.standardOutput = output
        prompt.standardError = FileHandle.nullDevice
        try prompt.run()
        try input.fileHandleForWriting.write(contentsOf: Data("bookmark 3:1\n".utf8))
        var printed = ""
        while !printed.contains("bookmarked") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        let open = try stats(in: one)
        #expect((open["wal_bytes"] as? Int ?? 0) > 0, "\(open)")
        #expect(open["events"] as? Int == 6)
        try input.fileHandleForWriting.close()
        prompt.waitUntilExit()
        #expect(try stats(in: one)["wal_bytes"] as? Int == 0)
    }
}
