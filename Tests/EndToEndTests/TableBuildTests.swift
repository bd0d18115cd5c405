import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// `tartil table build` on the fixtures and, when present, on the real recordings.
@Suite struct TableBuildTests {
    func parsedTable(_ path: String, reciter: String) throws -> ReciterTable {
        try ReciterTable.parse(try String(contentsOfFile: path, encoding: .utf8), file: path, expected: try ReciterID(reciter))
    }

    @Test func buildsTheFixtureTable() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixtures = TestPaths.fixtures + "/fixture"
        let output = directory + "/fixture.tsv"
        let result = try runTartil(["table", "build", fixtures, "--reciter", "fixture", "-o", output, "--source", "tools/make-fixtures"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("wrote \(output): 11 ayat"))
        #expect(result.stdout.contains("complete surahs: 1, 112"))
        #expect(result.stderr.contains("skipped 001000.mp3: ayah 0 is a basmala file, not an ayah"))
        #expect(result.stderr.contains("skipped manifest.csv: not an .mp3 file"))
        let table = try parsedTable(output, reciter: "fixture")
        #expect(table.source == "tools/make-fixtures")
        for row in try ManifestRow.read(fixtures) where row.ayah > 0 {
            let pinned = try #require(table.files[try AyahRef(row.surah, row.ayah)])
            #expect(pinned == PinnedFile(bytes: row.bytes, sha256: row.sha256, samples: row.samples, sampleRate: row.sampleRate))
        }
    }

