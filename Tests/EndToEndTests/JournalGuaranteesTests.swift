import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCore

/// Runs `tartil` and kills it (SIGKILL) if it has not exited after `deadline` seconds: `hung` says so.
func runTartilWithDeadline(_ arguments: [String], deadline: Double = 30, home: String) throws -> (result: RunResult, hung: Bool, signalled: Bool) {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: TestPaths.executable)
    process.arguments = arguments
    process.environment = [
        "HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data",
        "XDG_CACHE_HOME": home + "/cache", "XDG_STATE_HOME": home + "/state", "XDG_RUNTIME_DIR": home + "/run",
    ]
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    let group = DispatchGroup()
    nonisolated(unsafe) var errorData = Data()
    nonisolated(unsafe) var outputData = Data()
    DispatchQueue.global().async(group: group) { errorData = stderr.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { outputData = stdout.fileHandleForReading.readDataToEndOfFile() }
    var hung = false
    if exited.wait(timeout: .now() + deadline) == .timedOut {
        hung = true
        kill(process.processIdentifier, SIGKILL)
        exited.wait()
    }
    group.wait()
    // Without these, each run would keep two descriptors open (the handler holds the process and its pipes).
    process.terminationHandler = nil
    try? stdout.fileHandleForReading.close()
    try? stderr.fileHandleForReading.close()
    let result = RunResult(
        status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
        stderr: String(decoding: errorData, as: UTF8.self))
    return (result, hung, process.terminationReason == .uncaughtSignal)
}

/// Runs a program and returns its exit status.
@discardableResult
func runProgram(_ path: String, _ arguments: [String]) -> Int32 {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}

/// Small tmpfs mounts for tests of full and read-only file systems (root only; the tests skip otherwise).
enum TestMounts {
    static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory]) == 0 else { return false }
        return runProgram("/bin/umount", [directory]) == 0
    }()

    static func tmpfs(at directory: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", directory]) == 0 else {
            throw MountError(directory: directory)
        }
    }

    static func unmount(_ directory: String) { runProgram("/bin/umount", ["-l", directory]) }

    struct MountError: Error { let directory: String }
}

@Suite struct JournalGuaranteesTests {
    let environment = DownloadEnvironment.shared

