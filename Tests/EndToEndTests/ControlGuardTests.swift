import Foundation
import TestSupport
import Testing

/// The control socket as an attacker, a careless script and a crowd would use it, with the real binary: whom a
/// client trusts before sending a byte, what `--socket` may touch, what the server takes and how it bounds
/// clients, how fast remote `watch` and `wait` give up, and a storm of clients that must never break the player.
@Suite(.serialized) struct ControlGuardTests {
    typealias Home = ControlTests.Home
    let environment = DownloadEnvironment.shared

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// Runs a Python program (written to `directory`) with `arguments`; its standard output.
    func python(_ program: String, in directory: String, _ arguments: [String] = []) throws -> String {
        let path = directory + "/probe-\(UUID().uuidString).py"
        try program.write(toFile: path, atomically: true, encoding: .utf8)
        return try shell((["python3", path] + arguments).map { "'\($0)'" }.joined(separator: " "))
    }

    /// Microseconds since `start` on the monotonic clock.
    func milliseconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
    }

    static let isRoot = getuid() == 0

    // MARK: - Trust (item 12)

    /// A server in a folder anyone may enter, a socket of another user's, and a server whose process belongs to
    /// another user (SO_PEERCRED): the client sends nothing to any of them and says why.
    @Test(.enabled(if: isRoot, "needs root to act as another user"))
    func aClientSendsNothingToASocketItCannotTrust() throws {
        let home = try Home(environment)
        let folder = home.directory + "/shared"
        let received = home.directory + "/received"
        // A listener that records every byte it gets; `mode` says how it is set up.
        let listener = """
            import os, socket, sys, time
            path, mode, log = sys.argv[1], sys.argv[2], sys.argv[3]
            out = open(log, "w", buffering=1)  # before giving up root: the folder is root's
            s = socket.socket(socket.AF_UNIX); s.bind(path)
            if mode == "other-owner": os.chown(path, 65534, 65534)
            if mode == "other-peer": os.setgid(65534); os.setuid(65534)
            s.listen(8); s.settimeout(3)
            out.write("ready\\n")
            got = b""
            try:
                while True:
                    c, _ = s.accept(); c.settimeout(1)
                    try:
                        while True:
                            data = c.recv(4096)
                            if not data: break
                            got += data
                    except socket.timeout: pass
                    c.close()
            except socket.timeout: pass
            out.write(repr(got) + "\\n"); out.close()
            """
        try listener.write(toFile: home.directory + "/listener.py", atomically: true, encoding: .utf8)
        for (mode, folderMode, expected) in [
            ("open-folder", 0o755, "may be used by others"), ("other-owner", 0o700, "belongs to another user"),
            ("other-peer", 0o700, "another user"),
        ] {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            chmod(folder, mode_t(folderMode))
            let socket = folder + "/control.sock"
            let server = ChildProcess()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            server.arguments = [home.directory + "/listener.py", socket, mode, received]
            try server.run()
            for _ in 0..<200 where (try? String(contentsOfFile: received, encoding: .utf8))?.hasPrefix("ready") != true { usleep(10_000) }
            let pause = try home.run(["pause", "--socket", socket])
            #expect(pause.stderr.contains(expected) || pause.stderr.contains("not used"), "\(mode): \(pause.stderr)")
            #expect(pause.status != 0, "\(mode): nothing was paused")
            let status = try home.run(["status", "--json", "--socket", socket])
            #expect(status.status == 3, "\(mode): nothing this client may trust is playing: \(status.stderr)")
            server.waitUntilExit()
            let log = try String(contentsOfFile: received, encoding: .utf8)
            #expect(log.hasSuffix("b''\n"), "\(mode): the untrusted server received \(log)")
            var status2 = stat()
            #expect(stat(folder, &status2) == 0 && Int(status2.st_mode & 0o777) == folderMode, "\(mode): the folder is left as it was")
            try? FileManager.default.removeItem(atPath: received)
        }
    }

    /// With `XDG_RUNTIME_DIR` unset the socket is `/tmp/tartil-UID/control.sock`; another user who made that
    /// folder first gets no socket in it, and the player says so and plays on without one.
    @Test(.enabled(if: isRoot, "needs root to make a folder another user owns"))
    func aPreCreatedTmpFolderOfAnotherUserIsNotUsed() throws {
        let home = try Home(environment)
        let folder = "/tmp/tartil-\(getuid())"
        guard !FileManager.default.fileExists(atPath: folder) else { return }  // someone's real socket folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        chmod(folder, 0o777)
        chown(folder, 65534, 65534)
        let play = try runTartil(
            ["play", "112:4", "--output", "silent"] + home.common,
            environment: ["TARTIL_RECITER": "fixture", "XDG_RUNTIME_DIR": ""], home: home.directory)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stderr.contains("no control socket") && play.stderr.contains("belongs to another user"), "\(play.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "nothing was made in it")
        var status = stat()
        #expect(stat(folder, &status) == 0 && status.st_uid == 65534 && status.st_mode & 0o777 == 0o777, "it is left as it was")
    }

    // MARK: - What --socket may touch (item 13)

    /// `--socket PATH` where a regular file is, or in a folder others may use (a home folder): the player plays
    /// without a socket and leaves the file, and the folder's mode, as they were.
    @Test func socketNeverRemovesOrChangesWhatIsNotAStaleSocket() throws {
        let home = try Home(environment)
        let folder = home.directory + "/somewhere"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o755)
        let file = folder + "/notes.txt"
        try "keep me\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(folder, 0o700)
        let overFile = try home.run(["play", "112:4", "--output", "silent", "--socket", file])
        #expect(overFile.status == 0, "\(overFile.stderr)")
        #expect(overFile.stderr.contains("no control socket") && overFile.stderr.contains("not a socket"), "\(overFile.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me\n", "the file is untouched")

        chmod(folder, 0o755)
        let inOpenFolder = try home.run(["play", "112:4", "--output", "silent", "--socket", folder + "/x.sock"])
        #expect(inOpenFolder.status == 0, "\(inOpenFolder.stderr)")
        #expect(inOpenFolder.stderr.contains("only 0700 is trusted"), "\(inOpenFolder.stderr)")
        var status = stat()
        #expect(stat(folder, &status) == 0 && status.st_mode & 0o777 == 0o755, "the folder's mode is not changed")
        #expect(!FileManager.default.fileExists(atPath: folder + "/x.sock"))
    }

    // MARK: - What the server takes, and its limits (items 11 and 14)

    /// Global options and paths are not control arguments: a client cannot make the player write a WAV file or
    /// a journal anywhere. A request without a final newline followed by a half-close is answered; an endless
    /// line is refused; connections beyond the cap are told so and closed, and the player answers again when
    /// they go.
    @Test func theServerTakesControlVerbsOnlyAndBoundsItsClients() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--repeat-range", "inf", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let evil = home.directory + "/evil"
        let program = """
            import json, select, socket, sys, time
            path, evil = sys.argv[1], sys.argv[2]
            def connect():
                s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(10); return s  # a blocking connect
            out = {}
            s = connect(); f = s.makefile("rw")
            out["refused"] = []
            for words in [["play", "112", "--journal", evil + ".sqlite"], ["play", "112", "--output", "wav:" + evil + ".wav"],
                          ["play", "112", "-o", evil], ["status", "--cache-dir", evil], ["play", "112", "--mirrors", evil],
                          ["play", "112", "--tables", evil], ["play", "112", "--device", "null"], ["quit"], ["version"]]:
                f.write(json.dumps({"command": words}) + "\\n"); f.flush()
                out["refused"].append(json.loads(f.readline())["exit_code"])
            f.close(); s.close()  # the socket closes only once its file object is closed too
            s = connect(); s.sendall(b'{"command": "status", "request_id": "half"}'); s.shutdown(socket.SHUT_WR)
            out["half_close"] = json.loads(s.makefile().readline())
            s.close()
            s = connect(); s.sendall(b"x" * 70000 + b"\\n"); out["long"] = json.loads(s.makefile().readline())
            s.close()
            # The server counts a connection until its thread has seen the close, so the connections above may
            # still count for a moment (on a loaded machine, longer): hold 64 that it took as clients (none of
            # them told of the cap), trying again until the earlier ones are gone.
            deadline = time.monotonic() + 30
            while True:
                many = [connect() for _ in range(64)]
                time.sleep(0.3)
                told = select.select(many, [], [], 0)[0]
                if not told or time.monotonic() > deadline: break
                for m in many: m.close()
                time.sleep(0.5)
            out["told_among_64"] = len(told)
            extra = connect(); out["capped"] = json.loads(extra.makefile().readline() or "null")
            extra.close()
            for m in many: m.close()
            # Likewise the 64 closed count until their threads see it: the player answers again once they have.
            while True:
                time.sleep(0.3)
                s = connect(); s.sendall(b"status\\n"); out["after"] = json.loads(s.makefile().readline())["exit_code"]
                s.close()
                if out["after"] == 0 or time.monotonic() > deadline: break
            print(json.dumps(out))
            """
        let out = try object(try python(program, in: home.directory, [home.socket, evil]))
        #expect(out["refused"] as? [Int] == Array(repeating: 64, count: 9), "\(out)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.directory).filter { $0.hasPrefix("evil") }
        #expect(leftovers.isEmpty, "nothing was written where a client asked: \(leftovers)")
        let half = try #require(out["half_close"] as? [String: Any])
        #expect(half["request_id"] as? String == "half" && half["exit_code"] as? Int == 0, "\(half)")
        #expect((out["long"] as? [String: Any])?["exit_code"] as? Int == 64, "\(out)")
        #expect(out["told_among_64"] as? Int == 0, "64 connections at once are all served: \(out)")
        #expect(((out["capped"] as? [String: Any])?["error"] as? String)?.contains("64 connections") == true, "\(out)")
        #expect(out["after"] as? Int == 0, "the player answers again once they closed")
        #expect(player.isRunning)
    }

    /// Mutated and random request lines (invalid UTF-8, broken JSON, control bytes, huge numbers) sent to a live
    /// player: each gets one reply line with an exit code, and the player plays on.
    @Test func garbageOnTheSocketIsAnsweredAndHarmless() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--repeat-range", "inf", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let program = """
            import json, random, socket, sys
            path = sys.argv[1]
            seeds = [b'status', b'seek 1:00', b'{"command": "seek +1", "request_id": 7}', b'{"command": ["set", "repeat", "2"]}',
                     b'{"command": ["bookmark", "--note", "x"], "request_id": [1, {"a": null}]}', b'volume +5', b'loop 0:01 0:02 2']
            rng = random.Random(22)
            def mutate(line):
                line = bytearray(line)
                for _ in range(rng.randint(1, 6)):
                    op = rng.randrange(5)
                    if op == 0 and line: line[rng.randrange(len(line))] = rng.randrange(256)
                    elif op == 1: line.insert(rng.randrange(len(line) + 1), rng.randrange(256))
                    elif op == 2 and line: del line[rng.randrange(len(line))]
                    elif op == 3: line += rng.choice(seeds)
                    else: line = bytearray(rng.randbytes(rng.randint(0, 40)))
                line = bytes(line).replace(b"\\n", b" ")
                return line if line.strip() else b"status"  # a blank line is no request (skipped, as a shell does)
            s = socket.socket(socket.AF_UNIX); s.connect(path); s.settimeout(10); f = s.makefile("rwb")
            codes, sent = {}, 0
            for _ in range(2000):
                f.write(mutate(rng.choice(seeds)) + b"\\n"); f.flush(); sent += 1
                reply = json.loads(f.readline())
                codes[reply["exit_code"]] = codes.get(reply["exit_code"], 0) + 1
            print(json.dumps({"sent": sent, "codes": codes}))
            """
        let out = try object(try python(program, in: home.directory, [home.socket]))
        let codes = try #require(out["codes"] as? [String: Int])
        #expect(codes.values.reduce(0, +) == 2000, "every line answered: \(out)")
        #expect(Set(codes.keys).isSubset(of: ["0", "1", "3", "64"]), "\(codes)")
        #expect(player.isRunning)
        #expect(try home.run(["status"]).status == 0)
    }

    /// A client that sends requests and never reads the replies is cut off once a send has waited 5 s
    /// (ControlServer.sendSeconds); other clients are answered at once all along. The client watches, without
    /// reading, how many reply bytes wait in its socket (FIONREAD): the last time that grew is the last time the
    /// server's send made progress, and the connection must end (the socket hangs up) 5 s after it, not sooner
    /// and not more than 5 s later: a time against what the server did, not against the test's start, so it holds
    /// on a loaded machine.
    @Test func aClientThatNeverReadsIsCutOffAndOthersAreServed() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--repeat-range", "inf", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let program = """
            import array, fcntl, json, select, socket, sys, termios, time
            path = sys.argv[1]
            stuck = socket.socket(socket.AF_UNIX); stuck.connect(path); stuck.setblocking(False)
            request = b'{"command": "status --json"}\\n'
            def queued():
                count = array.array("i", [0]); fcntl.ioctl(stuck, termios.FIONREAD, count); return count[0]
            sent, waiting, progress, blocked = 0, 0, time.time(), None
            # Fill both directions until the server no longer reads (its send blocks): sends refused for 0.5 s.
            while blocked is None or time.time() - blocked < 0.5:
                try: sent += stuck.send(request * 64); blocked = None
                except BlockingIOError: blocked = blocked or time.time(); time.sleep(0.01)
                now = queued()
                if now != waiting: waiting, progress = now, time.time()
                if time.time() - progress > 4: break
            watch = select.poll(); watch.register(stuck, select.POLLRDHUP)
            others, worst, closed_at = 0, 0.0, None
            while time.time() - progress < 60:
                if watch.poll(20): closed_at = time.time(); break  # hung up (or reset): never read, so no EOF otherwise
                now = queued()
                if now != waiting: waiting, progress = now, time.time()
                t = time.time(); s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
                s.sendall(b"status\\n"); json.loads(s.makefile().readline()); s.close()
                worst = max(worst, time.time() - t); others += 1
            print(json.dumps({"sent": sent, "waiting_bytes": waiting, "others": others, "worst_other_ms": worst * 1000,
                              "closed": closed_at is not None, "closed_after_progress_s": (closed_at or time.time()) - progress}))
            """
        let out = try object(try python(program, in: home.directory, [home.socket]))
        #expect(out["closed"] as? Bool == true, "the stuck connection is ended: \(out)")
        #expect((out["waiting_bytes"] as? Int ?? 0) > 0, "the server wrote replies until its send blocked: \(out)")
        #expect((out["others"] as? Int ?? 0) >= 10, "others were asked all along: \(out)")
        #expect((out["worst_other_ms"] as? Double ?? .infinity) < 1000, "others are answered meanwhile: \(out)")
        let cutOff = out["closed_after_progress_s"] as? Double ?? .infinity
        #expect(cutOff > 4 && cutOff < 10, "cut off 5 s after the server's send stopped: \(out)")
        #expect(try home.run(["status"]).status == 0)
    }

    // MARK: - Remote watch and wait give up at once (item 15)

    /// `tartil wait` and `tartil watch` on another terminal's paused player: Ctrl-C, SIGTERM and a closed
    /// standard output end them within 200 ms (about 2 ms here), and the
    /// player plays on.
    @Test func remoteWaitAndWatchStopAtOnce() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        #expect(try home.run(["pause"]).status == 0)
        func started(_ arguments: [String], output: Any = FileHandle.nullDevice) throws -> Process {
            let process = try home.spawn(arguments, output: output)
            usleep(400_000)  // connected and waiting
            return process
        }
        for (verb, signal) in [("wait", SIGINT), ("wait", SIGTERM), ("watch", SIGINT), ("watch", SIGTERM)] {
            let process = try started([verb])
            #expect(process.isRunning, "\(verb) waits for the player")
            let start = DispatchTime.now()
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            let took = milliseconds(since: start)
            #expect(took < 200, "\(verb) after signal \(signal) took \(took) ms")
            #expect(process.terminationStatus == 130 || process.terminationStatus == 0, "\(verb): \(process.terminationStatus)")
        }
        let pipe = Pipe()
        let watch = try started(["watch"], output: pipe)
        let start = DispatchTime.now()
        try pipe.fileHandleForReading.close()  // `tartil watch | head -1` once head has gone
        watch.waitUntilExit()
        #expect(milliseconds(since: start) < 200, "watch notices its reader has gone, with no event to write")
        let after = try home.run(["status"])
        #expect(player.isRunning && after.status == 0, "the player is untouched")
    }

    // MARK: - Status with nothing playing, watch --follow (item 16)

    @Test func statusWithNothingPlayingAndWatchFollowWaitingForAPlayer() throws {
        let home = try Home(environment)
        let plain = try home.run(["status"])
        #expect(plain.status == 3 && plain.stdout == "stopped\n" && plain.stderr.isEmpty, "\(plain)")
        let json = try home.run(["status", "--json"])
        let stopped = try object(json.stdout)
        #expect(json.status == 3 && stopped["state"] as? String == "stopped", "\(json.stdout)")

        let pipe = Pipe()
        let follow = try home.spawn(["watch", "--follow"], output: pipe)
        defer { if follow.isRunning { follow.terminate() } }
        usleep(500_000)
        #expect(follow.isRunning, "watch --follow waits for a player instead of failing")
        let play = try home.run(["play", "112:3-4", "--output", "silent"])
        #expect(play.status == 0, "\(play.stderr)")
        usleep(300_000)
        kill(follow.processIdentifier, SIGINT)
        follow.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let events = text.split(separator: "\n").compactMap { try? object(String($0))["event"] as? String }
        #expect(events.contains("ayah") && events.contains("end"), "\(text)")
    }

    // MARK: - The storm (items 10 and 19)

    /// 30 clients send `play` and control commands at random for 20 s (the issue's figure; about 20 000
    /// requests here): every request is answered with its own id, the player is alive at the end, a `play` never
    /// fails, and the journal is consistent (every session that started ended, integrity checked).
    @Test func aStormOfClientsNeverBreaksThePlayer() throws {
        let home = try Home(environment)
        let player = try home.startPlayer(["play", "112", "--repeat-range", "inf", "--output", "silent"])
        defer { if player.isRunning { player.terminate() } }
        let program = """
            import json, random, socket, sys, threading, time
            path, seconds = sys.argv[1], float(sys.argv[2])
            commands = ["status", "status --json", "pause", "resume", "toggle", "next", "prev", "seek +1", "seek 0:01",
                        "seek 112:2", "speed 1.25", "speed 1", "volume 80", "volume +5", "set repeat 2", "set repeat 1",
                        "loop off", "sleep 30m", "sleep off", "stop-after off", "bookmark --note storm", "bogus words",
                        "seek 99:00", "play 112 --repeat-range inf", "play 1:1-4 --repeat-range inf",
                        "play 112:3-4 --repeat-range inf --repeat 2", "play 1 --reciter fixture --repeat-range inf"]
            lock = threading.Lock()
            out = {"sent": 0, "answered": 0, "codes": {}, "problems": []}
            def client(n):
                rng = random.Random(n); end = time.time() + seconds
                s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(path); f = s.makefile("rw")
                while time.time() < end:
                    command, rid = rng.choice(commands), rng.randrange(1 << 30)
                    with lock: out["sent"] += 1
                    try:
                        f.write(json.dumps({"command": command, "request_id": rid}) + "\\n"); f.flush()
                        reply = json.loads(f.readline())
                    except Exception as e:
                        with lock: out["problems"].append(f"{command}: {e!r}")
                        return
                    with lock:
                        out["answered"] += 1
                        code = reply["exit_code"]; out["codes"][str(code)] = out["codes"].get(str(code), 0) + 1
                        if reply.get("request_id") != rid: out["problems"].append(f"{command}: the reply of another request")
                        if code not in (0, 64) or (command.startswith("play") and code != 0):
                            out["problems"].append(f"{command}: {code} {reply.get('error')}")
            threads = [threading.Thread(target=client, args=(n,)) for n in range(30)]
            [t.start() for t in threads]; [t.join() for t in threads]
            print(json.dumps(out))
            """
        let out = try object(try python(program, in: home.directory, [home.socket, "20"]))
        let sent = out["sent"] as? Int ?? 0
        #expect(sent > 1000 && out["answered"] as? Int == sent, "every request answered: \(out)")
        #expect((out["problems"] as? [String])?.isEmpty == true, "\(out["problems"] ?? [])")
        #expect(player.isRunning, "the player is alive")
        let status = try home.run(["status", "--json"])
        let reciter = try object(status.stdout)["reciter"] as? String
        #expect(status.status == 0 && reciter == "fixture", "\(status)")
        #expect(try home.run(["stop"]).status == 0)
        player.waitUntilExit()
        #expect(player.terminationStatus == 0)
        let check = try home.run(["journal", "check"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let history = try #require(
            try JSONSerialization.jsonObject(with: Data(try home.run(["history", "--json"]).stdout.utf8)) as? [[String: Any]])
        let starts = history.filter { $0["kind"] as? String == "session-start" }.count
        let ends = history.filter { $0["kind"] as? String == "session-end" }.count
        #expect(starts > 100 && starts == ends, "every session that started ended: \(starts) starts, \(ends) ends")
    }
}
