import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Runs a shell pipeline and returns its standard output (tests use it for reference decodes by the mpg123 program).
func shell(_ command: String) throws -> String {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output
}

/// Where the PCM starts in a WAV file: after the `data` chunk's header, found by walking the chunks (80 bytes
/// into a file tartil wrote, whose JUNK chunk leaves room for RF64's ds64; 44 into a stream).
func wavDataOffset(_ data: Data) -> Int {
    let bytes = [UInt8](data.prefix(4096))
    var offset = 12
    while offset + 8 <= bytes.count {
        let size = (0..<4).reduce(0) { $0 | Int(bytes[offset + 4 + $1]) << (8 * $1) }
        if String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) == "data" { return offset + 8 }
        offset += 8 + size + size % 2
    }
    return bytes.count
}

/// The PCM of a WAV file tartil wrote (its `data` chunk's bytes).
func wavPCMBytes(_ path: String) throws -> Data {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.dropFirst(wavDataOffset(data))
}

/// SHA-256 and size of the PCM in a WAV file tartil wrote, and its header (up to the PCM).
func wavPCM(_ path: String) throws -> (sha256: String, bytes: Int, header: [UInt8]) {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let offset = wavDataOffset(data)
    let sha = try shell("tail -c +\(offset + 1) '\(path)' | sha256sum")
    return (String(sha.prefix(64)), data.count - offset, Array(data.prefix(offset)))
}

/// The mpg123 program's decode of `files`, concatenated, then `skippingFrames` dropped (of `channels`
/// 16-bit samples each): SHA-256 and size.
func mpg123Reference(_ files: [String], skippingFrames: Int = 0, channels: Int = 1) throws -> (sha256: String, bytes: Int) {
    let list = files.map { "'\($0)'" }.joined(separator: " ")
    let skip = skippingFrames * 2 * channels
    // One decode for both figures (decoding twice, once for each, was most of mpg123's time in the suite): the
    // PCM goes to a temporary file that sha256sum and wc then read.
    let output = try shell("""
        pcm=$(mktemp) && for f in \(list); do mpg123 -q -s "$f"; done | tail -c +\(skip + 1) >"$pcm" \
            && sha256sum <"$pcm" && wc -c <"$pcm"; status=$?; rm -f "$pcm"; exit $status
        """).split(separator: "\n")
    guard output.count == 2 else { return ("", -1) }
    return (String(output[0].prefix(64)), Int(output[1].trimmedWhitespace) ?? -1)
}

@Suite struct PlayTests {
    let environment = DownloadEnvironment.shared
    static let fixture = TestPaths.fixtures + "/fixture"

    static func file(_ surah: Int, _ ayah: Int) -> String { fixture + "/" + AyahRef(unchecked: surah, ayah).fileStem + ".mp3" }
    /// The fixture mixes formats on purpose; these runs share one: 1:1-4 at 22050 Hz mono, 112 at 44100 Hz mono.
    static let surahOneStart = (1...4).map { file(1, $0) }
    static let ikhlas = (1...4).map { file(112, $0) }

