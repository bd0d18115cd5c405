import Foundation
import TestSupport
import Testing

@testable import TartilCore

@Suite struct ReciterTableTests {
    let sha = String(repeating: "ab", count: 32)

    func table(_ rows: String, header: String = "# tartil-table: 1\n# reciter: test\n# source: unit test\n") throws(TartilError)
        -> ReciterTable
    {
        try ReciterTable.parse(header + rows, file: "t.tsv")
    }

    @Test func parsesRowsAndHeader() throws {
        let parsed = try table("1\t1\t100\t\(sha)\t1000\t22050\n\n \t\n36\t1\t200\t\(sha)\t2000\t44100\r\n")
        #expect(parsed.reciter.rawValue == "test")
        #expect(parsed.source == "unit test")
        #expect(parsed.coverage == 2)
        let row = try #require(parsed.files[try AyahRef(36, 1)])
        #expect(row == PinnedFile(bytes: 200, sha256: sha, samples: 2000, sampleRate: 44100))
    }

    /// Every byte at every position of a digest's 64 digits: read as a lowercase hex digit when it is one, nil
    /// otherwise, against a digit-by-digit reading.
    @Test func digestReadsEveryByteAtEveryPosition() throws {
        let digits = Array("0123456789abcdef".utf8)
        var generator = SeededRandom(seed: 24)
        let text = (0..<64).map { _ in digits[Int.random(in: 0..<16, using: &generator)] }
        func reference(_ text: [UInt8]) -> String? {
            text.allSatisfy { digits.contains($0) } ? String(decoding: text, as: UTF8.self) : nil
        }
        for position in 0..<64 {
            for byte in UInt8.min...UInt8.max {
                var changed = text
                changed[position] = byte
                let read = changed.withUnsafeBufferPointer { SHA256Digest(hexBytes: $0) }
                #expect(read?.hex == reference(changed), "byte \(byte) at \(position)")
            }
        }
        #expect(SHA256Digest(hex: String(repeating: "f", count: 64))?.hex == String(repeating: "f", count: 64))
        #expect(SHA256Digest(hex: String(repeating: "0", count: 63)) == nil)
    }

    @Test func renderedTableParsesBack() throws {
        let original = try table("2\t255\t100\t\(sha)\t1000\t22050\n1\t1\t5\t\(sha)\t7\t8000\n")
        let again = try ReciterTable.parse(original.rendered(), file: "again.tsv")
        #expect(again.files == original.files)
        #expect(again.reciter == original.reciter)
        #expect(again.source == original.source)
        #expect(original.rendered().contains("1\t1\t5\t\(sha)\t7\t8000\n2\t255\t"))
    }

