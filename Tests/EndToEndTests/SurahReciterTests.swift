import Foundation
import TestSupport
import Testing

/// A reciter of whole-surah files in mirrors.json: read and listed; without a surah table (its published timings
/// are not read yet), refused by every command that would play, render, fetch or resolve its ayat, with a usage
/// error and nothing changed. `SurahPlaybackTests` plays one with a table.
@Suite struct SurahReciterTests {
    static let mirrors = """
        {"version": 1, "reciters": [
          {"id": "whole", "name": "Whole Surahs", "style": "murattal", "files": "surah",
           "timings": "http://127.0.0.1:9/t/{surah}.json", "timings_format": "quranstatic",
           "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}.mp3"}]},
          {"id": "parts", "name": "Per Ayah", "style": "murattal", "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}
        """

    @Test(arguments: [
        ["play", "112", "--output", "null"], ["render", "112", "-o", "out.wav"], ["prefetch", "112"], ["resolve", "112:1"],
    ])
    func commandsThatNeedItsAyatRefuseIt(command: [String]) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.mirrors.write(toFile: directory + "/mirrors.json", atomically: true, encoding: .utf8)
        let common = ["--mirrors", directory + "/mirrors.json", "--tables", directory, "--cache-dir", directory + "/cache"]
        let output = command.map { $0 == "out.wav" ? directory + "/out.wav" : $0 }
        let result = try runTartil(output + common + ["--reciter", "whole"], home: directory)
        #expect(result.status == 64, "\(result.stderr)")
        // No surah table: this build plays, fetches and resolves such a reciter only from one.
        #expect(result.stderr.contains("whole is recorded as one file per surah and has no surah table"), "\(result.stderr)")
        #expect(result.stderr.contains("made by `tartil table build DIR --timings-format quranstatic|mp3quran`"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
        let listed = try runTartil(["reciters"] + common, home: directory)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("whole"))
    }
}
