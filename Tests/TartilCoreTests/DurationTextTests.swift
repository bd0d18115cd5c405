import TestSupport
import Testing

@testable import TartilCore

/// The one parser for lengths of time, and the command-line habits that share TartilCore: plurals and
/// did-you-mean for values.
@Suite struct DurationTextTests {
    @Test(arguments: [
        // A bare number, in seconds.
        ("1.5", NumberText.Reading<Double>.value(1.5)),
        ("90", .value(90)),
        ("0", .value(0)),
        (".5", .value(0.5)),
        // Units.
        ("1.5s", .value(1.5)),
        ("90s", .value(90)),
        ("500ms", .value(0.5)),
        ("2m", .value(120)),
        ("2min", .value(120)),
        ("1h", .value(3600)),
        ("1h30m", .value(5400)),
        ("1m30s", .value(90)),
        ("1m30.5s", .value(90.5)),
        ("1h2m3s500ms", .value(3723.5)),
        ("2M", .value(120)),
        ("1H30M", .value(5400)),
        // Clock forms.
        ("1:30", .value(90)),
        ("0:30", .value(30)),
        ("1:02:03", .value(3723)),
        ("1:30.5", .value(90.5)),
        ("100:00:00", .value(360_000)),
        // Not a duration.
        ("", .notANumber),
        ("s", .notANumber),
        ("ms", .notANumber),
        ("1.5x", .notANumber),
        ("1m30", .notANumber),
        ("30s1m", .notANumber),
        ("1m1m", .notANumber),
        ("1m2min", .notANumber),
        ("1s500ms1s", .notANumber),
        ("1:3", .notANumber),
        ("1:60", .notANumber),
        ("1:2:3:4", .notANumber),
        (":30", .notANumber),
        ("1:", .notANumber),
        ("1:30.", .notANumber),
        ("1:30s", .notANumber),
        ("-1", .notANumber),
        ("+1", .notANumber),
        ("1 s", .notANumber),
        ("1e3", .notANumber),
        ("1..5s", .notANumber),
        ("١s", .notANumber),
        ("1d", .notANumber),
        // Beyond 100 hours.
        ("101h", .tooLarge),
        ("360001", .tooLarge),
        ("100:00:01", .tooLarge),
        ("99999999999999999999999", .tooLarge),
        ("99999999999999999999999:00", .tooLarge),
    ])
    func seconds(text: String, reading: NumberText.Reading<Double>) {
        #expect(DurationText.seconds(text) == reading, "\(text)")
    }

    @Test func bareMinutes() {
        #expect(DurationText.seconds("45", bare: .minutes) == .value(2700))
        #expect(DurationText.seconds("45s", bare: .minutes) == .value(45))
        #expect(DurationText.seconds("1:30:00", bare: .minutes) == .value(5400))
        #expect(DurationText.seconds("6001", bare: .minutes) == .tooLarge)
    }

    @Test func parseNamesTheRangeAndTheForms() throws {
        #expect(try DurationText.parse(" 2m ", in: 0...600, for: "--cycle-pause") == 120)
        #expect(throws: TartilError.usage("--cycle-pause takes a time from 0 to 10 min (1.5, 1.5s, 90s, 500ms, 2m, 1h30m, 1:30 or 1:02:03), not '11m'")) {
            try DurationText.parse("11m", in: 0...600, for: "--cycle-pause")
        }
        #expect(throws: TartilError.usage("--interval takes a time from 1 s to 24 h (1.5, 1.5s, 90s, 500ms, 2m, 1h30m, 1:30 or 1:02:03), not 'soon'")) {
            try DurationText.parse("soon", in: 1...86_400, for: "--interval")
        }
    }

    /// Every option that takes a time reads every form (within its range) the same.
    @Test(arguments: ["1.5", "1.5s", "1500ms", "0:01.5"])
    func everyTimeOptionReadsEveryForm(text: String) throws {
        #expect(try PauseLength.parse(text, for: "--pause") == .seconds(1.5))
        #expect(try PlaybackOptions.cyclePause(text, for: "--cycle-pause") == 1.5)
        #expect(try SeekTarget.parse(text) == .time(seconds: 1.5))
        #expect(try SeekTarget.parse("+" + text) == .offset(seconds: 1.5))
        #expect(try SeekTarget.parse("-" + text) == .offset(seconds: -1.5))
        #expect(try LoopPoint.parse("36:12+" + text) == .ayah(AyahRef(unchecked: 36, 12), offset: 1.5))
        #expect(try StopAfter.parse(text.contains(where: \.isLetter) || text.contains(":") ? text : text + "s", for: "sleep") == .seconds(1.5))
    }

    @Test func theIssuesExamples() throws {
        #expect(try PauseLength.parse("1.5s", for: "--pause") == .seconds(1.5))
        #expect(try PlaybackOptions.cyclePause("1:30", for: "--cycle-pause") == 90)
        #expect(try PlaybackOptions.cyclePause("2m", for: "--cycle-pause") == 120)
        #expect(try StopAfter.parse("1h", for: "--stop-after") == .seconds(3600))
        #expect(try StopAfter.parse("90s", for: "--stop-after") == .seconds(90))
        #expect(try StopAfter.parse("45", for: "--stop-after") == .seconds(2700), "a timer's bare number is minutes, as before")
        #expect(try SeekTarget.parse("2m") == .time(seconds: 120))
        #expect(try SeekTarget.parse("95.5s") == .time(seconds: 95.5))
        #expect(try LoopRequest.parse(["1m5s-72s"]) == LoopRequest(start: .time(seconds: 65), end: .time(seconds: 72)))
        #expect(throws: TartilError.self) { try PauseLength.parse("1:30", for: "--pause") }  // 90 s is over 60 s
    }

    /// Seeded: any time written as `Hh Mm S.mmms`, as `H:MM:SS.mmm` and in milliseconds reads back the same.
    @Test func writtenFormsReadBack() {
        var random = SeededRandom(seed: 0xD0_2A7E)
        for _ in 0..<2000 {
            let milliseconds = random.below(360_000_000)
            let (hours, minutes, seconds, millis) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60, milliseconds / 1000 % 60, milliseconds % 1000)
            let expected = Double(milliseconds) / 1000
            let pad = { (value: Int, width: Int) in String(repeating: "0", count: max(0, width - String(value).count)) + String(value) }
            let written = [
                "\(hours)h\(minutes)m\(seconds)s\(millis)ms",
                "\(hours):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(millis, 3))",
                "\(minutes + hours * 60):\(pad(seconds, 2)).\(pad(millis, 3))",
                "\(milliseconds)ms",
                "\(seconds + 60 * minutes + 3600 * hours).\(pad(millis, 3))",
            ]
            for text in written {
                guard case .value(let read) = DurationText.seconds(text) else {
                    Issue.record("\(text) was not read")
                    return
                }
                #expect(abs(read - expected) < 1e-6, "\(text): \(read), not \(expected)")
            }
        }
    }

    @Test func boundsInMessages() {
        #expect(DurationText.text(0) == "0")
        #expect(DurationText.text(1) == "1 s")
        #expect(DurationText.text(60) == "1 min")
        #expect(DurationText.text(600) == "10 min")
        #expect(DurationText.text(90) == "90 s")
        #expect(DurationText.text(86_400) == "24 h")
    }
}