    @Test(arguments: [
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t1000", "t.tsv:4: expected 6 tab-separated fields (surah ayah bytes sha256 samples rate), found 5"),
        ("1 1 100 \(String(repeating: "ab", count: 32)) 1000 22050", "t.tsv:4: fields are separated by tabs, not spaces (format 1: surah, ayah, bytes, sha256, samples, rate, each after one tab)"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t1000 22050", "t.tsv:4: expected 6 tab-separated fields (surah ayah bytes sha256 samples rate), found 5"),
        ("1\t\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: expected 6 tab-separated fields (surah ayah bytes sha256 samples rate), found 7"),
        (" 5\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: field 1 (' 5') is empty or has blanks around it: fields are separated by exactly one tab"),
        ("5\t1 \t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: field 2 ('1 ') is empty or has blanks around it: fields are separated by exactly one tab"),
        ("05\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: surah: '05' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("5\t+1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: ayah: '+1' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("5\t1\t100\t\(String(repeating: "ab", count: 32))\t0100\t22050", "t.tsv:4: samples: '0100' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("1\t8\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: surah 1 (Al-Faatiha) has 7 ayat, so there is no ayah 1:8"),
        ("115\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: there are 114 surahs, so there is no surah 115"),
        ("x\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: surah: 'x' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("1\t1\t-5\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: bytes: '-5' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("1\t1\t0\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: bytes: must be more than 0"),
        ("1\t1\t100\tABC\t1000\t22050", "t.tsv:4: sha256: 'ABC' is not 64 lowercase hex digits"),
        ("1\t1\t100\t\(String(repeating: "AB", count: 32))\t1000\t22050", "t.tsv:4: sha256: '\(String(repeating: "AB", count: 32))' is not 64 lowercase hex digits"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t0\t22050", "t.tsv:4: samples: must be more than 0"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t10\t22000", "t.tsv:4: rate: 22000 Hz is not an MPEG audio rate (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)"),
        ("1\t1\t1\t\(String(repeating: "ab", count: 32))\t1\t8000\n\n1\t1\t1\t\(String(repeating: "ab", count: 32))\t1\t8000", "t.tsv:6: ayah 1:1 is listed twice (first on line 4)"),
        // Rows near the form the one-pass reading takes: the same errors as the field-by-field reading, in its order.
        ("1\t1\t1234567890123\t\(String(repeating: "ab", count: 32))\t1000\t22050", "t.tsv:4: bytes: '1234567890123' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t22050\t", "t.tsv:4: expected 6 tab-separated fields (surah ayah bytes sha256 samples rate), found 7"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))a\t1000\t22050", "t.tsv:4: sha256: '\(String(repeating: "ab", count: 32))a' is not 64 lowercase hex digits"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 31))a\t1000\t22050", "t.tsv:4: sha256: '\(String(repeating: "ab", count: 31))a' is not 64 lowercase hex digits"),
        ("1\t1\t100\t\(String(repeating: "ab", count: 32))\t1000\t2205O", "t.tsv:4: rate: '2205O' is not a whole number written in plain decimal (digits, no leading zero)"),
        ("1\t8\t0\t\(String(repeating: "ab", count: 32))\t0\t22000", "t.tsv:4: surah 1 (Al-Faatiha) has 7 ayat, so there is no ayah 1:8"),
        ("1\t1\t0\t\(String(repeating: "ab", count: 32))\t0\t22000", "t.tsv:4: bytes: must be more than 0"),
        ("1\t1\t1\t\(String(repeating: "ab", count: 32))\t0\t22000", "t.tsv:4: samples: must be more than 0"),
        ("0\t1\t1\t\(String(repeating: "ab", count: 32))\t1\t8000", "t.tsv:4: surah 0 does not exist: surahs are numbered 1-114"),
    ])
    func invalidRow(rows: String, message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try table(rows) }
    }

    @Test(arguments: [
        ("1\t1\t1\tx\t1\t1\n", "t.tsv:1: the first line must be '# tartil-table: 1'"),
        ("# tartil-table: 3\n", "t.tsv:1: format '3' is not supported (this build reads tartil-table: 1)"),
        ("# tartil-table: 2\n", #"t.tsv:1: format 2 is a surah table, for a reciter of one file per surah ("files": "surah" in mirrors.json); a per-ayah table is tartil-table: 1"#),
        ("# something else\n", "t.tsv:1: the first line must be '# tartil-table: 1'"),
        ("# tartil-table: 1\n1\t1\t1\tx\t1\t1\n", "t.tsv:2: the '# reciter: ID' header must come before the first row"),
        ("# tartil-table: 1\n# reciter: Bad Id\n", "t.tsv:2: reciter: 'Bad Id' is not a valid id: 'B' is not allowed (use a-z, 0-9, '.', '_' and '-')"),
        ("# tartil-table: 1\n", "t.tsv: the '# reciter: ID' header is missing"),
        ("", "t.tsv:1: the first line must be '# tartil-table: 1'"),
    ])
    func invalidHeader(text: String, message: String) {
        #expect(throws: TartilError(.invalidData, message)) { try ReciterTable.parse(text, file: "t.tsv") }
    }

    @Test func tableForAnotherReciterIsRefused() {
        #expect(throws: TartilError(.invalidData, "t.tsv: the table is for reciter 'test', not 'other'")) {
            try ReciterTable.parse("# tartil-table: 1\n# reciter: test\n", file: "t.tsv", expected: try ReciterID("other"))
        }
    }

    // MARK: - Reading some surahs' rows

    /// A table read for some surahs holds exactly the full table's rows of those surahs, for random sets of surahs
    /// of a committed whole-Qur'an table.
    @Test func aTableReadForSomeSurahsHoldsTheirRowsOfTheWholeTable() throws {
        let path = TestPaths.repository + "/reciter-tables/ibrahim-alakhdar.tsv"
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let whole = try ReciterTable.parse(bytes: bytes, file: path)
        var generator = SeededRandom(seed: 2424)
        for _ in 0..<40 {
            let surahs = Set((0..<Int.random(in: 0...6, using: &generator)).map { _ in Int.random(in: 1...114, using: &generator) })
            let some = try ReciterTable.parse(bytes: bytes, file: path, surahs: Array(surahs))
            let expected = whole.files.filter { surahs.contains($0.0.surah) }
            #expect(some.files.map(\.0) == expected.map(\.0), "\(surahs.sorted())")
            #expect(some.files.values == expected.map(\.1), "\(surahs.sorted())")
            #expect(some.reciter == whole.reciter && some.source == whole.source)
        }
    }

    /// The rows of other surahs are not checked; the wanted surahs' rows, the header, and any row that does not
    /// start with a surah number are.
    @Test func aTableReadForSomeSurahsChecksTheirRowsOnly() throws {
        let header = "# tartil-table: 1\n# reciter: test\n"
        let good = "1\t1\t100\t\(sha)\t1000\t22050\n"
        func read(_ rows: String, _ surahs: [Int], header: String = header) throws(TartilError) -> ReciterTable {
            try ReciterTable.parse(bytes: Array((header + rows).utf8), file: "t.tsv", surahs: surahs)
        }
        #expect(try read(good + "36\t1\t0\tnot-hex\n", [1]).files.count == 1)
        #expect(throws: TartilError.self) { try read(good + "36\t1\t0\tnot-hex\n", [36]) }
        #expect(throws: TartilError.self) { try read(good + "x36\t1\t100\t\(sha)\t1000\t22050\n", [1]) }
        #expect(throws: TartilError.self) { try read(good + "115\t1\t100\t\(sha)\t1000\t22050\n", [1]) }
        #expect(throws: TartilError.self) { try read(good + good, [1]) }
        #expect(throws: TartilError.self) { try read(good, [1], header: "# tartil-table: 9\n# reciter: test\n") }
        #expect(try read(good, []).files.isEmpty)
    }

    // MARK: - The committed tables

    @Test(arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"])
    func committedTablePinsTheWholeQuran(reciter: String) throws {
        let path = TestPaths.repository + "/reciter-tables/\(reciter).tsv"
        let parsed = try ReciterTable.parse(
            try String(contentsOfFile: path, encoding: .utf8), file: path, expected: try ReciterID(reciter))
        #expect(parsed.coverage == 6236)
    }

    /// The committed tables were built by `tartil table build` from ../shared/real/audio; they must agree with
    /// the manifests there (bytes, sha256, samples as mpg123 decodes them).
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"), arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"])
    func committedTableMatchesTheRecordings(reciter: String) throws {
        let path = TestPaths.repository + "/reciter-tables/\(reciter).tsv"
        let parsed = try ReciterTable.parse(
            try String(contentsOfFile: path, encoding: .utf8), file: path, expected: try ReciterID(reciter))
        let real = try #require(TestPaths.sharedReal)
        let manifest = try ManifestRow.read("\(real)/audio/\(reciter)")
        #expect(manifest.count == 181)
        for row in manifest {
            let pinned = try #require(parsed.files[try AyahRef(row.surah, row.ayah)], "\(row.file)")
            #expect(pinned == PinnedFile(bytes: row.bytes, sha256: row.sha256, samples: row.samples, sampleRate: row.sampleRate), "\(row.file)")
        }
    }
}
