/// A reciter table for a reciter of one file per surah (`reciter-tables/<id>.tsv`, format 2): per surah file its
/// size, SHA-256, decoded samples and rate; per ayah (and per basmala) the samples of the decoded file it is, and
/// the byte range of the file that decodes those samples alone, with that range's SHA-256, so one ayah can be
/// fetched with an HTTP range request and verified by itself.
///
/// ```
/// # tartil-table: 2
/// # reciter: ibrahim-alakhdar-surah
/// # source: rebuilt from quranstatic per-ayah files by tools/make-surah-files
/// # columns: file surah bytes sha256 samples rate
/// # columns: ayah surah ayah first_sample last_sample first_byte last_byte skip sha256
/// file	112	39288	5d41…	372864	22050
/// ayah	112	0	0	61055	0	5103	0	9f86…
/// ayah	112	1	61056	131327	4704	10935	576	2c26…
/// ```
///
/// - A `file` row: the surah; the file's size in bytes and SHA-256; the PCM frames mpg123 decodes from the whole
///   file with gapless trimming on, and their rate in Hz.
/// - An `ayah` row, after its surah's `file` row: the surah and ayah (0: the basmala before ayah 1, never in
///   surahs 1 and 9); its first and last sample in the whole file's decode (inclusive); the first and last byte of
///   the file (inclusive, as an HTTP `Range: bytes=first-last` names them) that decode it alone, from a few frames
///   before it (the bit reservoir and the synthesis filter need them) to the frame holding its last sample; the
///   PCM frames to drop from the start of that range's decode (with a fresh decoder, gapless trimming on); and
///   the SHA-256 of the range's bytes. Dropping `skip` and keeping last − first + 1 samples gives exactly the
///   samples the whole file's decode has there (`tartil table build` checks every row sample for sample).
/// - A surah's rows cover its file with no gap and no overlap: the first starts at sample 0, each starts right
///   after the one before it, the last ends at the file's last sample. Every ayah of a surah in the table is
///   there, in order; a table may hold any set of surahs.
///
/// Like format 1, rows are tab-separated with numbers in plain decimal, and any other line (bar blank lines and
/// `#` comments) is refused with its line number.
public struct SurahTable: Sendable, Hashable {
    /// The format version of surah tables.
    public static let formatVersion = 2
    /// The most PCM frames a row whose first sample is `firstSample` may drop from the start of its range's
    /// decode: a range starts on an audio frame of the file, so its decode has before the part at most what the
    /// whole file's frames have before it, the part's first sample and the decoder and encoder delay gapless
    /// decoding trims from the whole file (529 samples, and at most 4095 from a LAME tag).
    public static func maximumSkip(firstSample: Int) -> Int { firstSample + MPEGHead.decoderDelay + 4095 }
    /// The longest file a row may describe (4 GiB) and the most samples (a day at 48 kHz).
    public static let maximumBytes = 1 << 32
    public static let maximumSamples = 86_400 * 48_000

    /// One ayah (or the basmala) of a surah file.
    public struct Part: Sendable, Hashable {
        /// 1… the surah's ayah count, or 0 for the basmala.
        public let ayah: Int
        /// Its samples in the whole file's decode.
        public let samples: ClosedRange<Int>
        /// The bytes of the file that decode it alone.
        public let bytes: ClosedRange<Int>
        /// PCM frames to drop from the start of that range's decode.
        public let skip: Int
        /// SHA-256 of those bytes.
        public let digest: SHA256Digest

        public init(ayah: Int, samples: ClosedRange<Int>, bytes: ClosedRange<Int>, skip: Int, digest: SHA256Digest) {
            self.ayah = ayah
            self.samples = samples
            self.bytes = bytes
            self.skip = skip
            self.digest = digest
        }

        /// How many samples it is.
        public var sampleCount: Int { samples.count }
    }

    /// One surah's file and its parts.
    public struct File: Sendable, Hashable {
        public let surah: Int
        /// The whole file: size, SHA-256, samples decoded with gapless trimming, rate.
        public let bytes: Int
        public let digest: SHA256Digest
        public let samples: Int
        public let sampleRate: Int
        /// The basmala (when the recording has one) and the ayat, in order.
        public let parts: [Part]

        public init(surah: Int, bytes: Int, digest: SHA256Digest, samples: Int, sampleRate: Int, parts: [Part]) {
            self.surah = surah
            self.bytes = bytes
            self.digest = digest
            self.samples = samples
            self.sampleRate = sampleRate
            self.parts = parts
        }