@Suite struct PluralTests {
    @Test(arguments: [
        (0, "surah", "0 surahs"), (1, "surah", "1 surah"), (2, "surah", "2 surahs"),
        (0, "ayah", "0 ayat"), (1, "ayah", "1 ayah"), (2, "ayah", "2 ayat"),
        (1, "file", "1 file"), (3, "file", "3 files"), (1, "byte", "1 byte"), (2, "byte", "2 bytes"),
        (1, "event", "1 event"), (5, "event", "5 events"), (1, "entry", "1 entry"), (2, "entry", "2 entries"),
    ])
    func count(count: Int, noun: String, text: String) {
        #expect(Plural.count(count, noun) == text)
    }

    @Test func writtenNumbers() {
        #expect(Plural.count(1234, "ayah", number: "1,234") == "1,234 ayat")
        #expect(Plural.word(1, "was") == "was" && Plural.word(2, "was") == "were")
    }
}

@Suite struct SuggestionTests {
    @Test(arguments: [
        ("jsn", ["text", "json", "ndjson", "csv"], "--format takes text, json, ndjson or csv, not 'jsn'; did you mean json?"),
        ("xml", ["text", "json", "ndjson", "csv"], "--format takes text, json, ndjson or csv, not 'xml'"),
        ("paus", ["pause", "repeat"], "set takes pause or repeat, not 'paus'; did you mean pause?"),
        ("of", ["auto", "off"], "basmala takes auto or off, not 'of'; did you mean off?"),
    ])
    func unknownValue(value: String, choices: [String], message: String) {
        let what = message.prefix { $0 != " " }
        #expect(Suggestion.unknownValue(value, for: String(what), among: choices) == .usage(message))
    }

    /// Never a suggestion further than the word's length allows: `speed` is not one edit from `seek`.
    @Test func neverTooFar() {
        #expect(Suggestion.closest(to: "speed", among: ["seek", "status", "stop"]).isEmpty)
        #expect(Suggestion.closest(to: "sped", among: ["seek", "speed"]) == ["speed"])
        #expect(throws: TartilError.self) { try LoopRequest.parse(["of"]) }
        #expect((try? LoopRequest.parse(["of"])) == nil)
        do { _ = try LoopRequest.parse(["of"]) } catch { #expect(error.message.hasSuffix("; did you mean off?")) }
        var random = SeededRandom(seed: 0x5_1663)
        let words = ["play", "pause", "seek", "speed", "status", "stop", "stop-after", "resume", "--reciter", "--repeat", "json", "ndjson"]
        for _ in 0..<2000 {
            let length = 1 + random.below(12)
            let word = String((0..<length).map { _ in Character(Unicode.Scalar(UInt8(97 + random.below(26)))) })
            for suggestion in Suggestion.closest(to: word, among: words) {
                #expect(EditDistance.between(word, suggestion) <= Suggestion.allowedDistance(for: word), "\(word) → \(suggestion)")
            }
        }
    }
}
