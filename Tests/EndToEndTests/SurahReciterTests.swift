import Foundation
import TestSupport
import Testing

/// A reciter of whole-surah files in mirrors.json: read and listed. Without a surah table and without published
/// timings to learn its surahs from, refused by every command that would play, render, fetch or resolve its ayat,
/// with a usage error and nothing changed; with timings it cannot reach, a failure that names them, and nothing
/// written. `SurahPlaybackTests` plays such reciters, with a table and by learning.
@Suite struct SurahReciterTests {
    static let mirrors = """
        {"version": 1, "reciters": [
          {"id": "whole", "name": "Whole Surahs", "style": "murattal", "files": "surah",
           "timings": "http://127.0.0.1:9/t/{surah}.json", "timings_format": "quranstatic",
           "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}.mp3"}]},
          {"id": "bare", "name": "Bare Surahs", "style": "murattal", "files": "surah",
           "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/bare/{surah3}.mp3"}]},
          {"id": "parts", "name": "Per Ayah", "style": "murattal", "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}
        """

    static let commands: [[String]] = [
        ["play", "112", "--output", "null"], ["render", "112", "-o", "out.wav"], ["prefetch", "112"], ["resolve", "112:1"],
    ]

    func run(_ command: [String], reciter: String) throws -> (RunResult, String) {
        let directory = TestPaths.makeTemporaryDirectory()
        try Self.mirrors.write(toFile: directory + "/mirrors.json", atomically: true, encoding: .utf8)
        let common = ["--mirrors", directory + "/mirrors.json", "--tables", directory, "--cache-dir", directory + "/cache"]
        let output = command.map { $0 == "out.wav" ? directory + "/out.wav" : $0 }
        return (try runTartil(output + common + ["--reciter", reciter], home: directory), directory)
    }

    @Test(arguments: commands)
    func withNoTableAndNoTimingsEveryCommandIsRefused(command: [String]) throws {
        let (result, directory) = try run(command, reciter: "bare")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("bare is recorded as one file per surah and has no surah table"), "\(result.stderr)")
        #expect(result.stderr.contains(#"and no published timings ("timings" in mirrors.json) to learn its surahs from"#), "\(result.stderr)")
        #expect(result.stderr.contains("make a table with `tartil table build DIR --timings-format quranstatic|mp3quran`"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
        let listed = try runTartil(["reciters", "--mirrors", directory + "/mirrors.json"], home: directory)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("whole") && listed.stdout.contains("bare"))
    }

    /// Its timings cannot be had: play, render and prefetch fail naming them, and nothing is written or
    /// learned; resolve lists the ayah as not learned yet.
    @Test(arguments: commands)
    func timingsThatCannotBeHadFailClearly(command: [String]) throws {
        let (result, directory) = try run(command, reciter: "whole")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if command[0] == "resolve" {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("not learned yet"), "\(result.stdout)")
            return
        }
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("surah 112's timings (http://127.0.0.1:9/t/112.json): "), "\(result.stderr)")
        #expect(result.stderr.contains(command[0] == "prefetch" ? "surah 112 cannot be fetched: " : "surah 112"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/cache/whole/surah-table.tsv"))
    }
}
