import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Durations of unpinned ayat: estimated from sizes (`resolve --lengths`, against a real nginx), remembered
/// exactly once decoded, so the second listen's scrubber is exact from the start.
@Suite struct LengthTests {
    let environment = DownloadEnvironment.shared

    /// `32,832`, as the text output writes numbers.
    func grouped(_ value: Int) -> String {
        let digits = String(value)
        return String(digits.enumerated().flatMap { index, digit in index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit] })
    }

    func rows(_ stdout: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [[String: Any]])
    }

    @Test func resolveLearnsUnpinnedLengths() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ayat = (1...7).map { AyahRef(unchecked: 1, $0) } + (1...4).map { AyahRef(unchecked: 112, $0) }
        // Nothing cached: each file's size and first 1 KiB from the mirror.
        let first = try environment.tartil(["resolve", "1", "112", "--reciter", "loose", "--lengths", "--json"], urls: [environment.clean], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        for (row, ayah) in zip(try rows(first.stdout), ayat) {
            let exact = try #require(environment.manifest[ayah])
            #expect(row["estimated"] as? Bool == true, "\(ayah)")
            #expect(row["sample_rate"] as? Int == exact.sampleRate, "\(ayah)")
            let samples = try #require(row["duration_samples"] as? Int)
            #expect(abs(samples - exact.samples) <= (exact.sampleRate >= 32000 ? 1152 : 576), "\(ayah): \(samples) for \(exact.samples)")
        }
        // Without --lengths nothing is asked and nothing is known.
        let plain = try environment.tartil(["resolve", "112:1", "--reciter", "loose", "--json"], urls: [environment.clean], in: directory)
        #expect(try rows(plain.stdout).first?["estimated"] is NSNull)
        // Prefetched (decoded while checked): exact, remembered.
        let prefetch = try environment.tartil(["prefetch", "1:1-3", "--reciter", "loose"], urls: [environment.clean], in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        let second = try environment.tartil(["resolve", "1:1-4", "--reciter", "loose", "--lengths"], urls: [environment.clean], in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        let exact = environment.manifest[AyahRef(unchecked: 1, 1)]!
        #expect(second.stdout.contains("unpinned, \(grouped(exact.samples)) samples @ \(exact.sampleRate) Hz, decoded before"), "\(second.stdout)")
        #expect(second.stdout.contains("4 ayat, none pinned; 4 unpinned: ~"), "\(second.stdout)")
        #expect(second.stdout.contains("(1 estimated)"), "\(second.stdout)")
    }

    /// While the first ayat play, the lengths of those not fetched yet come from length probes: the scrubber is
    /// still marked estimated, but within a frame per ayah of the exact length (the mean of the others, the guess
    /// before, is 30,000 frames off for surah 1 of the fixture, whose files differ in rate).
    @Test func lengthsAreLearnedWhilePlaying() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let common = ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache"]
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = ["play", "1", "--reciter", "loose", "--output", "silent"] + common
        process.environment = isolatedEnvironment(home: directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let exact = (1...7).map { environment.manifest[AyahRef(unchecked: 1, $0)]!.samples }.reduce(0, +)
        var seen: [String: Any] = [:]
        for _ in 0..<60 {
            usleep(100_000)
            let status = try runTartil(["status", "--json"] + common, home: directory)
            guard status.status == 0,
                let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any],
                let samples = object["duration_samples"] as? Int
            else { continue }
            seen = object
            if object["estimated"] as? Bool == true && abs(samples - exact) <= 7 * 1152 { break }
        }
        #expect(seen["estimated"] as? Bool == true, "\(seen)")
        #expect(abs((seen["duration_samples"] as? Int ?? 0) - exact) <= 7 * 1152, "\(seen) for \(exact)")
        _ = try runTartil(["stop"] + common, home: directory)
        process.waitUntilExit()
    }

    @Test func theSecondListenHasAnExactScrubber() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let play = try environment.tartil(["play", "112", "--reciter", "loose", "--output", "null"], urls: [environment.clean], in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let result = try runTartil(
            ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache"],
            input: "play 112 --reciter loose --output silent\nstatus --json\nquit\n", home: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.split(separator: "\n")[0].utf8)) as? [String: Any])
        let ayat = [AyahRef(unchecked: 1, 1)] + (1...4).map { AyahRef(unchecked: 112, $0) }
        #expect(status["estimated"] as? Bool == false, "\(status)")
        #expect(status["duration_samples"] as? Int == ayat.map { environment.manifest[$0]!.samples }.reduce(0, +), "\(status)")
    }
}
