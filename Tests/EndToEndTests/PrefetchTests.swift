import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCore

/// Plain HTTP or HTTPS (under the test CA): the download tests run over both.
enum Scheme: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http, https
    var testDescription: String { rawValue }
}

/// Servers, a table and mirrors files shared by the download tests: nginx and the fault-injecting server both
/// serve Tests/Fixtures, where `fixture/` holds a fictional reciter's surahs 1 and 112; each also over HTTPS
/// under the test CA (nginx with HTTP/2, the fault server with HTTP/1.1).
final class DownloadEnvironment: Sendable {
    static let shared = DownloadEnvironment()

    let nginx: TestServer
    let faults: TestServer
    let nginxTLS: TestServer
    let faultsTLS: TestServer
    let tables: String
    let manifest: [AyahRef: ManifestRow]

    private init() {
        nginx = try! TestServer.nginx(root: TestPaths.fixtures)
        faults = try! TestServer.faults(root: TestPaths.fixtures)
        nginxTLS = try! TestServer.nginx(root: TestPaths.fixtures, tls: true)
        faultsTLS = try! TestServer.faults(root: TestPaths.fixtures, tls: true)
        tables = TestPaths.makeTemporaryDirectory()
        let build = try! runTartil(["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "-o", tables + "/fixture.tsv"])
        precondition(build.status == 0, build.stderr)
        var rows: [AyahRef: ManifestRow] = [:]
        for row in try! ManifestRow.read(TestPaths.fixtures + "/fixture") where row.ayah > 0 {
            rows[try! AyahRef(row.surah, row.ayah)] = row
        }
        manifest = rows
    }

    var clean: String { clean(.http) }
    func clean(_ scheme: Scheme) -> String { (scheme == .https ? nginxTLS : nginx).base + "/fixture/{surah3}{ayah3}.mp3" }
    func fault(_ name: String, _ scheme: Scheme = .http) -> String {
        (scheme == .https ? faultsTLS : faults).base + "/\(name)/fixture/{surah3}{ayah3}.mp3"
    }

    /// A mirrors.json with the pinned reciter `fixture` and the unpinned `loose`, both on `urls`.
    func mirrorsFile(_ urls: [String], in directory: String) throws -> String {
        let mirrors = urls.enumerated().map { #"{"name": "m\#($0.offset + 1)", "url": "\#($0.element)"}"# }.joined(separator: ", ")
        let text = """
            {"version": 1, "reciters": [
              {"id": "fixture", "name": "Fixture", "style": "murattal", "mirrors": [\(mirrors)]},
              {"id": "loose", "name": "Loose", "style": "murattal", "mirrors": [\(mirrors)]}]}
            """
        let path = directory + "/mirrors.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs tartil against `urls` with a cache in `directory`, trusting the test CA unless `trust` is false.
    func tartil(
        _ arguments: [String], urls: [String], in directory: String, trust: Bool = true, environment: [String: String] = [:]
    ) throws -> RunResult {
        let mirrors = try mirrorsFile(urls, in: directory)
        let quickStalls = arguments.first == "prefetch" ? ["--stall-timeout", "1"] : []
        let trusted = trust ? ["--ca-bundle", TestServer.testAuthorityCertificate] : []
        return try runTartil(
            arguments + ["--mirrors", mirrors, "--tables", tables, "--cache-dir", directory + "/cache"] + quickStalls + trusted,
            environment: environment, home: directory)
    }

    /// Every `.mp3` under the cache folder of `reciter` is the right file; returns their ayat.
    func verifiedFiles(in directory: String, reciter: String = "fixture") throws -> Set<AyahRef> {
        let folder = directory + "/cache/\(reciter)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var ayat: Set<AyahRef> = []
        for name in names where name.hasSuffix(".mp3") && !name.hasPrefix(".") {
            let ayah = try AyahRef(Int(name.prefix(3))!, Int(name.dropFirst(3).prefix(3))!)
            let row = try #require(manifest[ayah])
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            #expect(data.count == row.bytes, "\(name) has the wrong size")
            #expect(sha256(folder + "/" + name) == row.sha256, "\(name) has the wrong bytes")
            ayat.insert(ayah)
        }
        return ayat
    }

    /// Temporary `.part` files left in the reciter's folder.
    func partialFiles(in directory: String, reciter: String = "fixture") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/cache/\(reciter)")) ?? []).filter { $0.hasSuffix(".part") }
    }
}

/// SHA-256 by the coreutils program, independent of tartil's own.
func sha256(_ path: String) -> String {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try? process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return String(output.prefix(64))
}

@Suite struct PrefetchTests {
    let environment = DownloadEnvironment.shared
    static let all: Set<String> = ["1:1", "1:2", "1:3", "1:4", "1:5", "1:6", "1:7", "112:1", "112:2", "112:3", "112:4"]

    /// Faults that leave a careful client without the file from that mirror.
    static let harmfulFaults = [
        "status-503", "status-503-retry", "status-404", "status-429-retry", "reset", "truncate", "bitflip", "html",
        "stall", "trickle", "oversize", "redirect-loop", "redirect-ftp",
        // Replies that are not HTTP, or whose header no client should take in (issue 23, items 12 and 19).
        "http09", "huge-header", "huge-status", "bad-status", "huge-range",
    ]
    /// Faults a careful client gets the right file through anyway.
    static let survivableFaults = ["reset-once", "flaky-2", "lying-length", "ignore-range", "huge-length"]

    /// Takes the locks another tartil process would hold while it downloads `ayat` (a byte each of
    /// `<cache>/.fixture.lock`, open file description locks, as tartil takes them), until the descriptor returned
    /// is closed.
    static func holdLocks(of ayat: [AyahRef], cache: String) throws -> Int32 {
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let descriptor = open(cache + "/.fixture.lock", O_RDWR | O_CREAT, 0o644)
        try #require(descriptor >= 0)
        for ayah in ayat {
            var range = flock()
            range.l_type = Int16(F_WRLCK)
            range.l_whence = Int16(SEEK_SET)
            range.l_start = off_t(ayah.surah * 1000 + ayah.ayah)
            range.l_len = 1
            let taken = withUnsafeMutablePointer(to: &range) { fcntl(descriptor, 37 /* F_OFD_SETLK */, $0) }
            try #require(taken == 0, "lock \(ayah): errno \(errno)")
        }
        return descriptor
    }

    /// A file another tartil process holds (its lock taken, as a prefetch stopped with Ctrl-Z keeps it) is waited
    /// for: after 2 s the prefetch says so once, goes on with the other files, and takes the file once the lock is
    /// let go; `--json` says it as a `waiting` event.
    @Test(arguments: [false, true])
    func aFileHeldByAnotherProcessIsSaidOnceAndTakenWhenLetGo(json: Bool) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let held = try AyahRef(112, 2)
        let lock = try Self.holdLocks(of: [held], cache: directory + "/cache")
        // Held for 6 s from here: tartil's first look at it (after its start-up, on a loaded machine) comes well
        // within the 4 s that leaves for the notice to be due.
        let release = Thread {
            Thread.sleep(forTimeInterval: 6)
            close(lock)
        }
        release.start()
        let started = Date()
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"] + (json ? ["--json"] : []), urls: [environment.clean], in: directory)
        let seconds = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(seconds >= 5.9, "took \(seconds) s: the lock was not waited for")
        #expect(try environment.verifiedFiles(in: directory).isSuperset(of: [try AyahRef(112, 1), held, try AyahRef(112, 3), try AyahRef(112, 4)]))
        let reason = "another tartil process is downloading it"
        if json {
            let events = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let named = events.map { "\($0["event"] as? String ?? "?") \($0["surah"] as? Int ?? 0):\($0["ayah"] as? Int ?? 0)" }
            #expect(named.filter { $0.hasPrefix("waiting") } == ["waiting 112:2"], "\(named)")
            #expect(events.first { $0["event"] as? String == "waiting" }?["reason"] as? String == reason)
            // The others were not held up: the held file is the last one stored, after the wait was said.
            let cached = named.filter { $0.hasPrefix("cached") }
            #expect(cached.last == "cached 112:2" && named.firstIndex(of: "waiting 112:2")! < named.firstIndex(of: "cached 112:2")!, "\(named)")
        } else {
            let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("waiting for") }
            #expect(lines.count == 1 && lines.first?.hasPrefix("waiting for 112:2: \(reason)") == true, "\(result.stderr)")
        }
    }

    /// `play` waiting for a file another process holds says so in its status (JSON and text) while it buffers.
    @Test func aPlayWaitingForAFileAnotherProcessHoldsSaysSo() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The basmala before 112:1 is 1:1's file; both are held, whichever the player waits for first.
        let lock = try Self.holdLocks(of: [try AyahRef(1, 1), try AyahRef(112, 1)], cache: directory + "/cache")
        var released = false
        defer { if !released { close(lock) } }
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = [
            "play", "112", "--reciter", "fixture", "--output", "null", "--mirrors", mirrors, "--tables", environment.tables,
            "--cache-dir", directory + "/cache",
        ]
        process.environment = isolatedEnvironment(home: directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var status = ""
        for _ in 0..<80 where !status.contains(#""buffering_held_elsewhere":true"#) {
            Thread.sleep(forTimeInterval: 0.1)
            status = try runTartil(["status", "--json"], home: directory).stdout
        }
        #expect(status.contains(#""state":"buffering""#) && status.contains(#""buffering_held_elsewhere":true"#), "\(status)")
        let text = try runTartil(["status"], home: directory)
        #expect(text.status == 0 && text.stdout.contains(" held by another tartil"), "\(text.stdout)")
        #expect(text.stdout.contains("1:1 held by another tartil") || text.stdout.contains("112:1 held by another tartil"), "names the file: \(text.stdout)")
        // Let go of: the player takes the files itself, and no longer says another process has them.
        close(lock)
        released = true
        for _ in 0..<80 where status.contains(#""buffering_held_elsewhere":true"#) {
            Thread.sleep(forTimeInterval: 0.1)
            status = try runTartil(["status", "--json"], home: directory).stdout
        }
        #expect(!status.contains(#""buffering_held_elsewhere":true"#), "\(status)")
        if process.isRunning {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            #expect(process.terminationStatus == 130 || process.terminationStatus == 0)
        } else {
            #expect(process.terminationStatus == 0)
        }
    }

    @Test func cleanMirrorDownloadsEverythingVerified() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(["prefetch", "1", "112", "--reciter", "fixture", "--json"], urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(lines.count == 12)
        #expect(lines.dropLast().allSatisfy { $0["event"] as? String == "cached" })
        let summary = try #require(lines.last)
        #expect(summary["event"] as? String == "summary")
        #expect(summary["requested"] as? Int == 11)
        #expect(summary["downloaded"] as? Int == 11)
        #expect(summary["already_cached"] as? Int == 0)
        #expect((summary["failed"] as? [Any])?.isEmpty == true)
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == Self.all)

        let again = try environment.tartil(["prefetch", "1", "112", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(again.status == 0)
        #expect(again.stdout.contains("11 requested: 0 downloaded, 11 already cached, 0 failed"))
    }

    @Test(arguments: Scheme.allCases, harmfulFaults + survivableFaults)
    func faultWithACleanSecondMirrorEndsVerified(scheme: Scheme, fault: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["prefetch", "1", "112", "--reciter", "fixture"], urls: [environment.fault(fault, scheme), environment.clean(scheme)], in: directory)
        #expect(result.status == 0, "\(fault): \(result.stderr)")
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == Self.all, "\(fault)")
        #expect(environment.partialFiles(in: directory).isEmpty)
    }

