import TartilSession
import Foundation
import TartilCore
import TestSupport
import Testing

@testable import TartilCLI
@testable import TartilPlayer

/// Help text is compared with the files in Tests/TartilCLITests/Golden. After an intended change, run the tests
/// with TARTIL_UPDATE_GOLDEN=1 to rewrite them, and review the diff.
@Suite struct HelpTests {
    static let goldenDirectory = TestPaths.repository + "/Tests/TartilCLITests/Golden"

    func checkGolden(_ name: String, _ text: String) throws {
        let path = "\(Self.goldenDirectory)/\(name).txt"
        if ProcessInfo.processInfo.environment["TARTIL_UPDATE_GOLDEN"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == expected, "help for '\(name)' differs from \(path); TARTIL_UPDATE_GOLDEN=1 rewrites it")
    }

    @Test func mainHelp() throws {
        try checkGolden("main", Help.main(.standard))
    }

    @Test(arguments: CommandTable.standard.commands.filter { !$0.hidden }.map(\.name))
    func commandHelp(name: String) throws {
        let (command, _) = try #require(CommandTable.standard.find(name.split(separator: " ").map(String.init)))
        try checkGolden(name.replacingOccurrences(of: " ", with: "-"), Help.command(command, table: .standard))
    }

    /// Help is wrapped to the width: no line is longer, and the words are those of the help unwrapped, in the
    /// same order, none broken but one wider than the width itself (a path of 48 characters at 40 columns),
    /// whose parts follow one another.
    @Test(arguments: [80, 40, 30])
    func helpFitsTheWidth(width: Int) {
        var pages = [(name: "main", text: Help.main(.standard, width: width), unwrapped: Help.main(.standard, width: 100_000))]
        for command in CommandTable.standard.commands {
            pages.append(
                (command.name, Help.command(command, table: .standard, width: width),
                 Help.command(command, table: .standard, width: 100_000)))
        }
        func words(_ text: String) -> [Substring] { text.split { $0 == " " || $0 == "\n" } }
        for page in pages {
            for line in page.text.split(separator: "\n") {
                #expect(TerminalText.columns(line) <= width, "\(page.name) at \(width): too long: \(line)")
                #expect(!line.hasSuffix(" "), "\(page.name) at \(width): a trailing space: \(line)")
            }
            var shown = words(page.text)[...]
            for word in words(page.unwrapped) {
                if TerminalText.columns(word) <= width {
                    #expect(shown.first == word, "\(page.name) at \(width): '\(word)' whole, in its place")
                    shown = shown.dropFirst()
                    continue
                }
                var parts = ""
                while parts.count < word.count, let part = shown.popFirst() { parts += part }
                #expect(parts == word, "\(page.name) at \(width): '\(word)' in parts, one after another")
            }
            #expect(shown.isEmpty, "\(page.name) at \(width): no word more")
        }
    }

    /// Entries keep a hanging indent: at 80 columns the help of an option continues at its column; at 40 it is
    /// under the label, indented.
    @Test func entriesHangUnderTheirHelp() throws {
        let prefetch = try #require(CommandTable.standard.find(["prefetch"])).0
        let wide = Help.command(prefetch, table: .standard, width: 80).split(separator: "\n")
        let jobs = try #require(wide.firstIndex { $0.hasPrefix("  -j, --jobs <n>          Connections per server") })
        #expect(wide[jobs + 1].hasPrefix(String(repeating: " ", count: 26) + "HTTP/1.1,"), "\(wide[jobs + 1])")
        let narrow = Help.command(prefetch, table: .standard, width: 40).split(separator: "\n")
        let label = try #require(narrow.firstIndex(of: "  -j, --jobs <n>"))
        #expect(narrow[label + 1] == "      Connections per server, 1-64")
    }

