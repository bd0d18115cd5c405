import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TartilCore

/// A private session bus for one test: `dbus-daemon --session` on a socket in its own folder, stopped with it.
final class SessionBus: Sendable {
    static let tools = ["dbus-daemon", "playerctl", "busctl", "dbus-monitor"]
    /// Whether the programs these tests drive tartil with are installed (tools/install-deps installs them).
    static let toolsPresent = tools.allSatisfy { tool in
        ["/usr/bin", "/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    let directory = TestPaths.makeTemporaryDirectory()
    let daemon = ChildProcess()
    var address: String { "unix:path=\(directory)/bus" }

    init() throws {
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: directory + "/bus") { usleep(10_000) }
    }

    /// Runs `program` (playerctl, busctl…) against this bus: its exit status, output and errors.
    func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
        process.arguments = arguments
        process.environment = ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin", "HOME": directory]
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout.trimmingCharacters(in: .whitespacesAndNewlines), stderr)
    }

    /// `playerctl -p tartil ARGUMENTS`.
    func playerctl(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try run("playerctl", ["-p", "tartil"] + arguments)
    }

    /// A property of tartil's Player object, as busctl prints it (`s "Playing"`, `x 500000`).
    func property(_ name: String, on bus: String = "org.mpris.MediaPlayer2.tartil") throws -> String {
        try run("busctl", ["--address=\(address)", "get-property", bus, "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", name]).stdout
    }

    /// The names on the bus.
    func names() throws -> String {
        try run("busctl", ["--address=\(address)", "list", "--no-pager", "--acquired"]).stdout
    }

    /// Waits until `condition` holds (polling, up to 5 s); whether it did.
    func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<100 {
            if try condition() { return true }
            usleep(50_000)
        }
        return false
    }

    deinit {
        kill(daemon.processIdentifier, SIGKILL)  // SIGTERM can be blocked in processes the test runner starts
        daemon.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// tartil as an MPRIS player on a private session bus, driven as a desktop would (playerctl, busctl), every answer
/// checked against `tartil status --json` through the control socket.
@Suite(.serialized, .enabled(if: SessionBus.toolsPresent, "needs dbus-daemon, playerctl, busctl and dbus-monitor (tools/install-deps)"))
struct MPRISTests {
    let environment = DownloadEnvironment.shared

    func statusOf(_ home: ControlTests.Home) throws -> [String: Any] {
        let result = try home.run(["status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    }

    /// A player of surah 1 on `bus`, paused at once so that it does not end during the test, and visible on the bus.
    func startPausedPlayer(_ home: ControlTests.Home, _ bus: SessionBus, _ extra: [String] = []) throws -> Process {
        let player = try home.startPlayer(["play", "1", "--output", "silent"] + extra, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(try home.run(["pause"]).status == 0)
        return player
    }

    @Test func playerctlControlsThePlayerAsTheSocketSeesIt() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let player = try startPausedPlayer(home, bus)
        defer { if player.isRunning { player.terminate() } }

        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        var status = try statusOf(home)
        #expect(status["state"] as? String == "paused")
        let rate = try #require(status["sample_rate"] as? Int)
        let metadata = try bus.playerctl(
            "metadata", "--format", "{{mpris:trackid}}|{{xesam:title}}|{{xesam:album}}|{{xesam:artist}}|{{xesam:trackNumber}}|{{mpris:length}}")
        let fields = metadata.stdout.components(separatedBy: "|")
        #expect(fields.dropLast().joined(separator: "|") == "'/org/tartil/surah/1'|Al-Faatiha 1:\(status["ayah"] as? Int ?? 0)|Al-Faatiha|Fixture|\(status["ayah"] as? Int ?? 0)", "\(metadata.stderr)")
        // The length is the scrubber's (duration_ms, each ayah at its own rate), in microseconds.
        let length = try #require(Int(fields.last ?? ""), "\(metadata.stdout)")
        #expect(abs(length - (status["duration_ms"] as? Int ?? 0) * 1000) <= 500, "\(length) µs for \(status)")

        // Position set and read back: sample-exact on the status's timeline.
        #expect(try bus.playerctl("position", "4.5").status == 0)
        status = try statusOf(home)
        #expect(status["position_samples"] as? Int == Int((4.5 * Double(rate)).rounded()))
        #expect(try bus.property("Position") == "x 4500000")
        #expect(try bus.playerctl("position").stdout == "4.500000")
        #expect(status["state"] as? String == "paused", "seeking keeps a paused player paused")
        // Where the surah's files change rate (1:5 is 44100 Hz stereo, after three ayat at 22050 Hz), the same.
        #expect(try bus.playerctl("position", "7").status == 0)
        #expect(try statusOf(home)["position_ms"] as? Int == 7000)
        let seven = try #require(Double(try bus.playerctl("position").stdout))
        #expect(abs(seven - 7) <= 0.5 / 44_100 + 1e-6, "on the sample nearest 7 s at 44100 Hz: \(seven)")
        #expect(try bus.playerctl("metadata", "mpris:length").stdout == "\(length)", "one length for the whole track")
        #expect(try bus.playerctl("position", "4.5").status == 0)
        let ayahAt = try #require(status["ayah"] as? Int)

        // Next and previous, by ayah.
        #expect(try bus.playerctl("next").status == 0)
        status = try statusOf(home)
        #expect(status["ayah"] as? Int == ayahAt + 1)
        #expect(try bus.eventually { try bus.playerctl("metadata", "xesam:trackNumber").stdout == "\(ayahAt + 1)" })
        #expect(try bus.playerctl("previous").status == 0)
        #expect(try statusOf(home)["ayah"] as? Int == ayahAt)

        // Play-pause both ways.
        #expect(try bus.playerctl("play-pause").status == 0)
        #expect(try statusOf(home)["state"] as? String == "playing")
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Playing" })
        #expect(try bus.playerctl("play-pause").status == 0)
        #expect(try statusOf(home)["state"] as? String == "paused")
        #expect(try bus.playerctl("status").stdout == "Paused")
        #expect(try bus.property("Rate") == "d 1" && bus.property("Volume") == "d 1" && bus.property("CanSeek") == "b true")

        // What tartil cannot do is refused cleanly, and changes nothing.
        let uri = try bus.run(
            "busctl",
            ["--address=\(bus.address)", "call", "org.mpris.MediaPlayer2.tartil", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "OpenUri", "s", "file:///x.mp3"])
        #expect(uri.status != 0 && uri.stderr.contains("not URIs"), "\(uri.stderr)")
        // Volume and Rate are tartil's volume and speed.
        let volume = try bus.playerctl("volume", "0.5")
        #expect(volume.status == 0, "\(volume.stderr)")
        #expect(try bus.property("Volume") == "d 0.5")
        let setRate = try bus.run(
            "busctl",
            ["--address=\(bus.address)", "set-property", "org.mpris.MediaPlayer2.tartil", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "Rate", "d", "1.25"])
        #expect(setRate.status == 0, "\(setRate.stderr)")
        #expect(try bus.property("Rate") == "d 1.25")

        // Stop stops, journaled like any other stop; the player stays on the bus (see stopLeavesAPlayerThatPlayStartsAgain).
        #expect(try bus.playerctl("stop").status == 0)
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Stopped" })
        let positions = try home.run(["positions", "--json"])
        let latest = try #require(try JSONSerialization.jsonObject(with: Data(positions.stdout.utf8)) as? [[String: Any]]).first
        #expect(latest?["reason"] as? String == "stop", "an MPRIS stop is journaled like any other")
        // A stop from tartil ends it, and its name goes with it.
        #expect(try home.run(["stop"]).status == 0)
        player.waitUntilExit()
        #expect(player.terminationStatus == 0)
        #expect(try bus.eventually { try !bus.names().contains("org.mpris.MediaPlayer2.tartil") })
    }

    /// Stop, then Play, as a desktop's buttons do: the player stays on the bus, stopped, and Play starts the same
    /// play again from the beginning of the track (the surah), with its options and speed; `tartil stop` ends it.
    @Test func stopLeavesAPlayerThatPlayStartsAgain() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        // Each ayah until moved on: the ayah heard is known however slowly the test runs.
        let player = try startPausedPlayer(home, bus, ["--repeat", "inf"])
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        #expect(try bus.playerctl("next").status == 0 && bus.playerctl("next").status == 0)
        #expect(try home.run(["speed", "1.25"]).status == 0)
        #expect(try statusOf(home)["ayah"] as? Int == 3)

        let stop = try bus.playerctl("stop")
        #expect(stop.status == 0 && stop.stderr.isEmpty, "\(stop.stderr)")
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Stopped" })
        #expect(player.isRunning, "the player stays")
        #expect(try bus.names().contains("org.mpris.MediaPlayer2.tartil"))
        #expect(try bus.property("CanPlay") == "b true" && bus.property("CanPause") == "b false")
        #expect(try bus.playerctl("metadata", "xesam:album").stdout == "Al-Faatiha", "its track stays, for Play to start again")
        let stopped = try home.run(["status", "--json"])
        #expect(stopped.status == 3 && stopped.stdout.contains("\"stopped\""), "\(stopped.stdout)\(stopped.stderr)")
        let positions = try home.run(["positions", "--json"])
        let latest = try #require(try JSONSerialization.jsonObject(with: Data(positions.stdout.utf8)) as? [[String: Any]]).first
        #expect(latest?["reason"] as? String == "stop" && latest?["ayah"] as? Int == 3)

        let play = try bus.playerctl("play")
        #expect(play.status == 0 && play.stderr.isEmpty, "\(play.stderr)")
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Playing" })
        let again = try statusOf(home)
        #expect(again["state"] as? String == "playing" && again["surah"] as? Int == 1)
        #expect(again["ayah"] as? Int == 1, "from the beginning of the track: \(again)")
        #expect(again["options"] as? String == "--repeat inf" && again["speed"] as? Double == 1.25, "the same play: \(again)")
        #expect(try bus.playerctl("loop").stdout == "Track")

        // Stop and Play again, then a stop from tartil: the player ends, and its name goes with it.
        #expect(try bus.playerctl("stop").status == 0)
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Stopped" })
        #expect(try bus.playerctl("play-pause").status == 0)
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Playing" })
        #expect(try bus.playerctl("stop").status == 0)
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Stopped" })
        let end = try home.run(["stop"])
        #expect(end.status == 0, "\(end.stdout)\(end.stderr)")
        player.waitUntilExit()
        #expect(player.terminationStatus == 0)
        #expect(try bus.eventually { try !bus.names().contains("org.mpris.MediaPlayer2.tartil") })
    }

    /// A `tartil play` on a terminal stopped from the desktop stays, its live line saying what starts it again
    /// (whole fields at 80 and 40 columns); space plays it again from the surah's start, and q leaves.
    @Test(arguments: [80, 40]) func aTerminalPlayStoppedFromTheDesktopWaitsForPlay(columns: Int) throws {
        let bus = try SessionBus()
        let place = try SessionTests.Place(environment)
        let mirrors = try environment.mirrorsFile([environment.clean], in: place.directory)
        let command =
            "DBUS_SESSION_BUS_ADDRESS='\(bus.address)' XDG_RUNTIME_DIR='\(place.directory)/run' exec \(TestPaths.executable) play 112 "
            + "--repeat inf --output silent --mirrors \(mirrors) --tables \(environment.tables) --cache-dir \(place.directory)/cache "
            + "--journal \(place.directory)/journal.sqlite"
        let driven = Mutex<TerminalDrive?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let drive = try? TerminalDrive.run(
                [
                    "screen:stopped  space: play again", "snap:standby", "send: ",
                    "match:^playing  (basmala \\(112\\)|112:1)", "snap:again", "send:q",
                ],
                columns: columns, command: ["sh", "-c", command], home: place.directory)
            driven.withLock { $0 = drive }
            done.signal()
        }.start()
        // The desktop's Stop, once the player is on the bus and playing.
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Playing" })
        #expect(try bus.playerctl("stop").status == 0)
        done.wait()
        let drive = try #require(driven.withLock { $0 })
        #expect(drive.status == 0, "q leaves: \(drive.output)")
        #expect(drive.overflows == 0, "the live line never wraps: \(drive.output)")
        let standby = try #require(drive.screens["standby"]?.first { $0.hasPrefix("stopped") }, "\(drive.output)")
        #expect(TerminalText.columns(standby) <= columns - 1, "\(standby)")
        let expected = ["stopped", "space: play again", "q: quit"] + (columns == 80 ? ["Al-Ikhlaas from its start"] : [])
        #expect(TerminalDrive.fields(standby) == expected, "\(standby)")
        let again = drive.screens["again"]?.first { $0.hasPrefix("playing") } ?? ""
        #expect(again.range(of: "^playing  (basmala \\(112\\)|112:1)", options: .regularExpression) != nil, "space played 112 again from its start: \(again)")
    }

    /// LoopStatus is the repeat options, both ways: None, Track (each ayah until moved on) and Playlist (the
    /// range until stopped), set with playerctl and seen by tartil, set with tartil and seen by playerctl.
    @Test func loopStatusIsRepeatBothWays() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let player = try startPausedPlayer(home, bus)
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("loop").stdout == "None" })
        for (loop, options) in [("Track", "--repeat inf"), ("Playlist", "--repeat-range inf"), ("Track", "--repeat inf"), ("None", "")] {
            let set = try bus.playerctl("loop", loop)
            #expect(set.status == 0 && set.stderr.isEmpty, "\(loop): \(set.stderr)")
            let status = try statusOf(home)
            #expect(status["options"] as? String == options, "\(loop): \(status)")
            #expect(status["state"] as? String == "paused" && status["ayah"] as? Int == 1, "the listener stays where they were")
            #expect(try bus.eventually { try bus.playerctl("loop").stdout == loop })
        }
        // What tartil sets, MPRIS reads (and signals: playerctl --follow would see it).
        #expect(try home.run(["set", "repeat", "3"]).status == 0)
        #expect(try bus.eventually { try bus.playerctl("loop").stdout == "Track" })
        #expect(try home.run(["set", "repeat", "1"]).status == 0 && home.run(["set", "repeat-range", "2"]).status == 0)
        #expect(try bus.eventually { try bus.playerctl("loop").stdout == "Playlist" })
        #expect(try bus.playerctl("loop", "Playlist").status == 0)
        #expect(try statusOf(home)["options"] as? String == "--repeat-range 2", "already a Playlist loop: left as it is")
        #expect(try home.run(["set", "repeat-range", "1"]).status == 0)
        #expect(try bus.eventually { try bus.playerctl("loop").stdout == "None" })
        let wrong = try bus.run(
            "busctl",
            ["--address=\(bus.address)", "set-property", "org.mpris.MediaPlayer2.tartil", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "LoopStatus", "s", "Shuffle"])
        #expect(wrong.status != 0 && wrong.stderr.contains("None, Track or Playlist"), "\(wrong.stderr)")
        #expect(try home.run(["stop"]).status == 0)
    }

    /// Rate 0 is Pause (MPRIS: "the media player should act as though Pause was called"); Rate stays the speed.
    @Test func rateZeroPauses() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let player = try startPausedPlayer(home, bus, ["--repeat", "inf", "--speed", "1.25"])
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        #expect(try bus.playerctl("play").status == 0)
        #expect(try statusOf(home)["state"] as? String == "playing")
        let rate = try bus.run(
            "busctl",
            ["--address=\(bus.address)", "set-property", "org.mpris.MediaPlayer2.tartil", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "Rate", "d", "0"])
        #expect(rate.status == 0, "\(rate.stderr)")
        let status = try statusOf(home)
        #expect(status["state"] as? String == "paused" && status["speed"] as? Double == 1.25, "\(status)")
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        #expect(try bus.property("Rate") == "d 1.25")
        #expect(try home.run(["stop"]).status == 0)
    }

    /// Next on the last ayah does nothing and is no error (MPRIS: "if CanGoNext is false, attempting to call this
    /// method should have no effect"), playing or paused. CanGoNext is false there, so playerctl does not even
    /// send it (it says "No player could handle this command"); a client that calls Next anyway gets a plain reply.
    @Test func nextOnTheLastAyahIsANoOp() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let player = try home.startPlayer(
            ["play", "1:6-7", "--repeat", "inf", "--output", "silent"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Playing" })
        #expect(try bus.playerctl("next").status == 0)
        #expect(try statusOf(home)["ayah"] as? Int == 7)
        #expect(try bus.eventually { try bus.property("CanGoNext") == "b false" })
        for state in ["playing", "paused"] {
            if state == "paused" { #expect(try bus.playerctl("pause").status == 0) }
            let next = try bus.run(
                "busctl", ["--address=\(bus.address)", "call", "org.mpris.MediaPlayer2.tartil", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player", "Next"])
            #expect(next.status == 0 && next.stderr.isEmpty, "\(state): \(next.stderr)")
            let declined = try bus.playerctl("next")
            #expect(!declined.stderr.contains("Refused") && !declined.stderr.contains("last"), "\(state): \(declined.stderr)")
            let status = try statusOf(home)
            #expect(status["state"] as? String == state && status["ayah"] as? Int == 7, "\(state): \(status)")
        }
        #expect(try home.run(["stop"]).status == 0)
    }

    /// Position is where the listener is now (it moves between two reads while playing, not only at an ayah's
    /// start), and a relative Seek adds to that.
    @Test func positionIsLiveAndSeekAddsToIt() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let player = try startPausedPlayer(home, bus, ["--repeat-range", "inf"])
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        #expect(try bus.playerctl("position", "0.2").status == 0)
        #expect(try bus.playerctl("play").status == 0)
        func position() throws -> Int64 {
            let text = try bus.property("Position")
            return try #require(Int64(text.dropFirst(2)), "\(text)")
        }
        // Reads 100 ms apart within surah 1's first ayat (1.5 s each): each later than the one before.
        var reads: [Int64] = []
        for _ in 0..<6 {
            reads.append(try position())
            usleep(100_000)
        }
        #expect(zip(reads, reads.dropFirst()).allSatisfy { $0 < $1 }, "it moves while playing: \(reads)")
        // Seek +2 s: two seconds after where the listener was when asked, not after the ayah's start.
        let clock = ContinuousClock()
        let asked = clock.now
        let before = try position()
        #expect(try bus.playerctl("position", "2+").status == 0)
        let landed = try #require(try statusOf(home)["position_ms"] as? Int)
        let elapsedMs = Int((clock.now - asked) / .milliseconds(1))
        let wanted = Int(before / 1000) + 2000
        #expect(landed >= wanted - 5 && landed <= wanted + elapsedMs + 5, "from \(before) µs, +2 s landed at \(landed) ms (\(elapsedMs) ms later)")
        #expect(try home.run(["stop"]).status == 0)
    }

    @Test func changesAndSeeksAreSignalled() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        let monitorOutput = home.directory + "/monitor.txt"
        FileManager.default.createFile(atPath: monitorOutput, contents: nil)
        let monitor = ChildProcess()
        monitor.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        monitor.arguments = ["--address", bus.address, "type='signal',path='/org/mpris/MediaPlayer2'"]
        monitor.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: monitorOutput))
        try monitor.run()
        defer {
            kill(monitor.processIdentifier, SIGKILL)
            monitor.waitUntilExit()
        }
        usleep(200_000)

        let player = try startPausedPlayer(home, bus)
        defer { if player.isRunning { player.terminate() } }
        #expect(try bus.eventually { try bus.playerctl("status").stdout == "Paused" })
        #expect(try home.run(["resume"]).status == 0, "a change made through the socket is signalled too")
        #expect(try home.run(["set", "repeat", "inf"]).status == 0)
        #expect(try bus.playerctl("position", "2").status == 0)
        #expect(try home.run(["next"]).status == 0)
        #expect(try home.run(["stop"]).status == 0)
        player.waitUntilExit()
        var text = ""
        #expect(try bus.eventually {
            text = try String(contentsOfFile: monitorOutput, encoding: .utf8)
            return text.contains("member=Seeked") && text.contains("\"Stopped\"")
        }, "\(text)")
        let changes = text.components(separatedBy: "member=PropertiesChanged").dropFirst()
        #expect(changes.contains { $0.contains("\"PlaybackStatus\"") && $0.contains("\"Playing\"") })
        #expect(changes.contains { $0.contains("\"PlaybackStatus\"") && $0.contains("\"Paused\"") })
        #expect(changes.contains { $0.contains("\"Metadata\"") && $0.contains("xesam:trackNumber") })
        #expect(changes.contains { $0.contains("\"LoopStatus\"") && $0.contains("\"Track\"") }, "a repeat set with tartil is a LoopStatus change")
        let seeked = try #require(text.components(separatedBy: "member=Seeked").dropFirst().first)
        #expect(seeked.contains("int64 2000000"), "Seeked carries the new position: \(seeked)")
        #expect(!changes.contains { $0.contains("\"Position\"") }, "Position is never in PropertiesChanged")
    }

    @Test func aSecondPlayerTakesAnInstanceName() throws {
        let bus = try SessionBus()
        let first = try ControlTests.Home(environment)
        let second = try ControlTests.Home(environment)
        let one = try startPausedPlayer(first, bus)
        defer { if one.isRunning { one.terminate() } }
        let two = try startPausedPlayer(second, bus)
        defer { if two.isRunning { two.terminate() } }
        let instance = "org.mpris.MediaPlayer2.tartil.instance\(two.processIdentifier)"
        #expect(try bus.eventually { try bus.names().contains(instance) })
        #expect(try bus.property("PlaybackStatus", on: instance) == "s \"Paused\"")
        #expect(try first.run(["stop"]).status == 0 && second.run(["stop"]).status == 0)
    }

    @Test func offWithTheOptionTheVariableOrNoBus() throws {
        let bus = try SessionBus()
        let home = try ControlTests.Home(environment)
        for (extra, variables) in [(["--no-mpris"], [String: String]()), ([], ["TARTIL_MPRIS": "0"])] {
            let player = try home.startPlayer(
                ["play", "1", "--output", "silent"] + extra, environment: variables.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { a, _ in a })
            defer { if player.isRunning { player.terminate() } }
            usleep(300_000)
            #expect(try !bus.names().contains("tartil"), "\(extra) \(variables)")
            #expect(try home.run(["stop"]).status == 0)
            player.waitUntilExit()
        }
        // A bus that is not there: playback as usual, and not a word about it.
        let quiet = try runTartil(
            ["play", "112", "--output", "null"] + home.common,
            environment: ["TARTIL_RECITER": "fixture", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.directory)/no-bus"], home: home.directory)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stdout)\(quiet.stderr)")
        let version = try runTartil(["version"], environment: [:], home: home.directory)
        #expect(version.stdout.contains("mpris") && version.stdout.contains("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"))
    }
}
