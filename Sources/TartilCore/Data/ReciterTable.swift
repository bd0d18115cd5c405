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
        // "\r\n" is one Character in Swift, so both line ends are named.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            func fail(_ problem: String) -> TartilError {
                TartilError(.invalidData, "\(file):\(lineNumber): \(problem)")
            }
            if line.trimmedWhitespace.isEmpty { continue }
            if line.hasPrefix("#") {
                let comment = line.dropFirst().trimmedWhitespace
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
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard fields.count == 6 else {
                throw fail("expected 6 fields (surah ayah bytes sha256 samples rate), found \(fields.count)")
            }
            func number(_ index: Int, _ name: String) throws(TartilError) -> Int {
                guard fields[index].allSatisfy({ $0.isASCII && $0.isNumber }), fields[index].count <= 12,
                    let value = Int(fields[index])
                else { throw fail("\(name): '\(fields[index])' is not a whole number") }
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
            let sha = String(fields[3])
            guard sha.count == 64, sha.allSatisfy({ "0123456789abcdef".contains($0) }) else {
                throw fail("sha256: '\(sha)' is not 64 lowercase hex digits")
            }
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
