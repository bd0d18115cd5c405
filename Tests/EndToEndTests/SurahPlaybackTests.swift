import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCore

/// A reciter of one file per surah with a pinned surah table, played and rendered from real surah files rebuilt
/// from the per-ayah recordings (`tools/make-surah-files`), served by nginx and by the fault server: every ayah
/// fetched alone with a range request, verified alone, and the render bit-exact against the mpg123 program's
/// decode of the whole surah file cut at the table's boundaries.
@Suite struct SurahPlaybackTests {
    static let available = SurahTableBuildTests.available
    static let reciter = "ibrahim-alakhdar-surah"

    /// The rebuilt files (surahs 1, 112, 113, 114 of Ibrahim Al-Akhdar: the committed fixture table's), made once.
    final class Files: @unchecked Sendable {
        let directory: String
        let table: SurahTable
        private var decodes: [Int: Data] = [:]
        private let lock = NSLock()

        init() throws {
            directory = TestPaths.makeTemporaryDirectory()
            try SurahTableBuildTests.makeSurahFiles(reciter: "ibrahim-alakhdar", surahs: [1, 112, 113, 114], into: directory + "/files")
            table = try SurahTable.parse(
                bytes: Array(try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/surah-table.tsv"))), file: "surah-table.tsv")
        }

        /// The mpg123 program's decode of surah `surah`'s whole file.
        func decode(_ surah: Int) throws -> Data {
            lock.lock()
            defer { lock.unlock() }
            if let data = decodes[surah] { return data }
            let data = try SurahTableBuildTests.output(["mpg123", "-q", "-s", directory + "/files/" + AyahRef.pad3(surah) + ".mp3"])
            decodes[surah] = data
            return data
        }

        /// The whole decode's samples of `ayah` of `surah` (0: the basmala), as the table cuts them (mono, 16-bit).
        func samples(_ surah: Int, _ ayah: Int) throws -> Data {
            let part = try #require(table.file(surah: surah)?.part(ayah: ayah))
            return try decode(surah)[(part.samples.lowerBound * 2)..<((part.samples.upperBound + 1) * 2)]
        }
    }

    nonisolated(unsafe) static var shared: Files?
    static let sharedLock = NSLock()

    static func files() throws -> Files {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let shared { return shared }
        let made = try Files()
        shared = made
        return made
    }

    /// A home with mirrors.json naming the surah reciter at `url` (a template over {surah3}) and its table.
    static func home(url: String) throws -> (home: String, common: [String]) {
        let home = TestPaths.makeTemporaryDirectory()
        let mirrors = """
            {"version": 1, "reciters": [{"id": "\(reciter)", "name": "Ibrahim Al-Akhdar (surah files)", "style": "murattal",
             "files": "surah", "mirrors": [{"name": "local", "url": "\(url)"}]}]}
            """
        try mirrors.write(toFile: home + "/mirrors.json", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: home + "/tables", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/surah-table.tsv", toPath: home + "/tables/\(reciter).tsv")
        return (home, ["--mirrors", home + "/mirrors.json", "--tables", home + "/tables", "--cache-dir", home + "/cache", "--reciter", reciter])
    }

    /// (what is rendered, the table's parts it must be: (surah, ayah), ayah 0 the basmala)
    static let renders: [([String], [(Int, Int)])] = [
        (["112"], [(112, 0), (112, 1), (112, 2), (112, 3), (112, 4)]),
        (["1:6-7"], [(1, 6), (1, 7)]),
        (["113:4-114:2"], [(113, 4), (113, 5), (114, 0), (114, 1), (114, 2)]),
        (["114:3", "112:2"], [(114, 3), (112, 2)]),
        (["113", "--basmala", "off"], [(113, 1), (113, 2), (113, 3), (113, 4), (113, 5)]),
    ]

    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func rendersAreTheWholeFilesDecodeCutAtTheTableOverNginxRanges() throws {
        let files = try Self.files()
        let server = try TestServer.nginx(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        for (arguments, parts) in Self.renders {
            let result = try runTartil(["render"] + arguments + common + ["-o", home + "/out.wav"], home: home)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            var expected = Data()
            for (surah, ayah) in parts { expected += try files.samples(surah, ayah) }
            let rendered = try wavPCMBytes(home + "/out.wav")
            #expect(rendered.count == expected.count, "\(arguments)")
            #expect(rendered == expected, "\(arguments): not the whole file's decode at the table's boundaries")
        }
        // Every file came as ranges (206), none whole; each part is in the cache as its range, under its own name.
        let requests = server.accessLog
        #expect(!requests.isEmpty)
        #expect(requests.allSatisfy { $0.contains(" 206 ") }, "\(requests)")
        let cached = try FileManager.default.contentsOfDirectory(atPath: home + "/cache/" + Self.reciter).sorted()
        #expect(cached.contains("112000.mp3") && cached.contains("114003.mp3") && !cached.contains("113000.mp3"), "\(cached)")
        for name in cached where name.hasSuffix(".mp3") {
            let key = try #require(AyahRef(fileKeyName: name))
            let part = try #require(files.table.file(surah: key.surah)?.part(ayah: key.ayah))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: home + "/cache/" + Self.reciter + "/" + name))
            let whole = try Data(contentsOf: URL(fileURLWithPath: files.directory + "/files/" + AyahRef.pad3(key.surah) + ".mp3"))
            #expect(bytes == whole[part.bytes], "\(name) is not its byte range of the surah's file")
        }
    }

    /// `prefetch` of whole surahs fetches each surah's file once, whole (checked against its SHA-256, then cut
    /// into its parts, their basmalas too, each checked against its own), `cache ls` calls them complete, and they
    /// then play with the server gone; a surah the table does not cover is a usage error, nothing fetched.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func prefetchedSurahsPlayOffline() throws {
        let files = try Self.files()
        let server = try TestServer.nginx(root: files.directory + "/files")
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let refused = try runTartil(["prefetch", "2", "113"] + common, home: home)
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("surah 2 is not in \(Self.reciter)'s surah table, which has surahs 1, 112, 113, 114"), "\(refused.stderr)")
        #expect(server.accessLog.isEmpty)
        let fetched = try runTartil(["prefetch", "1", "113"] + common, home: home)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("13 downloaded"), "\(fetched.stdout)")
        let requests = server.accessLog.map { $0.split(separator: " ").dropFirst(2).joined(separator: " ") }.sorted()
        #expect(requests == ["200 /001.mp3", "200 /113.mp3"], "one whole request per surah: \(server.accessLog)")
        server.stop()
        let names = try FileManager.default.contentsOfDirectory(atPath: home + "/cache/" + Self.reciter)
        #expect(!names.contains { $0.contains("surah") }, "the whole files are gone once cut: \(names)")
        let cached = names.filter { $0.hasSuffix(".mp3") }.sorted()
        #expect(cached == (1...7).map { "001\(AyahRef.pad3($0)).mp3" } + (0...5).map { "113\(AyahRef.pad3($0)).mp3" })
        for name in cached {
            let key = try #require(AyahRef(fileKeyName: name))
            let part = try #require(files.table.file(surah: key.surah)?.part(ayah: key.ayah))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: home + "/cache/" + Self.reciter + "/" + name))
            let whole = try Data(contentsOf: URL(fileURLWithPath: files.directory + "/files/" + AyahRef.pad3(key.surah) + ".mp3"))
            #expect(bytes == whole[part.bytes], "\(name) is not its byte range of the surah's file")
        }
        let listed = try runTartil(["cache", "ls", "--json"] + common, home: home)
        #expect(listed.stdout.contains(#""complete_surahs":[1,113]"#), "\(listed.stdout)")
        let rendered = try runTartil(["render", "113"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(113))
    }

    /// A home whose surah reciter has no table but publishes its timings at `timings` (a template over {surah3}),
    /// with `mirrors` (name, template) in order.
    static func learningHome(timings: String, mirrors: [(String, String)]) throws -> (home: String, common: [String]) {
        let home = TestPaths.makeTemporaryDirectory()
        try writeLearningMirrors(to: home + "/mirrors.json", timings: timings, mirrors: mirrors)
        try FileManager.default.createDirectory(atPath: home + "/tables", withIntermediateDirectories: true)
        return (home, ["--mirrors", home + "/mirrors.json", "--tables", home + "/tables", "--cache-dir", home + "/cache", "--reciter", reciter])
    }

    /// mirrors.json naming the surah reciter with its timings at `timings` and `mirrors` (name, template) in order.
    static func writeLearningMirrors(to path: String, timings: String, mirrors: [(String, String)]) throws {
        let list = mirrors.map { #"{"name": "\#($0.0)", "url": "\#($0.1)"}"# }.joined(separator: ", ")
        try """
            {"version": 1, "reciters": [{"id": "\(reciter)", "name": "Ibrahim Al-Akhdar (surah files)", "style": "murattal",
             "files": "surah", "timings": "\(timings)", "timings_format": "quranstatic", "mirrors": [\(list)]}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The fault server over the rebuilt surah files, and a home whose reciter learns from it (`learningHome`): its
    /// timings at `/TIMINGS/timings/{surah3}.json`, one mirror per (name, fault) at `/FAULT/{surah3}.mp3`. `close`
    /// stops the server and removes the home.
    final class LearningWorld: Sendable {
        let files: Files
        let server: TestServer
        let base: String
        let home: String
        let common: [String]
        let timings: String

        init(mirrors: [(name: String, fault: String)], timings fault: String = "ok") throws {
            files = try SurahPlaybackTests.files()
            server = try TestServer.faults(root: files.directory + "/files")
            let base = "http://127.0.0.1:\(server.port)"
            self.base = base
            timings = base + "/\(fault)/timings/{surah3}.json"
            do {
                (home, common) = try SurahPlaybackTests.learningHome(timings: timings, mirrors: mirrors.map { ($0.name, base + "/\($0.fault)/{surah3}.mp3") })
            } catch {
                server.stop()
                throw error
            }
        }

        /// The home's mirrors.json with other mirrors of the same server (the same timings).
        func setMirrors(_ mirrors: [(name: String, fault: String)]) throws {
            try SurahPlaybackTests.writeLearningMirrors(
                to: home + "/mirrors.json", timings: timings, mirrors: mirrors.map { ($0.name, base + "/\($0.fault)/{surah3}.mp3") })
        }

        func close() {
            server.stop()
            try? FileManager.default.removeItem(atPath: home)
        }
    }

    /// The names in the reciter's folder of `home`'s cache other than its audio, learned table and that table's
    /// lock: what learning leaves behind (its copies of the whole file have no name, and none may ever have one).
    static func leftovers(in home: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: home + "/cache/\(reciter)")) ?? []
        return names.filter { !($0.hasSuffix(".mp3") && !$0.hasPrefix(".")) && $0 != "surah-table.tsv" && $0 != "surah-table.tsv.lock" }
    }

    /// No table: the first render of a surah learns it (its published timings and whole file, cut and checked
    /// as `table build` cuts it — the same rows as the committed table's), and it then plays with the server gone.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aSurahIsLearnedOnFirstUseFromItsPublishedTimings() throws {
        let files = try Self.files()
        let served = files.directory + "/served"
        if !FileManager.default.fileExists(atPath: served) {
            try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
            for name in ["001.mp3", "112.mp3", "113.mp3", "114.mp3", "timings"] {
                try FileManager.default.copyItem(atPath: files.directory + "/files/" + name, toPath: served + "/" + name)
            }
        }
        let server = try TestServer.nginx(root: served)
        let base = "http://127.0.0.1:\(server.port)"
        let (home, common) = try Self.learningHome(timings: base + "/timings/{surah3}.json", mirrors: [("local", base + "/{surah3}.mp3")])
        defer { try? FileManager.default.removeItem(atPath: home) }
        let rendered = try runTartil(["render", "113:4-114:2"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        var expected = Data()
        for (surah, ayah) in [(113, 4), (113, 5), (114, 0), (114, 1), (114, 2)] { expected += try files.samples(surah, ayah) }
        #expect(try wavPCMBytes(home + "/out.wav") == expected)
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        let learned = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: learnedPath))), file: learnedPath)
        #expect(learned.files.map(\.surah) == [113, 114])
        #expect(learned.files == files.table.files.filter { [113, 114].contains($0.surah) }, "learned rows are table build's")
        #expect(learned.source.hasPrefix("trusted on first use: local, single-source; timings from \(base)/timings/{surah3}.json"))
        #expect(Self.leftovers(in: home).isEmpty, "\(Self.leftovers(in: home))")
        server.stop()
        // Offline: what was learned plays and verifies; what was not cannot be had.
        let again = try runTartil(["render", "113"] + common + ["-o", home + "/again.wav"], home: home)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try wavPCMBytes(home + "/again.wav") == files.decode(113))
        let verified = try runTartil(["cache", "verify", "--json"] + common, home: home)
        let report = try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any]
        #expect(report?["good"] as? Int == 13 && report?["checked"] as? Int == 13, "\(verified.stdout)")
        let offline = try runTartil(["render", "112"] + common + ["-o", home + "/none.wav"], home: home)
        #expect(offline.status == 1, "\(offline.stderr)")
        #expect(offline.stderr.contains("surah 112's timings"), "\(offline.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/none.wav"))
    }

    /// `play` starts at once and learns as it plays, one surah at a time: the surah it waits for, then the next
    /// one while the one before it plays (from a slow mirror, so the second is still being learned when the first
    /// has played: the player waits for its basmala). What it writes is still the whole files' decode cut at the
    /// table, with no gap at the join.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aPlayLearnsEachSurahAsItPlays() throws {
        let world = try LearningWorld(mirrors: [("slow", "slow")])
        defer { world.close() }
        let (files, home, common) = (world.files, world.home, world.common)
        let played = try runTartil(["play", "113:4-114:2", "--output", "wav:" + home + "/out.wav", "--events"] + common, home: home)
        #expect(played.status == 0, "\(played.stderr)")
        var expected = Data()
        for (surah, ayah) in [(113, 4), (113, 5), (114, 0), (114, 1), (114, 2)] { expected += try files.samples(surah, ayah) }
        #expect(try wavPCMBytes(home + "/out.wav") == expected)
        let lines = played.stdout.split(separator: "\n").map(String.init)
        let position = { (text: String) in lines.firstIndex { $0.contains(text) } ?? Int.max }
        let waitedFor113 = position(#"{"event":"buffering","surah":113,"ayah":4}"#)
        let played113 = position(#""event":"ayah","index":1,"surah":113,"ayah":5"#)
        let waitedFor114 = position(#"{"event":"buffering","surah":114,"ayah":0}"#)
        let played114 = position(#""event":"ayah","index":2,"surah":114,"ayah":1"#)
        #expect(waitedFor113 < played113 && played113 < waitedFor114 && waitedFor114 < played114, "\(played.stdout)")
        let learned = try SurahTable.parse(
            bytes: Array(try Data(contentsOf: URL(fileURLWithPath: home + "/cache/\(Self.reciter)/surah-table.tsv"))), file: "learned")
        #expect(learned.files == files.table.files.filter { [113, 114].contains($0.surah) })
    }

    /// `--from 0:12` and `--loop` times in a surah learned while playing mean the recording's times, not the
    /// estimate's the player starts with: what is written starts exactly 12 s into the surah's decode (its basmala
    /// at 0), and a loop of 0:05-0:07 once is exactly those samples (a render, which learns first, agrees).
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func timesInASurahLearnedWhilePlayingAreTheRecordingsTimes() throws {
        let world = try LearningWorld(mirrors: [("ok", "ok")])
        defer { world.close() }
        let (files, home, common) = (world.files, world.home, world.common)
        let rate = try #require(files.table.file(surah: 114)).sampleRate
        var surah = Data()
        for ayah in 0...6 { surah += try files.samples(114, ayah) }
        let played = try runTartil(["play", "114", "--from", "0:12", "--output", "wav:" + home + "/from.wav"] + common, home: home)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(try wavPCMBytes(home + "/from.wav") == surah[(12 * rate * 2)...], "not the decode from 12 s on")
        try FileManager.default.removeItem(atPath: home + "/cache")
        let looped = try runTartil(["play", "114", "--loop", "0:05-0:07 1", "--output", "wav:" + home + "/loop.wav"] + common, home: home)
        #expect(looped.status == 0, "\(looped.stderr)")
        let once = surah[(5 * rate * 2)..<(7 * rate * 2)]
        #expect(try wavPCMBytes(home + "/loop.wav").prefix(once.count) == once, "the loop's first pass is not 0:05-0:07")
        // A time past the recording's end is bad input (64, the same message) whether the surah was learned
        // before (refused at once) or is learned by this play (the estimate took it; the recording does not).
        let past = "0:\(surah.count / (rate * 2) + 1)"
        for learnedBefore in [false, true] {
            if !learnedBefore { try FileManager.default.removeItem(atPath: home + "/cache") }
            let refused = try runTartil(["play", "114", "--from", past, "--output", "wav:" + home + "/past.wav"] + common, home: home)
            #expect(refused.status == 64, "learned before: \(learnedBefore): \(refused.stderr)")
            #expect(refused.stderr.contains("\(past) is past the end of surah 114"), "\(refused.stderr)")
            if !learnedBefore {
                #expect(FileManager.default.fileExists(atPath: home + "/cache/\(Self.reciter)/surah-table.tsv"), "not learned by this play")
            }
        }
    }

    /// `prefetch` of a surah not learned yet learns it first and says so: its parts count as downloaded (not as
    /// found in the cache), its file's bytes as received; a second prefetch finds them cached.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aPrefetchThatLearnsASurahCountsItsPartsAsDownloaded() throws {
        let world = try LearningWorld(mirrors: [("ok", "ok")])
        defer { world.close() }
        let (files, home, common) = (world.files, world.home, world.common)
        let file = try #require(files.table.file(surah: 113))
        let summary = { (result: RunResult) throws -> [String: Any] in
            let last = try #require(result.stdout.split(separator: "\n").last)
            return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        }
        let first = try runTartil(["prefetch", "113", "--json"] + common, home: home)
        #expect(first.status == 0, "\(first.stderr)")
        let learned = try summary(first)
        let cachedLines = first.stdout.split(separator: "\n").filter { $0.contains(#""event":"cached""#) && $0.contains(#""already_cached":false"#) }
        #expect(cachedLines.count == file.parts.count, "a line per part cut from the learned file: \(first.stdout)")
        #expect(learned["downloaded"] as? Int == file.parts.count && learned["already_cached"] as? Int == 0, "\(learned)")
        #expect(learned["learned_surahs"] as? [Int] == [113] && (learned["bytes"] as? Int ?? 0) >= file.bytes, "\(learned)")
        let text = try runTartil(["prefetch", "113"] + common, home: home)
        #expect(text.stdout.contains("0 downloaded, \(file.parts.count) already cached") && !text.stdout.contains("learned"), "\(text.stdout)")
        // The learned table damaged in 113's rows: 114's rows still count, 113 is said to be not learned (not
        // complete, though its parts are on disk) and is learned again, 114 kept.
        #expect(try runTartil(["prefetch", "114"] + common, home: home).status == 0)
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        let damaged = try String(contentsOfFile: learnedPath, encoding: .utf8).replacingOccurrences(of: "ayah\t113\t2\t", with: "ayah\t113\t9\t")
        try damaged.write(toFile: learnedPath, atomically: true, encoding: .utf8)
        let ls = try runTartil(["cache", "ls", "--json"] + common, home: home)
        let listed = try #require((try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(listed["complete_surahs"] as? [Int] == [114] && listed["unlearned_surahs"] as? [Int] == [113], "\(ls.stdout)")
        #expect((listed["learned_table_problem"] as? String)?.contains("ayah 113:9") == true, "\(ls.stdout)")
        let checked = try runTartil(["cache", "verify"] + common, home: home)
        #expect(checked.status == 1 && checked.stderr.contains("learned table is damaged") && checked.stderr.contains("ayah 113:9"), "\(checked.stderr)")
        let again = try summary(try runTartil(["prefetch", "113", "114", "--json"] + common, home: home))
        #expect(again["learned_surahs"] as? [Int] == [113], "\(again)")
        let mended = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: learnedPath))), file: learnedPath)
        #expect(mended.files == files.table.files.filter { [113, 114].contains($0.surah) })
        // A learned part that no longer matches is named as learned (with how to learn it again), not as a table's.
        let part = home + "/cache/\(Self.reciter)/114002.mp3"
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: part)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: part))
        let verified = try runTartil(["cache", "verify", "--json"] + common, home: home)
        #expect(verified.status == 1 && verified.stdout.contains("learned from its mirrors") && !verified.stdout.contains("(table)"), "\(verified.stdout)")
    }

    /// Learning asks a mirror that stops sending once, as any download does (one stall timeout, the one asked for
    /// with --stall-timeout, not three and the waits between them), then the next mirror.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func learningAsksAStalledMirrorOnce() throws {
        let world = try LearningWorld(mirrors: [("stalled", "stall"), ("clean", "ok")])
        defer { world.close() }
        let (files, server, home, common) = (world.files, world.server, world.home, world.common)
        let started = Date()
        let rendered = try runTartil(["render", "112", "--stall-timeout", "1"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        // --stall-timeout holds for learning too: the default (15 s) would alone take longer than this.
        #expect(Date().timeIntervalSince(started) < 12, "learning waited out the default stall timeout")
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(112))
        Thread.sleep(forTimeInterval: 0.3)  // the server logs an answer once it has written it
        let stalled = server.requestLog.filter { $0.contains("/stall/112.mp3") }
        #expect(stalled.count == 1, "\(server.requestLog)")
    }

    /// Two processes that want the same unlearned surah at once (a render and a prefetch) learn it once: the
    /// second waits for the first and takes its rows, so the surah's file is fetched once (from a slow mirror, so
    /// that they overlap), and both end well.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func twoProcessesLearnASurahOnce() throws {
        let world = try LearningWorld(mirrors: [("slow", "slow")])
        defer { world.close() }
        let (files, server, home, common) = (world.files, world.server, world.home, world.common)
        let commands = [["render", "113", "-o", home + "/out.wav"], ["prefetch", "113"]]
        let results = Mutex<[Int: RunResult]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let result = try? runTartil(commands[index] + common, home: home)
            results.withLock { $0[index] = result }
        }
        for index in 0..<2 {
            let result = try #require(results.withLock { $0[index] })
            #expect(result.status == 0, "\(commands[index]): \(result.stderr)")
        }
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(113))
        Thread.sleep(forTimeInterval: 0.3)  // the server logs an answer once it has written it
        #expect(server.requestLog.filter { $0.contains("/slow/113.mp3") }.count == 1, "\(server.requestLog)")
    }

    /// A surah whose two mirrors serve different files cannot be learned; the message names `cache choose`, which
    /// learns it from the chosen mirror's file alone (recorded as chosen), and it then plays that file's decode.
    /// An unknown mirror is a usage error.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aSurahTheMirrorsDisagreeOnIsLearnedFromTheMirrorChosen() throws {
        let world = try LearningWorld(mirrors: [("flipped", "bitflip"), ("clean", "ok")])
        defer { world.close() }
        let (files, home, common) = (world.files, world.home, world.common)
        let refused = try runTartil(["prefetch", "113"] + common, home: home)
        #expect(refused.status == 1 && refused.stderr.contains("the mirrors disagree with no majority"), "\(refused.stderr)")
        #expect(refused.stderr.contains("`tartil cache choose 113 --reciter \(Self.reciter) --mirror NAME`"), "\(refused.stderr)")
        let unknown = try runTartil(["cache", "choose", "113", "--mirror", "nope"] + common, home: home)
        #expect(unknown.status == 64 && unknown.stderr.contains("no mirror named 'nope' (its mirrors: flipped, clean)"), "\(unknown.stderr)")
        let chosen = try runTartil(["cache", "choose", "113", "--mirror", "clean", "--json"] + common, home: home)
        #expect(chosen.status == 0 && chosen.stdout.contains(#""mirror":"clean""#), "\(chosen.stdout) \(chosen.stderr)")
        let learned = try String(contentsOfFile: home + "/cache/\(Self.reciter)/surah-table.tsv", encoding: .utf8)
        #expect(learned.contains("# source: chosen: clean (cache choose)"), "\(learned)")
        let rendered = try runTartil(["render", "113"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(113))
    }

    /// A surah learned from a file its mirrors later replace: its ayat fail their learned hashes, the message says
    /// how to learn it again, `table relearn` does (new rows, the new file's samples), and then finds it unchanged.
    /// A surah a table pins, a per-ayah reciter and one without timings are refused before anything is fetched.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aSurahWhoseFileWasReplacedIsLearnedAgain() throws {
        let files = try Self.files()
        let served = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: served) }
        try FileManager.default.createDirectory(atPath: served + "/timings", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: files.directory + "/files/112.mp3", toPath: served + "/112.mp3")
        try FileManager.default.copyItem(atPath: files.directory + "/files/timings/112.json", toPath: served + "/timings/112.json")
        let server = try TestServer.nginx(root: served)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let (home, common) = try Self.learningHome(timings: base + "/timings/{surah3}.json", mirrors: [("local", base + "/{surah3}.mp3")])
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(try runTartil(["render", "112"] + common + ["-o", home + "/first.wav"], home: home).status == 0)
        // The mirror replaces the file: the same frames, one byte of the audio data changed.
        var replaced = Array(try Data(contentsOf: URL(fileURLWithPath: served + "/112.mp3")))
        replaced[replaced.count / 2] ^= 0x55
        try Data(replaced).write(to: URL(fileURLWithPath: served + "/112.mp3"))
        let cached = home + "/cache/\(Self.reciter)"
        for name in try FileManager.default.contentsOfDirectory(atPath: cached) where name.hasPrefix("112") { try FileManager.default.removeItem(atPath: cached + "/" + name) }
        let failed = try runTartil(["play", "112", "--output", "null"] + common, home: home)
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(failed.stderr.contains("learned from its mirrors: if they have replaced surah 112's file since, `tartil table relearn 112 --reciter \(Self.reciter)`"), "\(failed.stderr)")
        let relearned = try runTartil(["table", "relearn", "112", "--json"] + common, home: home)
        #expect(relearned.status == 0, "\(relearned.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(relearned.stdout.utf8)) as? [[String: Any]])
        let sha256 = try Self.sha256(served + "/112.mp3")
        #expect(rows.count == 1 && rows[0]["outcome"] as? String == "changed" && rows[0]["sha256"] as? String == sha256, "\(relearned.stdout)")
        #expect(rows[0]["previous_sha256"] as? String == files.table.file(surah: 112)?.digest.hex, "\(relearned.stdout)")
        let rendered = try runTartil(["render", "112"] + common + ["-o", home + "/again.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(try wavPCMBytes(home + "/again.wav") == SurahTableBuildTests.output(["mpg123", "-q", "-s", served + "/112.mp3"]))
        let again = try runTartil(["table", "relearn", "112"] + common, home: home)
        #expect(again.status == 0 && again.stdout.contains("surah 112: unchanged"), "\(again.stdout) \(again.stderr)")
        // The same file, its published timings moved (ayah 2 starts 300 ms later): cut again, never "unchanged".
        var timings = try String(contentsOfFile: served + "/timings/112.json", encoding: .utf8)
        timings = timings.replacingOccurrences(of: #""EndMs":9509"#, with: #""EndMs":9809"#).replacingOccurrences(of: #""StartMs":9509"#, with: #""StartMs":9809"#)
        try timings.write(toFile: served + "/timings/112.json", atomically: true, encoding: .utf8)
        let retimed = try runTartil(["table", "relearn", "112", "--json"] + common, home: home)
        let retimedRows = try #require(try JSONSerialization.jsonObject(with: Data(retimed.stdout.utf8)) as? [[String: Any]])
        #expect(retimed.status == 0 && retimedRows.first?["outcome"] as? String == "retimed" && retimedRows.first?["sha256"] as? String == sha256, "\(retimed.stdout) \(retimed.stderr)")
        let table = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: cached + "/surah-table.tsv"))), file: "learned")
        let rate = try #require(table.file(surah: 112)).sampleRate
        #expect(table.file(surah: 112)?.part(ayah: 2)?.samples.lowerBound == (9809 * rate + 500) / 1000, "ayah 2 starts at 9.809 s now")
        // Refused, exit 64, nothing fetched: a surah a table pins, a per-ayah reciter, one that publishes no timings.
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/surah-table.tsv", toPath: home + "/tables/\(Self.reciter).tsv")
        let pinned = try runTartil(["table", "relearn", "113"] + common, home: home)
        #expect(pinned.status == 64 && pinned.stderr.contains("surah 113 of \(Self.reciter) is pinned by"), "\(pinned.stderr)")
        try """
            {"version": 1, "reciters": [{"id": "per-ayah", "name": "P", "style": "murattal", "mirrors": [{"name": "m", "url": "\(base)/{surah3}{ayah3}.mp3"}]},
             {"id": "no-timings", "name": "N", "style": "murattal", "files": "surah", "mirrors": [{"name": "m", "url": "\(base)/{surah3}.mp3"}]}]}
            """.write(toFile: home + "/other.json", atomically: true, encoding: .utf8)
        for (id, reason) in [("per-ayah", "has one file per ayah"), ("no-timings", "publishes no ayah timings")] {
            let refused = try runTartil(["table", "relearn", "112", "--mirrors", home + "/other.json", "--reciter", id, "--cache-dir", home + "/cache"], home: home)
            #expect(refused.status == 64 && refused.stderr.contains(reason), "\(refused.stderr)")
        }
    }

    static func sha256(_ path: String) throws -> String {
        String(try SurahTableBuildTests.output(["sha256sum", path]).prefix(64).map { Character(Unicode.Scalar($0)) })
    }

    /// The rules of an unpinned per-ayah file: the same bytes from two mirrors are cross-checked; mirrors that
    /// disagree with no majority are a dispute, and nothing is learned; a third mirror's vote makes a majority
    /// (whichever mirror served the odd copy); one that serves no audio is passed over (single-source).
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: [
        (["ok", "flaky-0"], "trusted on first use: first, cross-checked with second"),  // the same file under another path
        (["ok", "bitflip"], "the mirrors disagree"),
        (["ok", "html"], "trusted on first use: first, single-source"),
        (["ok", "bitflip", "flaky-0"], "trusted on first use: first, cross-checked with third (second served another file)"),
        (["bitflip", "ok", "flaky-0"], "trusted on first use: second, cross-checked with third (first served another file)"),
        (["ok", "bitflip", "html"], "the mirrors disagree"),
    ])
    func learningCrossChecksTheMirrors(faults: [String], outcome: String) throws {
        let names = ["first", "second", "third"]
        let world = try LearningWorld(mirrors: faults.enumerated().map { (names[$0.offset], $0.element) })
        defer { world.close() }
        let (files, base, home, common) = (world.files, world.base, world.home, world.common)
        let rendered = try runTartil(["render", "112"] + common + ["-o", home + "/out.wav"], home: home)
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        if outcome == "the mirrors disagree" {
            #expect(rendered.status == 1, "\(rendered.stderr)")
            #expect(rendered.stderr.contains("surah 112: the mirrors disagree with no majority (first (\(base)/"), "\(rendered.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home + "/cache/\(Self.reciter)/112001.mp3"))
            #expect(!FileManager.default.fileExists(atPath: learnedPath))
            #expect(!FileManager.default.fileExists(atPath: home + "/out.wav"))
            #expect(Self.leftovers(in: home).isEmpty, "the mirrors' copies are gone: \(Self.leftovers(in: home))")
        } else {
            #expect(rendered.status == 0, "\(rendered.stderr)")
            #expect(try wavPCMBytes(home + "/out.wav") == files.decode(112))
            let learned = try String(contentsOfFile: learnedPath, encoding: .utf8)
            #expect(learned.contains("# source: \(outcome)"), "\(learned)")
            #expect(Self.leftovers(in: home).isEmpty, "\(Self.leftovers(in: home))")
            // The parts carry what vouches for them, as unpinned per-ayah files do: cache ls lists a surah learned
            // from one mirror as single-source.
            let ls = try runTartil(["cache", "ls", "--json"] + common, home: home)
            let listed = try #require((try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])?.first)
            let parts = try #require(files.table.file(surah: 112)).parts.count
            if outcome.hasSuffix("single-source") {
                #expect((listed["single_source"] as? [Any])?.count == parts && listed["cross_checked"] as? Int == 0, "\(ls.stdout)")
                // Once a second mirror serves the same file, learning it again marks the parts already there.
                try world.setMirrors([("first", "ok"), ("second", "flaky-0")])
                let relearned = try runTartil(["table", "relearn", "112"] + common, home: home)
                #expect(relearned.status == 0 && relearned.stdout.contains("unchanged"), "\(relearned.stdout) \(relearned.stderr)")
                let after = try runTartil(["cache", "ls", "--json"] + common, home: home)
                #expect(after.stdout.contains(#""cross_checked":\#(parts)"#), "\(after.stdout)")
            } else {
                #expect(listed["cross_checked"] as? Int == parts && (listed["single_source"] as? [Any])?.isEmpty == true, "\(ls.stdout)")
            }
        }
    }

    /// A surah learned from one mirror only is compared again by the next prefetch, as a single-source per-ayah
    /// file is, by asking the other mirrors only (each part records the mirror it came from): while none serves it,
    /// nothing changes and the prefetch says why, having fetched no whole file from the mirror it came from; once
    /// another serves the same file, its parts are cross-checked (and not compared again), whichever mirror that
    /// is; another file does not replace the file learned (the prefetch says so, and how to take it).
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aSurahLearnedFromOneMirrorIsComparedAgainByTheNextPrefetch() throws {
        let world = try LearningWorld(mirrors: [("first", "ok"), ("second", "html")])
        defer { world.close() }
        let (files, home, common) = (world.files, world.home, world.common)
        let parts = try #require(files.table.file(surah: 112)).parts.count
        let fileBytes = try #require(files.table.file(surah: 112)).bytes
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        func prefetch() throws -> (summary: [String: Any], stderr: String, asked: [String]) {
            let before = world.server.requestLog.count
            let result = try runTartil(["prefetch", "112", "--json"] + common, home: home)
            #expect(result.status == 0, "\(result.stderr)")
            let last = try #require(result.stdout.split(separator: "\n").last)
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
            // The whole files asked for (their paths), not the timings.
            let asked = world.server.requestLog.dropFirst(before).compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }
                .filter { $0.hasSuffix("/112.mp3") }
            return (summary, result.stderr, asked)
        }
        func compared(_ summary: [String: Any]) -> [String] {
            (summary["compared_surahs"] as? [[String: Any]] ?? []).map { "\($0["surah"] ?? "") \($0["mark"] ?? "") \($0["problem"] is NSNull ? "" : "problem")" }
        }
        func crossChecked() throws -> Int? {
            let ls = try runTartil(["cache", "ls", "--json"] + common, home: home)
            return (try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])?.first?["cross_checked"] as? Int
        }
        let first = try prefetch()
        #expect(first.summary["learned_surahs"] as? [Int] == [112] && compared(first.summary).isEmpty, "just learned: \(first.summary)")
        #expect(first.summary["learned_single_source"] as? [Int] == [112], "the learning prefetch says so: \(first.summary)")
        let learned = try String(contentsOfFile: learnedPath, encoding: .utf8)
        #expect(learned.contains("# source of surah 112: trusted on first use: first, single-source; timings from "), "\(learned)")
        // The second mirror still serves no audio: only it is asked, and the prefetch says so.
        let still = try prefetch()
        #expect(compared(still.summary) == ["112 single-source problem"], "\(still.summary)")
        #expect(!still.asked.contains("/ok/112.mp3"), "the mirror it came from is not asked again: \(still.asked)")
        #expect(still.stderr.contains("surah 112, learned from one mirror, compared again: no other mirror served it (second: not one whole MPEG audio stream"), "\(still.stderr)")
        #expect(try String(contentsOfFile: learnedPath, encoding: .utf8) == learned, "nothing changes while one mirror vouches for it")
        #expect(try crossChecked() == 0)
        // A mirror answering 503 is asked once (no retries, which cost 1 s and 2 s): the next prefetch asks again.
        try world.setMirrors([("first", "ok"), ("second", "status-503")])
        let unavailable = try prefetch()
        #expect(unavailable.asked == ["/status-503/112.mp3"], "asked once, not with retries: \(unavailable.asked)")
        #expect(unavailable.stderr.contains("no other mirror served it (second: HTTP 503"), "\(unavailable.stderr)")
        try world.setMirrors([("first", "ok"), ("second", "html")])
        // A play says so once, as it does for single-source per-ayah files.
        let played = try runTartil(["play", "112", "--output", "null"] + common, home: home)
        #expect(played.status == 0 && played.stderr.contains("surah 112 single-source: learned from one mirror, the only one that could serve its file so far; the next prefetch compares it with another mirror"), "\(played.stderr)")
        // The mirror it came from, renamed, is the same mirror: nothing to ask, and the play says so.
        try world.setMirrors([("renamed", "ok")])
        let renamed = try prefetch()
        #expect(compared(renamed.summary).isEmpty && renamed.asked.isEmpty, "\(renamed.summary) \(renamed.asked)")
        let playedRenamed = try runTartil(["play", "112", "--output", "null"] + common, home: home)
        #expect(playedRenamed.stderr.contains("surah 112 single-source: learned from one mirror, the only one that could serve its file so far; no other mirror is listed in mirrors.json to compare it with"), "\(playedRenamed.stderr)")
        // Another mirror serving another file (asked twice: a copy damaged on its way is not another file): the file
        // learned stays, and the prefetch says which and how to take it.
        try world.setMirrors([("first", "ok"), ("second", "bitflip")])
        let other = try prefetch()
        #expect(compared(other.summary) == ["112 single-source problem"], "\(other.summary)")
        #expect(other.asked == ["/bitflip/112.mp3", "/bitflip/112.mp3"], "\(other.asked)")
        #expect(other.stderr.contains("compared again: another file than the one learned from first (\(world.base)/ok/112.mp3) (\(fileBytes) bytes, sha256 "), "\(other.stderr)")
        #expect(other.stderr.contains("was served by second (\(world.base)/bitflip/112.mp3): \(fileBytes) bytes, sha256 "), "\(other.stderr)")
        #expect(other.stderr.contains("the one learned is kept") && other.stderr.contains("tartil cache choose 112") && other.stderr.contains("tartil table relearn 112"), "\(other.stderr)")
        #expect(other.summary["bytes"] as? Int == 2 * fileBytes, "the bytes fetched to compare are counted: \(other.summary)")
        #expect(try String(contentsOfFile: learnedPath, encoding: .utf8) == learned)
        // The first mirror gone, another serving the same file under a new URL: that is a second mirror's word, and
        // the one serving another file is outvoted (and said).
        try world.setMirrors([("odd", "bitflip"), ("third", "flaky-0")])
        let settled = try prefetch()
        #expect(compared(settled.summary) == ["112 cross-checked problem"], "\(settled.summary) \(settled.stderr)")
        #expect(settled.asked == ["/bitflip/112.mp3", "/bitflip/112.mp3", "/flaky-0/112.mp3"], "\(settled.asked)")
        #expect(settled.stderr.contains("was served by odd (\(world.base)/bitflip/112.mp3)") && settled.stderr.contains("and was outvoted"), "\(settled.stderr)")
        #expect(try crossChecked() == parts)
        let table = try String(contentsOfFile: learnedPath, encoding: .utf8)
        // The mirror it came from, renamed and then no longer listed, by the name it had when the surah was learned.
        #expect(table.contains("# source of surah 112: trusted on first use: first, cross-checked with third when compared again (odd served another file); timings from "), "\(table)")
        #expect(!table.contains("single-source"), "the learned table says what the parts say: \(table)")
        let again = try prefetch()
        #expect(compared(again.summary).isEmpty && again.asked.isEmpty, "\(again.summary) \(again.asked)")
        let playedAfter = try runTartil(["play", "112", "--output", "null"] + common, home: home)
        #expect(playedAfter.status == 0 && !playedAfter.stderr.contains("single-source"), "\(playedAfter.stderr)")
        let render = try runTartil(["render", "112"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(render.status == 0, "\(render.stderr)")
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(112))
    }

    /// A copy damaged on its way (a bit flipped in the first answer only) is asked for again before it counts as
    /// another file: the comparison cross-checks the surah.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aCopyDamagedOnItsWayIsAskedForAgainWhenComparing() throws {
        let world = try LearningWorld(mirrors: [("first", "ok"), ("second", "html")])
        defer { world.close() }
        let learned = try runTartil(["prefetch", "112"] + world.common, home: world.home)
        #expect(learned.status == 0 && learned.stdout.contains("learned surah 112"), "\(learned.stderr)")
        try world.setMirrors([("first", "ok"), ("second", "bitflip-once")])
        let compared = try runTartil(["prefetch", "112"] + world.common, home: world.home)
        #expect(compared.status == 0 && compared.stdout.contains("compared again: surah 112 now cross-checked"), "\(compared.stdout) \(compared.stderr)")
        #expect(world.server.requestLog.filter { $0.contains("/bitflip-once/112.mp3") }.count == 2, "\(world.server.requestLog)")
    }

    /// Two prefetches at once of a surah learned from one mirror: one compares it (the other waits for the surah,
    /// then finds it cross-checked, or finds it so when it starts); neither asks the mirror it came from again, and
    /// the other mirror is asked once.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func twoPrefetchesAtOnceCompareASurahOnce() throws {
        let world = try LearningWorld(mirrors: [("first", "ok"), ("second", "html")])
        defer { world.close() }
        #expect(try runTartil(["prefetch", "112"] + world.common, home: world.home).status == 0)
        try world.setMirrors([("first", "ok"), ("second", "slow")])  // 64 KiB/s: the comparison takes about a second
        let before = world.server.requestLog.count
        let results = Mutex<[RunResult]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            if let result = try? runTartil(["prefetch", "112", "--json"] + world.common, home: world.home) { results.withLock { $0.append(result) } }
        }
        let finished = results.withLock { $0 }
        #expect(finished.count == 2 && finished.allSatisfy { $0.status == 0 }, "\(finished.map(\.stderr))")
        let asked = world.server.requestLog.dropFirst(before).filter { $0.contains("/112.mp3") }
        #expect(asked.count == 1 && asked[0].contains("/slow/112.mp3"), "\(asked)")
        #expect(finished.map(\.stdout).joined().contains(#""mark":"cross-checked""#), "\(finished.map(\.stdout))")
    }

    /// A mirror that fails twice before serving (503, 503, then the file) is asked again; a surah that cannot be
    /// learned (its timings are not there) is skipped by `play`, saying why, and fails `render`; a learned table
    /// damaged by hand counts as none, and the surah is learned again.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func learningRetriesSkipsWhatItCannotLearnAndMendsItsTable() throws {
        let world = try LearningWorld(mirrors: [("only", "flaky-2")], timings: "flaky-2")
        defer { world.close() }
        let (files, base, home, common) = (world.files, world.base, world.home, world.common)
        let played = try runTartil(["play", "111", "112", "--output", "null"] + common, home: home)
        #expect(played.status == 1, "an ayah was skipped: \(played.stderr)")
        #expect(played.stderr.contains("surah 111 could not be learned: surah 111's timings (\(base)/flaky-2/timings/111.json): HTTP 404"), "\(played.stderr)")
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        let learned = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: learnedPath))), file: learnedPath)
        #expect(learned.files == files.table.files.filter { $0.surah == 112 }, "learned after two 503s")
        let export = try runTartil(["journal", "export"], home: home)
        #expect(export.stdout.contains(#""surah":112,"ayah":4"#), "112 was played: \(export.stdout)")
        let rendered = try runTartil(["render", "111-112"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 1 && rendered.stderr.contains("surah 111 cannot be rendered: surah 111's timings"), "\(rendered.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/out.wav"))
        // A WAV path that cannot be a file is a usage error before anything is learned.
        for bad in [home, home + "/mirrors.json/out.wav"] {
            let refused = try runTartil(["render", "113"] + common + ["-o", bad], home: home)
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains(bad == home ? "is a folder" : "is a file, not a folder"), "\(refused.stderr)")
        }
        // So is what writes a file that could never end, or a play into a folder.
        for (command, reason) in [
            (["render", "113", "--repeat", "inf", "-o", home + "/x.wav"], "render writes a file, which must end: --repeat inf"),
            (["play", "113", "--loop", "0:01-0:02", "--output", "wav:" + home + "/x.wav"], "writes a file, which must end: the loop goes on for ever"),
            (["play", "113", "--output", "wav:" + home], "--output wav:\(home) is a folder"),
            (["render", "113", "-o", home + "/not-yet/"], "-o \(home)/not-yet/ names a folder"),
        ] {
            let refused = try runTartil(command + common, home: home)
            #expect(refused.status == 64 && refused.stderr.contains(reason), "\(command): \(refused.stderr)")
        }
        #expect(!(try String(contentsOfFile: learnedPath, encoding: .utf8)).contains("file\t113\t"), "nothing learned for a refused render")
        // Damaged by hand: learned again, and written whole.
        try "# tartil-table: 2\n# reciter: \(Self.reciter)\nfile\t112\t 1\n".write(toFile: learnedPath, atomically: true, encoding: .utf8)
        let again = try runTartil(["render", "112"] + common + ["-o", home + "/made/for/it/again.wav"], home: home)
        #expect(again.status == 0, "a render makes its file's folder: \(again.stderr)")
        #expect(try wavPCMBytes(home + "/made/for/it/again.wav") == files.decode(112))
        let mended = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: learnedPath))), file: learnedPath)
        #expect(mended.files.map(\.surah) == [112])
    }

    /// Ctrl-C while a surah is being learned (its file stalls) stops at once with exit 130, and nothing of it is
    /// kept.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: [["play", "112", "--output", "null"], ["render", "112", "-o", "OUT"]])
    func anInterruptStopsLearning(command: [String]) throws {
        let world = try LearningWorld(mirrors: [("stalls", "stall")])
        defer { world.close() }
        let (home, common) = (world.home, world.common)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = command.map { $0 == "OUT" ? home + "/out.wav" : $0 } + common
        process.environment = isolatedEnvironment(home: home)
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let started = Date()
        try process.run()
        if command[0] == "play" {
            // While it waits for the surah it learns, the player says so (its basmala is the file waited for).
            var status = ""
            for _ in 0..<50 where !status.contains(#""learning_surah":112"#) {
                Thread.sleep(forTimeInterval: 0.1)
                status = try runTartil(["status", "--json"], home: home).stdout
            }
            #expect(status.contains(#""state":"buffering""#) && status.contains(#""buffering":{"surah":112,"ayah":0}"#), "\(status)")
            #expect(status.contains(#""learning_surah":112"#), "\(status)")
            let text = try runTartil(["status"], home: home)
            #expect(text.status == 0 && text.stdout.contains("learning surah 112"), "\(text.stdout)")
        } else {
            Thread.sleep(forTimeInterval: 1.5)
        }
        kill(process.processIdentifier, SIGINT)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130, "\(text)")
        #expect(Date().timeIntervalSince(started) < 5, "stopping should be prompt")
        #expect(text.contains(command[0] == "play" ? "playback stopped: surah 112 was not learned" : "surah 112 was not learned"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: home + "/cache/\(Self.reciter)/surah-table.tsv"))
        #expect(!FileManager.default.fileExists(atPath: home + "/out.wav"))
        #expect(Self.leftovers(in: home).isEmpty, "\(Self.leftovers(in: home))")
    }

    /// A comparison stopped by Ctrl-C (exit 130, saying what was learned is kept) or killed (-9) while the other
    /// mirror stalls leaves the learned surah as it was: its table, its parts still single-source, nothing else in
    /// the reciter's folder; the next prefetch compares it.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: [SIGINT, SIGKILL])
    func aComparisonStoppedOrKilledLeavesTheLearnedSurahAsItWas(signal: Int32) throws {
        let world = try LearningWorld(mirrors: [("first", "ok"), ("second", "html")])
        defer { world.close() }
        let (home, common) = (world.home, world.common)
        #expect(try runTartil(["prefetch", "112"] + common, home: home).status == 0)
        let learnedPath = home + "/cache/\(Self.reciter)/surah-table.tsv"
        let learned = try String(contentsOfFile: learnedPath, encoding: .utf8)
        try world.setMirrors([("first", "ok"), ("second", "stall")])
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = ["prefetch", "112"] + common
        process.environment = isolatedEnvironment(home: home)
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        for _ in 0..<100 where !world.server.requestLog.contains(where: { $0.contains("/stall/112.mp3") }) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(world.server.requestLog.contains { $0.contains("/stall/112.mp3") }, "the comparison began")
        Thread.sleep(forTimeInterval: 0.2)
        kill(process.processIdentifier, signal)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if signal == SIGINT {
            #expect(process.terminationStatus == 130 && text.contains("surah 112 was not compared again; what was learned is kept"), "\(text)")
        } else {
            #expect(process.terminationReason == .uncaughtSignal, "\(text)")
        }
        #expect(try String(contentsOfFile: learnedPath, encoding: .utf8) == learned)
        #expect(Self.leftovers(in: home).isEmpty, "\(Self.leftovers(in: home))")
        let parts = try #require(world.files.table.file(surah: 112)).parts.count
        let ls = try runTartil(["cache", "ls", "--json"] + common, home: home)
        let listed = try #require((try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]])?.first)
        #expect((listed["single_source"] as? [Any])?.count == parts, "\(ls.stdout)")
        try world.setMirrors([("first", "ok"), ("second", "flaky-0")])
        let again = try runTartil(["prefetch", "112"] + common, home: home)
        #expect(again.status == 0 && again.stdout.contains("compared again: surah 112 now cross-checked"), "\(again.stdout) \(again.stderr)")
    }

    /// `cache verify` checks each part against its range's hash (none is taken for an unvouched file), and
    /// `--repair` fetches a damaged one again as its range.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func cacheVerifyChecksPartsAndRepairsOneAsItsRange() throws {
        let files = try Self.files()
        let server = try TestServer.nginx(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let rendered = try runTartil(["render", "112"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let verified = try runTartil(["cache", "verify", "--json"] + common, home: home)
        #expect(verified.status == 0, "\(verified.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any]
        #expect(report?["checked"] as? Int == 5 && report?["good"] as? Int == 5, "\(verified.stdout)")
        let path = home + "/cache/\(Self.reciter)/112002.mp3"
        var damaged = try Data(contentsOf: URL(fileURLWithPath: path))
        damaged[damaged.count / 2] ^= 0x10
        try damaged.write(to: URL(fileURLWithPath: path))
        let repaired = try runTartil(["cache", "verify", "--repair", "--json"] + common, home: home)
        // The repair's download events come first, one per line; the report is the last line.
        let last = repaired.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let after = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        #expect((after?["removed"] as? [[String: Any]])?.first?["ayah"] as? Int == 2, "\(repaired.stdout)\(repaired.stderr)")
        #expect(after?["repaired"] as? Int == 1, "\(repaired.stdout)")
        let whole = try Data(contentsOf: URL(fileURLWithPath: files.directory + "/files/112.mp3"))
        let part = try #require(files.table.file(surah: 112)?.part(ayah: 2))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == whole[part.bytes])
    }

    /// A server that ignores ranges (the whole file comes, the part is cut out of it as it arrives), one that
    /// answers with a wider range than asked (cut the same way), and one that resets the connection midway once
    /// (the part is resumed from where it stopped): the same samples.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: ["ignore-range", "wide-range", "reset-once"])
    func aServerThatIgnoresRangesOrResetsGivesTheSameSamples(fault: String) throws {
        let files = try Self.files()
        let server = try TestServer.faults(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/\(fault)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let result = try runTartil(["render", "113:4-114:2"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(result.status == 0, "\(result.stderr)")
        var expected = Data()
        for (surah, ayah) in [(113, 4), (113, 5), (114, 0), (114, 1), (114, 2)] { expected += try files.samples(surah, ayah) }
        #expect(try wavPCMBytes(home + "/out.wav") == expected)
        if fault == "ignore-range" { #expect(server.requestLog.allSatisfy { $0.hasPrefix("200 ") }, "\(server.requestLog)") }
        if fault == "wide-range" {
            #expect(server.requestLog.allSatisfy { $0.hasPrefix("206 ") }, "\(server.requestLog)")
            #expect(server.requestLog.count == 5, "each part once, no retry: \(server.requestLog)")
        }
    }

    /// Surah 67 (31 parts with its basmala) rebuilt and its table built by `table build`, for a run longer than the
    /// fixture's surahs: (the folder its file is in, the table's path).
    static func surah67() throws -> (files: String, table: String) {
        let directory = try files().directory + "/67"
        let table = directory + "/table.tsv"
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if FileManager.default.fileExists(atPath: table) { return (directory + "/files", table) }
        try SurahTableBuildTests.makeSurahFiles(reciter: "ibrahim-alakhdar", surahs: [67], into: directory + "/files")
        let built = try runTartil([
            "table", "build", directory + "/files", "--timings-format", "quranstatic", "--reciter", reciter, "-o", table + ".new",
        ])
        guard built.status == 0 else { throw TartilError(.failure, "table build: \(built.stderr)") }
        try FileManager.default.moveItem(atPath: table + ".new", toPath: table)
        return (directory + "/files", table)
    }

    /// Listening through a surah from a server that ignores range requests: the first part's answer (the whole
    /// file) shows it, and the rest of the surah is asked for as one run whose body is cut into every part, each
    /// stored as soon as the body has passed it. About one file goes over the wire (counted by the server as the
    /// bytes it wrote before the client closed), not the file up to each part again for every part; the sound is
    /// still the mpg123 program's decode of the whole file.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: [114, 67])
    func listeningThroughASurahFromAServerThatIgnoresRangesMovesAboutOneFile(surah: Int) throws {
        let files = try Self.files()
        let (folder, tablePath) = surah == 67 ? try Self.surah67() : (files.directory + "/files", TestPaths.fixtures + "/surah-table.tsv")
        let server = try TestServer.faults(root: folder)
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/ignore-range/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.removeItem(atPath: home + "/tables/\(Self.reciter).tsv")
        try FileManager.default.copyItem(atPath: tablePath, toPath: home + "/tables/\(Self.reciter).tsv")
        let table = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: tablePath))), file: tablePath)
        let file = try #require(table.file(surah: surah))
        let played = try runTartil(["play", String(surah), "--output", "wav:" + home + "/out.wav"] + common, home: home)
        #expect(played.status == 0, "\(played.stderr)")
        let decode = try SurahTableBuildTests.output(["mpg123", "-q", "-s", folder + "/" + AyahRef.pad3(surah) + ".mp3"])
        #expect(try wavPCMBytes(home + "/out.wav") == decode, "not the whole file's decode")
        Thread.sleep(forTimeInterval: 0.3)  // the server logs an answer once it has written it
        let log = server.requestLog
        #expect(log.allSatisfy { $0.hasPrefix("200 ") }, "\(log)")
        // The first part alone (whose answer shows the range ignored), then one run: from the second part's first
        // byte to the file's end.
        let parts = file.parts
        #expect(log.count == 2, "\(log)")
        #expect(log.first?.hasSuffix(" bytes=\(parts[0].bytes.lowerBound)-\(parts[0].bytes.upperBound)") == true, "\(log)")
        #expect(log.last?.hasSuffix(" bytes=\(parts[1].bytes.lowerBound)-\(parts.last!.bytes.upperBound)") == true, "\(log)")
        // What the server wrote, less what was in the sockets when the client closed (at most 64 KiB a request).
        let sent = log.compactMap { Int($0.split(separator: " ")[1]) }.reduce(0, +)
        #expect(sent <= file.bytes * 6 / 5 + parts[0].bytes.count + 65536 * log.count, "\(sent) bytes for a file of \(file.bytes): \(log)")
        // Before: every part asked for alone, each answered with the file up to that part at least.
        let partByPart = file.parts.reduce(0) { $0 + $1.bytes.upperBound + 1 }
        #expect(partByPart > file.bytes * 3, "\(partByPart)")
        print("surah \(surah): \(sent) bytes on the wire for a file of \(file.bytes) (\(Double(sent) / Double(file.bytes))x; part by part: \(Double(partByPart) / Double(file.bytes))x)")
        // Every part is in the cache as its range of the file.
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + AyahRef.pad3(surah) + ".mp3"))
        for part in file.parts {
            let name = home + "/cache/\(Self.reciter)/" + AyahRef(unchecked: surah, part.ayah).fileStem + ".mp3"
            #expect(try Data(contentsOf: URL(fileURLWithPath: name)) == whole[part.bytes], "\(name)")
        }
    }

    /// `prefetch` of a third of a surah (its parts asked for by range, not its whole file): from a server that
    /// ignores ranges, the first part's answer shows it and the other parts come as one run, the body cut into
    /// them as it passes: two requests and about the file up to the last part, not the file up to each part again
    /// for every part. From one that honours ranges (nginx, and the fault server's `ok`), each part is its own
    /// range request, as before, answered with exactly its bytes. Every part is in the cache as its range of the
    /// file.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: ["ignore-range", "nginx", "ok"])
    func prefetchingPartOfASurahFromAServerThatIgnoresRangesAsksForItOnce(server kind: String) throws {
        let (folder, tablePath) = try Self.surah67()
        let server = kind == "nginx" ? try TestServer.nginx(root: folder) : try TestServer.faults(root: folder)
        defer { server.stop() }
        let path = kind == "nginx" ? "" : "/" + kind
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)\(path)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.removeItem(atPath: home + "/tables/\(Self.reciter).tsv")
        try FileManager.default.copyItem(atPath: tablePath, toPath: home + "/tables/\(Self.reciter).tsv")
        let table = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: tablePath))), file: tablePath)
        let file = try #require(table.file(surah: 67))
        let fetched = try runTartil(["prefetch", "67:1-10"] + common, home: home)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        Thread.sleep(forTimeInterval: 0.3)  // the server logs an answer once it has written it
        let wanted = file.parts.filter { $0.ayah <= 10 }  // with the basmala's part (ayah 0)
        if kind == "nginx" {
            // nginx's log: `SERIAL PROTOCOL STATUS URI`; a range answered is a 206.
            let log = server.accessLog
            #expect(log.count == wanted.count && log.allSatisfy { $0.contains(" 206 /067.mp3") }, "\(log)")
        } else if kind == "ok" {
            // `STATUS BODY_BYTES PATH RANGE`: each part's range, answered with exactly its bytes.
            let log = server.requestLog.sorted()
            let expected = wanted.map { "206 \($0.bytes.count) /ok/067.mp3 bytes=\($0.bytes.lowerBound)-\($0.bytes.upperBound)" }.sorted()
            #expect(log == expected, "\(log)")
        } else {
            let log = server.requestLog
            #expect(log.allSatisfy { $0.contains(" bytes=") }, "parts by range, not the whole file: \(log)")
            #expect(log.allSatisfy { $0.hasPrefix("200 ") }, "\(log)")
            #expect(log.count == 2, "the first part, then one run: \(log)")
            let sent = log.compactMap { Int($0.split(separator: " ")[1]) }.reduce(0, +)
            let upToLast = wanted.map { $0.bytes.upperBound + 1 }.max()!
            #expect(sent <= 2 * upToLast + 65536 * log.count, "\(sent) bytes for parts up to byte \(upToLast): \(log)")
            let partByPart = wanted.reduce(0) { $0 + $1.bytes.upperBound + 1 }
            #expect(partByPart > 3 * upToLast, "\(partByPart)")
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/067.mp3"))
        for part in wanted {
            let name = home + "/cache/\(Self.reciter)/" + AyahRef(unchecked: 67, part.ayah).fileStem + ".mp3"
            #expect(try Data(contentsOf: URL(fileURLWithPath: name)) == whole[part.bytes], "\(name)")
        }
    }

    /// A probe that fails tells nothing of ranges, so the next ranged part probes again: `prefetch 1:2-3
    /// 114:2-4` from a server that ignores ranges and has no file for surah 1 asks for 1:2 alone (404), then
    /// 1:3 alone (404), then 114:2 alone, whose whole-file answer shows the range ignored, and only then 114:3-4
    /// as one run. No request for 114 leaves before a probe was answered with a range's treatment.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aFailedRangeProbeIsFollowedByAnotherBeforeTheRestIsRegrouped() throws {
        let files = try Self.files()
        let folder = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: files.directory + "/files/114.mp3", toPath: folder + "/114.mp3")
        let server = try TestServer.faults(root: folder)
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/ignore-range/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let fetched = try runTartil(["prefetch", "1:2-3", "114:2-4"] + common, home: home)
        #expect(fetched.status == 1, "surah 1's parts are not on the server: \(fetched.stderr)")
        #expect(fetched.stderr.contains("1:2") && fetched.stderr.contains("HTTP 404"), "\(fetched.stderr)")
        Thread.sleep(forTimeInterval: 0.3)  // the server logs an answer once it has written it
        let range = { (surah: Int, ayah: Int) in try #require(files.table.file(surah: surah)?.part(ayah: ayah)).bytes }
        // `STATUS BODY_BYTES PATH RANGE` without the bytes written (a whole file's, cut short when the client closes).
        let log = server.requestLog.map { $0.split(separator: " ").enumerated().filter { $0.offset != 1 }.map(\.element).joined(separator: " ") }
        #expect(log == [
            "404 /ignore-range/001.mp3 bytes=\(try range(1, 2).lowerBound)-\(try range(1, 2).upperBound)",
            "404 /ignore-range/001.mp3 bytes=\(try range(1, 3).lowerBound)-\(try range(1, 3).upperBound)",
            "200 /ignore-range/114.mp3 bytes=\(try range(114, 2).lowerBound)-\(try range(114, 2).upperBound)",
            "200 /ignore-range/114.mp3 bytes=\(try range(114, 3).lowerBound)-\(try range(114, 4).upperBound)",
        ], "\(server.requestLog)")
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/114.mp3"))
        for ayah in 2...4 {
            let name = home + "/cache/\(Self.reciter)/" + AyahRef(unchecked: 114, ayah).fileStem + ".mp3"
            #expect(try Data(contentsOf: URL(fileURLWithPath: name)) == whole[try range(114, ayah)], "\(name)")
        }
    }

    /// A surah fetched whole from a mirror that serves it with a flipped bit fails its hash and comes from the
    /// next mirror; one whose connection is reset midway is resumed from where it stopped (a range request for
    /// the rest); a server that ignores range requests sends each surah once. A single ayah is still a range.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"), arguments: ["bitflip", "reset-once", "ignore-range"])
    func aSurahFetchedWholeIsCheckedResumedAndFailedOver(fault: String) throws {
        let files = try Self.files()
        let server = try TestServer.faults(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/\(fault)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let mirrors = try String(contentsOfFile: home + "/mirrors.json", encoding: .utf8).replacingOccurrences(
            of: #"{"name": "local", "url": "http://127.0.0.1:\#(server.port)/\#(fault)/{surah3}.mp3"}"#,
            with: #"{"name": "local", "url": "http://127.0.0.1:\#(server.port)/\#(fault)/{surah3}.mp3"}, {"name": "second", "url": "http://127.0.0.1:\#(server.port)/ok/{surah3}.mp3"}"#)
        try mirrors.write(toFile: home + "/mirrors.json", atomically: true, encoding: .utf8)
        let fetched = try runTartil(["prefetch", "113", "114:4"] + common, home: home)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let log = server.requestLog
        let whole = log.filter { $0.contains("/113.mp3") }
        switch fault {
        case "bitflip":
            // The whole file fails its hash on each try at the first mirror, then comes from the second.
            #expect(whole.dropLast().allSatisfy { $0.contains("/bitflip/113.mp3 -") } && whole.last?.hasPrefix("200 ") == true, "\(log)")
            #expect(whole.count >= 2 && whole.last?.contains("/ok/113.mp3 -") == true, "\(log)")
        case "reset-once":
            // The reset reply is not logged; the resume asks for the rest (206) and is the only full answer.
            #expect(whole.count == 1 && whole[0].hasPrefix("206 ") && whole[0].contains("bytes=") && !whole[0].contains("bytes=0-"), "resumed: \(log)")
        default:
            #expect(whole.count == 1 && whole[0].hasPrefix("200 ") && whole[0].hasSuffix(" -"), "\(log)")
        }
        // 114:4 alone is a range request of its own, on every try.
        let part = log.filter { $0.contains("/114.mp3") }
        #expect(!part.isEmpty && part.allSatisfy { $0.contains("/114.mp3 bytes=") }, "\(log)")
        server.stop()
        let rendered = try runTartil(["render", "113", "114:4"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        #expect(try wavPCMBytes(home + "/out.wav") == files.decode(113) + files.samples(114, 4))
    }

    /// Repeats and pauses sized to the ayah, a seek into an ayah, and the journal's positions: as for a per-ayah
    /// reciter (surah, ayah, offset within the ayah).
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func memorisationControlsAndTheJournalWorkAsForPerAyahReciters() throws {
        let files = try Self.files()
        let server = try TestServer.nginx(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let rendered = try runTartil(["render", "112:2", "--repeat", "2", "--pause", "1x"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let ayah = try files.samples(112, 2)
        #expect(try wavPCMBytes(home + "/out.wav") == ayah + Data(count: ayah.count) + ayah + Data(count: ayah.count))
        // --from a second into 112:3: the rest of it, then 112:4.
        let from = try runTartil(["render", "112:3-4", "--from", "0:01"] + common + ["-o", home + "/from.wav"], home: home)
        #expect(from.status == 0, "\(from.stderr)")
        #expect(try wavPCMBytes(home + "/from.wav") == files.samples(112, 3).dropFirst(22050 * 2) + files.samples(112, 4))
        let played = try runTartil(["play", "113:4-5", "--output", "null"] + common, home: home)
        #expect(played.status == 0, "\(played.stderr)")
        let export = try runTartil(["journal", "export"], home: home)
        let starts = export.stdout.split(separator: "\n").filter { $0.contains(#""reason":"ayah-start""#) }
        #expect(starts.count == 2, "\(export.stdout)")
        #expect(starts.first?.contains(#""surah":113"#) == true && starts.first?.contains(#""ayah":4"#) == true, "\(export.stdout)")
        #expect(starts.allSatisfy { $0.contains(#""reciter":"\#(Self.reciter)""#) })
        let resolved = try runTartil(["resolve", "113:4", "--json"] + common, home: home)
        #expect(resolved.status == 0, "\(resolved.stderr)")
        let part = try #require(files.table.file(surah: 113)?.part(ayah: 4))
        let rows = try JSONSerialization.jsonObject(with: Data(resolved.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.first?["byte_range"] as? String == "\(part.bytes.lowerBound)-\(part.bytes.upperBound)", "\(resolved.stdout)")
        #expect(rows?.first?["sha256"] as? String == part.digest.hex)
        #expect(rows?.first?["duration_samples"] as? Int == part.sampleCount)
        #expect((rows?.first?["urls"] as? [String])?.first?.hasSuffix("/113.mp3") == true)
    }

    /// An ayah of a surah the table does not cover cannot be had: render fails and writes nothing; play skips
    /// it and says why.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aSurahNotInTheTableIsNotPlayed() throws {
        let files = try Self.files()
        let server = try TestServer.nginx(root: files.directory + "/files")
        defer { server.stop() }
        let (home, common) = try Self.home(url: "http://127.0.0.1:\(server.port)/{surah3}.mp3")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let rendered = try runTartil(["render", "2:255"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(rendered.status == 1, "\(rendered.stderr)")
        #expect(rendered.stderr.contains("surah 2 is not in \(Self.reciter)'s surah table"), "\(rendered.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/out.wav"))
        // A surah not covered is named as such, its basmala too (not as a recording without one).
        let uncovered = try runTartil(["render", "111"] + common + ["-o", home + "/out.wav"], home: home)
        #expect(uncovered.status == 1)
        #expect(uncovered.stderr.contains("surah 111 is not in \(Self.reciter)'s surah table") && !uncovered.stderr.contains("no basmala"), "\(uncovered.stderr)")
        let played = try runTartil(["play", "2:255", "112:1", "--output", "null"] + common, home: home)
        #expect(played.stderr.contains("surah 2 is not in \(Self.reciter)'s surah table"), "\(played.stderr)")
        #expect(server.accessLog.allSatisfy { !$0.contains("/002.mp3") })
    }
}