        /// The basmala before ayah 1, when the recording has one.
        public var basmala: Part? { parts.first?.ayah == 0 ? parts[0] : nil }

        /// Ayah `ayah` (0: the basmala), or nil.
        public func part(ayah: Int) -> Part? {
            let offset = parts.first?.ayah == 0 ? ayah : ayah - 1
            guard offset >= 0, offset < parts.count, parts[offset].ayah == ayah else { return nil }
            return parts[offset]
        }

        /// What is wrong with this file's rows, or nil: see the type's documentation for the rules. With
        /// `complete` false, `parts` may stop short of the surah's end (a table being read row by row).
        public func problem(complete: Bool = true) -> String? {
            guard (1...Catalog.surahCount).contains(surah) else { return "surah \(surah) does not exist (1-\(Catalog.surahCount))" }
            guard bytes > 0, bytes <= SurahTable.maximumBytes else { return "bytes: \(bytes) is not from 1 to \(SurahTable.maximumBytes)" }
            guard samples > 0, samples <= SurahTable.maximumSamples else {
                return "samples: \(samples) is not from 1 to \(SurahTable.maximumSamples)"
            }
            guard ReciterTable.sampleRates.contains(sampleRate) else {
                return "rate: \(sampleRate) Hz is not an MPEG audio rate (\(ReciterTable.sampleRates.map(String.init).joined(separator: ", ")))"
            }
            let count = Catalog.surahs[surah - 1].ayahCount
            let hasBasmala = parts.first?.ayah == 0
            if hasBasmala && (surah == 1 || surah == 9) {
                return "surah \(surah) has no basmala before ayah 1 (\(surah == 1 ? "its basmala is ayah 1" : "it has none")): ayah 0 is not allowed"
            }
            var nextSample = 0
            for (index, part) in parts.enumerated() {
                let expected = hasBasmala ? index : index + 1
                guard part.ayah <= count else { return "ayah \(surah):\(part.ayah) does not exist (surah \(surah) has \(count) ayat)" }
                guard part.ayah == expected else {
                    return "ayah \(surah):\(part.ayah) comes where \(surah):\(expected) should: a surah's ayat are listed once each, in order"
                }
                let name = part.ayah == 0 ? "the basmala of surah \(surah)" : "ayah \(surah):\(part.ayah)"
                guard part.samples.lowerBound == nextSample else {
                    return "\(name) starts at sample \(part.samples.lowerBound), not \(nextSample): "
                        + (index == 0 ? "the first row starts at sample 0" : "each row starts right after the one before it")
                }
                guard part.samples.upperBound < samples else {
                    return "\(name) ends at sample \(part.samples.upperBound), past the file's last (\(samples - 1))"
                }
                guard part.bytes.lowerBound >= 0, part.bytes.upperBound < bytes else {
                    return "\(name): bytes \(part.bytes.lowerBound)-\(part.bytes.upperBound) are not within the file's \(bytes)"
                }
                guard (0...SurahTable.maximumSkip(firstSample: part.samples.lowerBound)).contains(part.skip) else {
                    return "\(name): skip \(part.skip) is not from 0 to \(SurahTable.maximumSkip(firstSample: part.samples.lowerBound)) "
                        + "(what a decode from the file's first frame has before sample \(part.samples.lowerBound), delays included)"
                }
                nextSample = part.samples.upperBound + 1
            }
            guard complete else { return nil }
            guard parts.count == count + (hasBasmala ? 1 : 0) else {
                return "surah \(surah) lists \(parts.count - (hasBasmala ? 1 : 0)) of its \(count) ayat: a surah in the table has all of them"
            }
            guard nextSample == samples else {
                return "the last ayah of surah \(surah) ends at sample \(nextSample - 1), not the file's last (\(samples - 1))"
            }
            return nil
        }
    }

    public let reciter: ReciterID
    /// Free text saying where the files came from.
    public let source: String
    /// The files, in surah order, one per surah at most.
    public let files: [File]
    /// Where each surah's file came from, in a learned table (`# source of surah N: text` after its `file` row):
    /// how it was learned, and from which mirrors. A learned table's `# source:` is these, each once.
    public let surahSources: [Int: String]