    @Test func everyCommandIsListedInTheMainHelp() {
        let main = Help.main(.standard)
        for name in CommandTable.standard.topLevelNames { #expect(main.contains("\n  \(name) ")) }
    }
}

@Suite struct CommandLineSplitterTests {
    @Test(arguments: [
        ("play 1; wait", [["play", "1"], ["wait"]]),
        ("  resolve  36:1-5   --reciter x  ", [["resolve", "36:1-5", "--reciter", "x"]]),
        ("resolve 'the cow:255' \"ali imran\"", [["resolve", "the cow:255", "ali imran"]]),
        ("a\\ b c", [["a b", "c"]]),
        ("a;;b;", [["a"], ["b"]]),
        ("surahs # a comment; not a command", [["surahs"]]),
        ("# only a comment", []),
        ("say 'it''s'", [["say", "its"]]),
        ("x \"a\\\"b\"", [["x", "a\"b"]]),
        ("", []),
    ])
    func splits(line: String, expected: [[String]]) throws {
        #expect(try CommandLineSplitter.split(line) == expected)
    }

    @Test func unterminatedQuotesAreErrors() {
        #expect(throws: CommandLineError("unterminated single quote")) { try CommandLineSplitter.split("a 'b") }
        #expect(throws: CommandLineError("unterminated double quote")) { try CommandLineSplitter.split("a \"b") }
        #expect(throws: CommandLineError("a backslash ends the line")) { try CommandLineSplitter.split("a \\") }
    }
}

@Suite struct JSONValueTests {
    @Test func rendersCompactJSONInWrittenOrder() {
        let value = JSONValue.object([
            ("b", .int(1)), ("a", .array([.bool(true), .null, .double(1.5)])), ("s", .string("x\"\\\n\t\u{1}/ب")),
        ])
        #expect(value.rendered() == #"{"b":1,"a":[true,null,1.5],"s":"x\"\\\n\t\u0001/ب"}"#)
    }

    @Test func rendersValidJSONThatFoundationReadsBack() throws {
        let value = JSONValue.object([("text", .string("line\nquote\" tab\t \u{7f} 🌙")), ("n", .int(-3))])
        let parsed = try JSONSerialization.jsonObject(with: Data(value.rendered().utf8)) as? [String: Any]
        #expect(parsed?["text"] as? String == "line\nquote\" tab\t \u{7f} 🌙")
        #expect(parsed?["n"] as? Int == -3)
    }
}

@Suite struct FormattingTests {
    @Test func durations() {
        #expect(Formatting.duration(seconds: 5.3049) == "5.305 s")
        #expect(Formatting.duration(seconds: 62.5) == "1:02.500")
        #expect(Formatting.duration(seconds: 3723.001) == "1:02:03.001")
    }

    @Test func numbers() {
        #expect(Formatting.grouped(1_234_567) == "1,234,567")
        #expect(Formatting.grouped(12) == "12")
        #expect(Formatting.bytes(512) == "512 B")
        #expect(Formatting.bytes(8_733_000) == "8.3 MiB")
    }
}

@Suite struct SettingsTests {
    @Test func defaultsFollowTheXDGBaseDirectories() throws {
        let settings = Settings(
            environment: ["HOME": "/home/u", "XDG_CACHE_HOME": "/c", "XDG_DATA_HOME": "relative/ignored"],
            bundledDataDirectory: "/opt/tartil")
        #expect(settings.cacheDirectory == "/c/tartil")
        #expect(settings.journalFile == "/home/u/.local/share/tartil/journal.sqlite")
        #expect(settings.tableDirectories == ["/home/u/.local/share/tartil/reciter-tables", "/opt/tartil/reciter-tables"])
        #expect(try settings.mirrorsFile().path == "/opt/tartil/mirrors.json")
        #expect(try settings.mirrorsFile().source == "bundled")
        #expect(settings.historyFile == "/home/u/.local/state/tartil/history")
    }

