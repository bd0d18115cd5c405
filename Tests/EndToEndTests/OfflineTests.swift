import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Offline means offline: what `prefetch` fetched plays with the mirror gone, `cache ls` calls complete only what
/// plays so, eviction keeps what pinned surahs need, and a play whose mirror is dead or stalled gives up (or
/// fails over) within a timeout instead of retrying for minutes.
@Suite(.serialized) struct OfflineTests {
    let environment = DownloadEnvironment.shared

    func cacheList(_ directory: String, urls: [String]) throws -> [String: Any] {
        let ls = try environment.tartil(["cache", "ls", "--json"], urls: urls, in: directory)
        #expect(ls.status == 0, "\(ls.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])
        return try #require(list.first)
    }

    /// `prefetch 112` fetches the basmala's 1:1 with it; with nginx stopped, `play 112` plays every ayah and
    /// its basmala from the cache, and `cache ls` says 112 is complete (surah 1, of which only 1:1 is there, is not).
    @Test func aPrefetchedSurahPlaysWithTheMirrorGone() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nginx = try TestServer.nginx(root: TestPaths.fixtures)
        let urls = [nginx.base + "/fixture/{surah3}{ayah3}.mp3"]
        let prefetch = try environment.tartil(["prefetch", "112", "--reciter", "fixture", "--json"], urls: urls, in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        let last = try #require(prefetch.stdout.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(summary["requested"] as? Int == 5)
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["1:1", "112:1", "112:2", "112:3", "112:4"])
        nginx.stop()

        let list = try cacheList(directory, urls: urls)
        #expect(list["complete_surahs"] as? [Int] == [112])
        let partial = try #require(list["partial_surahs"] as? [[String: Any]])
        #expect(partial.count == 1 && partial[0]["surah"] as? Int == 1 && partial[0]["cached"] as? Int == 1 && partial[0]["total"] as? Int == 7)
        let play = try environment.tartil(["play", "112", "--reciter", "fixture", "--output", "null", "--events"], urls: urls, in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains(#""kind":"basmala""#) && play.stdout.contains(#""surah":112,"ayah":4,"kind":"ayah""#))
        #expect(!play.stdout.contains(#""event":"error""#), "\(play.stdout)")
    }

    /// A surah whose ayat are cached but not its basmala is not complete (`cache ls` says the basmala is what is
    /// missing), and playing it offline names the basmala, not 112:1, as what could not be played.
    @Test func aSurahWithoutItsBasmalaIsNotCompleteAndItsPlayNamesTheBasmala() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = directory + "/import"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for ayah in 1...4 {
            try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/11200\(ayah).mp3", toPath: folder + "/11200\(ayah).mp3")
        }
        let gone = ["http://127.0.0.1:1/fixture/{surah3}{ayah3}.mp3"]
        let imported = try environment.tartil(["cache", "import", folder, "--reciter", "fixture"], urls: gone, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let list = try cacheList(directory, urls: gone)
        #expect(list["complete_surahs"] as? [Int] == [])
        let partial = try #require((list["partial_surahs"] as? [[String: Any]])?.first)
        #expect(partial["surah"] as? Int == 112 && partial["cached"] as? Int == 4 && partial["total"] as? Int == 5)
        #expect(partial["basmala_missing"] as? Bool == true)
        let text = try environment.tartil(["cache", "ls"], urls: gone, in: directory)
        #expect(text.stdout.contains("partly cached: 112 (4/5, without the basmala 1:1)"), "\(text.stdout)")

        let play = try environment.tartil(["play", "112", "--reciter", "fixture", "--output", "null"], urls: gone, in: directory)
        #expect(play.status == 1)
        #expect(play.stderr.contains("Error: the basmala (1:1) of surah 112 could not be played: mirror 1: cannot connect"), "\(play.stderr)")
        #expect(!play.stderr.contains("112:1 ("), "\(play.stderr)")
        // With the basmala off (config), the same cache plays the surah and calls it complete.
        try "basmala=off\n".write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        let off = ["TARTIL_CONFIG": directory + "/config"]
        let offList = try environment.tartil(["cache", "ls", "--json"], urls: gone, in: directory, environment: off)
        #expect(offList.stdout.contains(#""complete_surahs":[112]"#), "\(offList.stdout)")
        let offPlay = try environment.tartil(["play", "112", "--reciter", "fixture", "--output", "null"], urls: gone, in: directory, environment: off)
        #expect(offPlay.status == 0, "\(offPlay.stderr)")
    }

    /// Pinned surahs keep their basmala under a budget that evicts everything else, and play with the mirror
    /// gone; the file asked for stays too.
    @Test func evictionUnderASmallBudgetKeepsWhatPinnedSurahsNeed() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nginx = try TestServer.nginx(root: TestPaths.fixtures)
        let urls = [nginx.base + "/fixture/{surah3}{ayah3}.mp3"]
        let prefetch = try environment.tartil(["prefetch", "1", "112", "--reciter", "fixture"], urls: urls, in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        let pin = try environment.tartil(["cache", "pin", "112", "--reciter", "fixture"], urls: urls, in: directory)
        #expect(pin.status == 0, "\(pin.stderr)")
        // 1:7 is asked for and stays; of surah 1 only 1:1 stays besides, for the pinned 112.
        let squeeze = try environment.tartil(["prefetch", "1:7", "--reciter", "fixture", "--max-size", "1"], urls: urls, in: directory)
        #expect(squeeze.status == 0, "\(squeeze.stderr)")
        #expect(squeeze.stdout.contains("evicted 5 least-recently-used files"), "\(squeeze.stdout)")
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["1:1", "1:7", "112:1", "112:2", "112:3", "112:4"])
        nginx.stop()
        #expect(try cacheList(directory, urls: urls)["complete_surahs"] as? [Int] == [112])
        let play = try environment.tartil(["play", "112", "--reciter", "fixture", "--output", "null"], urls: urls, in: directory)
        #expect(play.status == 0, "\(play.stderr)")
    }

