import Foundation
import TestSupport
import Testing

/// `tartil play` on a terminal, through the real binary on a pseudo-terminal (tools/pty-drive): keys drive
/// playback and their positions are durable; the terminal's modes come back on every way out (q, SIGTERM, a
/// crash signal, Ctrl-Z and `fg`); the live line never wraps.
@Suite(.serialized) struct KeysTests {
    let environment = DownloadEnvironment.shared
    static let driver = TestPaths.repository + "/tools/pty-drive"

    /// What the driver saw.
    struct Drive {
        let status: Int
        let output: String
        let modes: [String: String]
        /// The output after each `mark:LABEL` step.
        let after: [String: String]
    }

    /// The `tartil play …` command line against `place`'s cache and journal.
    func play(_ place: SessionTests.Place, _ arguments: String) throws -> String {
        let mirrors = try environment.mirrorsFile([environment.clean], in: place.directory)
        return "\(TestPaths.executable) play \(arguments) --mirrors \(mirrors) --tables \(environment.tables) "
            + "--cache-dir \(place.directory)/cache --journal \(place.directory)/journal.sqlite"
    }

    func drive(_ steps: [String], columns: Int = 80, command: [String], in place: SessionTests.Place) throws -> Drive {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.driver, "--cols", "\(columns)"] + steps + ["--"] + command
        process.environment = [
            "HOME": place.directory, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "XDG_CONFIG_HOME": place.directory + "/config", "XDG_DATA_HOME": place.directory + "/data",
            "XDG_CACHE_HOME": place.directory + "/xdg-cache", "TARTIL_RECITER": "fixture", "TERM": "xterm",
            "SWIFT_BACKTRACE": "enable=no", "PS1": "$ ",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        return Drive(
            status: object["status"] as? Int ?? -999, output: object["output"] as? String ?? "",
            modes: object["modes"] as? [String: String] ?? [:],
            after: (object["marks"] as? [String: Int] ?? [:]).mapValues {
                String(decoding: Data((object["output"] as? String ?? "").utf8).dropFirst($0), as: UTF8.self)
            })
    }