    @Test(arguments: Scheme.allCases, harmfulFaults)
    func faultAloneEndsInAClearFailureAndNoFile(scheme: Scheme, fault: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture", "--retries", "1", "--json"], urls: [environment.fault(fault, scheme)], in: directory)
        #expect(result.status == 1, "\(fault)")
        #expect(result.stderr.contains("Error: 5 of 5 files could not be downloaded"), "\(fault): \(result.stderr)")
        let summary = try #require(result.stdout.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        let failed = try #require(object["failed"] as? [[String: Any]])
        #expect(failed.count == 5)  // 112:1-4 and the basmala's 1:1
        #expect(failed.allSatisfy { ($0["reason"] as? String)?.hasPrefix("mirror 1: ") == true })
        #expect(try environment.verifiedFiles(in: directory).isEmpty, "\(fault) left a file")
        #expect(environment.partialFiles(in: directory).isEmpty, "\(fault) left a partial file")
    }

    @Test(arguments: Scheme.allCases, survivableFaults)
    func survivableFaultAloneStillEndsVerified(scheme: Scheme, fault: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(["prefetch", "112", "--reciter", "fixture"], urls: [environment.fault(fault, scheme)], in: directory)
        #expect(result.status == 0, "\(fault): \(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 5)  // 112:1-4 and the basmala's 1:1
    }

