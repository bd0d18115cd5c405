import Glibc

/// A SHA-256 digest held as 32 bytes (a table of 6236 rows keeps no strings for its hashes).
public struct SHA256Digest: Sendable, Hashable, CustomStringConvertible {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Reads 64 lowercase hex digits; nil for anything else.
    public init?(hex: some StringProtocol) {
        var utf8 = Array(hex.utf8)
        guard let digest = utf8.withUnsafeMutableBufferPointer({ Self(hexBytes: UnsafeBufferPointer($0)) }) else { return nil }
        self = digest
    }

    /// The digest of 32 bytes (as libcrypto returns it); nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func word(_ start: Int) -> UInt64 { bytes[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(8), word(16), word(24))
    }

    /// Reads 64 lowercase hex digits from UTF-8 bytes; nil for anything else.
    public init?(hexBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 64, let base = bytes.baseAddress else { return nil }
        // A whole-Qur'an table holds 400,000 hex digits, read on every start of playback: eight digits at a time,
        // as one 64-bit word each (`hexWord`), instead of a lookup per digit.
        let raw = UnsafeRawPointer(base)
        var invalid: UInt64 = 0
        func word(_ offset: Int) -> UInt64 {
            Self.hexWord(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self), invalid: &invalid) << 32
                | Self.hexWord(raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self), invalid: &invalid)
        }
        let words = (word(0), word(16), word(32), word(48))
        guard invalid == 0 else { return nil }
        self.words = words
    }

    /// The value of eight lowercase hex digits loaded as one little-endian word (the first digit in the lowest
    /// byte); sets bits of `invalid` when any byte is not one of `0-9a-f` (the value is then meaningless). Each
    /// byte is compared in its own lane: with every byte below 0x80, `(x | 0x80…) - k·0x01…` keeps a lane's high
    /// bit exactly when that byte is at least `k`, with no borrow between lanes.
    @inline(__always)
    static func hexWord(_ littleEndian: UInt64, invalid: inout UInt64) -> UInt64 {
        let x = UInt64(littleEndian: littleEndian)
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func atLeast(_ k: UInt64) -> UInt64 { ((x | high) &- k &* ones) & high }
        let letter = atLeast(0x61) & ~atLeast(0x67)
        let digit = atLeast(0x30) & ~atLeast(0x3A)
        invalid |= (x & high) | ((digit | letter) ^ high)
        // Each lane's value, 0…15: the low nibble, plus 9 for a letter ('a' is 0x61).
        let nibbles = (x & 0x0F0F_0F0F_0F0F_0F0F) &+ (letter >> 7) &* 9
        // Pairs of lanes into bytes (the first digit is the high nibble), then the four bytes in reading order.
        let pairs = (nibbles & 0x000F_000F_000F_000F) << 4 | (nibbles >> 8) & 0x000F_000F_000F_000F
        let quads = (pairs | pairs >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt64(UInt32(truncatingIfNeeded: quads | quads >> 16).byteSwapped)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    /// 64 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 60, through: 0, by: -4) { text.append(digits[Int(word >> UInt64(shift) & 0xf)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    public var description: String { hex }
}

/// What a reciter table pins about one ayah's file.
public struct PinnedFile: Sendable, Hashable {
    /// Exact size of the file in bytes.
    public let bytes: Int
    /// SHA-256 of the file.
    public let digest: SHA256Digest
    /// PCM frames mpg123 decodes from the file with gapless trimming on.
    public let samples: Int
    /// Sample rate in Hz.
    public let sampleRate: Int

    public init(bytes: Int, digest: SHA256Digest, samples: Int, sampleRate: Int) {
        self.bytes = bytes
        self.digest = digest
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// `sha256` must be 64 lowercase hex digits.
    public init(bytes: Int, sha256: String, samples: Int, sampleRate: Int) {
        guard let digest = SHA256Digest(hex: sha256) else { preconditionFailure("'\(sha256)' is not 64 lowercase hex digits") }
        self.init(bytes: bytes, digest: digest, samples: samples, sampleRate: sampleRate)
    }

    /// SHA-256 of the file, 64 lowercase hex digits.
    public var sha256: String { digest.hex }

    /// Duration in seconds (exact ratio of samples to rate).
    public var seconds: Double { Double(samples) / Double(sampleRate) }
}

/// A table's rows, in mushaf order, found by binary search: compact and quick to build for a whole Qur'an.
public struct PinnedFiles: Sendable, Hashable, Sequence {
    private var ayat: [AyahRef] = []
    private var rows: [PinnedFile] = []

    public init() {}

    public init(_ files: [AyahRef: PinnedFile]) {
        for (ayah, file) in files.sorted(by: { $0.key < $1.key }) {
            ayat.append(ayah)
            rows.append(file)
        }
    }

    /// Adds a row; rows added in mushaf order (as tables are written) cost no sorting.
    mutating func append(_ ayah: AyahRef, _ file: PinnedFile) {
        if let last = ayat.last, !(last < ayah) {
            let position = insertionPoint(ayah)
            ayat.insert(ayah, at: position)
            rows.insert(file, at: position)
        } else {
            ayat.append(ayah)
            rows.append(file)
        }
    }

    mutating func reserveCapacity(_ count: Int) {
        ayat.reserveCapacity(count)
        rows.reserveCapacity(count)
    }

    private func insertionPoint(_ ayah: AyahRef) -> Int {
        var low = 0
        var high = ayat.count
        while low < high {
            let middle = (low + high) / 2
            if ayat[middle] < ayah { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The row for `ayah`, or nil when the table does not pin it.
    public subscript(_ ayah: AyahRef) -> PinnedFile? {
        let position = insertionPoint(ayah)
        return position < ayat.count && ayat[position] == ayah ? rows[position] : nil
    }

    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }
    /// The rows' files, in mushaf order.
    public var values: [PinnedFile] { rows }

    public func makeIterator() -> Zip2Sequence<[AyahRef], [PinnedFile]>.Iterator { zip(ayat, rows).makeIterator() }
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
    public static let sampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]

    public let reciter: ReciterID
    /// Free text saying where the files came from.
    public let source: String
    public let files: PinnedFiles

    public init(reciter: ReciterID, source: String, files: PinnedFiles) {
        self.reciter = reciter
        self.source = source
        self.files = files
    }

    public init(reciter: ReciterID, source: String, files: [AyahRef: PinnedFile]) {
        self.init(reciter: reciter, source: source, files: PinnedFiles(files))
    }

    /// How many of the 6236 ayat are pinned (the basmala parts of a surah table's are not ayat).
    public var coverage: Int { files.count - files.filter { $0.0.isBasmalaPart }.count }

    // MARK: - Parsing

    /// Parses a table. `file` names the source in errors, which give the line: `x.tsv:7: sha256: …`.
    /// When `expected` is given the header's reciter must match it.
    ///
    /// Rows are read straight from the UTF-8 bytes: a whole-Qur'an table has 6236 of them and every command that
    /// plays or downloads reads one, so this is on the path of starting playback (about 2 ms for 6236 rows).
    public static func parse(_ text: String, file: String, expected: ReciterID? = nil) throws(TartilError) -> ReciterTable {
        var text = text
        text.makeContiguousUTF8()
        var result: Result<ReciterTable, TartilError>!
        text.utf8.withContiguousStorageIfAvailable { bytes in
            do throws(TartilError) {
                result = .success(try parse(bytes, file: file, expected: expected))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses a table from the file's bytes (see `parse(_:file:expected:)`).
    ///
    /// With `surahs`, only the rows of those surahs are read and checked: the table then pins their ayat alone, and
    /// must be used for nothing else (a play reads the surahs of its plan, a few dozen rows of the 6236, instead of
    /// the whole table on every start). The header is checked as always, and so is any row whose first field is
    /// not a surah number in canonical form.
    public static func parse(
        bytes: [UInt8], file: String, expected: ReciterID? = nil, surahs: [Int]? = nil
    ) throws(TartilError) -> ReciterTable {
        try bytes.withUnsafeBufferPointer { buffer throws(TartilError) in
            try parse(buffer, file: file, expected: expected, surahs: surahs)
        }
    }

    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, file: String, expected: ReciterID?, surahs: [Int]? = nil
    ) throws(TartilError) -> ReciterTable {
        /// Whether each surah's rows are read (all when `surahs` is nil).
        var wanted = [Bool](repeating: surahs == nil, count: Catalog.surahCount + 1)
        for surah in surahs ?? [] where wanted.indices.contains(surah) { wanted[surah] = true }
        var header = TableHeader()
        var files = PinnedFiles()
        // A row is at least 75 bytes (64 hex digits, five numbers, five tabs and a newline).
        files.reserveCapacity(min(bytes.count / 75, Catalog.totalAyat + 114))
        /// The line each ayah was found on, by global number (0: not yet).
        var lineOfAyah = [Int32](repeating: 0, count: Catalog.totalAyat + 1)
        /// Each row's fields (made once: a row costs no allocation).
        var fields: [Range<Int>] = []
        fields.reserveCapacity(8)
        var lineNumber = 0
        var lineStart = 0
        while lineStart < bytes.count {
            lineNumber += 1
            let lineEnd = endOfLine(bytes, from: lineStart)
            defer { lineStart = lineEnd + 1 }
            var end = lineEnd
            if end > lineStart && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<end])
            func fail(_ problem: String) -> TartilError {
                TartilError(.invalidData, "\(file):\(lineNumber): \(problem)")
            }
            guard let firstByte = line.first(where: { !isBlank($0) }) else { continue }
            if firstByte == UInt8(ascii: "#") {
                try header.read(
                    comment: String(decoding: line, as: UTF8.self), isFirstLine: lineNumber == 1, formatVersion: formatVersion,
                    wrongVersion: { value in
                        value == String(SurahTable.formatVersion)
                            ? "format \(value) is a surah table, for a reciter of one file per surah (\"files\": \"surah\" in mirrors.json); a per-ayah table is tartil-table: \(formatVersion)"
                            : "format '\(value)' is not supported (this build reads tartil-table: \(formatVersion))"
                    }, fail: fail)
                continue
            }
            try header.checkBeforeRow(formatVersion: formatVersion, fail: fail)
            if surahs != nil, let surah = leadingSurah(line), !wanted[surah] { continue }
            /// The row's ayah, or the row's problem with it.
            func ayahRef(_ surah: Int, _ ayah: Int) throws(TartilError) -> AyahRef {
                do {
                    return try AyahRef(surah, ayah)
                } catch {
                    throw fail(error.message)
                }
            }
            func checkRate(_ rate: Int) throws(TartilError) {
                guard sampleRates.contains(rate) else {
                    throw fail("rate: \(rate) Hz is not an MPEG audio rate (\(sampleRates.map(String.init).joined(separator: ", ")))")
                }
            }
            let ayah: AyahRef
            let pinned: PinnedFile
            if let row = wellFormedRow(line) {
                // The usual row, read in one pass: only what its form cannot say is left to check, in the order the
                // field-by-field reading below checks it.
                ayah = try ayahRef(row.surah, row.ayah)
                guard row.size > 0 else { throw fail("bytes: must be more than 0") }
                guard row.samples > 0 else { throw fail("samples: must be more than 0") }
                try checkRate(row.rate)
                pinned = PinnedFile(bytes: row.size, digest: row.digest, samples: row.samples, sampleRate: row.rate)
            } else {
                // Format 1: exactly six fields, each separated by one tab; no other blanks in a row.
                fields.removeAll(keepingCapacity: true)
                var fieldStart = 0
                for position in 0...line.count {
                    guard position == line.count || line[position] == UInt8(ascii: "\t") else { continue }
                    fields.append(fieldStart..<position)
                    fieldStart = position + 1
                }
                guard fields.count == 6 else {
                    if line.contains(UInt8(ascii: " ")) && !line.contains(UInt8(ascii: "\t")) {
                        throw fail("fields are separated by tabs, not spaces (format 1: surah, ayah, bytes, sha256, samples, rate, each after one tab)")
                    }
                    throw fail("expected 6 tab-separated fields (surah ayah bytes sha256 samples rate), found \(fields.count)")
                }
                func text(_ index: Int) -> String { String(decoding: UnsafeBufferPointer(rebasing: line[fields[index]]), as: UTF8.self) }
                for index in 0..<6 where line[fields[index]].contains(where: isBlank) || fields[index].isEmpty {
                    throw fail("field \(index + 1) ('\(text(index))') is empty or has blanks around it: fields are separated by exactly one tab")
                }
                /// A whole number in canonical decimal: digits only, no leading zero, at most 12 digits.
                func number(_ index: Int, _ name: String) throws(TartilError) -> Int {
                    let field = line[fields[index]]
                    let canonical = field.count <= 12 && (field.count == 1 || field.first != UInt8(ascii: "0"))
                        && field.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                    guard canonical else {
                        throw fail("\(name): '\(text(index))' is not a whole number written in plain decimal (digits, no leading zero)")
                    }
                    return field.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                }
                let surah = try number(0, "surah")
                let ayahNumber = try number(1, "ayah")
                ayah = try ayahRef(surah, ayahNumber)
                let size = try number(2, "bytes")
                guard size > 0 else { throw fail("bytes: must be more than 0") }
                guard let digest = SHA256Digest(hexBytes: UnsafeBufferPointer(rebasing: line[fields[3]])) else {
                    throw fail("sha256: '\(text(3))' is not 64 lowercase hex digits")
                }
                let samples = try number(4, "samples")
                guard samples > 0 else { throw fail("samples: must be more than 0") }
                let rate = try number(5, "rate")
                try checkRate(rate)
                pinned = PinnedFile(bytes: size, digest: digest, samples: samples, sampleRate: rate)
            }
            let earlier = lineOfAyah[ayah.global]
            if earlier > 0 { throw fail("ayah \(ayah) is listed twice (first on line \(earlier))") }
            lineOfAyah[ayah.global] = Int32(clamping: lineNumber)
            files.append(ayah, pinned)
        }
        let reciter = try header.checkedReciter(file: file, formatVersion: formatVersion, expected: expected)
        return ReciterTable(reciter: reciter, source: header.source ?? "", files: files)
    }

    /// The fields of a row written exactly as format 1 says (six fields each after one tab, numbers in canonical
    /// decimal of at most 12 digits, 64 lowercase hex digits), read in one pass over its bytes; nil for any other
    /// line, which the field-by-field reading then explains.
    private static func wellFormedRow(
        _ line: UnsafeBufferPointer<UInt8>
    ) -> (surah: Int, ayah: Int, size: Int, digest: SHA256Digest, samples: Int, rate: Int)? {
        guard var position = line.baseAddress else { return nil }
        let end = position + line.count
        guard let surah = canonicalNumber(&position, end), tab(&position, end), let ayah = canonicalNumber(&position, end),
            tab(&position, end), let size = canonicalNumber(&position, end), tab(&position, end), end - position >= 64,
            let digest = SHA256Digest(hexBytes: UnsafeBufferPointer(start: position, count: 64))
        else { return nil }
        position += 64
        guard tab(&position, end), let samples = canonicalNumber(&position, end), tab(&position, end),
            let rate = canonicalNumber(&position, end), position == end
        else { return nil }
        return (surah, ayah, size, digest, samples, rate)
    }

    /// The surah number a row starts with (canonical decimal, 1-114, then a tab), or nil.
    private static func leadingSurah(_ line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard var position = line.baseAddress else { return nil }
        let end = position + line.count
        guard let surah = canonicalNumber(&position, end), tab(&position, end), (1...Catalog.surahCount).contains(surah) else { return nil }
        return surah
    }

    /// The number in canonical decimal (at most 12 digits, no leading zero) at `position`, which moves past it;
    /// nil when there is none.
    @inline(__always)
    private static func canonicalNumber(_ position: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Int? {
        let start = position
        var value = 0
        while position < end {
            let digit = position.pointee &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value &* 10 &+ Int(digit)
            position += 1
        }
        let count = position - start
        guard count >= 1 && count <= 12 && (count == 1 || start.pointee != UInt8(ascii: "0")) else { return nil }
        return value
    }

    /// Whether a tab is at `position`, which then moves past it.
    @inline(__always)
    private static func tab(_ position: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        guard position < end && position.pointee == UInt8(ascii: "\t") else { return false }
        position += 1
        return true
    }

    /// The index of the first newline at or after `start`, or the end of `bytes`.
    private static func endOfLine(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress, start < bytes.count else { return bytes.count }
        guard let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) else { return bytes.count }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(newline))
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    // MARK: - Writing

    /// The table as text, rows in mushaf order; `parse(rendered())` gives the table back.
    public func rendered() -> String {
        var text = "# tartil-table: \(Self.formatVersion)\n# reciter: \(reciter)\n"
        if !source.isEmpty { text += "# source: \(source)\n" }
        text += "# columns: surah ayah bytes sha256 samples rate (samples: PCM frames mpg123 decodes, gapless)\n"
        for (ayah, file) in files {
            text += "\(ayah.surah)\t\(ayah.ayah)\t\(file.bytes)\t\(file.sha256)\t\(file.samples)\t\(file.sampleRate)\n"
        }
        return text
    }
}
