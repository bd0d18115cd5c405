import Foundation
import TestSupport
import Testing

/// The built `tartil` executable, spawned with private XDG directories: stdout, stderr and exit codes.
@Suite struct CommandLineTests {
    /// Parses `text` as exactly one JSON value (one line).
    func json(_ text: String) throws -> Any {
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "expected one JSON line, got \(lines.count)")
        return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test func helpAndVersion() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try runTartil(arguments)
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("OVERVIEW: tartil"))
            #expect(result.stderr.isEmpty)
        }
        let version = try runTartil(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("tartil 0."))
        #expect(version.stdout.contains("libcurl"))
        let commandHelp = try runTartil(["resolve", "--help"])
        #expect(commandHelp.status == 0)
        #expect(commandHelp.stdout.hasPrefix("OVERVIEW: Show the ayat"))
    }

    @Test func resolveARealReciter() throws {
        let result = try runTartil(["resolve", "36:1-5", "--reciter", "ibrahim-alakhdar"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("36:1    #3706"))
        #expect(result.stdout.contains("https://cdn.jsdelivr.net/gh/quranstatic/ibrahim-alakhdar-2@"))
        #expect(result.stdout.contains("5 ayat, all pinned"))
    }

    @Test func resolveAsJSONIsARowPerAyah() throws {
        let result = try runTartil(["--json", "resolve", "1", "2:255", "--reciter", "emad-al-mansary"])
        #expect(result.status == 0, "\(result.stderr)")
        let ayat = try #require(try json(result.stdout) as? [[String: Any]])
        #expect(ayat.count == 8)
        #expect(ayat.allSatisfy { $0["reciter"] as? String == "emad-al-mansary" })
        #expect(ayat[0]["sha256"] as? String == "e2e7b034ec62e23a53a5f725bfc5a1f988bafb6e706d4a137ba9b68d1174a0ef")
        #expect(ayat[0]["duration_samples"] as? Int == 84719)
        #expect(ayat[0]["duration_ms"] as? Int == Int((84719.0 / 16000 * 1000).rounded()))
        #expect((ayat[7]["urls"] as? [String])?.first?.hasSuffix("/audio/002255.mp3") == true)
        #expect(ayat.allSatisfy { $0["pinned"] as? Bool == true })
        // An ayah no table pins has the same keys, its pinned facts null.
        let unpinned = try runTartil(["resolve", "1:1", "--reciter", "alafasy-128", "--json"])
        let row = try #require((try json(unpinned.stdout) as? [[String: Any]])?.first)
        #expect(Set(row.keys) == Set(ayat[0].keys))
        #expect(row["pinned"] as? Bool == false && row["duration_ms"] is NSNull && row["bytes"] is NSNull)
    }

    @Test func everyCommandPrintsOneJSONValue() throws {
        for arguments in [
            ["version"], ["surahs"], ["surahs", "juz", "30"], ["reciters"],
            ["resolve", "112", "--reciter", "alafasy-128"], ["help"],
        ] {
            let result = try runTartil(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            _ = try json(result.stdout)
        }
    }

    @Test func surahsAndReciters() throws {
        let surahs = try runTartil(["surahs"])
        #expect(surahs.status == 0)
        #expect(surahs.stdout.contains("114 surahs, 6,236 ayat"))
        let reciters = try runTartil(["reciters", "--json"])
        let list = try #require(try json(reciters.stdout) as? [[String: Any]])
        let akhdar = try #require(list.first { $0["reciter"] as? String == "ibrahim-alakhdar" })
        #expect(akhdar["pinned"] as? Int == 6236, "the whole Qur'an is pinned")
        #expect(akhdar["total"] as? Int == 6236)
        let text = try runTartil(["reciters"])
        #expect(text.stdout.contains("6236/6236"))
    }

    // MARK: - Exit codes

    @Test(arguments: [
        (["resolve", "2:300", "--reciter", "alafasy-128"], "Error: '2:300': surah 2 (Al-Baqara) has 286 ayat, so there is no ayah 2:300"),
        (["resolve", "115", "--reciter", "alafasy-128"], "Error: '115': there are 114 surahs, so there is no surah 115"),
        (["resolve", "3:5-3:2", "--reciter", "alafasy-128"], "Error: '3:5-3:2': range runs backwards"),
        (["resolve", "36"], "Error: resolve needs --reciter <id> (or a default reciter: TARTIL_RECITER"),
        (["resolve", "--reciter", "alafasy-128"], "Error: resolve needs <ref>"),
        (["resolve", "36", "--reciter"], "Error: --reciter needs a value <id>"),
        (["resolve", "36", "--reciter", "Nope"], "Error: no reciter 'Nope' in mirrors.json"),
        (["resolve", "36", "--reciter", "alafasy-12x"], "Error: no reciter 'alafasy-12x' in mirrors.json; did you mean alafasy-128?"),
        (["resolve", "36", "--reciter", "husary"], "Error: 'husary' could be 3 reciters; did you mean husary-128, husary-mujawwad-128, husary-muallim-128?"),
        (["resolve", "36", "--reciter", "alafasy-128", "--speed", "2"], "Error: unknown option '--speed' for 'resolve'"),
        (["bogus"], "Error: unknown command 'bogus'"),
        (["resolv", "36"], "Error: unknown command 'resolv'; did you mean resolve?"),
        (["--bogus"], "Error: unknown option '--bogus'"),
        (["table"], "Error: table needs a subcommand: build"),
        (["table", "burn"], "Error: unknown subcommand 'burn' for table"),
        (["table", "build", "/nonexistent", "--reciter", "x"], "Error: /nonexistent does not exist"),
        (["table", "build", "/tmp"], "Error: table build needs --reciter <id>"),
        (["help", "bogus"], "Error: no command 'bogus'"),
        (["version", "extra"], "Error: unexpected argument 'extra': version takes no arguments"),
        (["surahs", "juz", "31"], "Error: 'juz 31': there are 30 juz"),
        (["--mirrors"], "Error: --mirrors needs a value <file>"),
        (["--mirrors", "/nonexistent.json", "reciters"], "Error: /nonexistent.json (from --mirrors) does not exist"),
        (["--tables", "/nonexistent", "reciters"], "Error: the tables directory /nonexistent does not exist"),
        (["-c"], "Error: -c needs a value <commands>"),
        (["-c", "surahs 'open"], "Error: unterminated single quote"),
        (["--json=yes", "surahs"], "Error: --json takes no value"),
        // Did-you-mean for options, subcommands and values; never further than the allowed distance.
        (["--jsn", "surahs"], "Error: unknown option '--jsn'; did you mean --json?"),
        (["table", "buld"], "Error: unknown subcommand 'buld' for table; did you mean build?"),
        (["cache", "lss"], "Error: unknown subcommand 'lss' for cache; did you mean ls?"),
        (["surahs", "--format", "jsn"], "Error: --format takes text, json, ndjson or csv, not 'jsn'; did you mean json?"),
        (["history", "--kind", "positon"], "Error: --kind takes kinds separated by commas"),
        (["completions", "fsh"], "Error: completions takes bash, zsh or fish, not 'fsh'; did you mean fish, zsh?"),
        (["completions", "--list", "surah"], "Error: --list takes reciters or surahs, not 'surah'; did you mean surahs?"),
        (["speeed", "1"], "Error: unknown command 'speeed'; did you mean speed?"),
        (["sped", "1"], "Error: unknown command 'sped'; did you mean speed?"),
        (["prefetch", "1", "-x4"], "Error: unknown option '-x4' for 'prefetch'"),
        // Durations: what is allowed.
        (["play", "1", "--pause", "2m"], "Error: --pause takes a time from 0 to 60 s (2, 1.5s, 500ms, 0:30) or a multiple"),
        (["play", "1", "--cycle-pause", "11m"], "Error: --cycle-pause takes a time from 0 to 10 min"),
        (["play", "1", "--stop-after", "25h"], "Error: --stop-after: a timer goes from 1 s to 24 hours, not '25h'"),
        (["prefetch", "1", "--reciter", "alafasy-128", "--connect-timeout", "10x"], "Error: --connect-timeout takes a time from 1 s to 5 min"),
        (["journal", "sync", "/tmp", "--watch", "--interval", "0s"], "Error: --interval takes a time from 1 s to 24 h"),
        (["render", "1", "--pause", "1m5", "-o", "/tmp/never.wav"], "Error: --pause takes a time"),
        (["play", "1", "--output", "out.wav"], "Error: --output takes alsa"),
        (["positions", "--surah", "yasn"], "Error: --surah: "),
    ])
    func badInputExits64(arguments: [String], message: String) throws {
        let result = try runTartil(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// A surah name wherever a surah number is taken; attached short values; `--` ends options.
    @Test func commandLineHabits() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let byName = try runTartil(["positions", "--surah", "yasin"], home: home)
        #expect(byName.status == 0, "\(byName.stderr)")
        let attached = try runTartil(["-csurahs 112 --format=csv"], home: home)
        #expect(attached.status == 0, "\(attached.stderr)")
        #expect(attached.stdout.contains("112,Al-Ikhlaas"))
        let ended = try runTartil(["surahs", "--", "112"], home: home)
        #expect(ended.status == 0 && ended.stdout.contains("1 surah, 4 ayat"), "one surah, in the singular")
        let dashed = try runTartil(["surahs", "--", "--json"], home: home)
        #expect(dashed.status == 64, "after --, --json is a reference (and not one)")
        #expect(dashed.stderr.hasPrefix("Error: '--json' is not a reference"))
        let former = try runTartil(["render", "112", "--output", home + "/x.wav", "--pause", "100"], home: home)
        #expect(former.status == 64)
        #expect(former.stderr.hasPrefix("note: render --output is now -o/--to; --output still works for now\nError: --pause"))
        #expect(!FileManager.default.fileExists(atPath: home + "/x.wav"), "nothing is written")
    }

    /// Errors in a script on standard input say their line; with --json the error object has it too.
    @Test func scriptErrorsNameTheirLine() throws {
        let result = try runTartil([], input: "surahs 1\n\n# comment\nsurahs 200\nsurahs 'open\n")
        #expect(result.status == 64)
        #expect(result.stderr.contains("Error: line 4: '200': there are 114 surahs"))
        #expect(result.stderr.contains("Error: line 5: unterminated single quote"))
        let json = try runTartil(["--json"], input: "surahs 1\nplay 1 --pause 2q\n")
        #expect(json.stdout.contains(#""line":2"#), "\(json.stdout)")
        let prompt = try runTartil(["-c", "surahs 200"])
        #expect(prompt.stderr.hasPrefix("Error: '200'"), "-c has no lines")
    }

    @Test func usageErrorsShowTheUsageLine() throws {
        let result = try runTartil(["resolve", "2:300", "--reciter", "alafasy-128"])
        #expect(result.stderr.contains("\nUsage: tartil resolve <ref>... [--reciter <id>] [--lengths] [--connect-timeout <time>] [--stall-timeout <time>] [--format <text|json|ndjson|csv>]\n  See 'tartil help resolve'.\n"))
    }

    @Test func brokenMirrorsFileIsAFailureNamingTheField() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/mirrors.json"
        try #"{"version": 1, "reciters": [{"id": "x", "name": "X", "style": "murattal", "mirrors": [{"name": "a", "url": "ftp://h/{global}"}]}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try runTartil(["reciters"], environment: ["TARTIL_MIRRORS": path])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: \(path): reciter 'x' (#1): mirrors[0].url: 'ftp://h/{global}' is not an http or https URL"))
    }

    @Test func optionBeatsEnvironment() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/mirrors.json"
        try #"{"version": 1, "reciters": [{"id": "only-one", "name": "Only", "style": "murattal", "mirrors": [{"name": "a", "url": "http://127.0.0.1/{global}.mp3"}]}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let fromEnvironment = try runTartil(["reciters"], environment: ["TARTIL_MIRRORS": path])
        #expect(fromEnvironment.stdout.contains("only-one"))
        #expect(fromEnvironment.stdout.contains("1 reciter from \(path)"))
        let fromOption = try runTartil(["reciters", "--mirrors", TestPaths.repository + "/mirrors.json"], environment: ["TARTIL_MIRRORS": path])
        #expect(fromOption.stdout.contains("ibrahim-alakhdar"))
        let viaVariable = try runTartil(["resolve", "#1", "--json"], environment: ["TARTIL_MIRRORS": path, "TARTIL_RECITER": "only-one"])
        #expect(viaVariable.status == 0)
        #expect(viaVariable.stdout.contains("http://127.0.0.1/1.mp3"))
    }

    @Test func userMirrorsFileInTheConfigDirectoryIsPreferred() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/config/tartil", withIntermediateDirectories: true)
        try #"{"version": 1, "reciters": [{"id": "mine", "name": "Mine", "style": "mujawwad", "mirrors": [{"name": "a", "url": "https://h/{surah3}{ayah3}.mp3"}]}]}"#
            .write(toFile: home + "/config/tartil/mirrors.json", atomically: true, encoding: .utf8)
        let result = try runTartil(["version", "--json"], home: home)
        let object = try #require(try json(result.stdout) as? [String: Any])
        #expect(object["mirrors_source"] as? String == "user")
        #expect(object["cache_dir"] as? String == home + "/cache/tartil")
    }

    // MARK: - Scripts

    @Test func dashCRunsCommandsAndStopsAtTheFirstFailure() throws {
        let ok = try runTartil(["-c", "surahs 112; surahs 113"])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("Al-Ikhlaas") && ok.stdout.contains("Al-Falaq"))
        let failing = try runTartil(["-c", "surahs 112; surahs 2:300; surahs 113"])
        #expect(failing.status == 64)
        #expect(failing.stdout.contains("Al-Ikhlaas"))
        #expect(!failing.stdout.contains("Al-Falaq"))
        let jsonLines = try runTartil(["--json", "-c", "surahs 1; surahs 2"])
        #expect(jsonLines.stdout.split(separator: "\n").count == 2)
        let quit = try runTartil(["-c", "surahs 1; quit; surahs 2"])
        #expect(quit.status == 0)
        #expect(!quit.stdout.contains("Al-Baqara"))
    }

    @Test func commandsFromAPipeRunLikeThePrompt() throws {
        let input = """
            # a script: comments and blank lines are fine

            surahs 112
            resolve 2:300 --reciter alafasy-128
            resolve 'the cow:255' --reciter alafasy-128 --json
            surahs 113; version --json
            quit
            surahs 114
            """
        let result = try runTartil([], input: input)
        #expect(result.status == 64, "the first failure's code")
        #expect(result.stdout.contains("Al-Ikhlaas"))
        #expect(result.stdout.contains(#""surah":2,"ayah":255"#))
        #expect(result.stdout.contains("Al-Falaq"))
        #expect(!result.stdout.contains("An-Naas"), "nothing runs after quit")
        #expect(result.stderr.contains("Error: line 4: '2:300'"), "an error in a script names its line")
        #expect(!result.stderr.contains("tartil 0.1.0 —"), "no banner when standard input is not a terminal")
        let clean = try runTartil([], input: "surahs 1\nsurahs 2\n")
        #expect(clean.status == 0)
    }

    /// A 10 MB line used to take minutes (each read scanned everything buffered so far); now it is refused
    /// at once (about a second here), without being held whole in memory, and the next line runs.
    @Test func overlongLinesAreRefusedAndTheNextLineRuns() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let input = Array(repeating: UInt8(ascii: "a"), count: 10_000_000) + Array("\nsurahs 112\n".utf8)
        let result = try runTartilBounded([], input: input, home: home, directory: home, deadline: 60)
        #expect(!result.timedOut && !result.signaled)
        #expect(result.status == 64)
        #expect(String(decoding: result.stderr, as: UTF8.self).hasPrefix("Error: line 1: the line is 10000000 bytes long; lines may have at most 65536 bytes"))
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("Al-Ikhlaas"))
        let script = try runTartil(["-c", "surahs 1; " + String(repeating: "x", count: 70_000)])
        #expect(script.status == 64)
        #expect(script.stdout.isEmpty, "a -c script over the limit runs none of its commands")
    }

    @Test func interruptWhileReadingAPipeExits130() throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = []
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        // A watchdog: a tartil that ignores the interrupt must fail this test, not hang the suite.
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { kill(pid, SIGKILL) }
        input.fileHandleForWriting.write(Data("surahs 1\n".utf8))
        // Wait for the first command's output: tartil is then blocked reading the next line.
        var received = Data()
        while !String(decoding: received, as: UTF8.self).contains("1 surah,") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        try? input.fileHandleForWriting.close()
    }
}
