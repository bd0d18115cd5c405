import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCache
@testable import TartilCore
@testable import TartilNet
import TartilSystem

@Suite struct DownloaderTests {
    /// Collects events from the download thread.
    final class Recorder: Sendable {
        let events = Mutex<[DownloadEvent]>([])
        let settled = DispatchSemaphore(value: 0)

        func record(_ event: DownloadEvent) {
            events.withLock { $0.append(event) }
            switch event {
            case .cached, .failed, .cancelled: settled.signal()
            case .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: break
            }
        }
    }

    func requests(_ ayat: [AyahRef], server: TestServer, priority: DownloadRequest.Priority, fault: String = "slow") throws -> [DownloadRequest] {
        let mirror = Mirror(name: fault, template: try URLTemplate(server.base + "/\(fault)/fixture/{surah3}{ayah3}.mp3"))
        return try ayat.map {
            DownloadRequest(reciter: try ReciterID("fixture"), ayah: $0, mirrors: [mirror], expectation: .unknown(maxBytes: 1 << 20), priority: priority)
        }
    }

    /// A fault server over the fixtures (over HTTPS under the test CA with `tls`), an empty cache and a
    /// downloader with `parallel` transfers that trusts the test CA, for `body`.
    func withDownloader(parallel: Int, tls: Bool, _ body: (TestServer, String, Recorder, Downloader) throws -> Void) throws {
        let server = try TestServer.faults(root: TestPaths.fixtures, tls: tls)
        defer { server.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recorder = Recorder()
        let downloader = try Downloader(
            cacheDirectory: directory, limits: DownloadLimits(parallel: parallel, caBundle: TestServer.testAuthorityCertificate),
            validate: { _ in nil }, events: { recorder.record($0) })
        try body(server, directory, recorder, downloader)
    }

    /// Length probes: each file's size and first 1 KiB, from a server that honours ranges or one that ignores
    /// them (stopped after 1 KiB), from the next mirror when one fails, and nil when none answers; never before
    /// a download that is waiting.
    @Test(arguments: [false, true])
    func lengthProbesGiveSizesAndFirstBytes(tls: Bool) throws {
        try withDownloader(parallel: 4, tls: tls) { server, directory, recorder, downloader in
            let mirrors = try ["ok", "ignore-range"].map { Mirror(name: $0, template: try URLTemplate(server.base + "/\($0)/fixture/{surah3}{ayah3}.mp3")) }
            let failing = try Mirror(name: "missing", template: URLTemplate(server.base + "/status-404/fixture/{surah3}{ayah3}.mp3"))
            let answers = Monitor<[String: FileHead?]>([:])
            let reciter = try ReciterID("fixture")
            var heads: [HeadRequest] = []
            for (index, mirror) in mirrors.enumerated() {
                heads += try (1...3).map { HeadRequest(reciter: reciter, ayah: try AyahRef(1, $0 + 3 * index), mirrors: [mirror]) }
            }
            heads.append(HeadRequest(reciter: reciter, ayah: try AyahRef(112, 1), mirrors: [failing, mirrors[0]]))
            heads.append(HeadRequest(reciter: reciter, ayah: try AyahRef(112, 2), mirrors: [failing]))
            downloader.submit(heads: heads) { ayah, head in answers.update { $0["\(ayah)"] = .some(head) } }
            #expect(answers.wait(until: { $0.count == heads.count }, timeout: 30) { _, done in done })
            downloader.shutdown()
            let found = answers.read { $0 }
            let manifest = try ManifestRow.read(TestPaths.fixtures + "/fixture")
            for head in heads.dropLast() {
                let row = try #require(manifest.first { $0.surah == head.ayah.surah && $0.ayah == head.ayah.ayah })
                let file = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/fixture/" + row.file))
                let answer = try #require(found["\(head.ayah)"] ?? nil, "\(head.ayah)")
                #expect(answer.bytes == row.bytes, "\(head.ayah)")
                #expect(answer.first == Array(file.prefix(HeadRequest.firstBytes)), "\(head.ayah)")
            }
            #expect(found["112:2"] == .some(nil))
            #expect(try Cache(directory: directory).files().isEmpty)  // nothing was downloaded
            #expect(recorder.events.withLock { $0 }.isEmpty)
        }
    }

    /// A run of parts (a surah file's ayat asked for together, `DownloadRequest.carried`): one request for their
    /// span, each part cut from the body and stored alone, checked against its own hash, as soon as the body has
    /// passed it; whether the server honours the range (nginx: 206), sends more (a wider 206), ignores it (the
    /// whole file, 200), or resets the connection midway (the retry asks only for what is not stored yet, and is
    /// answered with exactly that range, as the fault server's `ok` answers one).
    @Test(arguments: ["nginx", "wide-range", "ignore-range", "reset-once", "ok"])
    func aRunOfPartsIsCutFromOneBody(fault: String) throws {
        try withDownloader(parallel: 2, tls: false) { faults, directory, recorder, downloader in
            let nginx = fault == "nginx" ? try TestServer.nginx(root: TestPaths.fixtures) : nil
            defer { nginx?.stop() }
            let server = nginx ?? faults
            let file = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/fixture/001005.mp3"))
            let windows = [0...9_999, 9_000...17_999, 17_000...(file.count - 1)]
            let ayat = try (1...3).map { try AyahRef(1, $0) }
            let parts = try (0..<3).map { index in
                Cache.SurahFilePart(
                    ayah: ayat[index], bytes: windows[index],
                    expectation: .pinned(PinnedFile(bytes: windows[index].count, sha256: try SHA256.hash(file[windows[index]]), samples: 1, sampleRate: 22050)))
            }
            let path = nginx == nil ? "/\(fault)/fixture/{surah3}005.mp3" : "/fixture/{surah3}005.mp3"
            let mirror = Mirror(name: fault, template: try URLTemplate(server.base + path, layout: .surah))
            downloader.submit([
                DownloadRequest(
                    reciter: try ReciterID("fixture"), ayah: ayat[2], mirrors: [mirror], expectation: parts[2].expectation, priority: .playback,
                    window: windows[2], carried: Array(parts.prefix(2)))
            ])
            for _ in 0..<3 { #expect(recorder.settled.wait(timeout: .now() + 30) == .success) }
            let support: PartRequests.RangeSupport = fault == "ignore-range" ? .ignored : .honoured
            #expect(downloader.rangeSupport(of: try ReciterID("fixture")) == support)
            downloader.shutdown()
            let cached = recorder.events.withLock { $0 }.compactMap { event -> AyahRef? in
                if case .cached(let ayah, _, false) = event { return ayah } else { return nil }
            }
            #expect(cached == ayat, "each part reported as it is stored, in file order")
            for (ayah, window) in zip(ayat, windows) {
                let stored = try Data(contentsOf: URL(fileURLWithPath: directory + "/fixture/" + ayah.fileStem + ".mp3"))
                #expect(stored == file[window], "\(ayah)")
            }
            let log = server.requestLog
            switch fault {
            case "nginx": #expect(server.accessLog.count == 1 && server.accessLog[0].hasSuffix(" 206 /fixture/001005.mp3"), "\(server.accessLog)")
            case "wide-range": #expect(log.count == 1 && log[0].hasPrefix("206 ") && log[0].hasSuffix(" bytes=0-28069"), "\(log)")
            case "ignore-range": #expect(log == ["200 28070 /ignore-range/fixture/001005.mp3 bytes=0-28069"])
            case "ok": #expect(log == ["206 28070 /ok/fixture/001005.mp3 bytes=0-28069"])
            default:
                // The reset is not logged; the first part was stored from it, so the retry starts at the second.
                #expect(log == ["206 19070 /reset-once/fixture/001005.mp3 bytes=9000-28069"])
            }
        }
    }

    /// What the player needs next jumps ahead of bulk prefetch that is still queued.
    @Test(arguments: [false, true])
    func playbackRequestsGoBeforeQueuedPrefetch(tls: Bool) throws {
        try withDownloader(parallel: 1, tls: tls) { server, directory, recorder, downloader in
            let bulk = try (1...7).map { try AyahRef(1, $0) }
            downloader.submit(try requests(bulk, server: server, priority: .prefetch))
            usleep(50_000)
            downloader.submit(try requests([try AyahRef(112, 1)], server: server, priority: .playback))
            for _ in 0..<8 { #expect(recorder.settled.wait(timeout: .now() + 30) == .success) }
            downloader.shutdown()
            let events = recorder.events.withLock { $0 }
            let started = events.compactMap { event -> String? in
                if case .started(let ayah, _) = event { return ayah.description } else { return nil }
            }
            // Over HTTPS all eight may be announced at first (the server is taken to multiplex until it answers);
            // what counts is the order they arrive in: the one on the wire, then the player's.
            let cached = events.compactMap { event -> String? in
                if case .cached(let ayah, _, _) = event { return ayah.description } else { return nil }
            }
            #expect(started.count == 8)
            #expect((cached.firstIndex(of: "112:1") ?? 99) <= 2, "arrived in order \(cached)")
            #expect(try Cache(directory: directory).files().count == 8)
        }
    }

    @Test(arguments: [false, true])
    func cancelStopsEverythingAndKeepsPartialFiles(tls: Bool) throws {
        try withDownloader(parallel: 2, tls: tls) { server, directory, recorder, downloader in
            // A trickle (a byte every 0.2 s): both transfers have a few bytes and neither is done when cancelled.
            downloader.submit(try requests(try (1...7).map { try AyahRef(1, $0) }, server: server, priority: .prefetch, fault: "trickle"))
            usleep(700_000)
            downloader.cancel()
            for _ in 0..<7 { #expect(recorder.settled.wait(timeout: .now() + 10) == .success) }
            downloader.shutdown()
            let events = recorder.events.withLock { $0 }
            let cancelled = events.filter { if case .cancelled = $0 { true } else { false } }.count
            #expect(cancelled == 7)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/fixture")) ?? []
            // Whatever is under a final name is complete; interrupted transfers left resumable .part files.
            for name in names where name.hasSuffix(".mp3") {
                let original = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/fixture/" + name))
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/fixture/" + name)) == original)
            }
            #expect(names.contains { $0.hasSuffix(".part") }, "\(names) \(events)")
        }
    }

    /// Ctrl-C is final: a request submitted after `cancel()` is reported cancelled, not downloaded.
    @Test(arguments: [false, true])
    func cancellationIsPermanent(tls: Bool) throws {
        try withDownloader(parallel: 2, tls: tls) { server, directory, recorder, downloader in
            downloader.cancel()
            usleep(100_000)  // the download thread has taken the cancel
            downloader.submit(try requests([try AyahRef(112, 1), try AyahRef(112, 2)], server: server, priority: .prefetch, fault: "ok"))
            for _ in 0..<2 { #expect(recorder.settled.wait(timeout: .now() + 10) == .success) }
            downloader.shutdown()
            let events = recorder.events.withLock { $0 }
            #expect(events.allSatisfy { if case .cancelled = $0 { true } else { false } }, "\(events)")
            #expect(try Cache(directory: directory).files().isEmpty)
        }
    }

    /// Over HTTP/2 a server gets `streams` requests in flight once its first answer came over HTTP/2, more than
    /// its `parallel` connections (which carry them: two here); over HTTP/1.1 never more than `parallel`.
    @Test(arguments: [false, true])
    func requestsInFlightFollowWhatTheServerSpeaks(tls: Bool) throws {
        let server = try TestServer.nginx(root: TestPaths.fixtures, tls: tls)
        defer { server.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recorder = Recorder()
        let downloader = try Downloader(
            cacheDirectory: directory, limits: DownloadLimits(parallel: 2, streams: 16, caBundle: TestServer.testAuthorityCertificate),
            validate: { _ in nil }, events: { recorder.record($0) })
        let mirror = Mirror(name: "nginx", template: try URLTemplate(server.base + "/fixture/{surah3}{ayah3}.mp3"))
        let ayat = try (1...7).map { try AyahRef(1, $0) } + (1...4).map { try AyahRef(112, $0) }
        downloader.submit(try ayat.map {
            DownloadRequest(reciter: try ReciterID("fixture"), ayah: $0, mirrors: [mirror], expectation: .unknown(maxBytes: 1 << 20), priority: .prefetch)
        })
        for _ in ayat { #expect(recorder.settled.wait(timeout: .now() + 30) == .success) }
        downloader.shutdown()
        let statistics = downloader.statistics
        #expect(statistics.transfers == 11)
        #expect(statistics.http2Transfers == (tls ? 11 : 0))
        #expect(statistics.connections <= 2, "\(statistics)")
        #expect(tls ? statistics.mostInFlight > 2 : statistics.mostInFlight <= 2, "\(statistics)")
        #expect(try Cache(directory: directory).files().count == 11)
    }

    /// An https server is taken to multiplex until it answers (all requests wait for its first connection, as
    /// curl --parallel does); one that answers over HTTP/1.1 (the fault server) then gets its connections' worth:
    /// the requests libcurl had not sent are taken back and wait their turn here, so a request of the player's
    /// made meanwhile goes next (left in libcurl's queue, it would come last). Every file arrives, over at most
    /// `parallel` connections, and each is announced started once.
    @Test func anHTTPSServerThatAnswersOverHTTP1GetsItsConnectionsWorth() throws {
        try withDownloader(parallel: 2, tls: true) { server, directory, recorder, downloader in
            let bulk = try (1...7).map { try AyahRef(1, $0) } + (1...3).map { try AyahRef(112, $0) }
            downloader.submit(try requests(bulk, server: server, priority: .prefetch))  // "slow": 64 KiB/s each
            #expect(recorder.settled.wait(timeout: .now() + 30) == .success)  // the first has arrived
            let urgent = try AyahRef(112, 4)
            downloader.submit(try requests([urgent], server: server, priority: .playback))
            for _ in bulk { #expect(recorder.settled.wait(timeout: .now() + 30) == .success) }
            downloader.shutdown()
            let events = recorder.events.withLock { $0 }
            let cached = events.compactMap { event -> String? in
                if case .cached(let ayah, _, _) = event { return ayah.description } else { return nil }
            }
            // Only the two on the wire when it came (and one more that may have taken a turn while the first file
            // was being committed) arrive before it; left in libcurl's queue, it would arrive last.
            #expect((cached.firstIndex(of: urgent.description) ?? 99) <= 4, "arrived in order \(cached)")
            let statistics = downloader.statistics
            #expect(statistics.transfers == bulk.count + 1, "\(statistics)")  // the taken-back ones were never transfers
            #expect(statistics.http2Transfers == 0)
            #expect(statistics.connections <= 2, "\(statistics)")
            #expect(statistics.mostInFlight >= bulk.count, "\(statistics)")  // all at once, before the first answer
            let started = events.compactMap { event -> String? in
                if case .started(let ayah, _) = event { return ayah.description } else { return nil }
            }
            #expect(started.sorted() == (bulk + [urgent]).map(\.description).sorted())
            #expect(try Cache(directory: directory).files().count == bulk.count + 1)
        }
    }

    /// A thread that cannot open the cache makes the downloader fail to start with the reason, instead of
    /// leaving `shutdown` (or every request) waiting forever.
    @Test(arguments: [1, 2])
    func aThreadThatCannotOpenTheCacheIsReported(failingOpen: Int) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let opens = Atomic<Int>(0)
        do {
            _ = try Downloader(
                cacheDirectory: directory, limits: DownloadLimits(), policy: DownloadPolicy(), validate: { _ in nil }, events: { _ in },
                openCache: { path throws(CacheError) in
                    // The first open is the caller's check; then the download thread's and the committer's, in
                    // either order: one of them fails.
                    let number = opens.add(1, ordering: .relaxed).newValue
                    if number == 1 + failingOpen { throw CacheError(.index, "injected failure") }
                    return try Cache(directory: path)
                })
            Issue.record("the downloader started")
        } catch {
            #expect(error.message.contains("injected failure"), "\(error)")
        }
    }
}
