import Foundation
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
                case .started, .retrying, .marked, .mirrorAbandoned: break
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
}