    /// The real recordings (when ../shared/real is present): several surahs of each pinned reciter prefetched from
    /// nginx, nginx stopped, and every one of them played to its end from the cache.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"), arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"])
    func realSurahsPrefetchedPlayOffline(reciter: String) throws {
        let real = try #require(TestPaths.sharedReal)
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nginx = try TestServer.nginx(root: real + "/audio")
        let mirrors = directory + "/mirrors.json"
        try """
            {"version": 1, "reciters": [{"id": "\(reciter)", "name": "Real", "style": "murattal",
              "mirrors": [{"name": "nginx", "url": "\(nginx.base)/\(reciter)/{surah3}{ayah3}.mp3"}]}]}
            """.write(toFile: mirrors, atomically: true, encoding: .utf8)
        let common = ["--mirrors", mirrors, "--tables", TestPaths.repository + "/reciter-tables", "--cache-dir", directory + "/cache", "--reciter", reciter]
        let surahs = [67, 103, 108, 112, 113, 114]
        let prefetch = try runTartil(["prefetch"] + surahs.map(String.init) + common, home: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        nginx.stop()
        let ls = try runTartil(["cache", "ls", "--json"] + common, home: directory)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])
        #expect(list.first?["complete_surahs"] as? [Int] == surahs, "\(ls.stdout)")
        for surah in surahs {
            let play = try runTartil(["play", String(surah), "--output", "null", "--events"] + common, home: directory)
            #expect(play.status == 0, "\(surah): \(play.stderr)")
            #expect(play.stdout.hasSuffix(#"{"event":"end","state":"finished"}"# + "\n"), "\(surah)")
        }
    }

    /// mirrors.json with two reciters whose names both start "Alpha" (`alpha-one`, "Alpha"; `alpha-two`, "Alpha
    /// Two"), at a mirror nothing listens on.
    static func writeTwoAlphas(to path: String) throws {
        try """
            {"version": 1, "reciters": [{"id": "alpha-one", "name": "Alpha", "style": "murattal", "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]},
              {"id": "alpha-two", "name": "Alpha Two", "style": "murattal", "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A cache command's `--reciter` names a reciter of mirrors.json (by id or name, as `play` takes it) or one
    /// with a folder in the cache; anything else is a usage error, never reported as an empty cache.
    @Test func aCacheCommandRefusesAReciterThatIsNowhere() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeTwoAlphas(to: directory + "/mirrors.json")
        try FileManager.default.createDirectory(atPath: directory + "/cache/gone-reciter", withIntermediateDirectories: true)
        let common = ["--mirrors", directory + "/mirrors.json", "--cache-dir", directory + "/cache"]
        for command in [["cache", "ls"], ["cache", "du"], ["cache", "verify"]] {
            for (reciter, status, said) in [
                ("nobody", 64, "no reciter 'nobody'"), ("alpha", 64, "could be 2 reciters"), ("alpha-one", 0, ""), ("gone-reciter", 0, ""),
            ] {
                let result = try runTartil(command + ["--reciter", reciter] + common, home: directory)
                #expect(result.status == Int32(status) && (said.isEmpty || result.stderr.contains(said)), "\(command) --reciter \(reciter): \(result.stderr)")
            }
        }
    }

    /// `resume` takes `--reciter` as `positions` does (an id or name of mirrors.json, or a reciter the journal
    /// remembers): one nobody knows is a usage error, with a journal or before there is one.
    @Test func resumeRefusesAReciterThatIsNowhereAsPositionsDoes() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeTwoAlphas(to: directory + "/mirrors.json")
        let common = ["--mirrors", directory + "/mirrors.json", "--cache-dir", directory + "/cache", "--output", "null"]
        for journal in ["none", "bookmark"] {
            if journal == "bookmark" {
                let marked = try runTartil(["bookmark", "112:2", "--reciter", "alpha-one", "--mirrors", directory + "/mirrors.json"], home: directory)
                #expect(marked.status == 0, "\(marked.stderr)")
            }
            for (command, reciter, status, said) in [
                ("resume", "nobody", 64, "no reciter 'nobody'"), ("positions", "nobody", 64, "no reciter 'nobody'"),
                ("resume", "alpha", 64, "could be 2 reciters"), ("resume", "alpha-one", 1, "nothing to resume"),
            ] {
                let result = try runTartil([command, "--reciter", reciter] + (command == "resume" ? common : Array(common.prefix(2))), home: directory)
                #expect(result.status == Int32(status) && result.stderr.contains(said), "\(journal): \(command) --reciter \(reciter): \(result.stderr)")
            }
        }
    }

    // MARK: - Dead and stalled mirrors

    /// `play` with its only mirror stalled gives up within about one stall timeout (not a timeout per retry and
    /// per file), naming the basmala and the ayat; with a clean second mirror it fails over as fast and plays
    /// everything; with the mirror refusing connections it gives up at once.
    @Test(arguments: ["stall", "refuse", "stall-then-clean"])
    func aPlayWithADeadMirrorGivesUpOrFailsOverWithinATimeout(case name: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let urls: [String] = switch name {
        case "stall": [environment.fault("stall")]
        case "refuse": ["http://127.0.0.1:1/fixture/{surah3}{ayah3}.mp3"]
        default: [environment.fault("stall"), environment.clean]
        }
        let started = Date()
        let play = try environment.tartil(
            ["play", "112", "--reciter", "fixture", "--output", "null", "--stall-timeout", "2", "--connect-timeout", "2"], urls: urls, in: directory)
        let seconds = Date().timeIntervalSince(started)
        print("play 112 with mirror \(name): exit \(play.status) after \(String(format: "%.1f", seconds)) s")
        if name == "stall-then-clean" {
            #expect(play.status == 0, "\(play.stderr)")
            #expect(seconds < 8, "took \(seconds) s")
        } else {
            #expect(play.status == 1)
            #expect(seconds < (name == "stall" ? 8 : 4), "took \(seconds) s")
            #expect(play.stderr.contains("Error: the basmala (1:1) of surah 112 could not be played: mirror 1: "), "\(play.stderr)")
            #expect(play.stderr.contains("4 ayat could not be played: 112:1-4"), "\(play.stderr)")
        }
    }

    /// A pinned file whose bytes came wrong once is asked again of the same mirror, and arrives: a lone mirror
    /// that flips a bit on the first answer for each file serves a whole play and a whole prefetch. One that
    /// always does is asked twice per file, then given up (prefetch) with the hash mismatch named.
    @Test func wrongBytesAreRetriedOnceOnTheSameMirror() throws {
        let server = try TestServer.faults(root: TestPaths.fixtures)
        defer { server.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let once = [server.base + "/bitflip-once/fixture/{surah3}{ayah3}.mp3"]
        let play = try environment.tartil(["play", "112:2-3", "--reciter", "fixture", "--output", "null"], urls: once, in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        let prefetch = try environment.tartil(["prefetch", "1", "--reciter", "fixture", "--retries", "1"], urls: once, in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["1:1", "1:2", "1:3", "1:4", "1:5", "1:6", "1:7", "112:2", "112:3"])
        let always = try environment.tartil(
            ["prefetch", "112:4", "--reciter", "fixture", "--json"], urls: [server.base + "/bitflip/fixture/{surah3}{ayah3}.mp3"], in: directory)
        #expect(always.status == 1)
        #expect(always.stdout.contains("sha256"), "\(always.stdout)")
    }

    /// The timeouts are config keys too (checked when the file is read), and the options win over them.
    @Test func theTimeoutsAreConfigKeysAndOptions() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "stall-timeout=2\nconnect-timeout=3s\n".write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        let configured = ["TARTIL_CONFIG": directory + "/config"]
        let started = Date()
        let play = try environment.tartil(
            ["play", "112", "--reciter", "fixture", "--output", "null"], urls: [environment.fault("stall")], in: directory, environment: configured)
        let seconds = Date().timeIntervalSince(started)
        #expect(play.status == 1)
        #expect(seconds < 8, "the configured stall timeout was not used: \(seconds) s")
        try "stall-timeout=11m\n".write(toFile: directory + "/config", atomically: true, encoding: .utf8)
        let bad = try environment.tartil(["cache", "ls"], urls: [environment.clean], in: directory, environment: configured)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("config:1: stall-timeout takes a time from 1 s to 10 min"), "\(bad.stderr)")
        for (arguments, message) in [
            (["play", "112", "--reciter", "fixture", "--stall-timeout", "0"], "Error: --stall-timeout takes a time from 1 s to 10 min"),
            (["prefetch", "112", "--reciter", "fixture", "--connect-timeout", "6m"], "Error: --connect-timeout takes a time from 1 s to 5 min"),
            (["cache", "verify", "--repair", "--connect-timeout", "x"], "Error: --connect-timeout takes a time"),
        ] {
            let result = try environment.tartil(arguments, urls: [environment.clean], in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        }
    }

    // MARK: - cache import

    /// Entries that cannot be read are reported with why and passed over; the rest are imported; exit 1.
    @Test func importReportsUnreadableEntriesAndGoesOn() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = directory + "/import"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["112001.mp3", "112004.mp3"] {
            try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/" + name, toPath: folder + "/" + name)
        }
        try FileManager.default.createSymbolicLink(atPath: folder + "/112002.mp3", withDestinationPath: folder + "/nowhere.mp3")
        try FileManager.default.createDirectory(atPath: folder + "/112003.mp3", withIntermediateDirectories: true)
        #expect(mkfifo(folder + "/001001.mp3", 0o644) == 0)
        let started = Date()
        let imported = try environment.tartil(["cache", "import", folder, "--reciter", "fixture", "--json"], urls: [environment.clean], in: directory)
        #expect(Date().timeIntervalSince(started) < 20, "a pipe must not be waited on")
        #expect(imported.status == 1, "\(imported.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
        #expect(report["imported"] as? Int == 2)
        let rejected = try #require(report["rejected"] as? [[String: String]])
        let reasons = Dictionary(uniqueKeysWithValues: rejected.map { ($0["file"]!, $0["reason"]!) })
        #expect(reasons["112002.mp3"]?.contains("is a symbolic link to nothing") == true, "\(reasons)")
        #expect(reasons["112003.mp3"]?.contains("is a folder, not a file") == true, "\(reasons)")
        #expect(reasons["001001.mp3"]?.contains("is not a regular file") == true, "\(reasons)")
        #expect(Set(try environment.verifiedFiles(in: directory).map(\.description)) == ["112:1", "112:4"])
        #expect(imported.stderr.contains("Error: 3 files were not imported"), "\(imported.stderr)")
    }
}

/// A cache on a read-only file system plays (the access time is updated when it can be), and the commands that
/// only read work on a full disk: the cache's and the journal's. Needs root and mount(8) for tmpfs; skipped
/// elsewhere.
@Suite(.serialized, .enabled(if: MountedFileSystem.canMount, "needs to mount a tmpfs (root)"))
struct ReadOnlyAndFullDiskTests {
    let environment = DownloadEnvironment.shared
    /// Where the mirrors file goes: not on the file system under test.
    let scratch = TestPaths.makeTemporaryDirectory()

    func run(_ arguments: [String], cache: String, home: String, urls: [String] = ["http://127.0.0.1:1/fixture/{surah3}{ayah3}.mp3"]) throws -> RunResult {
        let mirrors = try environment.mirrorsFile(urls, in: scratch)
        return try runTartil(arguments + ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", cache], home: home)
    }

    /// The read-only commands every cache and journal must answer.
    static let readers: [[String]] = [
        ["cache", "ls"], ["cache", "du"], ["cache", "verify"], ["resolve", "112", "--reciter", "fixture"], ["positions"], ["journal", "stats"],
        ["journal", "check"], ["journal", "export"],
    ]

    @Test(arguments: [false, true])
    func aReadOnlyCachePlaysAndIsRead(withoutItsLog: Bool) throws {
        let home = TestPaths.makeTemporaryDirectory()
        let mount = try MountedFileSystem(size: "8m")
        defer {
            mount.unmount()
            try? FileManager.default.removeItem(atPath: home)
        }
        let cache = mount.path + "/cache"
        let imported = try run(["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", "fixture"], cache: cache, home: home)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try run(["play", "112:1", "--reciter", "fixture", "--output", "null"], cache: cache, home: home).status == 0)
        if withoutItsLog {
            // A cache whose index's log was folded in and removed (as SQLite does when the last connection that
            // does not keep it closes; or an index copied alone) reads as well.
            _ = try shell("python3 -c \"import sqlite3; c = sqlite3.connect('\(cache)/index.sqlite'); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()\"")
            #expect(!FileManager.default.fileExists(atPath: cache + "/index.sqlite-wal"))
        }
        try mount.remount(readOnly: true)
        let play = try run(["play", "112", "--reciter", "fixture", "--output", "null"], cache: cache, home: home)
        #expect(play.status == 0, "\(play.stderr)")
        for arguments in Self.readers {
            let result = try run(arguments, cache: cache, home: home)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let ls = try run(["cache", "ls", "--json"], cache: cache, home: home)
        #expect(ls.stdout.contains(#""complete_surahs":[1,112]"#), "\(ls.stdout)")
        // What must write says so, and changes nothing.
        let pin = try run(["cache", "pin", "112", "--reciter", "fixture"], cache: cache, home: home)
        #expect(pin.status == 1)
        #expect(pin.stderr.contains("readonly"), "\(pin.stderr)")
    }

    @Test func theReadOnlyCommandsWorkOnAFullDisk() throws {
        let mount = try MountedFileSystem(size: "2m")
        defer { mount.unmount() }
        let home = mount.path + "/home"
        let cache = mount.path + "/cache"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(try run(["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", "fixture"], cache: cache, home: home).status == 0)
        #expect(try run(["play", "112", "--reciter", "fixture", "--output", "null"], cache: cache, home: home).status == 0)
        try mount.fill()
        for arguments in Self.readers + [["status"]] {
            let result = try run(arguments, cache: cache, home: home)
            #expect(result.status == (arguments == ["status"] ? 3 : 0), "\(arguments): \(result.stderr)")
        }
        let positions = try run(["positions"], cache: cache, home: home)
        #expect(positions.stdout.contains("112:4"), "\(positions.stdout)")
    }
}

/// A tmpfs mounted on a temporary folder, for tests of full and read-only file systems.
final class MountedFileSystem: Sendable {
    let path: String

    /// Whether this process may mount one (root, with mount(8) and tmpfs).
    static let canMount: Bool = {
        guard getuid() == 0, let probe = try? MountedFileSystem(size: "1m") else { return false }
        probe.unmount()
        return true
    }()

    init(size: String) throws {
        path = TestPaths.makeTemporaryDirectory()
        guard Self.mount(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) else {
            throw MountError(message: "cannot mount a tmpfs on \(path)")
        }
    }

    func remount(readOnly: Bool) throws {
        guard Self.mount(["-o", readOnly ? "remount,ro" : "remount,rw", path]) else { throw MountError(message: "cannot remount \(path)") }
    }

    /// Writes a file until the file system has no room left.
    func fill() throws {
        _ = FileManager.default.createFile(atPath: path + "/filler", contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path + "/filler"))
        let block = Data(repeating: 0, count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
        var info = statvfs()
        _ = statvfs(path, &info)
        #expect(info.f_bavail == 0, "the file system still has room")
    }

    func unmount() {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = ["-l", path]
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func mount(_ arguments: [String]) -> Bool {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

struct MountError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
