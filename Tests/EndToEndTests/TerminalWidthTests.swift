import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Help on a terminal, through the real binary on a pseudo-terminal (tools/pty-drive): wrapped to the
/// terminal's width, so that no line runs past the last column.
@Suite struct TerminalHelpTests {
    /// `tartil help`, `tartil help <command>` and `tartil <command> --help` at 80 columns are what is printed
    /// when standard output is not a terminal; at 40 the same words, in lines of at most 40 columns.
    @Test(arguments: [80, 40]) func helpIsWrappedToTheTerminal(columns: Int) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        for arguments in [
            ["help"], ["--help"], ["help", "prefetch"], ["prefetch", "--help"], ["help", "table", "build"],
        ] {
            let drive = try TerminalDrive.run(
                ["screen:See 'tartil help"], columns: columns, command: [TestPaths.executable] + arguments, home: home)
            #expect(drive.status == 0, "\(arguments): \(drive.output)")
            #expect(drive.overflows == 0, "\(arguments) at \(columns): a line ran past the last column")
            let printed = try runTartil(arguments, home: home).stdout.split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .dropLast().map(String.init)
            if columns == 80 {
                #expect(drive.lines == printed, "\(arguments)")
            } else {
                for line in drive.lines { #expect(TerminalText.columns(line) <= columns, "\(arguments): \(line)") }
                #expect(drive.lines != printed)
                #expect(
                    drive.lines.flatMap { $0.split(separator: " ") } == printed.flatMap { $0.split(separator: " ") },
                    "\(arguments): the same words")
            }
        }
    }
}

/// `tartil reciters` on a terminal: the table where it fits (120 columns), else one short record per reciter,
/// wrapped to the width (80, 40); every reciter listed either way.
@Suite struct TerminalRecitersTests {
    @Test(arguments: [120, 80, 40]) func recitersFitTheTerminal(columns: Int) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let drive = try TerminalDrive.run(["screen:reciters from"], columns: columns, command: [TestPaths.executable, "reciters"], home: home)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "at \(columns): a line ran past the last column")
        for line in drive.lines { #expect(TerminalText.columns(line) <= columns, "\(line)") }
        let printed = try runTartil(["reciters", "--json"], home: home)
        let ids = ((try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [[String: Any]]) ?? []).compactMap { $0["reciter"] as? String }
        #expect(ids.count > 20)
        for id in ids { #expect(drive.lines.contains { $0.hasPrefix(id + " ") || $0 == id }, "\(id) at \(columns)") }
        #expect(drive.lines.first?.hasPrefix("ID ") == (columns == 120), "the table only where it fits")
    }
}

/// `tartil surahs` on a terminal: every column where they fit (100), the least needed left out where not (80:
/// no English name; 40: the number, name, ayat, place and juz), every surah listed.
@Suite struct TerminalSurahsTests {
    @Test(arguments: [(100, "ARABIC"), (80, "ARABIC"), (40, "JUZ")]) func surahsFitTheTerminal(columns: Int, lastColumn: String) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let drive = try TerminalDrive.run(["screen:114 surahs"], columns: columns, command: [TestPaths.executable, "surahs"], home: home)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "at \(columns): a line ran past the last column")
        #expect(drive.lines.first?.hasSuffix(lastColumn) == true, "\(drive.lines.first ?? "")")
        #expect(drive.lines.first?.contains("ENGLISH") == (columns == 100))
        #expect(drive.lines.count == 116 && drive.lines[114].contains("An-Naas"), "\(drive.lines.suffix(3))")
    }
}

/// `tartil version` on a terminal: each value wrapped under its first line (or under its label where a word is
/// too long for its column), the same text as on a wide terminal, none cut.
@Suite struct TerminalVersionTests {
    @Test(arguments: [80, 40, 24]) func versionFitsTheTerminal(columns: Int) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let drive = try TerminalDrive.run(["screen:mpris"], columns: columns, command: [TestPaths.executable, "version"], home: home)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "at \(columns): a line ran past the last column")
        // The same text as on a terminal wide enough for every line (the same environment), only broken
        // differently: long paths break after a slash.
        let wide = try TerminalDrive.run(["screen:mpris"], columns: 400, command: [TestPaths.executable, "version"], home: home)
        let text = { (lines: [String]) in lines.joined().filter { !$0.isWhitespace } }
        #expect(wide.lines.count < drive.lines.count || columns == 80)
        #expect(text(drive.lines) == text(wide.lines), "the same text, none cut")
    }
}

