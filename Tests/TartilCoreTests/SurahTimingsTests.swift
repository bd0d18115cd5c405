import Foundation
import TestSupport
import Testing

@testable import TartilCore

@Suite struct SurahTimingsTests {
    /// A Quran Static file as published (current schema): segments with `Url`, `I` and `DurationMs`; a row whose
    /// end is nil is written as Ibrahim Al-Akhdar's last ayah is, `EndMs = StartMs + 180000`, `DurationMs: null`.
    static func quranStatic(surah: Int, _ rows: [(Int, Int?)], total: Int? = nil) -> [UInt8] {
        let segments = rows.enumerated().map { index, row in
            let end = row.1 ?? row.0 + 180_000
            let duration = row.1.map { String($0 - row.0) } ?? "null"
            return #"{"I":\#(index),"S":\#(surah),"V":\#(index + 1),"Url":"https://h/\#(surah).mp3","StartMs":\#(row.0),"EndMs":\#(end),"DurationMs":\#(duration)}"#
        }
        let totalText = total.map(String.init) ?? "null"
        return Array(#"{"Type":"surah","Number":\#(surah),"DefaultUrl":"https://h/\#(surah).mp3","TotalDurationMs":\#(totalText),"Segments":[\#(segments.joined(separator: ","))]}"#.utf8)
    }

    static func mp3quran(_ rows: [(Int, Int, Int)]) -> [UInt8] {
        Array(("[" + rows.map { #"{"ayah":\#($0.0),"polygon":"x","start_time":\#($0.1),"end_time":\#($0.2),"page":"p"}"# }.joined(separator: ",") + "]").utf8)
    }

    typealias Span = SurahTimings.Span

    /// Real rows of ../shared/real/timings/quranstatic-gapless-surah-timings.csv, number for number.
    static let realRows: [(name: String, surah: Int, rows: [(Int, Int?)], total: Int?, before: Span?)] = [
        // Ibrahim Al-Akhdar: the last ayah's end is the placeholder (StartMs + 180000, DurationMs null).
        ("ibrahim-alakhdar-2 112", 112, [(6531, 9718), (9718, 12591), (12591, 16065), (16065, nil)], nil, Span(startMs: 0, endMs: 6531)),
        ("ibrahim-alakhdar-2 103", 103, [(6504, 8359), (8359, 13505), (13505, nil)], nil, Span(startMs: 0, endMs: 6504)),
        ("ibrahim-alakhdar-2 108", 108, [(6478, 13244), (13244, 16953), (16953, nil)], nil, Span(startMs: 0, endMs: 6478)),
        ("ibrahim-alakhdar-2 1", 1, [(157, 6504), (6504, 13192), (13192, 18704), (18704, 24633), (24633, 32235), (32235, 38713), (38713, nil)], nil, nil),
        ("ahmed-allhdan-1 112", 112, [(3744, 7073), (7073, 9577), (9577, 12785), (12785, 16953)], 16953, Span(startMs: 0, endMs: 3744)),
        ("ahmed-allhdan-1 1", 1, [(4093, 8421), (8421, 14214), (14214, 18237), (18237, 22333), (22333, 28558), (28558, 33901), (33901, 51199)], 51199, nil),
        ("emad-al-mansary-1 113", 113, [(5244, 9116), (9116, 12460), (12460, 17316), (17316, 22772), (22772, 27996)], 27996, Span(startMs: 0, endMs: 5244)),
    ]

    @Test(arguments: realRows.indices)
    func readsRealQuranStaticFiles(index: Int) throws {
        let real = Self.realRows[index]
        let timings = try SurahTimings.parse(Self.quranStatic(surah: real.surah, real.rows, total: real.total), format: .quranstatic, surah: real.surah, file: "t.json")
        #expect(timings.surah == real.surah)
        #expect(timings.ayat == real.rows.map { Span(startMs: $0.0, endMs: $0.1) }, "\(real.name)")
        #expect(timings.beforeFirst == real.before, "\(real.name)")
    }

    @Test func sampleBoundariesRoundAndStopAtTheFileEnd() throws {
        let timings = try SurahTimings.parse(
            Self.quranStatic(surah: 112, [(6531, 9718), (9718, 12591), (12591, 16065), (16065, nil)]), format: .quranstatic, surah: 112, file: "t.json")
        // 20 s at 22050 Hz; 6531 ms = 144008.55 samples → 144009; 9718 ms → 214281.9 → 214282.
        let ranges = try timings.sampleRanges(rate: 22050, samples: 441_000)
        #expect(ranges.beforeFirst == 0..<144_009)
        #expect(ranges.ayat == [144_009..<214_282, 214_282..<277_632, 277_632..<354_233, 354_233..<441_000])
        // The placeholder end (196 s) and an end past a short file are the file's end.
        let short = try timings.sampleRanges(rate: 22050, samples: 360_000)
        #expect(short.ayat.last == 354_233..<360_000)
        #expect(throws: TartilError(
            .invalidData, "ayah 112:4 starts at 16065 ms, at or past the end of the file (300000 samples at 22050 Hz, 13605 ms)")) {
            try timings.sampleRanges(rate: 22050, samples: 300_000)
        }
    }

    @Test(arguments: [
        (0, 11025, 0), (1, 11025, 11), (2, 11025, 22), (1000, 11025, 11025), (3744, 11025, 41278),
        (1, 22050, 22), (1, 16000, 16), (1, 44100, 44), (3, 44100, 132), (5, 44100, 221) /* 220.5 → 221 */,
    ])
    func aBoundaryIsTheRoundedSample(ms: Int, rate: Int, sample: Int) {
        #expect(SurahTimings.sample(atMs: ms, rate: rate) == sample)
    }

    @Test func readsMp3QuranWithAyahZero() throws {
        let timings = try SurahTimings.parse(
            Self.mp3quran([(0, 0, 5120), (1, 5120, 9880), (2, 9880, 12000), (3, 12000, 15500), (4, 15500, 19000)]), format: .mp3quran, surah: 112,
            file: "t.json")
        #expect(timings.beforeFirst == Span(startMs: 0, endMs: 5120))
        #expect(timings.ayat.map(\.startMs) == [5120, 9880, 12000, 15500])
        // Without ayah 0 the basmala is what precedes ayah 1; in surah 1 nothing before ayah 1 is a basmala.
        let bare = try SurahTimings.parse(
            Self.mp3quran([(1, 4000, 9880), (2, 9880, 12000), (3, 12000, 15500), (4, 15500, 19000)]), format: .mp3quran, surah: 112, file: "t.json")
        #expect(bare.beforeFirst == Span(startMs: 0, endMs: 4000))
        let fatiha = try SurahTimings.parse(
            Self.mp3quran([(0, 0, 2000)] + (1...7).map { ($0, $0 * 2000, $0 * 2000 + 2000) }), format: .mp3quran, surah: 1, file: "t.json")
        #expect(fatiha.beforeFirst == nil)
        #expect(fatiha.ayat.count == 7)
        let ranges = try timings.sampleRanges(rate: 44100, samples: 44100 * 20)
        #expect(ranges.beforeFirst == 0..<225_792)
        #expect(ranges.ayat.last == 44100 * 31 / 2..<44100 * 19)
    }

    static let quranStaticErrors: [(String, Int, String)] = [
        ("[]", 112, #"t.json: top level: must be an object with "Segments""#),
        (#"{"Segments": 3}"#, 112, "t.json: Segments: missing or not an array"),
        (#"{"Number": 113, "Segments": []}"#, 112, "t.json: Number: the file is for surah 113, not 112"),
        (#"{"Segments": []}"#, 112, "t.json: Segments: ends after ayah 0, but surah 112 has 4 ayat"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments: ends after ayah 1, but surah 112 has 4 ayat"),
        (#"{"Segments": [{"S":113,"V":1,"StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments[0]: S: 113 is not this file's surah 112"),
        (#"{"Segments": [{"V":1,"StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments[0]: S: missing or not a whole number (the surah, 112)"),
        (#"{"Segments": [{"S":112,"V":2,"StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments[0]: V: ayah 2 where ayah 1 was expected (every ayah once, in order)"),
        (#"{"Segments": [{"S":112,"V":5,"StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments[0]: V: surah 112 has ayat 1-4, not 5"),
        (#"{"Segments": [{"S":112,"V":"1","StartMs":0,"EndMs":5}]}"#, 112, "t.json: Segments[0]: V: missing or not a whole number (the ayah, 1 here)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":-3,"EndMs":5}]}"#, 112, "t.json: Segments[0]: StartMs: -3 is negative (times are from 0 ms)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":2.5,"EndMs":5}]}"#, 112,
         "t.json: Segments[0]: StartMs: 2.5 is not a whole number of milliseconds from 0 to 86400000 (24 hours)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":1e300,"EndMs":5}]}"#, 112,
         "t.json: Segments[0]: StartMs: 1e+300 is not a whole number of milliseconds from 0 to 86400000 (24 hours)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":"0","EndMs":5}]}"#, 112, "t.json: Segments[0]: StartMs: must be a whole number of milliseconds, not a string"),
        (#"{"Segments": [{"S":112,"V":1,"EndMs":5}]}"#, 112, "t.json: Segments[0]: StartMs: missing (a whole number of milliseconds)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":9,"EndMs":5}]}"#, 112, "t.json: Segments[0]: EndMs: 5 ms is before StartMs (9 ms)"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":0,"EndMs":5},{"S":112,"V":2,"StartMs":4,"EndMs":8}]}"#, 112,
         "t.json: Segments[1]: StartMs: 4 ms is before the previous entry's end (5 ms): times must not go back"),
        (#"{"Segments": [{"S":112,"V":1,"StartMs":0,"DurationMs":null}]}"#, 112, "t.json: Segments[0]: EndMs: missing (a whole number of milliseconds)"),
        (#"{"Segments": [1]}"#, 112, "t.json: Segments[0]: must be an object"),
        ("{", 112, "t.json:1:2: not valid JSON: expected a \"key\""),
        (#"{"Segments": []}"#, 115, "t.json: surah 115 does not exist (1-114)"),
    ]

    @Test(arguments: quranStaticErrors)
    func quranStaticErrorsSayWhatAndWhere(json: String, surah: Int, message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try SurahTimings.parse(Array(json.utf8), format: .quranstatic, surah: surah, file: "t.json") }
    }

    static let mp3quranErrors: [(String, String)] = [
        ("{}", #"t.json: top level: must be an array of {"ayah", "start_time", "end_time"} objects"#),
        (#"[{"ayah":1,"start_time":0,"end_time":5}]"#, "t.json: top level: ends after ayah 1, but surah 112 has 4 ayat"),
        (#"[{"ayah":1,"start_time":0,"end_time":5},{"ayah":0,"start_time":5,"end_time":6}]"#, "t.json: [1]: ayah: surah 112 has ayat 1-4, not 0"),
        (#"[{"ayah":1,"start_time":0,"end_time":5},{"ayah":3,"start_time":5,"end_time":6}]"#,
         "t.json: [1]: ayah: ayah 3 where ayah 2 was expected (every ayah once, in order)"),
        (#"[{"ayah":1,"start_time":0}]"#, "t.json: [0]: end_time: missing (a whole number of milliseconds)"),
        (#"[{"ayah":0,"start_time":0,"end_time":5},{"ayah":1,"start_time":3,"end_time":6}]"#,
         "t.json: [1]: start_time: 3 ms is before the previous entry's end (5 ms): times must not go back"),
        (#"[{"ayah":1,"start_time":-1,"end_time":5}]"#, "t.json: [0]: start_time: -1 is negative (times are from 0 ms)"),
        (#"[{"ayah":1,"start_time":true,"end_time":5}]"#, "t.json: [0]: start_time: must be a whole number of milliseconds, not a boolean"),
    ]

    @Test(arguments: mp3quranErrors)
    func mp3quranErrorsSayWhatAndWhere(json: String, message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try SurahTimings.parse(Array(json.utf8), format: .mp3quran, surah: 112, file: "t.json") }
    }

    @Test func anAyahWithoutSamplesIsRefused() throws {
        let timings = SurahTimings(
            surah: 112, ayat: [Span(startMs: 0, endMs: 1000), Span(startMs: 1000, endMs: 1000), Span(startMs: 1000, endMs: 2000), Span(startMs: 2000, endMs: nil)],
            beforeFirst: nil)
        #expect(throws: TartilError(.invalidData, "ayah 112:2 (1000-1000 ms) covers no sample at 8000 Hz")) {
            try timings.sampleRanges(rate: 8000, samples: 80_000)
        }
    }

    /// Every surah of the CSV of real timings, rebuilt as the JSON it was transcribed from, parses and gives
    /// contiguous sample ranges.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real timings beside the checkout)"))
    func everyRealSurahParses() throws {
        let real = try #require(TestPaths.sharedReal)
        let csv = try String(contentsOfFile: "\(real)/timings/quranstatic-gapless-surah-timings.csv", encoding: .utf8)
        var surahs: [String: [(Int, Int?)]] = [:]
        var totals: [String: Int] = [:]
        for line in csv.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let key = "\(fields[0]) \(fields[1])"
            surahs[key, default: []].append((Int(fields[4])!, Int(fields[5])))
            if let total = Int(fields[7]) { totals[key] = total }
        }
        #expect(surahs.count == 16)
        for (key, rows) in surahs {
            let surah = Int(key.split(separator: " ")[1])!
            let timings = try SurahTimings.parse(Self.quranStatic(surah: surah, rows, total: totals[key]), format: .quranstatic, surah: surah, file: key)
            #expect(timings.ayat.count == Catalog.surahs[surah - 1].ayahCount, "\(key)")
            let end = (rows.last!.1 ?? rows.last!.0 + 60_000) + 1000
            let ranges = try timings.sampleRanges(rate: 22050, samples: end * 22050 / 1000)
            for (a, b) in zip(ranges.ayat, ranges.ayat.dropFirst()) { #expect(a.upperBound == b.lowerBound, "\(key)") }
            #expect((ranges.beforeFirst == nil) == (surah == 1), "\(key)")
        }
    }
}
