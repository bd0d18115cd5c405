import Foundation

/// What a reciter table pins about one ayah's file.
public struct PinnedFile: Sendable, Hashable {
    /// Exact size of the file in bytes.
    public let bytes: Int
    /// SHA-256 of the file, 64 lowercase hex digits.
    public let sha256: String
    /// PCM frames mpg123 decodes from the file with gapless trimming on.
    public let samples: Int
    /// Sample rate in Hz.
    public let sampleRate: Int

    public init(bytes: Int, sha256: String, samples: Int, sampleRate: Int) {
        self.bytes = bytes
        self.sha256 = sha256
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// Duration in seconds (exact ratio of samples to rate).
    public var seconds: Double { Double(samples) / Double(sampleRate) }
}

/// A reciter table (`reciter-tables/<id>.tsv`, format 1): the pinned size, hash and sample count of each ayah
/// file it covers. Coverage may be partial; an ayah without a row is *unpinned*.
///
/// ```
/// # tartil-table: 1
/// # reciter: ibrahim-alakhdar
/// # source: quranstatic/ibrahim-alakhdar-2@4452d796… (audio/)
/// # columns: surah ayah bytes sha256 samples rate
/// 1	1	25513	74fe231f…	138863	22050
/// ```
public struct ReciterTable: Sendable {
    /// The only format version this build reads and writes.
    public static let formatVersion = 1
    /// The MPEG audio sample rates a row may name.
    public static let sampleRates: Set<Int> = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]

    public let reciter: ReciterID
    /// Free text saying where the files came from.
    public let source: String
    public let files: [AyahRef: PinnedFile]

    public init(reciter: ReciterID, source: String, files: [AyahRef: PinnedFile]) {
        self.reciter = reciter
        self.source = source
        self.files = files
    }

    /// How many of the 6236 ayat are pinned.
    public var coverage: Int { files.count }

    // MARK: - Parsing

    /// Parses a table. `file` names the source in errors, which give the line: `x.tsv:7: sha256: …`.
    /// When `expected` is given the header's reciter must match it.
    public static func parse(_ text: String, file: String, expected: ReciterID? = nil) throws(TartilError) -> ReciterTable {
        var version: Int?
        var reciter: ReciterID?
        var source: String?
        var files: [AyahRef: PinnedFile] = [:]
        var lineNumbers: [AyahRef: Int] = [:]
        var lineNumber = 0
        // Rows are read as UTF-8 bytes (a whole-Qur'an table has 6236 of them, read by every command that
        // downloads or plays); header comments and error messages go through String.
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
            func fail(_ problem: String) -> TartilError {
                TartilError(.invalidData, "\(file):\(lineNumber): \(problem)")
            }
            guard let firstByte = line.first(where: { !isBlank($0) }) else { continue }
            if firstByte == UInt8(ascii: "#") {
                let comment = Substring(line).trimmedWhitespace.dropFirst().trimmedWhitespace
                if lineNumber == 1 {
                    guard comment.hasPrefix("tartil-table:") else {
                        throw fail("the first line must be '# tartil-table: \(formatVersion)'")
                    }
                    let value = comment.dropFirst("tartil-table:".count).trimmedWhitespace
                    guard let number = Int(value), number == formatVersion else {
                        throw fail("format '\(value)' is not supported (this build reads tartil-table: \(formatVersion))")
                    }
                    version = number
                } else if comment.hasPrefix("reciter:") {
                    let value = comment.dropFirst("reciter:".count).trimmedWhitespace
                    if let problem = ReciterID.problem(with: value) {
                        throw fail("reciter: '\(value)' is not a valid id: \(problem)")
                    }
                    reciter = try ReciterID(value)
                } else if comment.hasPrefix("source:") {
                    source = comment.dropFirst("source:".count).trimmedWhitespace
                }
                continue
            }
            guard version != nil else { throw fail("the first line must be '# tartil-table: \(formatVersion)'") }
            guard reciter != nil else { throw fail("the '# reciter: ID' header must come before the first row") }
            let fields = line.split(whereSeparator: { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") })
            guard fields.count == 6 else {
                throw fail("expected 6 fields (surah ayah bytes sha256 samples rate), found \(fields.count)")
            }
            func number(_ index: Int, _ name: String) throws(TartilError) -> Int {
                let field = fields[index]
                guard field.count <= 12, !field.isEmpty else {
                    throw fail("\(name): '\(Substring(field))' is not a whole number")
                }
                var value = 0
                for byte in field {
                    guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                        throw fail("\(name): '\(Substring(field))' is not a whole number")
                    }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            let surah = try number(0, "surah")
            let ayahNumber = try number(1, "ayah")
            let ayah: AyahRef
            do {
                ayah = try AyahRef(surah, ayahNumber)
            } catch {
                throw fail(error.message)
            }
            let bytes = try number(2, "bytes")
            guard bytes > 0 else { throw fail("bytes: must be more than 0") }
            let shaField = fields[3]
            guard shaField.count == 64, shaField.allSatisfy(isLowercaseHex) else {
                throw fail("sha256: '\(Substring(shaField))' is not 64 lowercase hex digits")
            }
            let sha = String(Substring(shaField))
            let samples = try number(4, "samples")
            guard samples > 0 else { throw fail("samples: must be more than 0") }
            let rate = try number(5, "rate")
            guard sampleRates.contains(rate) else {
                throw fail("rate: \(rate) Hz is not an MPEG audio rate (\(sampleRates.sorted().map(String.init).joined(separator: ", ")))")
            }
            if let earlier = lineNumbers[ayah] {
                throw fail("ayah \(ayah) is listed twice (first on line \(earlier))")
            }
            lineNumbers[ayah] = lineNumber
            files[ayah] = PinnedFile(bytes: bytes, sha256: sha, samples: samples, sampleRate: rate)
        }
        guard version != nil else {
            throw TartilError(.invalidData, "\(file):1: the first line must be '# tartil-table: \(formatVersion)'")
        }
        guard let reciter else {
            throw TartilError(.invalidData, "\(file): the '# reciter: ID' header is missing")
        }
        if let expected, expected != reciter {
            throw TartilError(.invalidData, "\(file): the table is for reciter '\(reciter)', not '\(expected)'")
        }
        return ReciterTable(reciter: reciter, source: source ?? "", files: files)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    // MARK: - Writing

    /// The table as text, rows in mushaf order; `parse(rendered())` gives the table back.
    public func rendered() -> String {
        var text = "# tartil-table: \(Self.formatVersion)\n# reciter: \(reciter)\n"
        if !source.isEmpty { text += "# source: \(source)\n" }
        text += "# columns: surah ayah bytes sha256 samples rate (samples: PCM frames mpg123 decodes, gapless)\n"
        for (ayah, file) in files.sorted(by: { $0.key < $1.key }) {
            text += "\(ayah.surah)\t\(ayah.ayah)\t\(file.bytes)\t\(file.sha256)\t\(file.samples)\t\(file.sampleRate)\n"
        }
        return text
    }
}