    @Test func defaultOutputIsTheTablesDirectoryAndResolveUsesIt() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let mirrors = home + "/mirrors.json"
        try #"{"version": 1, "reciters": [{"id": "fixture", "name": "Fixture", "style": "murattal", "mirrors": [{"name": "local", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}"#
            .write(toFile: mirrors, atomically: true, encoding: .utf8)
        let build = try runTartil(["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "--json"], home: home)
        #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(build.stdout.utf8)) as? [String: Any]
        #expect(summary?["table"] as? String == home + "/data/tartil/reciter-tables/fixture.tsv")
        #expect(summary?["complete_surahs"] as? [Int] == [1, 112])
        let resolve = try runTartil(["resolve", "112", "--reciter", "fixture", "--mirrors", mirrors], home: home)
        #expect(resolve.stdout.contains("4 ayat, all pinned"), "\(resolve.stdout)\(resolve.stderr)")
        let reciters = try runTartil(["reciters", "--mirrors", mirrors], home: home)
        #expect(reciters.stdout.contains("11/6236"))
    }

    @Test func aBrokenFileFailsTheBuildAndWritesNothing() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/mp3"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/001001.mp3", toPath: source + "/001001.mp3")
        try Data("<html>404</html>".utf8).write(to: URL(fileURLWithPath: source + "/001002.mp3"))
        let output = directory + "/out.tsv"
        let result = try runTartil(["table", "build", source, "--reciter", "x", "-o", output])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: 1 file could not be read as MPEG audio, no table was written: 001002.mp3"))
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["mp3"])
    }

    /// A reciter prefetched from a real nginx (unpinned: trusted on first use, cross-checked against a second
    /// mirror) gives, from the cache, the very table `table build` makes from the same audio; its source line
    /// says where the files came from; with it the reciter is pinned.
    @Test func aTableFromTheCacheEqualsTheTableFromTheFolder() throws {
        let environment = DownloadEnvironment.shared
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let urls = [environment.clean, environment.fault("ok")]
        let prefetch = try environment.tartil(["prefetch", "1", "112", "--reciter", "loose"], urls: urls, in: directory)
        #expect(prefetch.status == 0, "\(prefetch.stdout)\(prefetch.stderr)")
        let output = directory + "/tables/loose.tsv"
        try FileManager.default.createDirectory(atPath: directory + "/tables", withIntermediateDirectories: true)
        let build = try environment.tartil(["table", "build", "--from-cache", "Loose", "-o", output, "--json"], urls: urls, in: directory)
        #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(build.stdout.utf8)) as? [String: Any]
        #expect(report?["ayat"] as? Int == 11 && report?["reciter"] as? String == "loose")
        let folder = try runTartil(["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "loose", "-o", directory + "/folder.tsv"])
        #expect(folder.status == 0, "\(folder.stderr)")
        let fromCache = try parsedTable(output, reciter: "loose")
        #expect(fromCache.files == (try parsedTable(directory + "/folder.tsv", reciter: "loose")).files)
        #expect(fromCache.source.hasPrefix("trusted on first use: 11 files verified in the cache at \(directory)/cache"), "\(fromCache.source)")
        #expect(fromCache.source.hasSuffix("downloaded from m1 (11); 11 cross-checked"), "\(fromCache.source)")
        // Put in a tables folder, it pins the reciter.
        let mirrors = try environment.mirrorsFile(urls, in: directory)
        let reciters = try runTartil(["reciters", "--mirrors", mirrors, "--tables", directory + "/tables"], home: directory)
        #expect(reciters.stdout.contains("11/6236"), "\(reciters.stdout)")
    }

    /// No reciter, an unknown one, an empty cache, or a folder as well: usage errors (64) that write nothing.
    @Test func aTableFromTheCacheNeedsAKnownReciterWithVerifiedFiles() throws {
        let environment = DownloadEnvironment.shared
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/out.tsv"
        let cases: [([String], String)] = [
            (["table", "build", "--from-cache", "nobody", "-o", output], "nobody"),
            (["table", "build", "--from-cache", "loose", "-o", output], "holds no verified files of loose: download some first"),
            (["table", "build", TestPaths.fixtures + "/fixture", "--from-cache", "loose", "-o", output], "a folder or --from-cache, not both"),
            (["table", "build", "-o", output], "needs a folder of SSSAAA.mp3 files, or --from-cache <id>"),
            (["table", "build", "--from-cache", "loose", "--reciter", "fixture", "-o", output], "differs from --from-cache loose"),
        ]
        for (arguments, message) in cases {
            let result = try environment.tartil(arguments, urls: [environment.clean], in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: ") && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// `-o` a folder (or a path under a file) is refused before any file is read; a FIFO or a device such as
    /// /dev/stdout is written through: the table arrives there, and the FIFO is still a FIFO.
    @Test func theOutputIsCheckedFirstAndADeviceOrFIFOIsWrittenThrough() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixtures = TestPaths.fixtures + "/fixture"
        for (bad, reason) in [(directory, "is a folder"), (fixtures + "/001001.mp3/t.tsv", "is a file, not a folder")] {
            let refused = try runTartil(["table", "build", fixtures, "--reciter", "fixture", "-o", bad])
            #expect(refused.status == 64 && refused.stderr.contains(reason), "\(refused.stderr)")
            #expect(!refused.stderr.contains("skipped"), "refused before the folder was read: \(refused.stderr)")
        }
        let printed = try runTartil(["table", "build", fixtures, "--reciter", "fixture", "-o", "/dev/stdout", "--source", "tools/make-fixtures"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let rows = try ReciterTable.parse(bytes: Array(printed.stdout.split(separator: "wrote /dev/stdout")[0].utf8), file: "stdout")
        #expect(rows.coverage == 11)
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let pipe = Pipe()
        reader.standardOutput = pipe
        try reader.run()
        let written = try runTartil(["table", "build", fixtures, "--reciter", "fixture", "-o", fifo])
        let read = pipe.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try ReciterTable.parse(bytes: Array(read), file: "fifo").coverage == 11)
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
    }

    @Test func aFolderWithoutAyahFilesIsBadInput() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        let result = try runTartil(["table", "build", directory, "--reciter", "x", "-o", directory + "/t.tsv"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: \(directory) holds no SSSAAA.mp3 files"))
    }

    /// The committed whole-Qur'an tables come from ../shared/real/full (tools/gen-tables); for every file present
    /// in ../shared/real/audio, their row is exactly what `table build` computes from the audio itself.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"), arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"])
    func realRecordingsRebuildTheCommittedRows(reciter: String) throws {
        let real = try #require(TestPaths.sharedReal)
        let committed = try parsedTable(TestPaths.repository + "/reciter-tables/\(reciter).tsv", reciter: reciter)
        #expect(committed.files.count == Catalog.totalAyat, "every ayah pinned")
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/\(reciter).tsv"
        let result = try runTartil(["table", "build", "\(real)/audio/\(reciter)", "--reciter", reciter, "-o", output, "--source", "audio"])
        #expect(result.status == 0, "\(result.stderr)")
        let built = try parsedTable(output, reciter: reciter)
        #expect(built.files.count == 181)
        for (ayah, file) in built.files { #expect(committed.files[ayah] == file, "\(reciter) \(ayah)") }
    }

    /// The committed tables are what tools/gen-tables writes from ../shared/real/full, byte for byte.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the whole-Qur'an manifests)"))
    func committedTablesAreTheGeneratorsOutput() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.repository + "/tools/gen-tables")
        process.arguments = ["--check", try #require(TestPaths.sharedReal)]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
