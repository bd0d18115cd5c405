import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Every memorisation control, rendered by the real binary, equals what it must be built from the mpg123
/// program's own decodes of the files involved: whole files, slices of them at `round(t × rate)`, and exact
/// silence. Only the sleep timer's fade is not the decode, and its gains are checked one by one.
@Suite struct MemorisationRenderTests {
    let environment = DownloadEnvironment.shared

    /// A piece of the expected output.
    enum Piece {
        /// A file's whole decode.
        case file(Int, Int)
        /// Frames `from..<to` of a file's decode.
        case slice(Int, Int, from: Int, to: Int)
        /// Frames of silence.
        case silence(Int)
    }

    /// Decodes of files (by path) with the mpg123 program, 16-bit mono or stereo as it writes them.
    final class Decodes: @unchecked Sendable {
        private var decoded: [String: Data] = [:]
        private let lock = NSLock()

        func pcm(_ path: String) throws -> Data {
            lock.lock()
            defer { lock.unlock() }
            if let data = decoded[path] { return data }
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["mpg123", "-q", "-s", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            decoded[path] = data
            return data
        }
    }

    static let decodes = Decodes()
    static let hasMpg123 = FileManager.default.isExecutableFile(atPath: "/usr/bin/mpg123")

    /// The expected PCM of `pieces`, files taken from `directory` (16-bit mono).
    static func expected(_ pieces: [Piece], directory: String) throws -> Data {
        func path(_ surah: Int, _ ayah: Int) -> String { directory + "/" + AyahRef(unchecked: surah, ayah).fileStem + ".mp3" }
        var data = Data()
        for piece in pieces {
            switch piece {
            case .file(let surah, let ayah): data += try decodes.pcm(path(surah, ayah))
            case .slice(let surah, let ayah, let from, let to): data += try decodes.pcm(path(surah, ayah))[(from * 2)..<(to * 2)]
            case .silence(let frames): data += Data(count: frames * 2)
            }
        }
        return data
    }

    /// `round(x)` as tartil rounds (half away from zero).
    static func frames(_ seconds: Double, rate: Int = 22050) -> Int { Int((seconds * Double(rate)).rounded()) }

    func samples(_ ayah: Int) -> Int { environment.manifest[AyahRef(unchecked: 1, ayah)]!.samples }

    /// The fixture's 1:1-4 (22050 Hz mono) with each control, against its pieces.
    var cases: [(arguments: [String], pieces: [Piece])] {
        let (n1, n2, n3, n4) = (samples(1), samples(2), samples(3), samples(4))
        let half = { (n: Int) in Int((0.5 * Double(n)).rounded()) }
        let (a, b) = (Self.frames(0.5), Self.frames(1.25))
        return [
            (["--repeat", "2", "--pause", "0.5x"], [
                .file(1, 1), .silence(half(n1)), .file(1, 1), .silence(half(n1)), .file(1, 2), .silence(half(n2)), .file(1, 2),
                .silence(half(n2)), .file(1, 3), .silence(half(n3)), .file(1, 3), .silence(half(n3)), .file(1, 4),
                .silence(half(n4)), .file(1, 4), .silence(half(n4)),
            ]),
            (["--repeat-range", "2", "--cycle-pause", "1.5"], [
                .file(1, 1), .file(1, 2), .file(1, 3), .file(1, 4), .silence(Self.frames(1.5)), .file(1, 1), .file(1, 2), .file(1, 3), .file(1, 4),
            ]),
            (["--stepped", "window=2", "--pause", "0.25"],
             [1, 2, 1, 2, 3, 2, 3, 4, 3, 4].flatMap { [Piece.file(1, $0), .silence(Self.frames(0.25))] }),
            (["--stepped", "--repeat", "2"], [1, 1, 2, 2, 1, 2, 3, 3, 1, 2, 3, 4, 4, 1, 2, 3, 4].map { Piece.file(1, $0) }),
            (["--loop", "1:2+0.5-1:2+1.25 4", "--stop-after", "1 ayah"], [
                .slice(1, 2, from: a, to: b), .slice(1, 2, from: a, to: b), .slice(1, 2, from: a, to: b), .slice(1, 2, from: a, to: n2),
            ]),
            (["--loop", "ayah 1:2 ayah 1:3 2"], [.file(1, 2), .file(1, 3), .file(1, 2), .file(1, 3), .file(1, 4)]),
            (["--loop", "1:2+0.5 1:2+1.25 3"], [
                .slice(1, 2, from: a, to: b), .slice(1, 2, from: a, to: b), .slice(1, 2, from: a, to: n2), .file(1, 3), .file(1, 4),
            ]),
            (["--stop-after", "2 ayat", "--repeat", "3"], [.file(1, 1), .file(1, 1), .file(1, 1), .file(1, 2), .file(1, 2), .file(1, 2)]),
            (["--repeat-range", "inf", "--stop-after", "surah"], [.file(1, 1), .file(1, 2), .file(1, 3), .file(1, 4)]),
            (["--from", "ayah 1:3", "--stop-after", "1 ayah", "--pause", "1x"], [.file(1, 3), .silence(n3)]),
        ]
    }