    /// A reciter's `max_speed` in mirrors.json: `--speed` above it is refused (exit 64, nothing written), at it
    /// plays, and the live `speed` command is held to it too.
    @Test func maxSpeedBoundsEverySpeed() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = directory + "/capped.json"
        try """
            {"version": 1, "reciters": [{"id": "fixture", "name": "Fixture", "style": "murattal", "max_speed": 1.25,
              "mirrors": [{"name": "m1", "url": "\(environment.clean)"}]}]}
            """.write(toFile: mirrors, atomically: true, encoding: .utf8)
        func run(_ arguments: [String]) throws -> RunResult {
            try runTartil(
                arguments + ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache",
                             "--ca-bundle", TestServer.testAuthorityCertificate],
                home: directory)
        }
        let refused = try run(["render", "112:1", "--basmala", "off", "--reciter", "fixture", "--speed", "1.5", "-o", directory + "/fast.wav"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--speed 1.5: fixture is played at most at 1.25 (max_speed in mirrors.json)"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/fast.wav"))
        let capped = try run(["render", "112:1", "--basmala", "off", "--reciter", "fixture", "--speed", "1.25", "-o", directory + "/capped.wav"])
        #expect(capped.status == 0, "\(capped.stderr) \(capped.stdout)")
        let live = try run(["-c", "play 112:1 --reciter fixture --output null; speed 1.5"])
        #expect(live.status == 64)
        #expect(live.stderr.contains("1.25"), "\(live.stderr)")
    }

    /// `TARTIL_TRACE_START=1` (for tools/bench/play) writes the CLOCK_MONOTONIC times of main and of the first PCM
    /// handed to the output, once each and in that order; without it nothing is traced, and the output is the same.
    @Test func theStartTraceMarksMainAndTheFirstSampleOnlyWhenAsked() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["render", "112", "--basmala", "off", "--reciter", "fixture", "-o", directory + "/out.wav"]
        let traced = try environment.tartil(arguments, urls: [environment.clean], in: directory, environment: ["TARTIL_TRACE_START": "1"])
        #expect(traced.status == 0, "\(traced.stderr)")
        let lines = traced.stderr.split(separator: "\n").filter { $0.hasPrefix("tartil-trace: ") }.map { $0.split(separator: " ") }
        #expect(lines.map { $0.count } == [3, 3], "\(traced.stderr)")
        #expect(lines.map { String($0[1]) } == ["main", "first-sample"])
        let times = lines.compactMap { Int($0[2]) }
        #expect(times.count == 2 && times[0] > 0 && times[0] <= times[1])
        let tracedWAV = try wavPCM(directory + "/out.wav")
        for off in ["0", ""] {
            let plain = try environment.tartil(arguments, urls: [environment.clean], in: directory, environment: ["TARTIL_TRACE_START": off])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(!plain.stderr.contains("tartil-trace"))
            #expect(try wavPCM(directory + "/out.wav").sha256 == tracedWAV.sha256)
        }
    }

    @Test(arguments: [("1:1-4", surahOneStart), ("112 --basmala off", ikhlas)])
    func renderIsTheConcatenationOfMpg123sOwnDecodes(reference text: String, files: [String]) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let words = text.split(separator: " ").map(String.init)
        let result = try environment.tartil(
            ["render"] + words + ["--reciter", "fixture", "-o", directory + "/out.wav"], urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let rendered = try wavPCM(directory + "/out.wav")
        let reference = try mpg123Reference(files)
        #expect(rendered.bytes == reference.bytes)
        #expect(rendered.sha256 == reference.sha256)
        // RIFF header with a JUNK chunk (room for RF64's ds64), then 16-bit PCM, mono, the files' rate.
        #expect(rendered.header.count == 80)
        #expect(Array(rendered.header[0..<4]) == Array("RIFF".utf8) && Array(rendered.header[8..<16]) == Array("WAVEJUNK".utf8))
        let riffSize = (0..<4).reduce(0) { $0 | Int(rendered.header[4 + $1]) << (8 * $1) }
        #expect(riffSize == 72 + rendered.bytes)
        #expect(Array(rendered.header[48..<52]) == Array("fmt ".utf8))
        let rate = Int(rendered.header[60]) | Int(rendered.header[61]) << 8 | Int(rendered.header[62]) << 16
        #expect(rate == (words[0] == "112" ? 44100 : 22050))
        #expect(Int(rendered.header[58]) == 1 && Int(rendered.header[70]) == 16)
    }

    /// `--speed 1` and `--volume 100` are the decode itself; other speeds render within one libsonic block of
    /// input ÷ speed.
    @Test(arguments: [("1", 1.0), ("1.5", 1.5), ("0.75", 0.75)])
    func renderAtASpeedHasTheStretchedLength(text: String, speed: Double) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["render", "1:1-4", "--reciter", "fixture", "--speed", text, "--volume", "100", "-o", directory + "/out.wav"],
            urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let rendered = try wavPCM(directory + "/out.wav")
        let reference = try mpg123Reference(Self.surahOneStart)
        if speed == 1 {
            #expect(rendered.sha256 == reference.sha256)
        } else {
            let expected = Double(reference.bytes / 2) / speed
            #expect(abs(Double(rendered.bytes / 2) - expected) <= Double(2 * 22050 / 65), "\(rendered.bytes / 2) frames, not about \(expected)")
        }
    }

    @Test func aRenderThatWouldMixFormatsFailsClearlyAndWritesNothing() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["render", "1", "--reciter", "fixture", "-o", directory + "/out.wav"], urls: [environment.clean], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("the audio changes format (22050 Hz, mono → 44100 Hz, 2 channels), which one WAV file cannot hold"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.hasSuffix(".wav") && !$0.hasSuffix(".part") })
    }

    @Test(arguments: ["0:01", "2.5", "3.14159", "5.9", "33%"])
    func aSeekStartsOnTheRoundedSampleOfTheConcatenation(from: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["render", "1:1-4", "--reciter", "fixture", "--from", from, "-o", directory + "/out.wav"], urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let rate = environment.manifest[AyahRef(unchecked: 1, 1)]!.sampleRate
        let total = (1...4).map { environment.manifest[AyahRef(unchecked: 1, $0)]!.samples }.reduce(0, +)
        let skip: Int
        switch try SeekTarget.parse(from) {
        case .time(let seconds): skip = Int((seconds * Double(rate)).rounded())
        case .fraction(let share): skip = Int((share * Double(total)).rounded())
        default: Issue.record("unexpected target"); return
        }
        let reference = try mpg123Reference(Self.surahOneStart, skippingFrames: skip)
        let rendered = try wavPCM(directory + "/out.wav")
        #expect(rendered.bytes == reference.bytes, "\(from)")
        #expect(rendered.sha256 == reference.sha256, "\(from)")
    }

    /// A plan that starts inside a pause has no file yet to give the output its format: it used to spin at
    /// 100% CPU forever. Now the silence takes the next file's format and the render is the tail of the whole.
    @Test func aStartInsideAPauseRendersTheTailOfTheWhole() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, extra) in [("whole", [String]()), ("tail", ["--from", "1.989"])] {
            let result = try environment.tartil(
                ["render", "1:1-2", "--pause", "2", "--reciter", "fixture", "-o", directory + "/\(name).wav"] + extra,
                urls: [environment.clean], in: directory)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let whole = try wavPCMBytes(directory + "/whole.wav")
        let tail = try wavPCMBytes(directory + "/tail.wav")
        let rate = environment.manifest[AyahRef(unchecked: 1, 1)]!.sampleRate
        let first = environment.manifest[AyahRef(unchecked: 1, 1)]!.samples
        #expect(Int((1.989 * Double(rate)).rounded()) > first, "the start is inside the pause after 1:1")
        #expect(tail == whole.dropFirst(Int((1.989 * Double(rate)).rounded()) * 2))
    }

    /// Every ayah failing, with pauses after each: the pauses are passed over (nothing follows them to hear)
    /// and play ends with the failures instead of spinning.
    @Test func pausesAroundAyatThatAllFailEnd() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["play", "12:1-9", "--from", "0:02", "--pause", "0.1", "--repeat", "2", "--reciter", "fixture", "--output", "null"],
            urls: [environment.clean], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("9 ayat could not be played: 12:1-9 (mirror 1: HTTP 404)"))
    }

    @Test func aSlowMirrorStartsAfterTheFirstAyahBuffersVisiblyAndEndsComplete() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Nine items: 1:1-4, the basmala, 112:1-4. Files are asked for three items ahead of the one playing, so
        // 112's files cannot even be requested before surah 1 has begun to play.
        let result = try environment.tartil(
            ["play", "1:1-4", "112", "--reciter", "fixture", "--output", "null", "--events"],
            urls: [environment.fault("slow")], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        let kinds = events.map { $0["event"] as? String ?? "?" }
        let firstHeard = try #require(kinds.firstIndex(of: "ayah"))
        #expect(events[firstHeard]["surah"] as? Int == 1 && events[firstHeard]["ayah"] as? Int == 1)
        // It waited for surah 112, visibly, after playing had begun.
        let waits = kinds.indices.filter { kinds[$0] == "buffering" && events[$0]["surah"] as? Int == 112 }
        #expect(waits.contains { $0 > firstHeard }, "\(result.stdout)")
        #expect(events.contains { $0["event"] as? String == "state" && $0["state"] as? String == "buffering" })
        // Every item was heard, in order, and playback finished.
        let heard = events.filter { $0["event"] as? String == "ayah" }.compactMap { $0["index"] as? Int }
        #expect(heard == Array(0..<9))
        #expect(kinds.last == "end" && events.last?["state"] as? String == "finished")
    }

    @Test func alsasNullDeviceEndToEnd() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["play", "112", "--reciter", "fixture", "--device", "null", "--events"], urls: [environment.clean], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#"{"event":"ayah","index":4,"surah":112,"ayah":4,"kind":"ayah","repetition":1,"cycle":1,"review_for":null}"#))
        #expect(result.stdout.hasSuffix(#"{"event":"end","state":"finished"}"# + "\n"))
    }

    @Test func aMissingSoundCardGetsAClearMessage() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try environment.tartil(
            ["play", "112", "--reciter", "fixture", "--device", "no-such-card"], urls: [environment.clean], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot open the ALSA device 'no-such-card'"))
        #expect(result.stderr.contains("--device null"))
    }

    @Test func anAyahThatFailsEverywhereIsSkippedAndReported() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 112:2's file is missing from a copy of the fixture served by nginx.
        let root = directory + "/served"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: root + "/fixture")
        try FileManager.default.removeItem(atPath: root + "/fixture/112002.mp3")
        let server = try TestServer.nginx(root: root)
        defer { server.stop() }
        let result = try environment.tartil(
            ["play", "112", "--reciter", "fixture", "--output", "null", "--events"],
            urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory)
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""event":"error""#) && result.stdout.contains("skipped 112:2"))
        #expect(result.stdout.contains(#"{"event":"ayah","index":4,"surah":112,"ayah":4,"kind":"ayah","repetition":1,"cycle":1,"review_for":null}"#))
        #expect(result.stderr.contains("1 ayah could not be played: 112:2 (mirror 1: HTTP 404)"))

        let render = try environment.tartil(
            ["render", "112", "--reciter", "fixture", "-o", directory + "/out.wav"],
            urls: [server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory)
        #expect(render.status == 1)
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.hasSuffix(".part") })
    }

    /// A file that passes verification but stops decoding part of the way (112:2: its first 6000 bytes, 20,000
    /// zero bytes where mpg123 gives up its resync, then the rest): its ayah is skipped and named, `play` goes on
    /// with 112:3 and exits 1 with the skipped message, and `render` fails without writing its file.
    @Test func anAyahThatStopsDecodingPartOfTheWayIsSkippedAndReported() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = directory + "/served"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: root + "/fixture")
        let bad = root + "/fixture/112002.mp3"
        let original = try Data(contentsOf: URL(fileURLWithPath: bad))
        try (original.prefix(6000) + Data(count: 20_000) + original.dropFirst(6000)).write(to: URL(fileURLWithPath: bad))
        // The fixture's table, with 112:2 pinned to those bytes (so they are verified, and then decoded).
        let tables = directory + "/tables"
        try FileManager.default.createDirectory(atPath: tables, withIntermediateDirectories: true)
        let size = try FileManager.default.attributesOfItem(atPath: bad)[.size] as? Int ?? 0
        let table = try String(contentsOfFile: environment.tables + "/fixture.tsv", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map { line -> String in
                let fields = line.split(separator: "\t").map(String.init)
                guard fields.count == 6, fields[0] == "112", fields[1] == "2" else { return String(line) }
                return ["112", "2", "\(size)", sha256(bad), fields[4], fields[5]].joined(separator: "\t")
            }
        try table.joined(separator: "\n").write(toFile: tables + "/fixture.tsv", atomically: true, encoding: .utf8)
        let server = try TestServer.nginx(root: root)
        defer { server.stop() }
        let mirrors = try environment.mirrorsFile([server.base + "/fixture/{surah3}{ayah3}.mp3"], in: directory)
        let common = ["--reciter", "fixture", "--mirrors", mirrors, "--tables", tables, "--cache-dir", directory + "/cache"]
        let result = try runTartil(["play", "112", "--output", "null", "--events"] + common, home: directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("1 ayah could not be played: 112:2 (112002.mp3 stopped decoding: "), "\(result.stderr)")
        #expect(result.stdout.contains(#""event":"error""#) && result.stdout.contains("skipped 112:2"), "\(result.stdout)")
        #expect(result.stdout.contains(#"{"event":"ayah","index":4,"surah":112,"ayah":4,"kind":"ayah","repetition":1,"cycle":1,"review_for":null}"#))
        #expect(result.stdout.hasSuffix(#"{"event":"end","state":"finished"}"# + "\n"), "played on to the end")

        let render = try runTartil(["render", "112", "--basmala", "off", "-o", directory + "/out.wav"] + common, home: directory)
        #expect(render.status == 1, "\(render.stderr)")
        #expect(render.stderr.contains("112002.mp3 stopped decoding"), "\(render.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.wav"))
    }

    /// A play that fails before a sample is heard records no position: offline with nothing cached (every file
    /// fails), or without its sound device. The journal's last position is still what was heard before, and
    /// `resume` goes on from there.
    @Test func aPlayThatFailsBeforeAnySoundRecordsNoPosition() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let heard = try environment.tartil(["play", "112:1-2", "--reciter", "fixture", "--output", "null"], urls: [environment.clean], in: directory)
        #expect(heard.status == 0, "\(heard.stderr)")
        func positions() throws -> [Substring] {
            try environment.tartil(["journal", "export", "--format", "csv"], urls: [environment.clean], in: directory).stdout
                .split(separator: "\n").filter { $0.contains(",position,") }
        }
        let before = try positions()
        #expect(before.last?.contains(",112,2,") == true && before.last?.contains(",end,") == true, "\(before)")
        // Offline: nothing of 1:2-4 is cached and the only mirror refuses connections.
        let offline = try environment.tartil(
            ["play", "1:2-4", "--reciter", "fixture", "--output", "null"], urls: ["http://127.0.0.1:1/fixture/{surah3}{ayah3}.mp3"],
            in: directory)
        #expect(offline.status == 1, "\(offline.stderr)")
        #expect(offline.stderr.contains("3 ayat could not be played: 1:2-4"), "\(offline.stderr)")
        let noCard = try environment.tartil(
            ["play", "112:3", "--reciter", "fixture", "--device", "no-such-card"], urls: [environment.clean], in: directory)
        #expect(noCard.status == 1, "\(noCard.stderr)")
        #expect(try positions() == before, "nothing was heard: nothing recorded")
        let resumed = try environment.tartil(["resume", "--output", "null"], urls: [environment.clean], in: directory)
        #expect(resumed.stderr.contains("resuming fixture at 112:3"), "\(resumed.stderr)")
    }

    @Test func theREPLDrivenThroughAPipe() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rate = environment.manifest[AyahRef(unchecked: 1, 1)]!.sampleRate
        let script = """
            play 1:1-4 --reciter fixture --output silent
            seek 0:02
            status --json
            pause
            status --json
            seek 1:3
            status --json
            seek 112:1
            resume
            next
            status --json
            quit
            """
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let result = try runTartil(
            ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache"], input: script, home: directory)
        #expect(result.status == 64, "\(result.stderr)")  // the one bad line: seek 112:1
        #expect(result.stderr.contains("112:1 is not in what is playing (1:1-4)"))
        let statuses = result.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        #expect(statuses.count == 4, "\(result.stdout)")
        func samples(_ status: [String: Any]) -> Int { status["position_samples"] as? Int ?? -1 }
        #expect(samples(statuses[0]) == 2 * rate)
        #expect(statuses[1]["state"] as? String == "paused")
        #expect((2 * rate...3 * rate).contains(samples(statuses[1])), "\(statuses[1])")
        // An ayah seek while paused moves the paused position to the ayah's first sample.
        let ayahStart = (1...2).map { environment.manifest[AyahRef(unchecked: 1, $0)]!.samples }.reduce(0, +)
        #expect(samples(statuses[2]) == ayahStart && statuses[2]["ayah"] as? Int == 3)
        #expect(statuses[3]["ayah"] as? Int == 4 && statuses[3]["state"] as? String != "paused", "\(statuses[3])")
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalStopsPlaybackWithExitCode130(signal: Int32) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = [
            "play", "1:1-4", "--reciter", "fixture", "--output", "silent", "--events", "--mirrors", mirrors, "--tables",
            environment.tables, "--cache-dir", directory + "/cache",
        ]
        process.environment = ["XDG_RUNTIME_DIR": directory + "/run", "HOME": directory, "XDG_STATE_HOME": directory + "/state"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let started = Date()
        try process.run()
        Thread.sleep(forTimeInterval: 1.5)  // the four ayat last about 6 s at real-time pace
        kill(process.processIdentifier, signal)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(Date().timeIntervalSince(started) < 4, "stopping should be prompt")
        #expect(text.contains(#"{"event":"state","state":"playing"}"#))
        #expect(text.hasSuffix(#"{"event":"end","state":"stopped"}"# + "\n"), "\(text)")
    }

    @Test func badInputIsRefusedWithExitCode64() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (arguments, message) in [
            (["play", "112", "--basmala", "maybe"], "--basmala takes auto or off, not 'maybe'"),
            (["play", "112", "--repeat", "0"], "--repeat takes a count from 1 to 99 or inf, not '0'"),
            (["play", "112", "--pause", "-1"], "--pause takes a time from 0 to 60 s (2, 1.5s, 500ms, 0:30) or a multiple of the ayah's length from 0x to 10x (1x, 0.5x, 2.25x), not '-1'"),
            (["play", "112", "--output", "speakers"], "--output takes alsa"),
            (["play", "112", "--from", "2:255"], "--from 2:255: that ayah is not in 112:1-4"),
            (["play", "112", "--from", "+30"], "--from takes a time, a share or an ayah"),
            (["render", "112"], "render needs --to <file.wav>"),
            (["play", "112", "--speed", "2.5"], "--speed takes a number from 0.5 to 2 in steps of 0.05, not '2.5'"),
            (["play", "112", "--speed", "1.33"], "--speed takes a number from 0.5 to 2 in steps of 0.05, not '1.33'"),
            (["play", "112", "--volume", "151"], "--volume takes a whole number from 0 to 150 (percent), not '151'"),
            (["render", "112", "-o", directory + "/past.wav", "--volume", "+5"], "--volume takes a whole number from 0 to 150"),
            (["speed", "1.5"], "speed: nothing is playing"),
            (["volume", "+5"], "volume: nothing is playing"),
            (["seek", "3:20"], "seek: nothing is playing"),
            (["play", "112", "--from", "112:03"], "1:52:03 is past the end of surah 112, which lasts 0:"),
            (["play", "112", "--from", "112:03"], "; for ayah 112:3 write 'ayah 112:3'"),
            (["render", "1:1-4", "-o", directory + "/past.wav", "--from", "7"], "0:07 is past the end of 1:1-4, which lasts 0:05.9"),
        ] {
            let reciter = ["seek", "speed", "volume"].contains(arguments[0]) ? [] : ["--reciter", "fixture"]
            let result = try environment.tartil(arguments + reciter, urls: [environment.clean], in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/past.wav"), "a refused render writes nothing")
    }

    /// The three real reciters (when ../shared/real is present): every surah they have, rendered, equals the
    /// mpg123 program's decodes of the same files, concatenated.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"), arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"])
    func realRecitersRenderBitExact(reciter: String) throws {
        let real = try #require(TestPaths.sharedReal)
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = real + "/audio/" + reciter
        let common = ["--cache-dir", directory + "/cache", "--tables", TestPaths.repository + "/reciter-tables"]
        let imported = try runTartil(["cache", "import", source, "--reciter", reciter] + common, home: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let surahs = [1, 36, 67, 78, 103, 108, 112, 113, 114]
        var files: [String] = []
        for surah in surahs {
            if surah != 1 { files.append(source + "/001001.mp3") }
            let count = try Catalog.surah(surah).ayahCount
            files += (1...count).map { source + "/" + AyahRef(unchecked: surah, $0).fileStem + ".mp3" }
        }
        let result = try runTartil(
            ["render"] + surahs.map(String.init) + ["--reciter", reciter, "-o", directory + "/all.wav"] + common, home: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let rendered = try wavPCM(directory + "/all.wav")
        let reference = try mpg123Reference(files)
        #expect(rendered.bytes == reference.bytes)
        #expect(rendered.sha256 == reference.sha256, "\(reciter)")

        // And a seek into surah 67 starts on round(t × rate) of its part of the plan.
        let tablePath = TestPaths.repository + "/reciter-tables/\(reciter).tsv"
        let table = try ReciterTable.parse(try String(contentsOfFile: tablePath, encoding: .utf8), file: tablePath)
        let rate = try #require(table.files[AyahRef(unchecked: 67, 1)]).sampleRate
        let channels = Int(rendered.header[58])  // in the fmt chunk, after RIFF and JUNK
        let seek = try runTartil(
            ["render", "67", "--from", "83.5", "--reciter", reciter, "-o", directory + "/seek.wav"] + common, home: directory)
        #expect(seek.status == 0, "\(seek.stderr)")
        let mulk = [source + "/001001.mp3"] + (1...30).map { source + "/067\(String(format: "%03d", $0)).mp3" }
        let seekReference = try mpg123Reference(mulk, skippingFrames: Int((83.5 * Double(rate)).rounded()), channels: channels)
        #expect(try wavPCM(directory + "/seek.wav").sha256 == seekReference.sha256)
    }
}