    /// `files` must each have no `problem()` and be in surah order, one per surah.
    public init(reciter: ReciterID, source: String, files: [File], surahSources: [Int: String] = [:]) {
        self.reciter = reciter
        self.source = source
        self.files = files.sorted { $0.surah < $1.surah }
        self.surahSources = surahSources
    }

    /// A learned table of `files` with each surah's source (`surahSources`, one line each: a line break in one is a
    /// space); its `# source:` is the sources, each once, in order, joined by ` | `.
    public static func learned(reciter: ReciterID, files: [File], surahSources: [Int: String]) -> SurahTable {
        let surahs = Set(files.map(\.surah))
        var sources: [Int: String] = [:]
        for (surah, text) in surahSources where surahs.contains(surah) {
            sources[surah] = String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
        }
        return SurahTable(reciter: reciter, source: Set(sources.values).sorted().joined(separator: " | "), files: files, surahSources: sources)
    }

    /// Surah `surah`'s file, or nil when the table does not cover it.
    public func file(surah: Int) -> File? {
        var low = 0
        var high = files.count
        while low < high {
            let middle = (low + high) / 2
            if files[middle].surah < surah { low = middle + 1 } else { high = middle }
        }
        return low < files.count && files[low].surah == surah ? files[low] : nil
    }

    /// The part that is `ayah`, or nil when its surah is not covered.
    public func part(for ayah: AyahRef) -> Part? { file(surah: ayah.surah)?.part(ayah: ayah.ayah) }

    /// How many of the 6236 ayat are covered.
    public var coverage: Int { files.reduce(0) { $0 + Catalog.surahs[$1.surah - 1].ayahCount } }

    // MARK: - Playing

    /// The table as the player, the cache and the downloader use it: each part under its file key (the ayah, or
    /// `AyahRef.basmalaPart(ofSurah:)`), pinned as a file of its own — its byte range's size and SHA-256, its
    /// samples and rate — with the byte range to ask the surah's file for and the samples its decode keeps.
    public func playableParts() -> PlayableParts {
        var pinned: [AyahRef: PinnedFile] = [:]
        var windows: [AyahRef: SampleWindow] = [:]
        var byteRanges: [AyahRef: ClosedRange<Int>] = [:]
        var surahFiles: [Int: PinnedFile] = [:]
        for file in files {
            surahFiles[file.surah] = PinnedFile(bytes: file.bytes, digest: file.digest, samples: file.samples, sampleRate: file.sampleRate)
            for part in file.parts {
                let key = part.ayah == 0 ? AyahRef.basmalaPart(ofSurah: file.surah) : AyahRef(unchecked: file.surah, part.ayah)
                pinned[key] = PinnedFile(bytes: part.bytes.count, digest: part.digest, samples: part.sampleCount, sampleRate: file.sampleRate)
                windows[key] = SampleWindow(skip: part.skip, count: part.sampleCount)
                byteRanges[key] = part.bytes
            }
        }
        return PlayableParts(
            pinned: ReciterTable(reciter: reciter, source: source, files: pinned), windows: windows, byteRanges: byteRanges,
            surahFiles: surahFiles)
    }

    // MARK: - Format

    /// The number after `# tartil-table:` on the first line of `bytes`, or nil when the first line is not such
    /// a header: says whether a table file is a per-ayah table (1) or a surah table (2) before either is parsed.
    public static func formatVersion(of bytes: some Collection<UInt8>) -> Int? {
        let line = bytes.prefix(while: { $0 != UInt8(ascii: "\n") }).prefix(64)
        let text = String(decoding: line, as: UTF8.self).trimmedWhitespace
        guard text.hasPrefix("#") else { return nil }
        let comment = text.dropFirst().trimmedWhitespace
        guard comment.hasPrefix("tartil-table:") else { return nil }
        return NumberText.whole(comment.dropFirst("tartil-table:".count).trimmedWhitespace, in: 0...999_999)
    }

    // MARK: - Parsing