/// An error on a terminal: wrapped at words to its width, later lines indented; the same text as to a pipe.
@Suite struct TerminalErrorTests {
    @Test(arguments: [80, 40]) func errorsAreWrappedToTheTerminal(columns: Int) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let drive = try TerminalDrive.run(["screen:tartil help play"], columns: columns, command: [TestPaths.executable, "play", "115"], home: home)
        #expect(drive.status == 64, "\(drive.output)")
        #expect(drive.overflows == 0, "at \(columns): a line ran past the last column")
        #expect(drive.lines.first?.hasPrefix("Error: '115': there are 114 surahs") == true, "\(drive.lines)")
        let piped = try runTartil(["play", "115"], home: home)
        #expect(piped.status == 64)
        let words = { (text: String) in text.split(whereSeparator: \.isWhitespace) }
        #expect(words(drive.lines.joined(separator: "\n")) == words(piped.stderr), "the same words")
    }
}

/// A summary line of prose (`cache verify`'s, `cache ls` of an empty cache) on a 40-column terminal: wrapped at
/// words, nothing past the last column; to a pipe, one line.
@Suite struct TerminalSummaryTests {
    @Test func summariesAreWrappedToTheTerminal() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let cache = ["--cache-dir", home + "/cache"]
        let imported = try runTartil(["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", "alafasy-128"] + cache, home: home)
        #expect(imported.status == 0, "\(imported.stderr)")
        let drive = try TerminalDrive.run(["screen:checked"], columns: 40, command: [TestPaths.executable, "cache", "verify"] + cache, home: home)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0)
        let piped = try runTartil(["cache", "verify"] + cache, home: home)
        #expect(piped.stdout.split(separator: "\n").count == 1, "\(piped.stdout)")
        #expect(drive.lines.count == 2 && drive.lines.joined(separator: " ").split(separator: " ") == piped.stdout.split(whereSeparator: \.isWhitespace), "\(drive.lines)")
    }

    /// `cache du` whose table is wider than the terminal (a reciter id of 36 characters at 40 columns): each
    /// reciter's id on a line, its figures under it; at 80 columns, the table.
    @Test(arguments: [40, 80]) func cacheDuFitsTheTerminal(columns: Int) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let id = "a-reciter-whose-id-is-thirty-six-ch"
        try """
            {"version": 1, "reciters": [{"id": "\(id)", "name": "Long", "style": "murattal", "mirrors": [{"name": "m", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}
            """.write(toFile: home + "/mirrors.json", atomically: true, encoding: .utf8)
        let common = ["--cache-dir", home + "/cache", "--mirrors", home + "/mirrors.json"]
        let imported = try runTartil(["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", id] + common, home: home)
        #expect(imported.status == 0, "\(imported.stderr)")
        let drive = try TerminalDrive.run(["screen:total"], columns: columns, command: [TestPaths.executable, "cache", "du"] + common, home: home)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "at \(columns): \(drive.lines)")
        let shown = drive.lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        if columns == 40 {
            #expect(shown.count == 4 && shown[0] == id && shown[1].hasPrefix("  ") && shown[1].contains(" files, ") && shown[2] == "total", "\(shown)")
        } else {
            #expect(shown.count == 2 && shown[0].hasPrefix(id + "  ") && shown[1].hasPrefix("total "), "\(shown)")
        }
    }
}

/// `prefetch`'s progress bar on a terminal: it redraws in place within width - 1 columns, keeping whole fields.
@Suite(.serialized) struct TerminalPrefetchTests {
    let environment = DownloadEnvironment.shared

    /// The bar's fields in their order (each pattern matches one whole field).
    static let barFields = [
        "\\[[#-]+\\]", "[0-9]+/11 files", "[0-9.]+ (B|KiB|MiB)", "[0-9.]+ (B|KiB|MiB)/s", "ETA [0-9]+:[0-9]{2}",
        "[0-9]+ failed", "\\(.+\\)",
    ]