    /// The journal's rows as `reason,surah,ayah` (positions) or `bookmark,surah,ayah`.
    func journal(_ place: SessionTests.Place) throws -> [String] {
        let export = try place.run(["journal", "export", "--format", "csv"])
        return export.stdout.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 11 else { return nil }
            switch fields[4] {
            case "position": return "\(fields[10]),\(fields[6]),\(fields[7])"
            case "bookmark": return "bookmark,\(fields[6]),\(fields[7])"
            default: return nil
            }
        }
    }

    /// The lines `stty -g` printed (its settings: colon-separated hex).
    func sttyLines(_ output: String) -> [String] {
        output.components(separatedBy: CharacterSet(charactersIn: "\r\n")).filter {
            $0.split(separator: ":").count > 20 && $0.allSatisfy { $0.isHexDigit || $0 == ":" }
        }
    }

    /// Space pauses, → seeks, > moves on (and is refused on the last ayah, on the live line, without ending
    /// playback), b bookmarks, q quits: each position is in the journal, and the terminal is as it was.
    @Test func keysDrivePlaybackAndTheTerminalComesBack() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            [
                "wait:playing", "sleep:0.3", "send: ", "sleep:0.5", "mode:during", "send:\\x1b[C", "sleep:0.5",
                "send:>", "sleep:0.4",
                "send:>", "sleep:0.4", "send:>", "sleep:0.4", "send:>", "sleep:0.4", "send:b", "sleep:0.5", "send:q",
                "sleep:0.5",
            ],
            command: ["sh", "-c", "stty -g; \(command); echo status=$?; stty -g"], in: place)
        #expect(drive.output.contains("status=0"), "\(drive.output)")
        #expect(drive.modes["during"] == "raw")
        let stty = sttyLines(drive.output)
        #expect(stty.count == 2 && stty[0] == stty[1], "the terminal's modes after play are those before: \(stty)")
        #expect(drive.output.contains("112:4 is the last ayah"), "a refused key's message on the live line")
        #expect(drive.output.contains("bookmarked 112:4"))
        let rows = try journal(place)
        let pause = try #require(rows.firstIndex { $0.hasPrefix("pause,112,") }, "\(rows)")
        let seek = try #require(rows.lastIndex { $0.hasPrefix("seek,112,") }, "\(rows)")
        let bookmark = try #require(rows.firstIndex(of: "bookmark,112,4"), "\(rows)")
        let quit = try #require(rows.firstIndex(of: "quit,112,4"), "\(rows)")
        #expect(pause < seek && seek < bookmark && bookmark < quit, "\(rows)")
        #expect(!rows.contains { $0.hasPrefix("end,") }, "q quits; playback did not run to its end")
    }

    /// Ctrl-Z stops tartil (a shell with job control around it), `fg` continues it with keys working again,
    /// SIGTERM stops it with exit 130, and the terminal's modes are those from before.
    @Test func suspendContinueAndTerminate() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            [
                "send:stty -g\\n", "send:\(command)\\n", "wait:playing", "sleep:0.3", "send:\\x1a", "stopped:z",
                "send:fg\\n",
                "sleep:0.6", "send:p", "sleep:0.5", "fgsignal:TERM", "sleep:0.8",
                "send:echo status=$?; stty -g; exit\\n",
            ],
            command: ["bash", "--norc", "--noprofile", "-i"], in: place)
        #expect(drive.modes["z"] == "stopped", "\(drive.output)")
        #expect(drive.output.contains("status=130"), "\(drive.output)")
        let stty = sttyLines(drive.output)
        #expect(stty.count == 2 && stty.first == stty.last, "\(stty)")
        let rows = try journal(place)
        #expect(rows.contains { $0.hasPrefix("pause,112,") }, "p after fg paused: \(rows)")
        #expect(rows.last?.hasPrefix("quit,112,") == true, "\(rows)")
    }

    /// A crash signal restores the terminal before the process dies of it.
    @Test func aCrashSignalRestoresTheTerminal() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            [
                "send:stty -g\\n", "send:\(command)\\n", "wait:playing", "sleep:0.3", "fgsignal:SEGV", "sleep:1",
                "send:echo status=$?; stty -g; exit\\n",
            ],
            command: ["bash", "--norc", "--noprofile", "-i"], in: place)
        #expect(drive.output.contains("status=139"), "died of SIGSEGV: \(drive.output)")
        let stty = sttyLines(drive.output)
        #expect(stty.count == 2 && stty.first == stty.last, "\(stty)")
    }

    /// At 30 columns no piece of the live line passes 29 columns, so none wraps and leaves a copy behind.
    @Test func theLiveLineFitsANarrowTerminal() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        for columns in [30, 60] {
            let drive = try drive(
                ["wait:playing", "sleep:1.2", "send:q", "sleep:0.3"], columns: columns, command: ["sh", "-c", command],
                in: place)
            let pieces = drive.output.replacingOccurrences(of: "\u{1B}[K", with: "").components(
                separatedBy: CharacterSet(charactersIn: "\r\n"))
            #expect(pieces.contains { $0.hasPrefix("playing") }, "\(drive.output)")
            for piece in pieces { #expect(piece.count <= columns - 1, "\(columns) columns: \(piece)") }
            if columns == 60 {
                #expect(pieces.contains { $0.contains("[") && $0.contains("|") }, "a bar with ticks: \(drive.output)")
            }
        }
    }

    /// At the prompt, events printed while a line is being typed appear above it, and the prompt and the
    /// half-typed line are drawn again below them; Ctrl-C still abandons the line.
    @Test func eventsAtThePromptGoAboveTheLineBeingTyped() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "").replacingOccurrences(of: " play  ", with: " ")
        let drive = try drive(
            [
                "wait:tartil>", "send:events on\\n", "send:play 112 --output silent\\n", "sleep:0.5", "send:stat",
                "sleep:2.5",
                "send:us\\n", "sleep:0.3", "send:half\\x03", "sleep:0.3", "send:quit\\n",
            ],
            command: ["sh", "-c", "exec " + command], in: place)  // exec: Ctrl-C reaches tartil alone
        #expect(drive.status == 0, "\(drive.output)")
        // An event while "stat" was typed: the line is cleared, the event printed, the prompt and "stat" redrawn.
        let redrawn = drive.output.components(separatedBy: "\r\u{1B}[K{\"event\"").dropFirst().filter {
            $0.contains("tartil> stat")
        }
        #expect(!redrawn.isEmpty, "\(drive.output)")
        #expect(
            drive.output.contains("playing  112:") || drive.output.contains("paused  112:"),
            "status ran: \(drive.output)")
        #expect(drive.output.contains("(type quit or press Ctrl-D to leave)"))
    }

    /// A terminal made narrower while playing (SIGWINCH): the lines drawn after it fit the new width.
    @Test func theLiveLineFollowsAResize() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            ["wait:playing", "sleep:0.6", "resize:30", "sleep:0.3", "mark:narrow", "sleep:1", "send:q", "sleep:0.3"],
            columns: 100, command: ["sh", "-c", command], in: place)
        let before = drive.output.components(separatedBy: "\r").filter { $0.hasPrefix("\u{1B}[Kplaying") }
        #expect(before.contains { $0.count > 40 }, "wide at first: \(drive.output)")
        let narrow = try #require(drive.after["narrow"])
        let pieces = narrow.replacingOccurrences(of: "\u{1B}[K", with: "").components(
            separatedBy: CharacterSet(charactersIn: "\r\n"))
        #expect(pieces.contains { $0.hasPrefix("playing") }, "\(narrow)")
        for piece in pieces { #expect(piece.count <= 29, "after the resize: \(piece)") }
    }

    /// `status` on a terminal draws its bar as wide as the terminal (less one column), not a fixed 64.
    @Test func statusBarFitsTheTerminal() throws {
        let place = try SessionTests.Place(environment)
        let script = try play(place, "").replacingOccurrences(
            of: " play  ", with: " -c 'play 112 --output silent; status; stop' ")
        for columns in [40, 120] {
            let drive = try drive(
                ["wait:Al-Ikhlaas", "sleep:0.5"], columns: columns, command: ["sh", "-c", script], in: place)
            let bar = try #require(
                drive.output.components(separatedBy: "\r\n").first { $0.hasPrefix("[") && $0.hasSuffix("]") },
                "\(drive.output)")
            #expect(bar.count == columns - 1, "\(columns) columns: \(bar)")
        }
    }

    /// Ctrl-Z then `bg`: playback goes on in the background to its end without being stopped by the terminal
    /// (SIGTTOU), and leaves the terminal as it was.
    @Test func suspendThenBackground() throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            [
                "send:stty -g\\n", "send:\(command)\\n", "wait:playing", "sleep:0.3", "send:\\x1a", "stopped:z",
                "send:bg\\n",
                "sleep:0.3", "send:wait; echo status=$?; stty -g; exit\\n",
            ],
            command: ["bash", "--norc", "--noprofile", "-i"], in: place)
        #expect(drive.modes["z"] == "stopped", "\(drive.output)")
        #expect(drive.output.contains("status=0"), "\(drive.output)")
        let stty = sttyLines(drive.output)
        #expect(stty.count == 2 && stty.first == stty.last, "\(stty)")
        #expect(try journal(place).last?.hasPrefix("end,112,4") == true, "played to its end in the background")
    }
}