    /// A table read as far as it can be (a learned table damaged by hand or by a disk): as `parse` reads it when
    /// it is whole; otherwise each surah's rows (its `file` row and the rows up to the next) are read alone under
    /// the header, and the surahs whose rows read are kept (a surah listed twice: its first rows). `problem` is
    /// why the whole did not read (`parse`'s error, with its line), nil when it did; `table` is nil when not even
    /// the header reads.
    public static func salvaged(bytes: [UInt8], file: String, expected: ReciterID? = nil) -> (table: SurahTable?, problem: String?) {
        let problem: String
        do throws(TartilError) { return (try parse(bytes: bytes, file: file, expected: expected), nil) } catch { problem = error.message }
        var header: [UInt8] = []
        var blocks: [[UInt8]] = []
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let startsSurah = line.starts(with: "file".utf8) && line.count > 4 && (line[line.startIndex + 4] == UInt8(ascii: "\t") || line[line.startIndex + 4] == UInt8(ascii: " "))
            if startsSurah {
                blocks.append(Array(line) + [UInt8(ascii: "\n")])
            } else if blocks.isEmpty {
                header += line + [UInt8(ascii: "\n")]
            } else {
                blocks[blocks.count - 1] += line + [UInt8(ascii: "\n")]
            }
        }
        guard let empty = try? parse(bytes: header, file: file, expected: expected) else { return (nil, problem) }
        var files: [File] = []
        var sources: [Int: String] = [:]
        for block in blocks {
            guard let read = try? parse(bytes: header + block, file: file, expected: expected) else { continue }
            for surah in read.files where !files.contains(where: { $0.surah == surah.surah }) {
                files.append(surah)
                sources[surah.surah] = read.surahSources[surah.surah]
            }
        }
        return (
            SurahTable(reciter: empty.reciter, source: empty.source, files: files.sorted { $0.surah < $1.surah }, surahSources: sources), problem
        )
    }

    /// Parses a surah table. `file` names the source in errors, which give the line: `x.tsv:7: sha256: …`. When
    /// `expected` is given, the header's reciter must be it.
    public static func parse(bytes: [UInt8], file: String, expected: ReciterID? = nil) throws(TartilError) -> SurahTable {
        var header = TableHeader()
        var files: [File] = []
        /// The surah whose rows are being read: its file row, the line it is on, its parts so far.
        var current: (file: File, line: Int, parts: [Part])?
        var surahSources: [Int: String] = [:]
        var lineOfSurah = [Int](repeating: 0, count: Catalog.surahCount + 1)
        var lineNumber = 0
        func finish() throws(TartilError) {
            guard let open = current else { return }
            current = nil
            let whole = File(
                surah: open.file.surah, bytes: open.file.bytes, digest: open.file.digest, samples: open.file.samples,
                sampleRate: open.file.sampleRate, parts: open.parts)
            if let problem = whole.problem() {
                throw TartilError(.invalidData, "\(file):\(open.line): \(problem)")
            }
            files.append(whole)
        }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        if lines.last?.isEmpty == true { lines.removeLast() }
        for rawLine in lines {
            lineNumber += 1
            var line = rawLine
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            func fail(_ problem: String) -> TartilError { TartilError(.invalidData, "\(file):\(lineNumber): \(problem)") }
            guard let first = line.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { continue }
            if first == UInt8(ascii: "#") {
                let comment = String(decoding: line, as: UTF8.self).trimmedWhitespace.dropFirst().trimmedWhitespace
                // `# source of surah N: text` among surah N's rows, the first such (any other is a comment like any
                // other: a line moved by hand never gives a surah another's source, nor costs it its rows)
                let rest = comment.dropFirst(Self.surahSourcePrefix.count)
                if comment.hasPrefix(Self.surahSourcePrefix), let colon = rest.firstIndex(of: ":"),
                    let surah = NumberText.whole(rest[..<colon], in: 1...Catalog.surahCount), current?.file.surah == surah,
                    surahSources[surah] == nil
                {
                    surahSources[surah] = String(rest[rest.index(after: colon)...]).trimmedWhitespace
                    continue
                }
                try header.read(
                    comment: String(decoding: line, as: UTF8.self), isFirstLine: lineNumber == 1, formatVersion: formatVersion,
                    wrongVersion: { "format '\($0)' is not a surah table (this build reads surah tables as tartil-table: \(formatVersion))" },
                    fail: fail)
                continue
            }
            try header.checkBeforeRow(formatVersion: formatVersion, fail: fail)
            let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            func text(_ index: Int) -> String { String(decoding: fields[index], as: UTF8.self) }
            for index in fields.indices where fields[index].isEmpty || fields[index].contains(UInt8(ascii: " ")) {
                throw fail("field \(index + 1) ('\(text(index))') is empty or has blanks in it: fields are separated by exactly one tab")
            }
            /// A whole number in plain decimal: digits only, no leading zero, at most 12 digits.
            func number(_ index: Int, _ name: String) throws(TartilError) -> Int {
                let field = fields[index]
                let canonical = field.count <= 12 && (field.count == 1 || field.first != UInt8(ascii: "0"))
                    && field.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                guard canonical else { throw fail("\(name): '\(text(index))' is not a whole number written in plain decimal (digits, no leading zero)") }
                return field.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            }
            func digest(_ index: Int) throws(TartilError) -> SHA256Digest {
                guard let digest = SHA256Digest(hex: String(decoding: fields[index], as: UTF8.self)) else {
                    throw fail("sha256: '\(text(index))' is not 64 lowercase hex digits")
                }
                return digest
            }
            switch text(0) {
            case "file":
                guard fields.count == 6 else {
                    throw fail("a file row has 6 tab-separated fields (file surah bytes sha256 samples rate), found \(fields.count)")
                }
                try finish()
                let surah = try number(1, "surah")
                guard (1...Catalog.surahCount).contains(surah) else { throw fail("surah \(surah) does not exist (1-\(Catalog.surahCount))") }
                if lineOfSurah[surah] > 0 { throw fail("surah \(surah) is listed twice (first on line \(lineOfSurah[surah]))") }
                lineOfSurah[surah] = lineNumber
                let row = File(
                    surah: surah, bytes: try number(2, "bytes"), digest: try digest(3), samples: try number(4, "samples"),
                    sampleRate: try number(5, "rate"), parts: [])
                // The file's own fields are checked now (its parts when the next file row or the end comes).
                if let problem = row.problem(complete: false) { throw fail(problem) }
                current = (row, lineNumber, [])
            case "ayah":
                guard fields.count == 9 else {
                    throw fail(
                        "an ayah row has 9 tab-separated fields (ayah surah ayah first_sample last_sample first_byte last_byte skip sha256), found \(fields.count)")
                }
                let surah = try number(1, "surah")
                guard let open = current, open.file.surah == surah else {
                    throw fail("an ayah row of surah \(surah) must follow that surah's file row")
                }
                let ayah = try number(2, "ayah")
                let firstSample = try number(3, "first_sample")
                let lastSample = try number(4, "last_sample")
                guard firstSample <= lastSample else { throw fail("first_sample \(firstSample) is after last_sample \(lastSample)") }
                let firstByte = try number(5, "first_byte")
                let lastByte = try number(6, "last_byte")
                guard firstByte <= lastByte else { throw fail("first_byte \(firstByte) is after last_byte \(lastByte)") }
                let part = Part(
                    ayah: ayah, samples: firstSample...lastSample, bytes: firstByte...lastByte, skip: try number(7, "skip"),
                    digest: try digest(8))
                current!.parts.append(part)
                // Each row is checked as it comes, so the error names its line.
                let partial = File(
                    surah: surah, bytes: open.file.bytes, digest: open.file.digest, samples: open.file.samples, sampleRate: open.file.sampleRate,
                    parts: current!.parts)
                if let problem = partial.problem(complete: false) { throw fail(problem) }
            default:
                throw fail("a row starts with 'file' or 'ayah', not '\(text(0))'")
            }
        }
        let reciter = try header.checkedReciter(file: file, formatVersion: formatVersion, expected: expected)
        try finish()
        return SurahTable(
            reciter: reciter, source: header.source ?? "", files: files,
            surahSources: surahSources.filter { surah in files.contains { $0.surah == surah.key } })
    }

    /// The comment that says where one surah's file came from, after its `file` row (a learned table's).
    static let surahSourcePrefix = "source of surah "

    // MARK: - Writing

    /// The table as text, in surah order; `parse(rendered())` gives the table back.
    public func rendered() -> String {
        var text = "# tartil-table: \(Self.formatVersion)\n# reciter: \(reciter)\n"
        if !source.isEmpty { text += "# source: \(source)\n" }
        text += "# columns: file surah bytes sha256 samples rate (samples: PCM frames mpg123 decodes from the whole file, gapless)\n"
        text += "# columns: ayah surah ayah first_sample last_sample first_byte last_byte skip sha256 (ayah 0: the basmala; inclusive ranges)\n"
        for file in files {
            text += "file\t\(file.surah)\t\(file.bytes)\t\(file.digest)\t\(file.samples)\t\(file.sampleRate)\n"
            if let source = surahSources[file.surah] { text += "# \(Self.surahSourcePrefix)\(file.surah): \(source)\n" }
            for part in file.parts {
                text += "ayah\t\(file.surah)\t\(part.ayah)\t\(part.samples.lowerBound)\t\(part.samples.upperBound)\t"
                text += "\(part.bytes.lowerBound)\t\(part.bytes.upperBound)\t\(part.skip)\t\(part.digest)\n"
            }
        }
        return text
    }
}

