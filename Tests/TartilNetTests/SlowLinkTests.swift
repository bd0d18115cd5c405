import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCache
@testable import TartilCore
@testable import TartilNet

/// tools/netproxy, the slow link the WAN benchmark (tools/bench/wan) runs through, checked with the downloader
/// itself: a link cannot be faster than its round trips and its bandwidth allow. Only lower bounds and a
/// generous upper one are checked (the machine may be busy); tools/netproxy --self-check measures it closely.
@Suite struct SlowLinkTests {
    @Test func aDownloadThroughTheSlowLinkTakesItsRoundTripsAndItsBandwidth() throws {
        let nginx = try TestServer.nginx(root: TestPaths.fixtures)
        defer { nginx.stop() }
        let roundTrip = 0.2
        let megabits = 1
        let link = try TestServer.slowLink(to: nginx.port, rttMilliseconds: Int(roundTrip * 1000), megabitsPerSecond: megabits)
        defer { link.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let settled = DispatchSemaphore(value: 0)
        let downloader = try Downloader(
            cacheDirectory: directory, limits: DownloadLimits(parallel: 1), validate: { _ in nil },
            events: { event in
                switch event {
                case .cached, .failed, .cancelled: settled.signal()
                case .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: break
                }
            })
        let mirror = Mirror(name: "far", template: try URLTemplate(link.base + "/fixture/{surah3}{ayah3}.mp3"))
        let ayat = try (1...7).map { try AyahRef(1, $0) }
        let bytes = try ayat.reduce(0) { total, ayah in
            let path = TestPaths.fixtures + "/fixture/" + String(format: "%03d%03d.mp3", ayah.surah, ayah.ayah)
            return total + (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)
        }
        let start = Date()
        downloader.submit(try ayat.map {
            DownloadRequest(reciter: try ReciterID("fixture"), ayah: $0, mirrors: [mirror], expectation: .unknown(maxBytes: 1 << 20), priority: .prefetch)
        })
        for _ in ayat { #expect(settled.wait(timeout: .now() + 60) == .success) }
        let elapsed = Date().timeIntervalSince(start)
        downloader.shutdown()

        #expect(try Cache(directory: directory).files().count == ayat.count)
        // One transfer at a time: the handshake, one round trip per file, and the bytes over 1 Mbit/s, one after another.
        let serialization = Double(bytes * 8) / Double(megabits * 1_000_000)
        let floor = Double(1 + ayat.count) * roundTrip
        #expect(elapsed >= floor + serialization, "\(elapsed) s for \(bytes) bytes")
        #expect(elapsed < floor + serialization + 10, "\(elapsed) s for \(bytes) bytes")
    }

    /// HTTP/2 streams on a slow link: nginx sends them largely one after another, so a request may wait seconds
    /// for its first byte while the connection is busy. A stall is judged on the connection, not per request, so
    /// none of them is taken for a stall and retried. Here 33 requests share 1 Mbit/s (about 125 kB/s, some 3 s
    /// for all) under a stall rate of 2 kB/s for 1 s: judged one by one (libcurl's low-speed limit), the requests
    /// waiting their turn would time out; judged on the connection, none does.
    @Test func streamsWaitingTheirTurnOnASlowLinkAreNotTakenForStalls() throws {
        let (events, statistics, files) = try download(megabits: 1, freezeAfter: nil)
        let retries = events.compactMap { if case .retrying(let ayah, _, let reason, _) = $0 { "\(ayah): \(reason)" } else { nil } }
        #expect(retries.isEmpty, "\(retries)")
        #expect(statistics.http2Transfers == 33, "\(statistics)")
        #expect(files == 33)
    }

    /// A connection that goes silent (the link's first connection stops after 40 kB) is a stall of every request
    /// on it: each is retried, on a new connection (the dead one is closed, not reused), and every file arrives.
    @Test func aSilentHTTP2ConnectionIsAStallOfItsRequests() throws {
        let (events, statistics, files) = try download(megabits: 10, freezeAfter: 40_000)
        let stalls = events.filter { if case .retrying(_, _, let reason, _) = $0 { reason.hasPrefix("stalled") } else { false } }
        #expect(!stalls.isEmpty, "\(events)")
        #expect(statistics.connections >= 2, "\(statistics)")
        #expect(files == 33, "\(events)")
    }

    /// 33 requests (the same eleven files for three reciters, 340 kB) over HTTPS with HTTP/2 through a slow link,
    /// with a stall rate of 2 kB/s for 1 s: the events, the statistics and the files cached.
    func download(megabits: Int, freezeAfter: Int?) throws -> ([DownloadEvent], DownloadStatistics, Int) {
        let nginx = try TestServer.nginx(root: TestPaths.fixtures, tls: true)
        defer { nginx.stop() }
        let link = try TestServer.slowLink(to: nginx.port, rttMilliseconds: 50, megabitsPerSecond: megabits, freezeAfter: freezeAfter)
        defer { link.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let events = Mutex<[DownloadEvent]>([])
        let settled = DispatchSemaphore(value: 0)
        let downloader = try Downloader(
            cacheDirectory: directory,
            limits: DownloadLimits(parallel: 2, streams: 33, caBundle: TestServer.testAuthorityCertificate, stallSeconds: 1, stallBytesPerSecond: 2_000),
            validate: { _ in nil },
            events: { event in
                events.withLock { $0.append(event) }
                switch event {
                case .cached, .failed, .cancelled: settled.signal()
                case .started, .retrying, .marked, .mirrorAbandoned, .heldElsewhere: break
                }
            })
        let mirror = Mirror(name: "far", template: try URLTemplate("https://127.0.0.1:\(link.port)/fixture/{surah3}{ayah3}.mp3"))
        let ayat = try (1...7).map { try AyahRef(1, $0) } + (1...4).map { try AyahRef(112, $0) }
        let requests = try ["a", "b", "c"].flatMap { name in
            try ayat.map {
                DownloadRequest(reciter: try ReciterID("fixture-\(name)"), ayah: $0, mirrors: [mirror], expectation: .unknown(maxBytes: 1 << 20), priority: .prefetch)
            }
        }
        downloader.submit(requests)
        for _ in requests { #expect(settled.wait(timeout: .now() + 60) == .success) }
        downloader.shutdown()
        return (events.withLock { $0 }, downloader.statistics, try Cache(directory: directory).files().count)
    }
}
