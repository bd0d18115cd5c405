import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Interrupted work resumes: `kill -9` of `cache verify --repair`, `journal backup` and `journal merge` at
/// moments drawn from a fixed seed (a failure can be replayed), each followed by checks of what the next run
/// does: it finishes the work, leaves nothing of the killed run behind, and reports no problem that is not there.
@Suite(.serialized) struct KillLoopTests {
    let environment = DownloadEnvironment.shared

    /// Starts `arguments`, kills it with SIGKILL after `delay` microseconds, and waits for it.
    func killed(_ arguments: [String], home: String, after delay: useconds_t) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = arguments
        process.environment = isolatedEnvironment(home: home)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(delay)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A journal of `count` bookmarks, made with sqlite3 (fast), with the device's numbering and times.
    func bigJournal(_ path: String, count: Int, home: String) throws {
        #expect(try runTartil(["bookmark", "1:1", "--journal", path], home: home).status == 0)
        let sql = """
            WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, surah, ayah, note)
            SELECT lower(hex(randomblob(16))), (SELECT value FROM meta WHERE key = 'device_id'), i,
                   (SELECT ts_ms FROM events WHERE device_seq = 1) + i, 'bookmark', 1 + i % 114, 1, 'note ' || i FROM n;
            """
        _ = try shell("sqlite3 '\(path)' \"\(sql)\"")
    }

    @Test func aRepairKilledMidwayIsFinishedByTheNextRun() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let prefetch = try environment.tartil(["prefetch", "1", "112", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        let mirrors = try environment.mirrorsFile([environment.fault("slow")], in: directory)
        var random = SeededRandom(seed: 0x11_7e9a12)
        var sawMissing = false
        var missingAtEnd: [String] = []
        let all = try FileManager.default.contentsOfDirectory(atPath: directory + "/cache/fixture").filter { $0.hasSuffix(".mp3") }.sorted()
        #expect(all.count == 11)
        for round in 0..<24 {
            if round >= 8 && sawMissing { break }  // more rounds until a kill came mid-repair
            // Damage some files, then kill the repair that is downloading them again from a slow mirror.
            for name in all where random.below(3) == 0 && FileManager.default.fileExists(atPath: directory + "/cache/fixture/" + name) {
                try flipBit(in: directory + "/cache/fixture/" + name)
            }
            try killed(
                ["cache", "verify", "--repair", "--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache"],
                home: directory, after: useconds_t(30_000 + random.below(900_000)))
            // Every file the killed repair removed is on the list the next repair works from.
            let listed = (try? String(contentsOfFile: directory + "/cache/" + RepairList.fileName, encoding: .utf8)) ?? ""
            let pending = Set(RepairList.parse(listed).filter { $0.reciter == "fixture" }.map { $0.ayah.fileStem + ".mp3" })
            let missing = all.filter { !FileManager.default.fileExists(atPath: directory + "/cache/fixture/" + $0) }
            if !missing.isEmpty { sawMissing = true }
            missingAtEnd = missing
            #expect(Set(missing).isSubset(of: pending), "round \(round): \(missing) missing, listed: \(pending.sorted())")
        }
        // A plain verify says what is missing (and fails) rather than "all good".
        if !missingAtEnd.isEmpty {
            let plain = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
            #expect(plain.status != 0 && plain.stderr.contains("cache verify --repair"), "\(plain.stdout) \(plain.stderr)")
        }
        #expect(sawMissing, "no kill came while a repair was under way: the loop tested nothing")
        let repair = try environment.tartil(["cache", "verify", "--repair"], urls: [environment.clean], in: directory)
        #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 11)
        let clean = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(clean.status == 0 && clean.stdout.contains("11 files checked: 11 good, 0 bad"), "\(clean.stdout) \(clean.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/cache/" + RepairList.fileName))
    }

