import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// `tartil table build --timings-format` on real surah files rebuilt from the per-ayah recordings
/// (`tools/make-surah-files`), each row checked against the mpg123 program: the range's own decode, less `skip`,
/// is the whole file's decode at the row's samples.
@Suite struct SurahTableBuildTests {
    static let available = TestPaths.sharedReal != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/mpg123")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/sha256sum")
    static let fixtureSource = "ibrahim-alakhdar surahs 1, 112-114 rebuilt from ../shared/real/audio by tools/make-surah-files (basmala 1:1)"

    /// Runs a program; its standard output.
    static func output(_ arguments: [String], input: String? = nil) throws -> Data {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TartilError(.failure, "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)") }
        return data
    }

    static func makeSurahFiles(reciter: String, surahs: [Int], into directory: String, options: [String] = []) throws {
        let source = TestPaths.sharedReal! + "/audio/" + reciter
        _ = try output([TestPaths.repository + "/tools/make-surah-files"] + options + [source, directory] + surahs.map(String.init))
    }

    static func sha256(_ data: Data, scratch: String) throws -> String {
        try data.write(to: URL(fileURLWithPath: scratch))
        return String(String(decoding: try output(["sha256sum", scratch]), as: UTF8.self).prefix(64))
    }

    /// Every row of `table` checked against the files in `directory` with the mpg123 program and sha256sum.
    static func checkWithMpg123(_ table: SurahTable, directory: String) throws {
        let scratch = directory + "/range.mp3"
        for file in table.files {
            let path = directory + "/" + AyahRef.pad3(file.surah) + ".mp3"
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.count == file.bytes)
            #expect(try sha256(bytes, scratch: scratch) == file.digest.hex)
            let whole = try output(["mpg123", "-q", "-s", path])
            let frameBytes = whole.count / file.samples
            #expect(whole.count == file.samples * frameBytes && frameBytes >= 2, "surah \(file.surah): mpg123 decodes \(whole.count) bytes")
            for part in file.parts {
                let range = bytes[part.bytes]
                #expect(try sha256(Data(range), scratch: scratch) == part.digest.hex, "\(file.surah):\(part.ayah)")
                let decoded = try output(["mpg123", "-q", "-s", scratch])
                let start = part.skip * frameBytes
                let end = start + part.sampleCount * frameBytes
                let expected = whole[(part.samples.lowerBound * frameBytes)..<((part.samples.upperBound + 1) * frameBytes)]
                #expect(end <= decoded.count && decoded[start..<end] == expected, "\(file.surah):\(part.ayah) is not the whole decode's samples")
            }
        }
    }

    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func realSurahFilesGiveTheCommittedFixtureAndEveryRangeDecodesExactly() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.makeSurahFiles(reciter: "ibrahim-alakhdar", surahs: [1, 112, 113, 114], into: directory)
        let output = directory + "/table.tsv"
        let result = try runTartil([
            "table", "build", directory, "--timings-format", "quranstatic", "--reciter", "ibrahim-alakhdar-surah", "-o", output, "--source",
            Self.fixtureSource, "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(report?["surahs"] as? [Int] == [1, 112, 113, 114])
        #expect(report?["ayat"] as? Int == 22)
        #expect(report?["basmalas"] as? Int == 3)
        #expect(report?["format"] as? Int == 2)
        #expect((report?["skipped"] as? [[String: String]])?.first?["file"] == "frames.csv")
        // The committed fixture is this build, byte for byte.
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/surah-table.tsv")))
        let table = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: output))), file: output)
        try Self.checkWithMpg123(table, directory: directory)
    }

    /// Another reciter and rate, with an ID3v2 tag kept at the start and Quran Static's placeholder end; the same
    /// timings written in mp3quran's shape give the same rows.
    @Test(.enabled(if: available, "needs ../shared/real, mpg123 and sha256sum"))
    func aTaggedFileAndBothTimingShapesGiveTheSameExactRows() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.makeSurahFiles(reciter: "emad-al-mansary", surahs: [103, 113], into: directory, options: ["--keep-tag", "--placeholder-end"])
        let quranStatic = try runTartil([
            "table", "build", directory, "--timings-format", "quranstatic", "--reciter", "emad-surah", "-o", directory + "/qs.tsv",
        ])
        #expect(quranStatic.status == 0, "\(quranStatic.stderr)")
        // The same timings as mp3quran publishes them: ayah 0 before ayah 1, times in ms.
        let mp3quran = directory + "/mp3quran"
        try FileManager.default.createDirectory(atPath: mp3quran, withIntermediateDirectories: true)
        for surah in [103, 113] {
            let name = AyahRef.pad3(surah) + ".json"
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + "/timings/" + name))) as! [String: Any]
            let segments = json["Segments"] as! [[String: Any]]
            var rows = [#"{"ayah":0,"start_time":0,"end_time":\#(segments[0]["StartMs"] as! Int)}"#]
            for segment in segments {
                let end = segment["DurationMs"] is NSNull ? (segment["StartMs"] as! Int) + 180_000 : segment["EndMs"] as! Int
                rows.append(#"{"ayah":\#(segment["V"] as! Int),"start_time":\#(segment["StartMs"] as! Int),"end_time":\#(end)}"#)
            }
            try ("[" + rows.joined(separator: ",") + "]").write(toFile: mp3quran + "/\(surah).json", atomically: true, encoding: .utf8)
        }
        let fromMp3quran = try runTartil([
            "table", "build", directory, "--timings-format", "mp3quran", "--timings", mp3quran, "--reciter", "emad-surah", "-o", directory + "/mq.tsv",
        ])
        #expect(fromMp3quran.status == 0, "\(fromMp3quran.stderr)")
        let first = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/qs.tsv"))), file: "qs.tsv")
        let second = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/mq.tsv"))), file: "mq.tsv")
        #expect(first.files == second.files)
        #expect(first.files.map { $0.parts.first?.bytes.lowerBound ?? 0 }.allSatisfy { $0 > 0 }, "the ID3v2 tag is not in the first range")
        try Self.checkWithMpg123(first, directory: directory)
    }

    /// Files as published surah files often are, made with lame from a rebuilt surah's decode: VBR with a Xing
    /// frame and a LAME tag (encoder delay and padding, which mpg123 trims), some with an ID3v2 tag, and CBR with
    /// an Info frame, at MPEG-1, MPEG-2 and MPEG-2.5 rates (8000 to 48000 Hz; frames of 1152 or 576 samples).
    /// Same timings: every row is exact against the mpg123 program.
    @Test(
        .enabled(if: available && FileManager.default.isExecutableFile(atPath: "/usr/bin/lame"), "needs ../shared/real, mpg123, sha256sum and lame"),
        arguments: [
            ["-V", "5", "--tt", "Al-Ikhlas"], ["-b", "64", "--resample", "44.1"], ["-V", "2", "--resample", "48"],
            ["-b", "48", "--resample", "32"], ["-b", "16", "--resample", "8"], ["-V", "7", "--resample", "11.025", "--ta", "Ibrahim Al-Akhdar"],
            // Stereo ("-m s": the right channel 7 ms behind the left, so that the two differ). MPEG-1's smallest
            // frames (32 kbit/s at 48 kHz): the bit reservoir reaches about 9 frames back. MPEG-2's smallest (8 kbit/s
            // at 24 kHz: 3 bytes of main data a frame): some 80 frames, past the 64 a range could once start before
            // its ayah (`PrerollSearch`).
            ["-b", "32", "--resample", "48", "-m", "s"],
            ["-b", "8", "--resample", "24", "-m", "s"],
        ])
    func lameEncodedFilesWithGaplessTagsGiveExactRows(options: [String]) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.makeSurahFiles(reciter: "ibrahim-alakhdar", surahs: [112], into: directory + "/rebuilt")
        let encoded = directory + "/encoded"
        try FileManager.default.createDirectory(atPath: encoded + "/timings", withIntermediateDirectories: true)
        _ = try Self.output(["mpg123", "-q", "-w", directory + "/112.wav", directory + "/rebuilt/112.mp3"])
        var source = directory + "/112.wav"
        if options.contains("-m") {
            _ = try Self.output(["sox", "-q", "-R", source, "-c", "2", directory + "/112s.wav", "remix", "1", "1", "delay", "0", "0.007"])
            source = directory + "/112s.wav"
        }
        _ = try Self.output(["lame", "--quiet"] + options + [source, encoded + "/112.mp3"])
        try FileManager.default.copyItem(atPath: directory + "/rebuilt/timings/112.json", toPath: encoded + "/timings/112.json")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: encoded + "/112.mp3")))
        let index = try MPEGStream.frameIndex(of: bytes).get()
        let resample = options.firstIndex(of: "--resample").map { options[$0 + 1] }
        if (MPEGHead.parse(bytes).frame?.bytes ?? 0) >= 192 {  // a smaller first frame has no room for lame's tag
            #expect(index.xing?.encoderDelay != nil && index.gaplessTrimStart > MPEGHead.decoderDelay, "lame writes a LAME tag")
        }
        let result = try runTartil(["table", "build", encoded, "--timings-format", "quranstatic", "--reciter", "lame", "-o", directory + "/t.tsv"])
        #expect(result.status == 0, "\(result.stderr)")
        if resample == "24" {
            let preroll = result.stdout.split(separator: "(at most ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
            #expect(preroll.map { $0 > 64 } == true, "longer than the 64 frames a range could once start before its ayah: \(result.stdout)")
        }
        let table = try SurahTable.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/t.tsv"))), file: "t.tsv")
        let rates = ["44.1": 44100, "48": 48000, "32": 32000, "24": 24000, "8": 8000, "11.025": 11025]
        #expect(table.file(surah: 112)?.sampleRate == resample.flatMap { rates[$0] } ?? 22050)
        try Self.checkWithMpg123(table, directory: encoded)
    }

    /// (arguments after `table build DIR`, the start of the message): usage errors, exit 64, nothing written.
    static let refused: [([String], String)] = [
        (["--timings-format", "json"], "Error: --timings-format takes quranstatic or mp3quran, not 'json'"),
        (["--timings", "/nonexistent"], "Error: --timings /nonexistent needs --timings-format quranstatic or mp3quran"),
        (["--timings-format", "quranstatic", "--timings", "/nonexistent"], "Error: --timings /nonexistent is not a folder of timing files"),
        (["--timings-format", "quranstatic", "--timings", "EMPTY"], "Error: 112.mp3 has no timing file: looked for 112.json in"),
        (["--timings-format", "quranstatic", "--from-cache", "x"], "Error: --timings-format builds from a folder of surah files, not --from-cache x"),
    ]

    @Test(arguments: refused.indices)
    func badInputIsAUsageErrorAndWritesNothing(index: Int) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/fixture/112001.mp3", toPath: directory + "/112.mp3")
        let (options, message) = Self.refused[index]
        let arguments = ["table", "build", directory, "--reciter", "r", "-o", directory + "/out.tsv"] + options.map { $0 == "EMPTY" ? directory + "/empty" : $0 }
        let result = try runTartil(arguments, home: directory)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.tsv"))
    }
}