    /// Over a slow link (so the bar stays a while): at 80 columns the whole bar with every field; at 40 a shorter
    /// bar, no rate, and never a line past the last column. Standard output (the summary) goes elsewhere, so
    /// all the terminal shows is the bar.
    @Test(arguments: [80, 40]) func theProgressBarFitsTheTerminal(columns: Int) throws {
        let link = try TestServer.slowLink(to: environment.nginx.port, rttMilliseconds: 200, megabitsPerSecond: 1)
        defer { link.stop() }
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mirrors = try environment.mirrorsFile(
            ["http://127.0.0.1:\(link.port)/fixture/{surah3}{ayah3}.mp3"], in: directory)
        let command =
            "\(TestPaths.executable) prefetch 1 112 --reciter fixture --jobs 1 --mirrors \(mirrors) "
            + "--tables \(environment.tables) --cache-dir \(directory)/cache > \(directory)/summary"
        let drive = try TerminalDrive.run(
            ["screen:ETA", "snap:bar"], columns: columns, command: ["sh", "-c", command], home: directory)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "the bar never wraps: \(drive.output)")
        let row = try #require(drive.screens["bar"]?.first { $0.contains("/11 files") }, "\(drive.output)")
        #expect(TerminalText.columns(row) <= columns - 1, "\(row)")
        #expect(TerminalDrive.fieldsMatch(row, Self.barFields), "whole fields, in order: \(row)")
        let bar = try #require(TerminalDrive.fields(row).first { $0.hasPrefix("[") }, "\(row)")
        if columns == 80 {
            #expect(bar.count == 26 && row.contains("/s  ETA "), "\(row)")
        } else {
            #expect(bar.count < 26 && !row.contains("/s"), "\(row)")
        }
        #expect(!drive.screen.contains { $0.contains("files") }, "the bar is cleared at the end: \(drive.screen)")
        let summary = try String(contentsOfFile: directory + "/summary", encoding: .utf8)
        #expect(summary.hasPrefix("11 requested: 11 downloaded"), "\(summary)")
    }
    /// A file another process holds is said above the bar, wrapped at words to the terminal: no row past the last
    /// column, every word of the line there.
    @Test(arguments: [80, 40]) func theWaitingLineIsWrappedAboveTheBar(columns: Int) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lock = try PrefetchTests.holdLocks(of: [try AyahRef(112, 2)], cache: directory + "/cache")
        let release = Thread {
            Thread.sleep(forTimeInterval: 6)  // tartil's first look comes well within the 4 s before the notice
            close(lock)
        }
        release.start()
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let command =
            "\(TestPaths.executable) prefetch 112 --reciter fixture --mirrors \(mirrors) "
            + "--tables \(environment.tables) --cache-dir \(directory)/cache > \(directory)/summary"
        let drive = try TerminalDrive.run(["screen:when that process", "snap:waiting"], columns: columns, command: ["sh", "-c", command], home: directory)
        #expect(drive.status == 0, "\(drive.output)")
        #expect(drive.overflows == 0, "no row wraps by itself: \(drive.output)")
        let rows = try #require(drive.screens["waiting"], "\(drive.output)")
        for row in rows { #expect(TerminalText.columns(row) <= columns, "\(row)") }
        let said = rows.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("[") }.joined(separator: " ")
        #expect(said.contains("waiting for 112:2: another tartil process is downloading it (taken here when that process has it or ends; one stopped with Ctrl-Z keeps it until it goes on)"), "\(rows)")
        #expect(try String(contentsOfFile: directory + "/summary", encoding: .utf8).contains("downloaded"))
    }
    /// `play` waiting for a file another process holds prints the waiting line once above its live line, wrapped
    /// (the live line has room only for a short field, which a narrow terminal drops), and names the file on it.
    @Test(arguments: [80, 40]) func playSaysOnceAboveItsLiveLineThatAnotherProcessHoldsAFile(columns: Int) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lock = try PrefetchTests.holdLocks(of: [try AyahRef(1, 1), try AyahRef(112, 1)], cache: directory + "/cache")
        let release = Thread {
            Thread.sleep(forTimeInterval: 6)  // tartil's first look comes well within the 4 s before the notice
            close(lock)
        }
        release.start()
        let mirrors = try environment.mirrorsFile([environment.clean], in: directory)
        let command = [
            TestPaths.executable, "play", "112", "--reciter", "fixture", "--output", "null", "--mirrors", mirrors,
            "--tables", environment.tables, "--cache-dir", directory + "/cache",
        ]
        let drive = try TerminalDrive.run(
            ["screen:keeps it until it goes on", "snap:waiting", "sleep:0.6", "snap:later", "send:q"], columns: columns, command: command,
            home: directory)
        #expect(drive.overflows == 0, "no row wraps by itself: \(drive.output)")
        let rows = try #require(drive.screens["waiting"], "\(drive.output)")
        for row in rows { #expect(TerminalText.columns(row) <= columns, "\(row)") }
        let said = rows.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        #expect(
            said.contains("another tartil process is downloading it (taken here when that process has it or ends; one stopped with Ctrl-Z keeps it until it goes on)"),
            "\(rows)")
        // Said once, however many times the live line is drawn again.
        let later = try #require(drive.screens["later"]).joined(separator: " ")
        #expect(later.components(separatedBy: "waiting for").count - 1 == 1, "\(drive.screens["later"] ?? [])")
    }
}
