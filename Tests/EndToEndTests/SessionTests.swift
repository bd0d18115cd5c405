import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// The player as a service, through the real binary: commands act on what is heard, return once their position
/// is durable, print one JSON value each, and a reader that goes away never costs a position.
@Suite(.serialized) struct SessionTests {
    let environment = DownloadEnvironment.shared

    /// A directory with the fixture surahs 1 and 112 already cached, and tartil run against it.
    final class Place: Sendable {
        let directory = TestPaths.makeTemporaryDirectory()
        let environment: DownloadEnvironment

        init(_ environment: DownloadEnvironment) throws {
            self.environment = environment
            let prefetch = try run(["prefetch", "1", "112", "--reciter", "fixture"])
            precondition(prefetch.status == 0, prefetch.stderr)
        }

        func run(_ arguments: [String], input: String? = nil) throws -> RunResult {
            let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
            return try runTartil(
                arguments + ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache",
                             "--journal", directory + "/journal.sqlite"],
                input: input, environment: ["TARTIL_RECITER": "fixture"], home: directory)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    /// `stop; positions` sees the stop, 50 times in a row (the position is durable before `stop` returns).
    @Test func stopThenPositionsAlwaysSeesTheStop() throws {
        let place = try Place(environment)
        for round in 0..<50 {
            let result = try place.run(["--json", "-c", "play 112 --output silent; seek 0:0\(round % 5 + 1); stop; positions --surah 112"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = try objects(result.stdout.split(separator: "\n").dropLast().joined(separator: "\n"))
            let stopped = try #require(lines.last)
            let positions = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.split(separator: "\n").last!.utf8)) as? [[String: Any]])
            #expect(positions.first?["reason"] as? String == "stop", "round \(round): \(result.stdout)")
            #expect(positions.first?["ayah"] as? Int == stopped["ayah"] as? Int, "round \(round)")
        }
    }