    @Test(.enabled(if: hasMpg123, "needs the mpg123 program"), arguments: 0..<10)
    func eachControlRendersTheDecodesAndSilenceItMust(index: Int) throws {
        let (arguments, pieces) = cases[index]
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["render", "1:1-4"] + arguments + ["--reciter", "fixture", "-o", directory + "/out.wav"], urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        let rendered = try wavPCMBytes(directory + "/out.wav")
        let expected = try Self.expected(pieces, directory: PlayTests.fixture)
        #expect(rendered.count == expected.count, "\(arguments): \(rendered.count / 2) frames, not \(expected.count / 2)")
        #expect(Data(rendered) == expected, "\(arguments)")
    }

    /// `--repeat inf` with a 5 s timer: exactly 5 s of 1:1 over and over, the last 3 s faded by the square of the
    /// time left (each sample scaled as 32-bit floats and rounded, as the audio thread does).
    @Test(.enabled(if: hasMpg123, "needs the mpg123 program"))
    func theSleepTimerWritesExactlyItsTimeAndFadesItsLastThreeSeconds() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["render", "1:1-4", "--repeat", "inf", "--stop-after", "5s", "--reciter", "fixture", "-o", directory + "/out.wav"],
            urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let rendered = try wavPCMBytes(directory + "/out.wav")
        let total = Self.frames(5)
        #expect(rendered.count == total * 2)
        var loop = Data()
        while loop.count < total * 2 { loop += try Self.expected([.file(1, 1)], directory: PlayTests.fixture) }
        let fade = Self.frames(3)
        let got = rendered.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let source = loop.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(Array(got[..<(total - fade)]) == Array(source[..<(total - fade)]), "before the fade: the decode itself")
        var wrong = 0
        for frame in (total - fade)..<total {
            let gain = StopAfter.fadeGain(framesLeft: total - frame, fadeFrames: fade)
            if got[frame] != Int16((Float(source[frame]) * gain).rounded()) { wrong += 1 }
        }
        #expect(wrong == 0)
        #expect(got[total - 1] == Int16((Float(source[total - 1]) / Float(fade) / Float(fade)).rounded()))
    }

    @Test func aRenderThatWouldNeverEndIsRefused() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (arguments, message) in [
            (["--repeat", "inf"], "--repeat inf goes on for ever"),
            (["--repeat-range", "inf"], "--repeat-range inf goes on for ever"),
            (["--loop", "0:01-0:02"], "the loop goes on for ever"),
            (["--repeat", "inf", "--stop-after", "surah"], "--repeat inf goes on for ever"),
            (["--loop", "0:02-0:01 2"], "must come after its start"),
            (["--loop", "ayah 2:1-2:2 2"], "2:1 is not in what is playing"),
            (["--stepped", "window=1"], "window takes a whole number from 2"),
            (["--pause", "11x"], "--pause takes a time from 0 to 60 s"),
            (["--stop-after", "5 surahs"], "--stop-after takes a time"),
        ] {
            let result = try environment.tartil(
                ["render", "1:1-4"] + arguments + ["--reciter", "fixture", "-o", directory + "/out.wav"], urls: [environment.clean], in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
    }

    /// The real recordings: a stepped review with pauses sized to each ayah, and a loop inside a long ayah of
    /// Ya-Sin, against the mpg123 program's decodes.
    @Test(.enabled(if: TestPaths.sharedReal != nil && hasMpg123, "needs ../shared/real and the mpg123 program"))
    func realRecordingsRenderEveryControlExactly() throws {
        let real = try #require(TestPaths.sharedReal)
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = real + "/audio/ibrahim-alakhdar"
        let common = ["--reciter", "ibrahim-alakhdar", "--cache-dir", directory + "/cache", "--tables", TestPaths.repository + "/reciter-tables"]
        let imported = try runTartil(["cache", "import", source] + common, home: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        func length(_ surah: Int, _ ayah: Int) throws -> Int {
            try Self.decodes.pcm(source + "/" + AyahRef(unchecked: surah, ayah).fileStem + ".mp3").count / 2
        }
        // 112 stepped with a 1x pause: b 1 p | 2 p | b 1 p | 2 p | 3 p | b 1 p | 2 p | 3 p | 4 p | b 1 p | …
        var pieces: [Piece] = []
        for (ayah, basmala) in [(1, true), (2, false), (1, true), (2, false), (3, false), (1, true), (2, false), (3, false), (4, false), (1, true), (2, false), (3, false), (4, false)] {
            if basmala { pieces.append(.file(1, 1)) }
            pieces += [.file(112, ayah), .silence(try length(112, ayah))]
        }
        let (a, b) = (Self.frames(3.5), Self.frames(9))
        let cases: [([String], [Piece])] = [
            (["112", "--stepped", "--pause", "1x"], pieces),
            (["36:12-13", "--loop", "36:12+3.5-36:12+9", "--stop-after", "10s"], []),
            (["36:12-13", "--loop", "36:12+3.5 36:12+9 2"], [
                .slice(36, 12, from: a, to: b), .slice(36, 12, from: a, to: try length(36, 12)), .file(36, 13),
            ]),
        ]
        for (arguments, pieces) in cases {
            let result = try runTartil(["render"] + arguments + common + ["-o", directory + "/out.wav"], home: directory)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let rendered = try wavPCMBytes(directory + "/out.wav")
            if pieces.isEmpty {
                #expect(rendered.count == Self.frames(10) * 2, "\(arguments)")
                continue
            }
            let expected = try Self.expected(pieces, directory: source)
            #expect(rendered.count == expected.count, "\(arguments)")
            #expect(Data(rendered) == expected, "\(arguments)")
        }
    }
}