/// The samples a part keeps of its byte range's decode: `skip` PCM frames dropped, then `count` played.
public struct SampleWindow: Sendable, Hashable {
    public let skip: Int
    public let count: Int

    public init(skip: Int, count: Int) {
        self.skip = skip
        self.count = count
    }
}

/// A surah table as the player uses it (`SurahTable.playableParts()`).
public struct PlayableParts: Sendable {
    /// Each part as a pinned file: its byte range's size and SHA-256, its samples (the window's) and rate.
    public let pinned: ReciterTable
    /// What each part's decode keeps.
    public let windows: [AyahRef: SampleWindow]
    /// The bytes of the surah's file each part is (an HTTP range request's).
    public let byteRanges: [AyahRef: ClosedRange<Int>]
    /// Each surah's whole file (its size, SHA-256, samples and rate): what `prefetch` checks a surah fetched
    /// whole against before cutting it into parts (`SurahFetch`).
    public let surahFiles: [Int: PinnedFile]
    /// The surahs whose rows were learned on first use (`SurahLearning`) rather than pinned by a table of the
    /// tables folder: a part of one that its mirrors no longer serve is met with how to learn it again.
    public var learnedSurahs: Set<Int> = []

    /// Where the row of `ayah`'s part comes from, as a mismatch names it: `table`, or for a learned surah that it
    /// was learned and how to learn it again (its mirrors may have replaced the file since).
    public func rowSource(of ayah: AyahRef) -> String {
        Self.rowSource(ofSurah: ayah.surah, reciter: pinned.reciter, learned: learnedSurahs.contains(ayah.surah))
    }

