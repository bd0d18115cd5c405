import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// `tartil play` on a terminal, through the real binary on a pseudo-terminal (tools/pty-drive): keys drive
/// playback and their positions are durable; the terminal's modes come back on every way out (q, SIGTERM, a
/// crash signal, Ctrl-Z and `fg`); the live line never wraps.
@Suite(.serialized) struct KeysTests {
    let environment = DownloadEnvironment.shared

    typealias Drive = TerminalDrive

    /// The `tartil play …` command line against `place`'s cache and journal.
    func play(_ place: SessionTests.Place, _ arguments: String) throws -> String {
        let mirrors = try environment.mirrorsFile([environment.clean], in: place.directory)
        return "\(TestPaths.executable) play \(arguments) --mirrors \(mirrors) --tables \(environment.tables) "
            + "--cache-dir \(place.directory)/cache --journal \(place.directory)/journal.sqlite"
    }

    func drive(_ steps: [String], columns: Int = 80, command: [String], in place: SessionTests.Place) throws -> Drive {
        try TerminalDrive.run(steps, columns: columns, command: command, home: place.directory)
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

    /// The fields of the live line, in their order (each pattern matches one whole field).
    static let liveFields = [
        "playing|paused|buffering", "112:[0-9]|basmala \\(112\\)", "[0-9]+:[0-9]{2} / ~?[0-9]+:[0-9]{2}",
        "cycle [0-9]+/[0-9]+", "[0-9.]+×", "vol [0-9]+%", "\\[[-=|>‖]+\\]", "Al-Ikhlaas",
    ]

    /// At 80 and 40 columns the live line on the screen is at most width - 1 columns and never wraps, and it
    /// keeps whole fields in order of importance: at 80 all of them (speed, volume, the bar, the name), at 40
    /// the state, the ayah, the time and the cycle, the rest left out whole.
    @Test(arguments: [80, 40]) func theLiveLineKeepsWholeFields(columns: Int) throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent --repeat-range 2 --speed 1.25 --volume 80")
        let drive = try drive(
            ["match:^playing  112:[1-4]  ", "snap:line", "send:q"], columns: columns, command: ["sh", "-c", command],
            in: place)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "the live line never wraps: \(drive.output)")
        let row = try #require(drive.screens["line"]?.first { $0.hasPrefix("playing") }, "\(drive.output)")
        #expect(TerminalText.columns(row) <= columns - 1, "\(row)")
        #expect(TerminalDrive.fieldsMatch(row, Self.liveFields), "whole fields, in order: \(row)")
        let fields = TerminalDrive.fields(row)
        if columns == 80 {
            #expect(fields.count == 8 && row.hasSuffix("]  Al-Ikhlaas"), "\(row)")
        } else {
            #expect(fields.count == 4 && fields.last == "cycle 1/2", "\(row)")
        }
    }

    /// `?` prints the key help above the live line, wrapped to the terminal between two keys (the later lines
    /// under the first key), and the live line is drawn again below it: all of it readable at 80 and 40.
    @Test(arguments: [80, 40]) func theKeyHelpIsPrintedAboveTheLiveLine(columns: Int) throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let drive = try drive(
            ["match:^playing  112:", "send:?", "match:\\? keys\\n(playing|paused)  ", "snap:help", "send:q"],
            columns: columns, command: ["sh", "-c", command], in: place)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "\(drive.output)")
        let rows = try #require(drive.screens["help"])
        let first = try #require(rows.firstIndex { $0.hasPrefix("keys: ") }, "\(rows)")
        let last = try #require(rows.firstIndex { $0.hasSuffix("  ? keys") }, "\(rows)")
        #expect(last > first, "more than one line at \(columns) columns: \(rows)")
        let help = rows[first...last]
        for row in help { #expect(TerminalText.columns(row) <= columns - 1, "\(row)") }
        for row in help.dropFirst() { #expect(row.hasPrefix("      ") && !row.hasPrefix("       "), "\(row)") }
        #expect(
            help.flatMap(TerminalDrive.fields) == [
                "keys: space/p pause", "←/→ -/+5 s", "↓/↑ -/+60 s", "</> prev/next ayah", "l loop A/B/off",
                "r repeat ayah", "[/] -/+0.05 speed", "9/0 -/+5% volume", "b bookmark", "w weak", "q quit", "? keys",
            ], "every key, none split: \(help)")
        let below = rows.index(after: last)
        #expect(below < rows.endIndex && TerminalDrive.fieldsMatch(rows[below], Self.liveFields), "\(rows)")
    }

    /// A notice too long for the live line (`r`'s) is printed above it at 40 columns, wrapped between words; at
    /// 80 it fits, and is shown on the live line alone.
    @Test(arguments: [80, 40]) func aLongNoticeIsReadWhole(columns: Int) throws {
        let place = try SessionTests.Place(environment)
        let command = try play(place, "112 --output silent")
        let notice = "repeating this ayah until you move on (r again: off)"
        let shown = columns == 80 ? "screen:\(notice)" : "match:\\(r again: off\\)\\n(playing|paused)  "
        let drive = try drive(
            ["match:^playing  112:", "send:r", shown, "snap:notice", "send:q"], columns: columns,
            command: ["sh", "-c", command], in: place)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "\(drive.output)")
        let rows = try #require(drive.screens["notice"])
        if columns == 80 {
            #expect(rows.contains(notice), "\(rows)")
        } else {
            let first = try #require(rows.firstIndex { $0.hasPrefix("repeating") }, "\(rows)")
            let lines = rows[first...].prefix { !$0.hasPrefix("playing") && !$0.hasPrefix("paused") }
            #expect(lines.count == 2, "\(rows)")
            for line in lines { #expect(TerminalText.columns(line) <= columns - 1, "\(line)") }
            #expect(lines.flatMap { $0.split(separator: " ") } == notice.split(separator: " "), "\(lines)")
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