    func common(_ directory: String, journal: String? = nil) throws -> [String] {
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        return ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache",
                "--journal", journal ?? directory + "/journal.sqlite"]
    }

    // MARK: - Defect 12: paths that are not journal files

    @Test func aJournalPathThatIsNotARegularFileIsRefusedWith64() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try? FileManager.default.removeItem(atPath: "/dev/null-journal")
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/null", directory, fifo] {
            for arguments in [["bookmark", "1:1"], ["positions"], ["journal", "export"], ["play", "112", "--reciter", "fixture", "--output", "null"]] {
                let run = try runTartilWithDeadline(arguments + (try common(directory, journal: path)), deadline: 20, home: directory)
                #expect(!run.hung, "\(path) \(arguments) hung")
                #expect(run.result.status == 64, "\(path) \(arguments): \(run.result.stderr)")
                #expect(run.result.stderr.contains("not a regular file"), "\(path) \(arguments): \(run.result.stderr)")
            }
            let merge = try runTartilWithDeadline(["journal", "merge", path] + (try common(directory)), deadline: 20, home: directory)
            #expect(!merge.hung && merge.result.status == 64, "merge \(path): \(merge.result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
    }

    // MARK: - Defect 5: merge keeps the session's journal writer

    @Test func bookmarksAfterAMergeInTheSameSessionAreKept() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        #expect(try runTartil(["bookmark", "67:1", "--journal", other], home: directory).status == 0)
        let script = "bookmark 1:1 --note before; journal merge \(other); bookmark 2:2 --note after; bookmark 3:3 --note later"
        let session = try runTartil(["-c", script] + (try common(directory)), home: directory)
        #expect(session.status == 0, "\(session.stderr)")
        #expect(session.stdout.contains("bookmarked 3:3"))
        let prompt = try runTartil(try common(directory), input: "journal merge \(other)\nbookmark 4:4 --note prompt\n", home: directory)
        #expect(prompt.status == 0, "\(prompt.stderr)")
        let export = try runTartil(["journal", "export"] + (try common(directory)), home: directory).stdout
        for note in ["before", "after", "later", "prompt"] { #expect(export.contains("\"note\":\"\(note)\""), "\(note) is missing") }
        #expect(export.split(separator: "\n").count == 5)
    }

    // MARK: - Defect 4: merge from a read-only mount, and interrupted merges

    @Test(.enabled(if: TestMounts.available)) func aJournalOnAReadOnlyMountMerges() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        let mount = directory + "/ro"
        try TestMounts.tmpfs(at: mount, size: "1m")
        defer {
            TestMounts.unmount(mount)
            try? FileManager.default.removeItem(atPath: directory)
        }
        #expect(try runTartil(["bookmark", "67:1", "--journal", mount + "/other.sqlite"], home: directory).status == 0)
        #expect(runProgram("/bin/mount", ["-o", "remount,ro", mount]) == 0)
        let merge = try runTartil(["journal", "merge", mount + "/other.sqlite"] + (try common(directory)), home: directory)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stdout.hasPrefix("1 new event"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount) == ["other.sqlite"])
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalInterruptsAMergeWith130AndChangesNothing(signal: Int32) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.sqlite"
        #expect(try runTartil(["bookmark", "1:1", "--journal", other], home: directory).status == 0)
        // 200,000 valid events, inserted by sqlite3 (a merge of them takes seconds).
        _ = try shell("""
            sqlite3 '\(other)' "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 200000)
                INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason)
                SELECT lower(hex(randomblob(16))), 'other-device', n, 1700000000000 + n, 'position', 'r', 1 + n % 114, 1, 0, 0, 'ayah-start' FROM r;"
            """)
        #expect(try runTartil(["bookmark", "2:255"] + (try common(directory)), home: directory).status == 0)
        let before = try runTartil(["journal", "export"] + (try common(directory)), home: directory).stdout
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = ["journal", "merge", other] + (try common(directory))
        process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 0.4)
        kill(process.processIdentifier, signal)
        let started = Date()
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 5, "the merge went on after the signal")
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("interrupted"))
        #expect(try runTartil(["journal", "export"] + (try common(directory)), home: directory).stdout == before)
        #expect(try runTartil(["journal", "check"] + (try common(directory)), home: directory).status == 0)
    }

    // MARK: - Defect 7: readers while the journal is being created

    @Test func readersNeverFailWhileTheJournalIsBeingCreated() throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let failures = Mutex<[String]>([])
        for round in 0..<40 {
            let journal = "\(root)/\(round)/journal.sqlite"
            DispatchQueue.concurrentPerform(iterations: 3) { which in
                let arguments = [["bookmark", "1:1"], ["journal", "export"], ["positions", "--json"]][which] + ["--journal", journal]
                guard let result = try? runTartil(arguments, home: root) else { return }
                if result.status != 0 {
                    failures.withLock { $0.append("round \(round) \(arguments[0]): \(result.status) \(result.stderr)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root + "/0")
        #expect(!leftovers.contains { $0.contains(".new-") }, "\(leftovers)")
    }

    // MARK: - Defect 3: play on a full disk

    @Test(.enabled(if: TestMounts.available)) func playOnAFullDiskReportsItOnceAndExits1() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        let mount = directory + "/small"
        try TestMounts.tmpfs(at: mount, size: "512k")
        defer {
            TestMounts.unmount(mount)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let options = try common(directory, journal: mount + "/journal.sqlite")
        #expect(try runTartil(["bookmark", "1:1"] + options, home: directory).status == 0)
        #expect(try runTartil(["prefetch", "112", "--reciter", "fixture"] + options, home: directory).status == 0)
        // Fill the file system, then free 40 KiB: room to open the journal (its -shm), none for a transaction.
        var fillers = 0
        while FileManager.default.createFile(atPath: "\(mount)/fill-\(fillers)", contents: Data(repeating: 1, count: 4096)) { fillers += 1 }
        try? FileManager.default.removeItem(atPath: "\(mount)/fill-\(fillers)")
        for index in 0..<10 { try FileManager.default.removeItem(atPath: "\(mount)/fill-\(index)") }
        let play = try runTartil(["play", "112", "--reciter", "fixture", "--output", "null", "--events"] + options, home: directory)
        #expect(play.status == 1, "\(play.stderr)")
        #expect(play.stdout.contains("{\"event\":\"end\",\"state\":\"finished\"}"), "playback must go on: \(play.stdout)")
        #expect(play.stderr.components(separatedBy: "disk is full").count == 2, "reported once: \(play.stderr)")
        #expect(play.stderr.contains("could not be saved to the journal"))
        // bookmark on the full disk still exits 1.
        let bookmark = try runTartil(["bookmark", "2:2"] + options, home: directory)
        #expect(bookmark.status == 1, "\(bookmark.stderr)")
    }
}