    @Test func backupsKilledMidwayLeaveNoTemporaryCopiesAfterTheNextRun() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = directory + "/journal.sqlite"
        try bigJournal(journal, count: 60_000, home: directory)
        try FileManager.default.createDirectory(atPath: directory + "/backups", withIntermediateDirectories: true)
        let destination = directory + "/backups/copy.sqlite"
        var random = SeededRandom(seed: 0xBAC_0011)
        // At least ten kills, and more (later and later) until one came while a copy was being written: each
        // backup that gets going removes the earlier ones' copies, so what is left is looked at after each kill.
        var leftByKills: [String] = []
        for attempt in 0..<40 {
            try killed(
                ["journal", "backup", destination, "--force", "--journal", journal], home: directory,
                after: useconds_t(5_000 + random.below(150_000 + attempt * 40_000)))
            leftByKills += try FileManager.default.contentsOfDirectory(atPath: directory + "/backups").filter { $0.contains(".tmp-") }
            if attempt >= 9 && !leftByKills.isEmpty { break }
        }
        #expect(!leftByKills.isEmpty, "no kill came while a copy was being written: the loop tested nothing")
        let finished = try runTartil(["journal", "backup", destination, "--force", "--journal", journal], home: directory)
        #expect(finished.status == 0, "\(finished.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/backups")
        #expect(names == ["copy.sqlite"], "left by the kills: \(leftByKills); after the next run: \(names)")
        let check = try runTartil(["journal", "check", "--journal", destination], home: directory)
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
    }

    /// A journal's creation killed midway leaves its temporary file (`journal.sqlite.new-XXXXXXXX`): the next
    /// creation in that folder removes it.
    @Test func creationsKilledMidwayLeaveNoTemporaryFilesAfterTheNextRun() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/j", withIntermediateDirectories: true)
        var random = SeededRandom(seed: 0xC4EA_7E)
        var left: Set<String> = []
        for round in 0..<60 {
            if round >= 16 && !left.isEmpty { break }  // more, later and later, until one came mid-creation
            try killed(
                ["bookmark", "1:1", "--journal", directory + "/j/journal.sqlite"], home: directory,
                after: useconds_t(2_000 + random.below(40_000 + round * 5_000)))
            // A journal the run made whole is removed, so that the next run makes it again.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory + "/j/journal.sqlite" + suffix) }
            left.formUnion(try FileManager.default.contentsOfDirectory(atPath: directory + "/j").filter { $0.contains(".new-") })
        }
        #expect(try runTartil(["bookmark", "1:1", "--journal", directory + "/j/journal.sqlite"], home: directory).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/j")
        #expect(!left.isEmpty, "no kill came while a journal was being made: the loop tested nothing")
        #expect(!names.contains { $0.contains(".new-") }, "left by the kills: \(left.sorted()); after the next run: \(names.sorted())")
    }

    @Test func mergesKilledMidwayLeaveNoFalseWarningAndTheNextRunMergesEverything() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        try bigJournal(other, count: 60_000, home: directory + "/o")
        let journal = directory + "/journal.sqlite"
        #expect(try runTartil(["bookmark", "2:255", "--journal", journal], home: directory).status == 0)
        var random = SeededRandom(seed: 0x3E_96E0)
        for round in 0..<8 {
            try killed(["journal", "merge", other, "--journal", journal], home: directory, after: useconds_t(5_000 + random.below(500_000)))
            let look = try runTartil(["journal", "check", "--journal", journal], home: directory)
            #expect(look.status == 0, "round \(round): \(look.stdout) \(look.stderr)")
            #expect(!look.stderr.contains("could not be folded"), "round \(round): \(look.stderr)")
        }
        let merged = try runTartil(["journal", "merge", other, "--journal", journal, "--json"], home: directory)
        #expect(merged.status == 0 && !merged.stderr.contains("could not be folded"), "\(merged.stderr)")
        let stats = try runTartil(["journal", "stats", "--json", "--journal", journal], home: directory)
        let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        #expect(object?["events"] as? Int == 60_001, "\(stats.stdout)")
        let again = try runTartil(["journal", "merge", other, "--journal", journal], home: directory)
        #expect(again.status == 0 && again.stdout.hasPrefix("0 new events") && again.stderr.isEmpty, "\(again.stdout) \(again.stderr)")
    }
}
