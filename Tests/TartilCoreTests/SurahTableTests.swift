import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// Surah tables (format 2): the committed fixture read back, written back, and every rule refused by line.
@Suite struct SurahTableTests {
    static let fixturePath = TestPaths.fixtures + "/surah-table.tsv"
    static var fixture: [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: fixturePath))) ?? Data()) }

    @Test func readsTheFixtureAndWritesItBackByteForByte() throws {
        let table = try SurahTable.parse(bytes: Self.fixture, file: "surah-table.tsv", expected: try ReciterID("ibrahim-alakhdar-surah"))
        #expect(table.files.map(\.surah) == [1, 112, 113, 114])
        #expect(table.coverage == 7 + 4 + 5 + 6)
        #expect(table.file(surah: 1)?.basmala == nil)
        #expect(table.file(surah: 112)?.basmala?.samples.lowerBound == 0)
        #expect(table.file(surah: 2) == nil)
        let ayah = try #require(table.part(for: try AyahRef(112, 3)))
        #expect(ayah.ayah == 3)
        #expect(table.part(for: try AyahRef(2, 1)) == nil)
        for file in table.files { #expect(file.problem() == nil) }
        #expect(Array(table.rendered().utf8) == Self.fixture)
    }

    /// A damaged table (a learned one, edited by hand or by a disk) is read as far as it can be: every surah
    /// whose rows read is kept, the damaged one passed over, and the whole's error said; a whole one reads as
    /// `parse` reads it; one whose header does not read gives nothing.
    @Test(arguments: [
        // (what is done to the fixture's text, the surahs kept, the problem's start)
        ("nothing", [1, 112, 113, 114], nil),
        ("112's basmala row made ayah 1", [1, 113, 114], "t.tsv:16: ayah 112:1 comes where 112:2 should"),
        ("113's file row cut short", [1, 112, 114], "t.tsv:20: a file row has 6"),
        ("a stray line after 114", [1, 112, 113], "t.tsv:"),
        ("the reciter's header line lost", [], "t.tsv:"),
    ] as [(String, [Int], String?)])
    func aDamagedTableIsReadAsFarAsItCanBe(damage: String, kept: [Int], problem: String?) throws {
        var lines = String(decoding: Self.fixture, as: UTF8.self).components(separatedBy: "\n")
        let index = { (prefix: String) in try #require(lines.firstIndex { $0.hasPrefix(prefix) }) }
        switch damage {
        case "112's basmala row made ayah 1": lines[try index("ayah\t112\t0\t")] = lines[try index("ayah\t112\t0\t")].replacingOccurrences(of: "ayah\t112\t0\t", with: "ayah\t112\t1\t")
        case "113's file row cut short": lines[try index("file\t113\t")] = "file\t113\t129359"
        case "a stray line after 114": lines.insert("not a row", at: lines.count - 1)
        case "the reciter's header line lost": lines.remove(at: try index("# reciter:"))
        default: break
        }
        let (table, said) = SurahTable.salvaged(bytes: Array(lines.joined(separator: "\n").utf8), file: "t.tsv", expected: try ReciterID("ibrahim-alakhdar-surah"))
        #expect((table?.files.map(\.surah) ?? []) == kept)
        if let problem { #expect(said?.hasPrefix(problem) == true, "\(said ?? "none")") } else { #expect(said == nil) }
        let whole = try SurahTable.parse(bytes: Self.fixture, file: "t.tsv")
        for file in table?.files ?? [] { #expect(file == whole.file(surah: file.surah), "surah \(file.surah) read as it is") }
    }

    @Test func formatVersionIsReadFromTheFirstLine() {
        #expect(SurahTable.formatVersion(of: Self.fixture) == 2)
        #expect(SurahTable.formatVersion(of: Array("# tartil-table: 1\n# reciter: x\n".utf8)) == 1)
        #expect(SurahTable.formatVersion(of: Array("#tartil-table:2".utf8)) == 2)
        #expect(SurahTable.formatVersion(of: Array("1\t1\t2\n".utf8)) == nil)
        #expect(SurahTable.formatVersion(of: Array("# tartil-table: two\n".utf8)) == nil)
        #expect(SurahTable.formatVersion(of: [UInt8]()) == nil)
    }

    static let sha = String(repeating: "ab", count: 32)
    static let header = "# tartil-table: 2\n# reciter: r\n"

    /// Surah 112 with a basmala, in a file of 1000 samples.
    static func surah112(_ rows: [String]? = nil) -> String {
        let rows = rows ?? [
            "ayah\t112\t0\t0\t99\t0\t49\t0\t\(sha)", "ayah\t112\t1\t100\t299\t40\t149\t300\t\(sha)",
            "ayah\t112\t2\t300\t499\t140\t249\t10\t\(sha)", "ayah\t112\t3\t500\t799\t240\t399\t0\t\(sha)",
            "ayah\t112\t4\t800\t999\t390\t499\t1152\t\(sha)",
        ]
        return header + "file\t112\t500\t\(sha)\t1000\t22050\n" + rows.joined(separator: "\n") + "\n"
    }

    @Test func aHandWrittenTableIsRead() throws {
        let table = try SurahTable.parse(bytes: Array(Self.surah112().utf8), file: "t.tsv")
        let file = try #require(table.file(surah: 112))
        #expect(file.parts.map(\.ayah) == [0, 1, 2, 3, 4])
        #expect(file.part(ayah: 4)?.samples == 800...999)
        #expect(file.part(ayah: 4)?.bytes == 390...499)
        #expect(file.part(ayah: 4)?.skip == 1152)
        #expect(file.part(ayah: 5) == nil)
        #expect(try SurahTable.parse(bytes: Array(table.rendered().utf8), file: "t.tsv") == table)
    }

    /// A learned table says where each surah's file came from on a line after its `file` row, and its `# source:`
    /// is those, each once: written and read back, kept by `salvaged` for the surahs it keeps, a source with a line
    /// break in it kept on one line; a comment not of that shape is a comment, and a source of a surah the table
    /// does not cover is dropped; one among another surah's rows, before any, or a second one, is a comment.
    @Test func aLearnedTableKeepsEachSurahsSource() throws {
        let one = try SurahTable.parse(bytes: Array(Self.surah112().utf8), file: "t.tsv")
        let file = try #require(one.file(surah: 112))
        let table = SurahTable.learned(
            reciter: one.reciter, files: [file], surahSources: [112: "trusted on first use: a,\nsingle-source", 113: "gone"])
        #expect(table.surahSources == [112: "trusted on first use: a, single-source"])
        #expect(table.source == "trusted on first use: a, single-source")
        let text = table.rendered()
        #expect(text.contains("file\t112\t500\t\(Self.sha)\t1000\t22050\n# source of surah 112: trusted on first use: a, single-source\nayah\t112\t0\t"), "\(text)")
        let read = try SurahTable.parse(bytes: Array(text.utf8), file: "t.tsv")
        #expect(read == table)
        let salvaged = SurahTable.salvaged(bytes: Array((text + "file\t113\tbroken\n").utf8), file: "t.tsv")
        #expect(salvaged.problem != nil && salvaged.table?.surahSources == table.surahSources, "\(salvaged)")
        for comment in ["# source of surah x: no", "# source of surah 115: no", "# source of surah 112 no colon"] {
            let other = try SurahTable.parse(bytes: Array(Self.surah112().replacingOccurrences(of: "# reciter: r\n", with: "# reciter: r\n\(comment)\n").utf8), file: "t.tsv")
            #expect(other.surahSources.isEmpty, "\(comment)")
        }
        // One where it does not belong (among another surah's rows, before any, or a second one) is a comment:
        // no surah gets another's source, and none loses its rows.
        for (misplaced, sources) in [
            (text.replacingOccurrences(of: "# source of surah 112:", with: "# source of surah 113:"), [:]),
            (text.replacingOccurrences(of: "# source of surah 112: trusted on first use: a, single-source\n", with: "# source of surah 112: a\n# source of surah 112: b\n"), [112: "a"]),
            (text.replacingOccurrences(of: "# reciter: r\n", with: "# reciter: r\n# source of surah 112: early\n"), table.surahSources),
        ] as [(String, [Int: String])] {
            let read = try SurahTable.parse(bytes: Array(misplaced.utf8), file: "t.tsv")
            #expect(read.files == table.files && read.surahSources == sources, "\(misplaced)")
        }
        let two = SurahTable.learned(reciter: one.reciter, files: [file], surahSources: [112: "b"])
        #expect(two.source == "b" && two.rendered().contains("# source: b\n"))
    }

    /// The mirror a learned surah's source line says its file was trusted from, by the name it had then: a name
    /// may hold commas and semicolons; a line of another shape gives none.
    @Test(arguments: [
        ("trusted on first use: first, single-source; timings from http://t/{surah3}.json", "first"),
        ("trusted on first use: a, b; c, cross-checked with d when compared again; timings from x", "a, b; c"),
        ("trusted on first use: m, cross-checked with n (o served another file); timings from x", "m"),
        ("trusted on first use: , single-source", nil),
        ("chosen: m (cache choose); timings from x", nil),
        ("trusted on first use: m", nil),
        ("", nil),
    ] as [(String, String?)])
    func theFirstUseMirrorIsReadFromASourceLine(line: String, expected: String?) {
        #expect(LearnedSource.firstUseMirror(line) == expected)
    }

    /// Each broken table, and the start of the message it must get.
    static let refused: [(String, String)] = [
        ("", "t.tsv:1: the first line must be '# tartil-table: 2'"),
        ("# tartil-table: 1\n# reciter: r\n", "t.tsv:1: format '1' is not a surah table"),
        ("# tartil-table: 2\nfile\t112\t500\t\(sha)\t1000\t22050\n", "t.tsv:2: the '# reciter: ID' header must come before the first row"),
        ("# tartil-table: 2\n", "t.tsv: the '# reciter: ID' header is missing"),
        (header + "ayah\t112\t1\t0\t9\t0\t9\t0\t\(sha)\n", "t.tsv:3: an ayah row of surah 112 must follow that surah's file row"),
        (header + "file\t112\t500\t\(sha)\t1000\n", "t.tsv:3: a file row has 6 tab-separated fields"),
        (header + "file\t112\t500\t\(sha)\t1000\t22051\n", "t.tsv:3: rate: 22051 Hz is not an MPEG audio rate"),
        (header + "file\t115\t500\t\(sha)\t1000\t22050\n", "t.tsv:3: surah 115 does not exist"),
        (header + "file\t112\t0500\t\(sha)\t1000\t22050\n", "t.tsv:3: bytes: '0500' is not a whole number"),
        (header + "file\t112\t500\t\(sha.uppercased())\t1000\t22050\n", "t.tsv:3: sha256: "),
        (header + "file\t112\t500\t\(sha)\t0\t22050\n", "t.tsv:3: samples: 0 is not from 1 to"),
        (header + "file\t112 \t500\t\(sha)\t1000\t22050\n", "t.tsv:3: field 2 ('112 ') is empty or has blanks in it"),
        (header + "row\t112\n", "t.tsv:3: a row starts with 'file' or 'ayah', not 'row'"),
        (surah112(["ayah\t112\t1\t0\t299\t40\t149\t0\t\(sha)"]), "t.tsv:3: surah 112 lists 1 of its 4 ayat"),
        (surah112(["ayah\t112\t2\t0\t299\t40\t149\t0\t\(sha)"]), "t.tsv:4: ayah 112:2 comes where 112:1 should"),
        (surah112(["ayah\t112\t1\t5\t299\t40\t149\t0\t\(sha)"]), "t.tsv:4: ayah 112:1 starts at sample 5, not 0: the first row starts at sample 0"),
        (surah112(["ayah\t112\t1\t0\t299\t40\t149\t0\t\(sha)", "ayah\t112\t2\t301\t499\t40\t149\t0\t\(sha)"]),
         "t.tsv:5: ayah 112:2 starts at sample 301, not 300: each row starts right after the one before it"),
        (surah112(["ayah\t112\t1\t0\t1000\t40\t149\t0\t\(sha)"]), "t.tsv:4: ayah 112:1 ends at sample 1000, past the file's last (999)"),
        (surah112(["ayah\t112\t1\t0\t99\t40\t500\t0\t\(sha)"]), "t.tsv:4: ayah 112:1: bytes 40-500 are not within the file's 500"),
        (surah112(["ayah\t112\t1\t0\t99\t40\t49\t73729\t\(sha)"]), "t.tsv:4: ayah 112:1: skip 73729 is not from 0 to 4624 (what a decode from the file's first frame has before sample 0, delays included)"),
        (surah112(["ayah\t112\t1\t9\t5\t0\t9\t0\t\(sha)"]), "t.tsv:4: first_sample 9 is after last_sample 5"),
        (surah112(["ayah\t112\t1\t0\t9\t9\t5\t0\t\(sha)"]), "t.tsv:4: first_byte 9 is after last_byte 5"),
        (surah112(["ayah\t113\t1\t0\t9\t0\t9\t0\t\(sha)"]), "t.tsv:4: an ayah row of surah 113 must follow that surah's file row"),
        (surah112(["ayah\t112\t1\t0\t9\t0\t9\t0"]), "t.tsv:4: an ayah row has 9 tab-separated fields"),
        (surah112(["ayah\t112\t0\t0\t99\t0\t49\t0\t\(sha)", "ayah\t112\t1\t100\t199\t0\t9\t0\t\(sha)", "ayah\t112\t2\t200\t299\t0\t9\t0\t\(sha)",
                   "ayah\t112\t3\t300\t399\t0\t9\t0\t\(sha)", "ayah\t112\t4\t400\t999\t0\t9\t0\t\(sha)", "ayah\t112\t5\t400\t999\t0\t9\t0\t\(sha)"]),
         "t.tsv:9: ayah 112:5 does not exist (surah 112 has 4 ayat)"),
        (surah112(["ayah\t112\t0\t0\t99\t0\t49\t0\t\(sha)", "ayah\t112\t1\t100\t199\t0\t9\t0\t\(sha)", "ayah\t112\t2\t200\t299\t0\t9\t0\t\(sha)",
                   "ayah\t112\t3\t300\t399\t0\t9\t0\t\(sha)", "ayah\t112\t4\t400\t998\t0\t9\t0\t\(sha)"]),
         "t.tsv:3: the last ayah of surah 112 ends at sample 998, not the file's last (999)"),
        (header + "file\t1\t500\t\(sha)\t1000\t22050\nayah\t1\t0\t0\t9\t0\t9\t0\t\(sha)\n", "t.tsv:4: surah 1 has no basmala before ayah 1"),
        (surah112() + "file\t112\t500\t\(sha)\t1000\t22050\n", "t.tsv:9: surah 112 is listed twice (first on line 3)"),
    ]

    @Test(arguments: refused.indices)
    func refusesABrokenTableByLine(index: Int) {
        let (text, message) = Self.refused[index]
        do {
            let table = try SurahTable.parse(bytes: Array(text.utf8), file: "t.tsv")
            Issue.record("accepted: \(table)")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func theWrongReciterIsRefused() {
        #expect(throws: TartilError.self) { try SurahTable.parse(bytes: Array(Self.surah112().utf8), file: "t.tsv", expected: try ReciterID("other")) }
    }

    /// Timings made to cover a file: seeded random boundaries with gaps, with and without a basmala; the parts
    /// cover 0..<samples with no gap and no overlap, none is empty, and every start but the first is the published one.
    @Test(arguments: 0..<200)
    func coveringPartitionsTheFile(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed))
        let count = 1 + random.below(20)
        var cursor = random.below(3000)
        var ayat: [Range<Int>] = []
        for _ in 0..<count {
            let start = cursor + random.below(2) * random.below(500)
            let end = start + 1 + random.below(5000)
            ayat.append(start..<end)
            cursor = end
        }
        let samples = cursor + random.below(1000)
        let before: Range<Int>? = random.below(2) == 0 || ayat[0].lowerBound == 0 ? nil : 0..<(ayat[0].lowerBound - random.below(ayat[0].lowerBound))
        let ranges = SurahTimings.SampleRanges(beforeFirst: before, ayat: ayat).covering(samples: samples)
        let parts = (ranges.beforeFirst.map { [$0] } ?? []) + ranges.ayat
        #expect((ranges.beforeFirst == nil) == (before == nil))
        #expect(parts.first?.lowerBound == 0)
        #expect(parts.last?.upperBound == samples)
        for (a, b) in zip(parts, parts.dropFirst()) { #expect(a.upperBound == b.lowerBound) }
        for part in parts { #expect(!part.isEmpty) }
        for index in ayat.indices.dropFirst() { #expect(ranges.ayat[index].lowerBound == ayat[index].lowerBound) }
        if before != nil { #expect(ranges.ayat[0].lowerBound == ayat[0].lowerBound) }
    }
}
