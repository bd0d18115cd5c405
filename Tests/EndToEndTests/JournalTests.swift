import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCore

@Suite struct JournalTests {
    let environment = DownloadEnvironment.shared

    /// `tartil` with the fixture reciter, a cache and a journal in `directory`.
    func tartil(_ arguments: [String], in directory: String, input: String? = nil) throws -> RunResult {
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        return try runTartil(
            arguments + ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache",
                         "--journal", directory + "/journal.sqlite"],
            input: input, home: directory)
    }

    @Test func quitRecordsThePositionAndResumeContinuesOnTheVerySample() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = """
            play 1:1-4 --reciter fixture --output silent
            pause
            seek 0:03
            quit
            """
        let session = try tartil([], in: directory, input: script)
        #expect(session.status == 0, "\(session.stderr)")
        let rate = environment.manifest[AyahRef(unchecked: 1, 1)]!.sampleRate
        let before = (1...2).map { environment.manifest[AyahRef(unchecked: 1, $0)]!.samples }.reduce(0, +)
        let positions = try tartil(["positions", "--json"], in: directory)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(positions.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 1)
        #expect(list[0]["ayah"] as? Int == 3 && list[0]["reason"] as? String == "quit")
        #expect(list[0]["offset_samples"] as? Int == 3 * rate - before, "\(list[0])")

        // `play REF --resume` continues within REF (the rest of surah 1 changes format, which a WAV cannot hold).
        let resumed = try tartil(["play", "1:1-4", "--resume", "--output", "wav:" + directory + "/rest.wav"], in: directory)
        #expect(resumed.status == 0, "\(resumed.stderr) \(positions.stdout)")
        #expect(resumed.stderr.contains("resuming fixture at 1:3"))
        let reference = try mpg123Reference(PlayTests.surahOneStart, skippingFrames: 3 * rate)
        #expect(try wavPCM(directory + "/rest.wav").sha256 == reference.sha256)

        // Played to its end: the last position says so, and resume goes on with the next ayah of the next surah.
        let after = try tartil(["positions", "--csv"], in: directory)
        #expect(after.stdout.hasPrefix("surah,ayah,offset_ms,offset_samples,reciter,reason,ts_ms,device_id,event_id\n1,4,"))
        #expect(after.stdout.contains(",fixture,end,"))
    }

    /// How many events a copy of `path` alone holds (no -wal or -shm beside the copy); -1 without an events table.
    func eventsInACopyOfTheFileAlone(_ path: String) throws -> Int {
        let copy = path + ".copy"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let count = try shell("sqlite3 'file:\(copy)?mode=ro&immutable=1' 'SELECT count(*) FROM events' 2>/dev/null")
        return Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func afterACleanExitTheJournalFileAloneHoldsEveryEvent() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = directory + "/journal.sqlite"
        let play = try tartil(["play", "112", "--reciter", "fixture", "--output", "null"], in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        let exported = try tartil(["journal", "export"], in: directory).stdout.split(separator: "\n").count
        #expect(exported >= 6)  // session-start, four ayah starts, end, session-end
        #expect(try eventsInACopyOfTheFileAlone(journal) == exported)
        #expect(((try? FileManager.default.attributesOfItem(atPath: journal + "-wal")[.size] as? Int) ?? 0) == 0)
        // A longer session at the prompt, then bookmarks from a script: still every event in the file alone.
        let lines = (1...150).map { "bookmark 2:\($0) --note n\($0)" }.joined(separator: "\n")
        #expect(try tartil([], in: directory, input: lines).status == 0)
        #expect(try tartil(["-c", "bookmark 3:1; bookmark 3:2"], in: directory).status == 0)
        #expect(try eventsInACopyOfTheFileAlone(journal) == exported + 152)
    }

    /// Chaos: a prompt appending bookmarks as fast as it can is killed (SIGKILL) at seeded random moments, twelve
    /// times on one journal. After every kill `journal check` passes (integrity, append-only triggers, WAL) and
    /// every bookmark whose "bookmarked" line was printed (its event acknowledged as durable) is in the journal;
    /// after a final clean exit the journal file alone holds them all.
    @Test(arguments: [20_261_130 as UInt64])
    func everyAcknowledgedAppendSurvivesKillDashNineAtRandomMoments(seed: UInt64) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        // Writing to a child after it is killed must not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        var random = SeededRandom(seed: seed)
        var acknowledged: [String] = []
        for round in 0..<12 {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: TestPaths.executable)
            process.arguments = ["--mirrors", mirrors, "--journal", directory + "/journal.sqlite"]
            process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "XDG_STATE_HOME": directory + "/state"]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // A burst of appends: each `bookmark` prints its line only once its event is durable.
            let lines = (1...2000).map { "bookmark 2:\(1 + $0 % 286) --note r\(round)n\($0)\n" }.joined()
            DispatchQueue.global().async { try? input.fileHandleForWriting.write(contentsOf: Data(lines.utf8)) }
            // The moment: after a random number of acknowledgements, plus a random delay of up to 20 ms.
            let target = 1 + Int(random.next() % 120)
            let delay = useconds_t(random.next() % 20_000)
            var pending = ""
            var confirmed: [String] = []
            let reader = output.fileHandleForReading
            while confirmed.count < target {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending += String(decoding: chunk, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    confirmed.append(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "round \(round)")
            // Lines printed before the kill (read after it) were acknowledged too.
            pending += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
            confirmed += pending.split(separator: "\n").map(String.init)
            acknowledged += confirmed.compactMap { $0.hasPrefix("bookmarked") ? $0.split(separator: " ").last.map(String.init) : nil }
            let check = try tartil(["journal", "check"], in: directory)
            #expect(check.status == 0 && check.stdout.contains("ok"), "round \(round): \(check.stderr)")
            let exported = try tartil(["journal", "export"], in: directory)
            #expect(exported.status == 0, "\(exported.stderr)")
            let notes = Set(exported.stdout.split(separator: "\n").compactMap { line in
                line.range(of: "\"note\":\"").map { String(line[$0.upperBound...].prefix { $0 != "\"" }) }
            })
            let missing = acknowledged.filter { !notes.contains($0) }
            #expect(missing.isEmpty, "round \(round) (seed \(seed)): acknowledged but missing: \(missing.prefix(5))")
        }
        #expect(acknowledged.count > 100)
        // A clean exit folds the log left by the last kill into the journal file.
        #expect(try tartil(["bookmark", "1:1", "--note", "final"], in: directory).status == 0)
        #expect(try eventsInACopyOfTheFileAlone(directory + "/journal.sqlite") >= acknowledged.count + 1)
    }

    @Test func aPlayerAndTwoExportingScriptsNeverSeeALockedDatabase() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try tartil(["prefetch", "1:1-4", "--reciter", "fixture"], in: directory)
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let common = ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache", "--journal", directory + "/journal.sqlite"]
        // The player appends a position at every ayah (and more: `--repeat 3 --pause 0.2` gives many) for ~20 s.
        let player = ChildProcess()
        player.executableURL = URL(fileURLWithPath: TestPaths.executable)
        player.arguments = ["play", "1:1-4", "--reciter", "fixture", "--output", "silent", "--repeat", "3", "--pause", "0.2"] + common
        player.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory]
        player.standardOutput = FileHandle.nullDevice
        let playerErrors = Pipe()
        player.standardError = playerErrors
        try player.run()
        Thread.sleep(forTimeInterval: 0.3)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { script in
            for round in 0..<25 {
                let arguments = script == 0 ? ["journal", "export"] : ["positions", "--ndjson"]
                guard let result = try? runTartil(arguments + common, home: directory) else { continue }
                if result.status != 0 || result.stderr.contains("locked") {
                    failures.withLock { $0.append("script \(script) round \(round): \(result.status) \(result.stderr)") }
                }
            }
        }
        player.interrupt()
        player.waitUntilExit()
        let errors = String(decoding: playerErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!errors.contains("locked"), "\(errors)")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let stats = try tartil(["journal", "stats", "--json"], in: directory)
        #expect(stats.stdout.contains("{\"kind\":\"session-start\",\"events\":1}"))
    }

    @Test func aForeignFileIsRefusedWithExitCode64AndLeftAlone() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let foreign = directory + "/notes.sqlite"
        _ = try shell("python3 -c \"import sqlite3; c=sqlite3.connect('\(foreign)'); c.execute('CREATE TABLE notes(x)'); c.commit()\"")
        let text = directory + "/text.sqlite"
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: text))
        for path in [foreign, text] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
            for arguments in [["positions"], ["journal", "check"], ["bookmark", "1:1"], ["play", "112", "--reciter", "fixture", "--output", "null"]] {
                let result = try runTartil(arguments + ["--journal", path, "--mirrors", mirrors, "--tables", environment.tables], home: directory)
                #expect(result.status == 64, "\(arguments) \(path): \(result.stderr)")
                #expect(result.stderr.contains("is not a tartil journal"), "\(arguments): \(result.stderr)")
            }
            let merge = try tartil(["journal", "merge", path], in: directory)
            #expect(merge.status == 64, "\(merge.stderr)")
            #expect(merge.stderr.contains("is not a tartil journal"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func mergeCountsNewEventsOnceAndExportsAreStable() throws {
        let one = TestPaths.makeTemporaryDirectory()
        let two = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: one); try? FileManager.default.removeItem(atPath: two) }
        #expect(try tartil(["bookmark", "2:255", "--note", "kursi, \"the throne\""], in: one).status == 0)
        #expect(try tartil(["bookmark", "36:1"], in: two).status == 0)
        #expect(try tartil(["bookmark", "67:1"], in: two).status == 0)
        let merged = try tartil(["journal", "merge", two + "/journal.sqlite"], in: one)
        #expect(merged.stdout == "2 new events from \(two)/journal.sqlite\n", "\(merged.stderr)")
        #expect(try tartil(["journal", "merge", two + "/journal.sqlite"], in: one).stdout.hasPrefix("0 new events"))
        let csv = try tartil(["journal", "export", "--format", "csv"], in: one).stdout.split(separator: "\n")
        #expect(csv.first == "event_id,device_id,device_seq,ts_ms,kind,reciter,surah,ayah,offset_samples,offset_ms,reason,note,target_id")
        #expect(csv.count == 4)
        #expect(csv.contains { $0.hasSuffix(",bookmark,,2,255,,,,\"kursi, \"\"the throne\"\"\",") })
        let ndjson = try tartil(["journal", "export"], in: one).stdout.split(separator: "\n")
        let parsed = ndjson.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(parsed.count == 3)
        #expect(parsed.contains { $0["note"] as? String == "kursi, \"the throne\"" })
        let stats = try tartil(["journal", "stats", "--json"], in: one).stdout
        #expect(stats.contains("\"devices\":2") && stats.contains("{\"kind\":\"bookmark\",\"events\":3}"))
        let bad = try tartil(["journal", "export", "--format", "xml"], in: one)
        #expect(bad.status == 64 && bad.stderr.contains("--format takes ndjson, json or csv, not 'xml'"))
        let since = try tartil(["history", "--since", "yesterday"], in: one)
        #expect(since.status == 64 && since.stderr.contains("--since takes a date from 1970-01-01 to 9999-12-31 (2026-11-29)"))
    }
}