    @Test func optionsBeatVariablesWhichBeatDefaults() throws {
        var settings = Settings(
            environment: ["HOME": "/h", "TARTIL_MIRRORS": "/env/m.json", "TARTIL_TABLES": "/env/t",
                          "TARTIL_CACHE_DIR": "/env/c", "TARTIL_JOURNAL": "/env/j.sqlite"],
            bundledDataDirectory: nil)
        #expect(try settings.mirrorsFile() == ("/env/m.json", "TARTIL_MIRRORS"))
        #expect(settings.tableDirectories == ["/env/t"])
        #expect(settings.cacheDirectory == "/env/c")
        #expect(settings.journalFile == "/env/j.sqlite")
        settings.mirrorsOption = "/opt/m.json"
        settings.tablesOption = "/opt/t"
        settings.cacheDirectoryOption = "/opt/c"
        settings.journalOption = "/opt/j"
        #expect(try settings.mirrorsFile() == ("/opt/m.json", "--mirrors"))
        #expect(settings.tableDirectories == ["/opt/t"])
        #expect(settings.cacheDirectory == "/opt/c")
        #expect(settings.journalFile == "/opt/j")
    }

    @Test func missingBundledDataIsAClearError() {
        let settings = Settings(environment: ["HOME": "/nonexistent-home"], bundledDataDirectory: nil)
        #expect(throws: TartilCore.TartilError.self) { try settings.mirrorsFile() }
    }
}

/// The scrubber `status` draws on a terminal.
@Suite struct ScrubberTests {
    func status(position: Int, ayat: Int, state: PlayerState = .playing) -> PlayerStatus {
        PlayerStatus(
            state: state, reciter: try! ReciterID("r"), index: 0, item: nil, itemCount: ayat, surah: 36,
            positionSeconds: Double(position) / 100, positionSamples: position, durationSeconds: Double(ayat),
            durationSamples: ayat * 100, sampleRate: 100, isEstimated: false, ayahStarts: (0..<ayat).map { Double($0) },
            bufferingAyah: nil, skipped: [:], totalSamples: ayat * 100, writtenFrames: 0, writtenSeconds: 0, endMessage: nil,
            options: PlaybackOptions(), cycle: 1, loop: nil, loopMarkSeconds: nil, stopAfter: nil, sleepSecondsLeft: nil)
    }

    @Test func aFewAyatGetATickEach() {
        #expect(PlayCommands.scrubber(status(position: 150, ayat: 4), width: 16) == "[====|=>-|---|---]")
    }

    /// On a terminal no line of `status` passes its width: the progress line breaks between its fields (never
    /// inside `0:01 / 0:40` or a surah's name), later lines indented; to a pipe it stays one line.
    @Test(arguments: [80, 40, 24])
    func statusLinesFitTheTerminal(width: Int) {
        var playing = status(position: 150, ayat: 40)
        playing.speed = 1.25
        playing.volume = 80
        let lines = PlayCommands.text(playing, bar: true, width: width)
        #expect(lines.allSatisfy { TerminalText.columns($0) <= width }, "\(lines)")
        #expect(lines.contains { $0.contains("0:01 / 0:40") } && lines.contains { $0.contains("Yaseen") }, "\(lines)")
        #expect(lines.dropFirst().dropLast().allSatisfy { $0.hasPrefix("  ") }, "\(lines)")
        #expect(PlayCommands.text(playing, bar: false, width: width) == [PlayCommands.progressLine(playing)])
    }

    /// Ayat skipped in a row for one reason are one line of `status` (a surah that could not be learned), not a
    /// line each.
    @Test func skippedAyatInARowAreOneLine() {
        var skippedMany = status(position: 150, ayat: 40)
        skippedMany.skipped = Dictionary(uniqueKeysWithValues: (1...83).map { (try! AyahRef(36, $0), "surah 36 could not be learned: HTTP 404") })
        let lines = PlayCommands.text(skippedMany, bar: false)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.last?.contains("36:1-83") == true, "\(lines)")
    }

    @Test func manyAyatGetTicksThatStayApart() {
        // 83 ayat in 30 columns: room for 10 ticks, so every 10th ayah.
        let bar = PlayCommands.scrubber(status(position: 4150, ayat: 83, state: .paused), width: 30)
        #expect(bar.count == 32)
        #expect(bar.filter { $0 == "|" }.count == 8)
        #expect(bar.contains("‖") && !bar.contains(">"))
        #expect(bar.hasPrefix("[===") && bar.hasSuffix("-]"))
    }
}
