import Foundation
import TestSupport
import Testing

/// Control from another process through the control socket, with the real binary: a player started with
/// `tartil play`, and controllers that are other tartil processes or a program speaking the protocol.
@Suite(.serialized) struct ControlTests {
    let environment = DownloadEnvironment.shared

    /// A home with the fixture cached, a private runtime folder (so the socket is this test's own), and the
    /// arguments that point tartil at them.
    final class Home: Sendable {
        let directory = TestPaths.makeTemporaryDirectory()
        let mirrors: String
        let environment: DownloadEnvironment
        var socket: String { directory + "/run/tartil/control.sock" }

        init(_ environment: DownloadEnvironment) throws {
            self.environment = environment
            mirrors = try environment.mirrorsFile([environment.clean], in: directory)
            let prefetch = try run(["prefetch", "1", "112"])
            precondition(prefetch.status == 0, prefetch.stderr)
        }

        var common: [String] {
            ["--mirrors", mirrors, "--tables", environment.tables, "--cache-dir", directory + "/cache", "--journal", directory + "/journal.sqlite"]
        }

        func run(_ arguments: [String]) throws -> RunResult {
            try runTartil(arguments + common, environment: ["TARTIL_RECITER": "fixture"], home: directory)
        }

        /// Starts `tartil …` in this home in the background (with `extra` in its environment), its standard output
        /// going to `output`.
        func spawn(_ arguments: [String], output: Any = FileHandle.nullDevice, environment extra: [String: String] = [:]) throws
            -> Process
        {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: TestPaths.executable)
            process.arguments = arguments + common
            process.environment = [
                "HOME": directory, "XDG_RUNTIME_DIR": directory + "/run", "TARTIL_RECITER": "fixture", "PATH": "/usr/bin:/bin",
            ].merging(extra) { _, new in new }
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// Starts `tartil play …` in the background (with `extra` in its environment) and waits until its socket
        /// answers.
        func startPlayer(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Process {
            let process = try spawn(arguments, environment: extra)
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { usleep(20_000) }
            usleep(50_000)
            return process
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func anotherTerminalControlsThePlayer() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }

        let pause = try home.run(["pause", "--json"])
        #expect(pause.status == 0, "\(pause.stderr)")
        #expect(try object(pause.stdout)["state"] as? String == "paused")
        let frozen = try object(try home.run(["status", "--json"]).stdout)["position_samples"] as? Int
        usleep(300_000)
        #expect(try object(try home.run(["status", "--json"]).stdout)["position_samples"] as? Int == frozen, "paused means frozen")

        let past = try home.run(["seek", "99:00"])
        #expect(past.status == 64, "the same exit code as at the player's prompt")
        #expect(past.stderr.contains("Error: 1:39:00 is past the end of surah 112"))
        #expect(try home.run(["next"]).status == 0)
        let resumed = try object(try home.run(["resume", "--json"]).stdout)
        #expect(resumed["state"] as? String == "playing" && resumed["ayah"] as? Int == 2)
        #expect(try home.run(["stop"]).status == 0)
        player.waitUntilExit()
        #expect(player.terminationStatus == 0)
        let positions = try home.run(["positions", "--json"])
        let latest = try #require(try JSONSerialization.jsonObject(with: Data(positions.stdout.utf8)) as? [[String: Any]]).first
        #expect(latest?["reason"] as? String == "stop" && latest?["ayah"] as? Int == 2)
        #expect(!FileManager.default.fileExists(atPath: home.socket), "the socket goes with its player")
    }

    @Test func theSocketIsPrivateAndTheProtocolEchoesRequestIDs() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        var folder = stat()
        var socket = stat()
        #expect(stat(home.directory + "/run/tartil", &folder) == 0 && folder.st_mode & 0o777 == 0o700)
        #expect(stat(home.socket, &socket) == 0 && socket.st_mode & 0o777 == 0o600)
        // Three clients at once, speaking the protocol without tartil.
        let script = """
            import json, socket, threading
            results = {}
            def ask(n, lines):
                s = socket.socket(socket.AF_UNIX); s.connect(\(String(reflecting: home.socket)))
                f = s.makefile('rw')
                out = []
                for line in lines:
                    f.write(line + '\\n'); f.flush(); out.append(json.loads(f.readline()))
                results[n] = out
            threads = [threading.Thread(target=ask, args=(n, [json.dumps({'command': 'status', 'request_id': n}), 'bogus', '{"command": "quit"}'])) for n in range(3)]
            [t.start() for t in threads]; [t.join() for t in threads]
            print(json.dumps(results))
            """
        try script.write(toFile: home.directory + "/client.py", atomically: true, encoding: .utf8)
        let output = try shell("python3 \(home.directory)/client.py")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [[String: Any]]], "\(output)")
        #expect(results.count == 3)
        for (key, replies) in results {
            #expect(replies[0]["request_id"] as? Int == Int(key))
            #expect((replies[0]["data"] as? [String: Any])?["state"] as? String == "playing")
            #expect(replies[1]["exit_code"] as? Int == 64, "a plain line that is no command")
            #expect(replies[2]["exit_code"] as? Int == 64, "quit is not a control command")
        }
    }

    @Test func aKilledPlayersSocketIsReplaced() throws {
        let home = try Home(environment)
        let first = try home.startPlayer(["play", "112", "--output", "silent"])
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: home.socket), "a killed player leaves its socket")
        let nobody = try home.run(["pause"])
        #expect(nobody.status == 64 && nobody.stderr.contains("nothing is playing"), "\(nobody.stderr)")
        let second = try home.startPlayer(["play", "112", "--output", "silent"])
        defer { if second.isRunning { second.terminate() } }
        // The killed player's socket is there before the second player replaces it, so `startPlayer` does not
        // wait for the new one: ask until the second player answers (or 10 s pass on a loaded machine).
        var status = try home.run(["status", "--json"])
        for _ in 0..<100 where status.status != 0 && second.isRunning {
            usleep(100_000)
            status = try home.run(["status", "--json"])
        }
        #expect(status.status == 0, "\(status.stderr)")
        let state = try object(status.stdout)["state"] as? String
        #expect(state == "playing")
        #expect(try home.run(["stop"]).status == 0)
        second.waitUntilExit()
    }

    /// Like mpc, one player per user: `play` from another terminal replaces what the player plays (on the same
    /// output), and the first `tartil play` goes on with it until it ends.
    @Test func playFromAnotherTerminalReplacesWhatPlays() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let replace = try home.run(["play", "1:1-2", "--json"])
        #expect(replace.status == 0, "\(replace.stderr)")
        #expect(try object(replace.stdout)["surah"] as? Int == 1)
        player.waitUntilExit()
        #expect(player.terminationStatus == 0)
        let history = try home.run(["history"])
        #expect(history.stdout.contains("started play 1:1-2") && history.stdout.contains("end 1:2"), "\(history.stdout)")
    }

    @Test func watchPrintsThePlayersEventsUntilTheEnd() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112:3-4", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let watch = try home.run(["watch"])
        #expect(watch.status == 0, "\(watch.stderr)")
        let events = watch.stdout.split(separator: "\n").compactMap { try? object(String($0))["event"] as? String }
        #expect(events.contains("ayah") && events.last == "end", "\(watch.stdout)")
        player.waitUntilExit()
    }
}