    /// `rowSource(of:)` for a part (or the whole file) of `reciter`'s `surah`, which was `learned` (or not).
    public static func rowSource(ofSurah surah: Int, reciter: ReciterID, learned: Bool) -> String {
        guard learned else { return "table" }
        return "learned from its mirrors: if they have replaced surah \(surah)'s file since, `tartil table relearn \(surah) --reciter \(reciter)` learns it again"
    }

    /// These parts with `other`'s added (a surah learned while playing): `other`'s rows win for a surah both have.
    public func adding(_ other: PlayableParts) -> PlayableParts {
        var files = PinnedFiles()
        for (ayah, file) in pinned.files where other.surahFiles[ayah.surah] == nil { files.append(ayah, file) }
        for (ayah, file) in other.pinned.files { files.append(ayah, file) }
        let kept = { (ayah: AyahRef) in other.surahFiles[ayah.surah] == nil }
        var joined = PlayableParts(
            pinned: ReciterTable(reciter: pinned.reciter, source: pinned.source, files: files),
            windows: windows.filter { kept($0.key) }.merging(other.windows) { _, new in new },
            byteRanges: byteRanges.filter { kept($0.key) }.merging(other.byteRanges) { _, new in new },
            surahFiles: surahFiles.merging(other.surahFiles) { _, new in new })
        joined.learnedSurahs = learnedSurahs.subtracting(other.surahFiles.keys).union(other.learnedSurahs)
        return joined
    }
}

/// The words of a learned surah's source line (`SurahTable.surahSources`), as `SurahLearning` writes them:
/// `trusted on first use: NAME, single-source`, `trusted on first use: NAME, cross-checked with …`, `chosen: NAME`,
/// each followed by `; timings from …`.
public enum LearnedSource {
    /// The mirror a source line says the file was trusted from on first use, by the name it had then (a name may
    /// hold commas: it ends where `, single-source` or `, cross-checked with ` begins); nil for a line of another
    /// shape.
    public static func firstUseMirror(_ source: String) -> String? {
        let prefix = "trusted on first use: "
        guard source.hasPrefix(prefix) else { return nil }
        let rest = source.dropFirst(prefix.count)
        let ends = [", single-source", ", cross-checked with "].compactMap { rest.firstRange(ofText: $0)?.lowerBound }
        guard let end = ends.min(), end > rest.startIndex else { return nil }
        return String(rest[..<end])
    }
}