    /// `wait; resume` continues after what `wait` saw end, 50 times (the end is durable before `wait` returns).
    @Test func waitThenResumeContinuesAfterTheEnd() throws {
        let place = try Place(environment)
        for round in 0..<50 {
            let result = try place.run(["-c", "play 1:\(round % 3 + 1) --output null; wait; resume --output null --json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("resuming fixture at 1:\(round % 3 + 2)"), "round \(round): \(result.stderr)")
        }
    }

    /// A paused `next` moves the pause: `resume` plays from the next ayah's start, and the journal says so.
    @Test func aPausedNextIsWhereResumePlays() throws {
        let place = try Place(environment)
        let result = try place.run(["--json", "-c", "play 112 --output silent; seek 0:02; pause; next; status; resume; stop"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try objects(result.stdout)
        #expect(lines.count == 7, "one JSON value per command")
        let next = lines[3]
        #expect(next["state"] as? String == "paused" && next["ayah"] as? Int == 2)
        #expect((lines[5]["position_samples"] as? Int) == (next["position_samples"] as? Int), "resume starts on the paused sample")
        let history = try place.run(["journal", "export", "--format", "csv"])
        #expect(history.stdout.contains(",112,2,0,0,seek,"), "\(history.stdout)")
    }

    /// A paused seek then resume: the seek is the journal's word for where the listener is; resuming adds no
    /// ayah start at offset 0 of the ayah it landed in (after a crash, resume would go back there and re-hear it).
    @Test func aPausedSeekThenResumeRecordsTheLandingOnce() throws {
        let place = try Place(environment)
        // 112:2 lasts 1.57 s: 0:02 is 0.43 s into 112:3.
        let result = try place.run(["-c", "play 112:2-3 --output silent; pause; seek 0:02; resume; wait"])
        #expect(result.status == 0, "\(result.stderr)")
        let positions = try place.run(["journal", "export", "--format", "csv"]).stdout.split(separator: "\n")
            .filter { $0.contains(",position,") }
        let seek = try #require(positions.firstIndex { $0.contains(",112,3,") && $0.contains(",seek,") }, "\(positions)")
        #expect(!positions[seek].contains(",112,3,0,0,"), "the seek landed inside 112:3")
        let after = positions[(seek + 1)...]
        #expect(after.count == 1 && after.first?.contains(",112,3,") == true && after.first?.contains(",end,") == true, "\(positions)")
    }

    /// The memorisation controls change live and the status says so: options laid out again on the same sample,
    /// a loop that moves to its start, a timer that does not run while paused, a boundary, and a loop cleared by a
    /// new layout.
    @Test func memorisationControlsChangeLive() throws {
        let place = try Place(environment)
        let commands = [
            "play 1:1-4 --output silent", "pause", "seek 0:01", "set repeat 2", "loop 'ayah 1:2' 'ayah 1:3' 2", "sleep 20m",
            "stop-after 1 ayah", "set pause 1x", "set bogus 1", "stop",
        ]
        let result = try place.run(["--json", "-c", commands.joined(separator: "; ")])
        #expect(result.status == 64, "\(result.stderr)")
        let lines = try objects(result.stdout)
        #expect(lines.count == 9, "\(result.stdout)")
        let one = environment.manifest[AyahRef(unchecked: 1, 1)]!.samples
        let repeated = lines[3]
        #expect(repeated["options"] as? String == "--repeat 2")
        #expect(repeated["position_samples"] as? Int == 22050, "the same sample, in the new layout")
        let looped = lines[4]
        #expect(looped["ayah"] as? Int == 2 && looped["position_samples"] as? Int == 2 * one)
        let loop = try #require(looped["loop"] as? [String: Any])
        #expect(loop["passes_left"] as? Int == 2)
        #expect(loop["start_ms"] as? Int == Int((Double(2 * one) / 22.05).rounded()))
        #expect(lines[5]["sleep_left_ms"] as? Int == 1_200_000, "paused: the timer waits")
        #expect(lines[6]["stop_after"] as? String == "1 ayah")
        let paused = lines[7]
        #expect(paused["options"] as? String == "--repeat 2 --pause 1x")
        #expect(paused["loop"] is NSNull, "a new layout clears the loop")
        #expect(paused["ayah"] as? Int == 2 && paused["state"] as? String == "paused")
        #expect((lines[8]["error"] as? String)?.contains("set takes basmala, repeat, repeat-range, pause, cycle-pause or stepped") == true)
    }

    /// A change of speed or volume (a command, a key, MPRIS) is an event, once per change, and not at the start.
    @Test func speedAndVolumeChangesAreEvents() throws {
        let place = try Place(environment)
        let result = try place.run(["-c", "play 1:1-4 --output silent --events --speed 1.1; speed 1.25; volume 80; speed 1.25; volume 80; stop"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = try objects(result.stdout).filter { ["speed", "volume"].contains($0["event"] as? String) }
        #expect(events.count == 2, "\(result.stdout)")
        #expect(events.first?["speed"] as? Double == 1.25)
        #expect(events.last?["volume"] as? Int == 80)
    }

    /// Every command prints exactly one JSON value with --json, a failure included.
    @Test func everyCommandPrintsOneJSONValue() throws {
        let place = try Place(environment)
        let commands = ["play 1:1-2 --output silent", "status", "pause", "seek 0:01", "resume", "next", "prev", "toggle",
                        "toggle", "events off", "seek 99:00", "stop", "bogus", "render 1:1 -o \(place.directory)/x.wav"]
        let result = try place.run(["--json", "-c", commands.joined(separator: "; ")])
        #expect(result.status == 64, "the first failure's code (seek 99:00)")
        // -c stops at the first failure: the commands up to it, each one value.
        let lines = try objects(result.stdout)
        #expect(lines.count == 11, "\(result.stdout)")
        #expect(lines.last?["exit_code"] as? Int == 64)
        #expect((lines.last?["error"] as? String)?.contains("1:39:00 is past the end of 1:1-2") == true)
        let render = try place.run(["--json", "render", "1:1", "-o", place.directory + "/x.wav"])
        let summary = try #require(try objects(render.stdout).first)
        #expect(summary["duration_samples"] as? Int == environment.manifest[AyahRef(unchecked: 1, 1)]!.samples)
    }

    /// A reader that stops reading events ends the event stream, not the session: `head -2` gets its lines,
    /// playback ends, and the journal has the end.
    @Test func aClosedEventsPipeCostsNoPosition() throws {
        let place = try Place(environment)
        let mirrors = try environment.mirrorsFile([environment.clean], in: place.directory)
        let statusFile = place.directory + "/status"
        let output = try shell(
            "{ TARTIL_RECITER=fixture HOME=\(place.directory) XDG_RUNTIME_DIR=\(place.directory)/run \(TestPaths.executable) play 112 --output null --events --mirrors \(mirrors) "
                + "--tables \(environment.tables) --cache-dir \(place.directory)/cache --journal \(place.directory)/journal.sqlite; "
                + "echo $? > \(statusFile); } | head -2")
        #expect(output.split(separator: "\n").count == 2, "\(output)")
        #expect(try String(contentsOfFile: statusFile, encoding: .utf8) == "0\n", "not killed by SIGPIPE (141)")
        let history = try place.run(["history"])
        #expect(history.stdout.contains("ended (finished)"), "\(history.stdout)")
    }
}