    @Test(arguments: Scheme.allCases)
    func failureReasonsNameTheProblem(scheme: Scheme) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (fault, reason) in [
            ("status-404", "HTTP 404"), ("bitflip", "sha256"), ("oversize", "oversized body"),
            ("redirect-loop", "redirect loop"), ("redirect-ftp", "not http or https"), ("status-503", "HTTP 503"),
            // What happened, not libcurl's "Out of memory" or a redirect that never was.
            ("http09", "not an HTTP response (Received HTTP/0.9 when not allowed)"), ("huge-header", "header too large"),
            ("huge-status", "not an HTTP response"), ("bad-status", "not an HTTP response"), ("huge-range", "unreadable Content-Range"),
        ] {
            let result = try environment.tartil(
                ["prefetch", "112:1", "--reciter", "fixture", "--retries", "0"], urls: [environment.fault(fault, scheme)], in: directory)
            #expect(result.stderr.contains("failed 112:1: mirror 1: ") && result.stderr.contains(reason), "\(fault): \(result.stderr)")
        }
    }

    @Test func unpinnedFilesMustBeAudioAndAreRememberedOnceVerified() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let html = try environment.tartil(["prefetch", "112:1", "--reciter", "loose", "--retries", "0"], urls: [environment.fault("html")], in: directory)
        #expect(html.status == 1)
        #expect(html.stderr.contains("not one whole MPEG audio stream"), "\(html.stderr)")
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").isEmpty)

        let good = try environment.tartil(["prefetch", "112:1", "--reciter", "loose"], urls: [environment.clean], in: directory)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").count == 2)  // with the basmala's 1:1
        // Its hash is now recorded: a flipped bit on disk is caught.
        let path = directory + "/cache/loose/112001.mp3"
        try flipBit(in: path)
        let verify = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("removed loose/112001.mp3: sha256"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Links put inside the cache are never followed: a link at the partial file's name is removed and the
    /// download lands in the cache, a link at a cached file's name is refused by prefetch and removed (the link
    /// only) by verify, and a linked reciter folder is refused; the files they point at are untouched.
    /// A cache index that cannot be opened stops a prefetch before anything is downloaded, not at the first commit
    /// after every file came: the download threads open the index as they start.
    @Test func anIndexThatCannotBeOpenedFailsBeforeAnyDownload() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.faults(root: TestPaths.fixtures)
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        try Data(String(repeating: "not an index ", count: 400).utf8).write(to: URL(fileURLWithPath: directory + "/cache/index.sqlite"))
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "fixture"], urls: [server.base + "/ok/fixture/{surah3}{ayah3}.mp3"], in: directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("index"), "\(result.stderr)")
        #expect(server.requestLog.isEmpty, "\(server.requestLog)")
    }

    @Test func linksInsideTheCacheAreNeverFollowed() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outside = directory + "/outside.mp3"
        let original = Data("someone's file".utf8)
        try original.write(to: URL(fileURLWithPath: outside))
        try FileManager.default.createDirectory(atPath: directory + "/cache/fixture", withIntermediateDirectories: true)
        #expect(symlink(outside, directory + "/cache/fixture/.112001.mp3.part") == 0)
        let prefetch = try environment.tartil(["prefetch", "112:1", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == original)
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["1:1", "112:1"])  // with its basmala
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/cache/fixture/112001.mp3")) == nil)

        #expect(symlink(outside, directory + "/cache/fixture/112002.mp3") == 0)
        let refused = try environment.tartil(["prefetch", "112:2", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("112002.mp3 is a symbolic link"), "\(refused.stderr)")
        let verify = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("removed fixture/112002.mp3: a symbolic link"), "\(verify.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == original)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/cache/fixture/112002.mp3")) == nil)

        let elsewhere = directory + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        #expect(symlink(elsewhere, directory + "/cache/loose") == 0)
        let linkedFolder = try environment.tartil(["prefetch", "112:1", "--reciter", "loose"], urls: [environment.clean], in: directory)
        #expect(linkedFolder.status == 1)
        #expect(linkedFolder.stderr.contains("/cache/loose is a symbolic link"), "\(linkedFolder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    // MARK: - Cross-checking unpinned files

    func summary(_ result: RunResult) throws -> [String: Any] {
        let line = try #require(result.stdout.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// A mirror that serves another ayah's file, flips a bit, changes a byte early in the file (before its last
    /// 16 KiB: 1:5 is 28 KB) or appends bytes is outvoted by two that agree on the whole file: the unpinned files
    /// come from them, right, and are marked cross-checked.
    @Test(arguments: Scheme.allCases, ["other-ayah", "bitflip", "early-change", "append"])
    func aWrongMirrorOfAnUnpinnedReciterIsOutvoted(scheme: Scheme, fault: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["prefetch", "112", "1:5", "--reciter", "loose", "--json"],
            urls: [environment.fault(fault, scheme), environment.clean(scheme), environment.fault("ok", scheme)], in: directory)
        #expect(result.status == 0, "\(fault): \(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").count == 6, "\(fault)")  // with the basmala's 1:1
        let summary = try summary(result)
        #expect(summary["cross_checked"] as? Int == 6, "\(summary)")
        #expect((summary["disputed"] as? [Any])?.isEmpty == true)
        let ls = try environment.tartil(["cache", "ls", "--json"], urls: [environment.clean], in: directory)
        let list = try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]]
        #expect(list?.first?["cross_checked"] as? Int == 6, "\(ls.stdout)")
    }

    /// Two mirrors that serve different whole files (another ayah's, or one byte changed before the last 16 KiB)
    /// cannot be told apart: nothing is kept at the files' names, they fail (exit 1) with a warning, do not play
    /// (the message names both mirrors and the command), `cache ls` and `cache verify` (exit 1) list them with
    /// their copies kept aside, and `cache choose` settles one.
    @Test(arguments: Scheme.allCases, [("other-ayah", "112", 5), ("early-change", "1:5", 1)])
    func mirrorsThatDisagreeWithNoMajorityDisputeTheFile(scheme: Scheme, fault: (String, String, Int)) throws {
        let (name, reference, count) = fault
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let urls = [environment.fault(name, scheme), environment.clean(scheme)]
        let result = try environment.tartil(["prefetch", reference, "--reciter", "loose", "--json"], urls: urls, in: directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("warning: the mirrors of loose are not byte-identical"), "\(result.stderr)")
        #expect((try summary(result)["disputed"] as? [Any])?.count == count)
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").isEmpty)
        let first = reference == "112" ? "112:1" : "1:5"
        let play = try environment.tartil(["play", first, "--reciter", "loose", "--output", "null"], urls: urls, in: directory)
        // 112:1's play starts with the basmala (1:1), which the prefetch fetched with the surah and the mirrors
        // dispute too: it is named first.
        let named = reference == "112" ? "1:1" : first
        #expect(play.status != 0)
        #expect(play.stderr.contains("\(named) is disputed") && play.stderr.contains("m1: ") && play.stderr.contains("m2: "), "\(play.stderr)")
        #expect(play.stderr.contains("tartil cache choose \(named) --reciter loose --mirror NAME"), "\(play.stderr)")
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").isEmpty)
        let disputed = count  // for 112: 112:1-4 and the basmala's 1:1
        let ls = try environment.tartil(["cache", "ls"], urls: urls, in: directory)
        #expect(ls.stdout.contains("unpinned: \(disputed) disputed"), "\(ls.stdout)")
        #expect(ls.stdout.contains("\(first) is disputed"), "\(ls.stdout)")
        let verify = try environment.tartil(["cache", "verify"], urls: urls, in: directory)
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("disputed loose \(first) is disputed"), "\(verify.stderr)")
        #expect(verify.stderr.contains("the copy from m1: "), "\(verify.stderr)")
        let json = try environment.tartil(["cache", "verify", "--json"], urls: urls, in: directory)
        #expect((try summary(json)["disputed"] as? [Any])?.count == disputed, "\(json.stdout)")
        // Choosing: an unknown mirror is a usage error; m2's copy (the right one) becomes the file.
        let wrong = try environment.tartil(["cache", "choose", first, "--reciter", "loose", "--mirror", "m9"], urls: urls, in: directory)
        #expect(wrong.status == 64, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("the copies are from: m1, m2"), "\(wrong.stderr)")
        let chosen = try environment.tartil(["cache", "choose", first, "--reciter", "loose", "--mirror", "m2"], urls: urls, in: directory)
        #expect(chosen.status == 0, "\(chosen.stderr)")
        if reference == "112" {
            let basmala = try environment.tartil(["cache", "choose", "1:1", "--reciter", "loose", "--mirror", "m2"], urls: urls, in: directory)
            #expect(basmala.status == 0, "\(basmala.stderr)")
        }
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").count == (reference == "112" ? 2 : 1))
        let played = try environment.tartil(["play", first, "--reciter", "loose", "--output", "null"], urls: urls, in: directory)
        #expect(played.status == 0, "\(played.stderr)")
        let again = try environment.tartil(["cache", "choose", first, "--reciter", "loose", "--mirror", "m2"], urls: urls, in: directory)
        #expect(again.status == 64 && again.stderr.contains("is not disputed"), "\(again.stderr)")
    }

    /// Over two mirrors, one of them wrong in any of the ways tried (either one first), nothing wrong is kept at
    /// a final name and nothing wrong plays: every ayah asked for is the right file (cross-checked, or
    /// single-source when the wrong copy was not even MPEG audio) or disputed, with no file at its name.
    @Test(arguments: Scheme.allCases, ["other-ayah", "bitflip", "early-change", "append"])
    func overTwoMirrorsNothingWrongIsKept(scheme: Scheme, fault: String) throws {
        for wrongFirst in [true, false] {
            let directory = TestPaths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let pair = [environment.fault(fault, scheme), environment.clean(scheme)]
            let urls = wrongFirst ? pair : pair.reversed()
            let result = try environment.tartil(["prefetch", "112", "1", "--reciter", "loose", "--json"], urls: urls, in: directory)
            let summary = try summary(result)
            let disputed = Set(((summary["disputed"] as? [[String: Any]]) ?? []).map { try! AyahRef($0["surah"] as! Int, $0["ayah"] as! Int) })
            let kept = try environment.verifiedFiles(in: directory, reciter: "loose")  // each one checked against the manifest
            #expect(kept.isDisjoint(with: disputed) && kept.count + disputed.count == 11, "\(fault), wrong first \(wrongFirst): \(kept.sorted()) \(disputed.sorted())")
            #expect(result.status == (disputed.isEmpty ? 0 : 1), "\(result.stderr)")
            if fault == "other-ayah" || fault == "early-change" { #expect(!disputed.isEmpty, "\(fault)") }
            if let playable = kept.filter({ $0.surah == 1 }).sorted().last, kept.contains(try AyahRef(1, 1)) {
                let play = try environment.tartil(["play", playable.description, "--reciter", "loose", "--output", "null"], urls: urls, in: directory)
                #expect(play.status == 0, "\(play.stderr)")
            }
        }
    }

    /// A mirror whose file is not one whole MPEG audio stream (bytes appended) is refused before anything is
    /// kept: with one other mirror, that mirror's copy is kept, single-source (the refused one is no answer).
    @Test(arguments: Scheme.allCases)
    func aFileWithBytesAppendedIsRefused(scheme: Scheme) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["prefetch", "112", "--reciter", "loose", "--json"], urls: [environment.fault("append", scheme), environment.clean(scheme)],
            in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect((try summary(result)["single_source"] as? [Any])?.count == 5)  // 112:1-4 and the basmala's 1:1
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").count == 5)
    }

    /// A file only one mirror could serve (the reciter's only mirror, or the others failing) is single-source,
    /// and the first play of it says so; the next prefetch with the other mirror back compares it again.
    @Test func aFileOnlyOneMirrorServedIsSingleSource() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["prefetch", "112:3", "--reciter", "loose", "--json"], urls: [environment.clean, environment.fault("status-404")], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect((try summary(result)["single_source"] as? [Any])?.count == 1)
        let alone = try environment.tartil(["prefetch", "112:2", "--reciter", "loose"], urls: [environment.clean], in: directory)
        #expect(alone.stdout.contains("unpinned: 1 single-source"), "\(alone.stdout)")
        let verify = try environment.tartil(["cache", "verify", "--json"], urls: [environment.clean], in: directory)
        #expect((try summary(verify)["single_source"] as? [Any])?.count == 2, "\(verify.stdout)")
        let ls = try environment.tartil(["cache", "ls"], urls: [environment.clean], in: directory)
        #expect(ls.stdout.contains("unpinned: 2 single-source (112:2, 112:3)"), "\(ls.stdout)")
        let play = try environment.tartil(["play", "112:2-3", "--reciter", "loose", "--output", "null"], urls: [environment.clean], in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stderr.contains("2 ayat (112:2, 112:3) single-source: only one mirror could serve them so far"), "\(play.stderr)")
        // The other mirror is back: the next prefetch compares them again, and they are cross-checked.
        let recheck = try environment.tartil(
            ["prefetch", "112:2-3", "--reciter", "loose", "--json"], urls: [environment.clean, environment.fault("ok")], in: directory)
        #expect(recheck.status == 0, "\(recheck.stderr)")
        #expect(try summary(recheck)["cross_checked"] as? Int == 2, "\(recheck.stdout)")
        let after = try environment.tartil(["cache", "ls"], urls: [environment.clean], in: directory)
        #expect(after.stdout.contains("unpinned: 2 cross-checked"), "\(after.stdout)")
        #expect(!after.stdout.contains("single-source"), "\(after.stdout)")
        // Pinned files carry no mark.
        _ = try environment.tartil(["prefetch", "112:1", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        let pinned = try environment.tartil(["cache", "ls", "--reciter", "fixture", "--json"], urls: [environment.clean], in: directory)
        #expect(pinned.stdout.contains(#""single_source":[]"#), "\(pinned.stdout)")
    }

    /// An https mirror's redirect to http (a downgrade) is refused: the plain server is never asked.
    @Test func anHTTPSMirrorsRedirectToHTTPIsRefused() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plain = try TestServer.faults(root: TestPaths.fixtures)
        defer { plain.stop() }
        let result = try environment.tartil(
            ["prefetch", "112:1", "--reciter", "fixture", "--json"], urls: [environment.fault("redirect-http-\(plain.port)", .https)], in: directory)
        #expect(result.status == 1)
        #expect(result.stdout.contains("from https to http (a downgrade)"), "\(result.stdout)")
        #expect(plain.requestLog.isEmpty, "\(plain.requestLog)")
        #expect(try environment.verifiedFiles(in: directory).isEmpty)
    }

    /// Two prefetches of the same unpinned surah at once, into one cache, fetch each file once: counted at the
    /// server, whose log has one download and one cross-check probe per file.
    @Test func twoPrefetchesAtOnceFetchEachUnpinnedFileOnce() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer.faults(root: TestPaths.fixtures)
        defer { server.stop() }
        let urls = [server.base + "/slow/fixture/{surah3}{ayah3}.mp3", server.base + "/ok/fixture/{surah3}{ayah3}.mp3"]
        _ = try environment.mirrorsFile(urls, in: directory)
        let results = Mutex<[RunResult]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let result = try! environment.tartil(["prefetch", "112", "1", "--reciter", "loose"], urls: urls, in: directory)
            results.withLock { $0.append(result) }
        }
        for result in results.withLock({ $0 }) { #expect(result.status == 0, "\(result.stderr)") }
        #expect(try environment.verifiedFiles(in: directory, reciter: "loose").count == 11)
        let requests = server.requestLog.map { $0.split(separator: " ")[2] }
        var counts: [Substring: Int] = [:]
        for path in requests { counts[path, default: 0] += 1 }
        #expect(counts.count == 22 && counts.values.allSatisfy { $0 == 1 }, "\(counts.sorted { $0.key < $1.key })")
    }

    @Test(arguments: Scheme.allCases)
    func aPartialFileIsResumedOrRestartedAsTheServerAllows(scheme: Scheme) throws {
        for (fault, expectResumed) in [("ok", true), ("ignore-range", false)] {
            let directory = TestPaths.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // An earlier run left the first half of 112:2 (not an ayah 1: no basmala comes with it).
            let source = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/fixture/112002.mp3"))
            try FileManager.default.createDirectory(atPath: directory + "/cache/fixture", withIntermediateDirectories: true)
            try source.prefix(source.count / 2).write(to: URL(fileURLWithPath: directory + "/cache/fixture/.112002.mp3.part"))
            let result = try environment.tartil(
                ["prefetch", "112:2", "--reciter", "fixture", "--json"], urls: [environment.fault(fault, scheme)], in: directory)
            #expect(result.status == 0, "\(fault): \(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last)
            let summary = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let bytes = try #require(summary?["bytes"] as? Int)
            #expect(expectResumed ? bytes == source.count - source.count / 2 : bytes == source.count, "\(fault): \(bytes)")
            #expect(try environment.verifiedFiles(in: directory).count == 1)
        }
    }

    /// A run killed after the last byte arrived but before the commit leaves a complete partial file: the next
    /// run's range request gets 416 and the file is committed after its hash is checked, without a new download.
    @Test(arguments: Scheme.allCases)
    func aCompletePartialFileIsCommittedWithoutDownloadingAgain(scheme: Scheme) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/cache/fixture", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/112002.mp3", toPath: directory + "/cache/fixture/.112002.mp3.part")
        let result = try environment.tartil(["prefetch", "112:2", "--reciter", "fixture", "--json"], urls: [environment.clean(scheme)], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""bytes":0"#), "\(result.stdout)")
        #expect(try environment.verifiedFiles(in: directory).count == 1)
    }

    @Test func verifyCatchesAFlippedBitAndRepairBringsItBack() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try environment.tartil(["prefetch", "1", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        try flipBit(in: directory + "/cache/fixture/001003.mp3")
        let verify = try environment.tartil(["cache", "verify", "--repair", "--json"], urls: [environment.clean], in: directory)
        #expect(verify.status == 0, "\(verify.stderr)")
        let line = try #require(verify.stdout.split(separator: "\n").last)
        let report = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(report?["checked"] as? Int == 7)
        #expect((report?["removed"] as? [Any])?.count == 1)
        #expect(report?["repaired"] as? Int == 1)
        #expect(try environment.verifiedFiles(in: directory).count == 7)
        let clean = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(clean.status == 0)
        #expect(clean.stdout.contains("7 files checked: 7 good, 0 bad"))
    }

    /// A verification without --repair removes a bad file and says how to get it back; the next `--repair`
    /// downloads it again (it is noted for it), and a verification after that finds everything good.
    @Test func whatAPlainVerifyRemovesTheNextRepairBringsBack() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try environment.tartil(["prefetch", "1", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        try flipBit(in: directory + "/cache/fixture/001003.mp3")
        let plain = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(plain.status == 1 && plain.stderr.contains("1 bad file(s) are not in the cache any more: `tartil cache verify --repair` downloads them again"), "\(plain.stderr)")
        #expect(try environment.verifiedFiles(in: directory).count == 6)
        let repair = try environment.tartil(["cache", "verify", "--repair", "--json"], urls: [environment.clean], in: directory)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains(#""repaired":1"#), "\(repair.stdout)")
        #expect(try environment.verifiedFiles(in: directory).count == 7)
        let clean = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(clean.status == 0 && clean.stdout.contains("7 files checked: 7 good, 0 bad"), "\(clean.stdout)")
    }

    /// Chaos: `kill -9` a prefetch at twelve moments drawn from a fixed seed (so a failure can be replayed), on
    /// pinned and unpinned reciters. After every kill, every `SSSAAA.mp3` is the right file; at the end `cache
    /// verify` passes and a rerun completes.
    @Test func killedAtRandomMomentsLeavesNothingUnverifiedAndTheRerunCompletes() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.fault("slow"), environment.clean], in: directory)
        var random = SeededRandom(seed: 0x7a27_11)
        for kill in 0..<12 {
            let reciter = kill % 3 == 2 ? "loose" : "fixture"
            let delay = useconds_t(50_000 + random.next() % 850_000)
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: TestPaths.executable)
            process.arguments = ["prefetch", "1", "112", "--reciter", reciter, "--jobs", String(1 + random.next() % 6), "--mirrors", mirrors,
                                 "--tables", environment.tables, "--cache-dir", directory + "/cache"]
            process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "PATH": "/usr/bin:/bin"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(delay)
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // Every visible file is right (checked against the fixtures' manifest, for both reciters).
            _ = try environment.verifiedFiles(in: directory)
            _ = try environment.verifiedFiles(in: directory, reciter: "loose")
        }
        let verify = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        for reciter in ["fixture", "loose"] {
            let rerun = try environment.tartil(["prefetch", "1", "112", "--reciter", reciter], urls: [environment.fault("slow")], in: directory)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(try environment.verifiedFiles(in: directory, reciter: reciter).count == 11)
            #expect(environment.partialFiles(in: directory, reciter: reciter).isEmpty)
        }
        let again = try environment.tartil(["cache", "verify"], urls: [environment.clean], in: directory)
        #expect(again.status == 0 && again.stdout.contains("22 files checked: 22 good, 0 bad"), "\(again.stdout) \(again.stderr)")
    }

    @Test func interruptStopsPromptlyAndTheNextRunResumes() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.fault("slow")], in: directory)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = ["prefetch", "1", "112", "--reciter", "fixture", "--jobs", "2", "--mirrors", mirrors,
                             "--tables", environment.tables, "--cache-dir", directory + "/cache"]
        process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "PATH": "/usr/bin:/bin"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        usleep(300_000)
        let interrupted = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(interrupted) < 2, "Ctrl-C must stop promptly")
        #expect(process.terminationStatus == 130)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("Interrupted: prefetch stopped"), "\(message)")
        let partial = try environment.verifiedFiles(in: directory)
        #expect(partial.count < 11)
        let rerun = try environment.tartil(["prefetch", "1", "112", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(rerun.status == 0)
        #expect(try environment.verifiedFiles(in: directory).count == 11)
    }

    @Test func twoProcessesSharingACacheBothSucceed() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.fault("slow")], in: directory)
        let processes = (0..<2).map { _ in
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: TestPaths.executable)
            process.arguments = ["prefetch", "1", "112", "--reciter", "fixture", "--mirrors", mirrors,
                                 "--tables", environment.tables, "--cache-dir", directory + "/cache"]
            process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "PATH": "/usr/bin:/bin"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }
        for process in processes { try process.run() }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        #expect(try environment.verifiedFiles(in: directory).count == 11)
        #expect(environment.partialFiles(in: directory).isEmpty)
    }

    @Test func cacheCommandsReportPinAndImport() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try environment.tartil(["prefetch", "112", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        let ls = try environment.tartil(["cache", "ls", "--json"], urls: [environment.clean], in: directory)
        let list = try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]]
        #expect(list?.first?["files"] as? Int == 5)  // with the basmala's 1:1
        #expect(list?.first?["complete_surahs"] as? [Int] == [112])
        let du = try environment.tartil(["cache", "du"], urls: [environment.clean], in: directory)
        #expect(du.stdout.contains("fixture") && du.stdout.contains("5 files"))

        // Import surah 1 from the fixture folder (surah 112 is already there), plus one wrong file.
        let folder = directory + "/import"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["001001.mp3", "001002.mp3", "112001.mp3"] {
            try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/" + name, toPath: folder + "/" + name)
        }
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/001004.mp3", toPath: folder + "/001003.mp3")
        let imported = try environment.tartil(["cache", "import", folder, "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(imported.status == 1)
        #expect(imported.stdout.contains("1 imported, 2 already cached, 1 rejected"))
        #expect(imported.stderr.contains("rejected 001003.mp3"))
        #expect(try environment.verifiedFiles(in: directory).count == 6)

        // Pinned files survive a budget that evicts everything else.
        let pin = try environment.tartil(["cache", "pin", "112:1", "--reciter", "fixture"], urls: [environment.clean], in: directory)
        #expect(pin.status == 0)
        let squeeze = try environment.tartil(["prefetch", "1:1", "--reciter", "fixture", "--max-size", "1"], urls: [environment.clean], in: directory)
        #expect(squeeze.status == 0, "\(squeeze.stderr)")
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["1:1", "112:1"])
    }

    @Test(arguments: [
        (["prefetch", "1", "--reciter", "fixture", "--jobs", "0"], "Error: --jobs takes a whole number from 1 to 64, not '0'"),
        (["prefetch", "1", "--reciter", "fixture", "--max-size", "lots"], "Error: 'lots' is not a size"),
        (["prefetch", "2:300", "--reciter", "fixture"], "Error: '2:300'"),
        (["cache", "import", "/nonexistent", "--reciter", "fixture"], "Error: /nonexistent is not a folder"),
        (["cache", "ls", "--reciter", "Bad"], "Error: no reciter 'Bad' in mirrors.json"),  // neither a reciter of mirrors.json nor a folder in the cache
    ])
    func badInputChangesNothing(arguments: [String], message: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(arguments, urls: [environment.clean], in: directory)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        #expect(try environment.verifiedFiles(in: directory).isEmpty)
    }
}

/// Flips one bit in the middle of a file.
func flipBit(in path: String) throws {
    var data = try Data(contentsOf: URL(fileURLWithPath: path))
    data[data.count / 2] ^= 0x01
    try data.write(to: URL(fileURLWithPath: path))
}
