import Glibc
import TartilCore
import TartilPlayer
import TartilSystem

/// The reciters tartil knows (from `mirrors.json`) with their tables, and what a reference means for one of
/// them: each ayah's download URLs and, where the table pins it, its size, hash and exact sample count.
public struct ReciterLibrary: Sendable {
    /// Where `mirrors.json` was read from.
    public let mirrorsFile: String
    /// Directories searched, in order, for `<id>.tsv`.
    public let tableDirectories: [String]
    public let mirrorList: MirrorList
    /// The cache directory, where the rows learned for surah-file reciters are kept (`SurahLearning`); nil: none.
    public let learnedDirectory: String?

    /// Reads and validates `mirrorsFile`.
    public init(mirrorsFile: String, tableDirectories: [String], learnedDirectory: String? = nil) throws(TartilError) {
        self.mirrorsFile = mirrorsFile
        self.tableDirectories = tableDirectories
        self.learnedDirectory = learnedDirectory
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(mirrorsFile)
        } catch where error.code == .notFound {
            throw TartilError(.notFound, "\(mirrorsFile) does not exist (pass --mirrors FILE or set TARTIL_MIRRORS)")
        }
        mirrorList = try MirrorList.parse(bytes: bytes, file: mirrorsFile)
    }

    public var reciters: [Reciter] { mirrorList.reciters }

    public func reciter(_ id: ReciterID) throws(TartilError) -> Reciter { try mirrorList.reciter(id) }

    /// The reciter a person means by `text` (any case, a unique prefix, words of the name): see
    /// `MirrorList.reciter(named:)`.
    public func reciter(named text: String) throws(TartilError) -> Reciter { try mirrorList.reciter(named: text) }

    /// The path of `reciter`'s table: the first directory that holds its table file, or nil.
    public func tablePath(for reciter: Reciter) -> String? {
        tableDirectories.lazy
            .map { Path.join($0, reciter.tableFile) }
            .first { FileSystem.exists($0) }
    }

    /// `reciter`'s table, or nil when it has none (every ayah is then unpinned). For a reciter of one file per
    /// surah, its surah table's parts, each pinned as the file the cache keeps for it (`SurahTable.playableParts`):
    /// what the cache checks its files against. With `surahs`, a per-ayah table pins those surahs' ayat alone
    /// (`ReciterTable.parse(bytes:file:expected:surahs:)`): for a play of them, nothing else.
    public func table(for reciter: Reciter, surahs: [Int]? = nil) throws(TartilError) -> ReciterTable? {
        if reciter.files == .surah { return try parts(for: reciter)?.pinned }
        guard let path = tablePath(for: reciter) else { return nil }
        return try ReciterTable.parse(bytes: try FileSystem.read(path), file: path, expected: reciter.id, surahs: surahs)
    }

    /// The parts of a surah-file reciter's surah table (nil: a per-ayah reciter, or no table).
    public func parts(for reciter: Reciter) throws(TartilError) -> PlayableParts? {
        let (table, learned) = try surahTableAndLearned(for: reciter)
        guard var parts = table?.playableParts() else { return nil }
        parts.learnedSurahs = learned
        return parts
    }

    /// What playing, prefetching or resolving `reciter`'s ayat stands on: its per-ayah table (nil: every ayah
    /// unpinned), or, for a reciter of one file per surah, its surah table's parts (`table` is then their pinned
    /// view; `playableParts(for:)`). The one place
    /// `play`, `render`, `prefetch` and `resolve` get it. With `surahs`, the per-ayah table pins only their ayat
    /// (see `table(for:surahs:)`).
    public func playbackSource(
        for reciter: Reciter, surahs: [Int]? = nil
    ) throws(TartilError) -> (table: ReciterTable?, parts: PlayableParts?) {
        guard reciter.files == .surah else { return (try table(for: reciter, surahs: surahs), nil) }
        let parts = try playableParts(for: reciter)
        return (parts.pinned, parts)
    }

    /// The surah table of a reciter of one file per surah: its pinned table (format 2, in the table directories),
    /// with the surahs learned on first use (`SurahLearning`) that it does not cover; nil when there is neither.
    public func surahTable(for reciter: Reciter) throws(TartilError) -> SurahTable? { try surahTableAndLearned(for: reciter).table }

    /// The surahs of `reciter`'s surah table that a table in the tables folder pins (not learned ones).
    public func pinnedSurahs(for reciter: Reciter) throws(TartilError) -> Set<Int> {
        guard reciter.files == .surah else { return [] }
        return Set(try pinnedSurahTable(for: reciter)?.files.map(\.surah) ?? [])
    }

    /// `surahTable(for:)`, and which of its surahs were learned rather than pinned.
    private func surahTableAndLearned(for reciter: Reciter) throws(TartilError) -> (table: SurahTable?, learned: Set<Int>) {
        guard reciter.files == .surah else { return (nil, []) }
        let pinned = try pinnedSurahTable(for: reciter)
        guard let learnedDirectory, let learned = SurahLearning.learnedTable(cacheDirectory: learnedDirectory, reciter: reciter.id) else {
            return (pinned, [])
        }
        guard let pinned else { return (learned, Set(learned.files.map(\.surah))) }
        let covered = Set(pinned.files.map(\.surah))
        let added = learned.files.filter { !covered.contains($0.surah) }
        return (SurahTable(reciter: reciter.id, source: pinned.source, files: pinned.files + added), Set(added.map(\.surah)))
    }

    /// The surahs `reciter` (of one file per surah) has no rows for yet, of `surahs`.
    public func unlearnedSurahs(_ surahs: [Int], for reciter: Reciter) throws(TartilError) -> [Int] {
        guard reciter.files == .surah else { return [] }
        let covered = Set(try surahTable(for: reciter)?.files.map(\.surah) ?? [])
        return Array(Set(surahs).subtracting(covered)).sorted()
    }

    /// The pinned surah table (format 2) of a reciter of one file per surah, or nil when none is in the table
    /// directories. A per-ayah table (format 1) at its name is refused.
    private func pinnedSurahTable(for reciter: Reciter) throws(TartilError) -> SurahTable? {
        guard let path = tablePath(for: reciter) else { return nil }
        let bytes = try FileSystem.read(path)
        if let version = SurahTable.formatVersion(of: bytes), version == ReciterTable.formatVersion {
            throw TartilError(
                .invalidData,
                "\(path) is a per-ayah table (tartil-table: 1), but \(reciter.id) is recorded as one file per surah: its table is a surah table (tartil-table: 2, made by `tartil table build DIR --timings-format …`)")
        }
        return try SurahTable.parse(bytes: bytes, file: path, expected: reciter.id)
    }

    /// What playing, fetching or resolving a reciter of one file per surah stands on: its surah table's parts
    /// (pinned and learned). With no table, a reciter that publishes timings has none yet (its surahs are learned
    /// when played or fetched); one that does not is a usage error.
    public func playableParts(for reciter: Reciter) throws(TartilError) -> PlayableParts {
        if let parts = try parts(for: reciter) { return parts }
        guard reciter.timings == nil else { return SurahTable(reciter: reciter.id, source: "", files: []).playableParts() }
        throw .usage(
            "\(reciter.id) is recorded as one file per surah and has no surah table (\(reciter.tableFile) in \(tableDirectories.joined(separator: ", "))) and no published timings (\"timings\" in mirrors.json) to learn its surahs from: make a table with `tartil table build DIR --timings-format quranstatic|mp3quran`")
    }

    /// Each ayah of `references` (in order, each once) with its URLs and pinned facts (for a reciter of one file
    /// per surah: its surah's file's URLs, and the byte range of it that the ayah is).
    public func resolve(_ references: [Reference], reciter id: ReciterID) throws(TartilError) -> Resolution {
        let reciter = try reciter(id)
        let (table, parts) = try playbackSource(for: reciter)
        let ayat = ReferenceParser.uniqueAyat(of: references).map { ayah in
            ResolvedAyah(
                ayah: ayah, urls: reciter.mirrors.map { $0.template.url(for: ayah) }, pinned: table?.files[ayah],
                byteRange: parts?.byteRanges[ayah])
        }
        return Resolution(reciter: reciter, ayat: ayat)
    }
}

/// One ayah of a resolved reference.
public struct ResolvedAyah: Sendable, Hashable {
    public let ayah: AyahRef
    /// One URL per mirror, in the reciter's order of preference.
    public let urls: [String]
    /// What the table pins, or nil when the ayah is unpinned.
    public let pinned: PinnedFile?
    /// For a reciter of one file per surah: the bytes of the surah's file (at `urls`) that are this ayah.
    public var byteRange: ClosedRange<Int>? = nil
}

/// The outcome of resolving references for one reciter.
public struct Resolution: Sendable {
    public let reciter: Reciter
    public let ayat: [ResolvedAyah]
    /// Lengths of unpinned ayat learned without their tables (`UnpinnedLengths`: `resolve --lengths`).
    public var lengths: [AyahRef: Timeline.Length] = [:]

    public init(reciter: Reciter, ayat: [ResolvedAyah]) {
        self.reciter = reciter
        self.ayat = ayat
    }

    /// Total duration of the unpinned ayat whose lengths are known, in seconds, and whether any is an estimate.
    public var unpinnedSeconds: (seconds: Double, estimated: Int, known: Int) {
        let known = ayat.filter { $0.pinned == nil }.compactMap { lengths[$0.ayah] }
        return (known.reduce(0) { $0 + $1.seconds }, known.filter(\.isEstimated).count, known.count)
    }

    /// Total duration of the pinned ayat, in seconds (each ayah's samples over its rate).
    public var pinnedSeconds: Double { ayat.compactMap(\.pinned).reduce(0) { $0 + $1.seconds } }
    /// Total size of the pinned ayat, in bytes.
    public var pinnedBytes: Int { ayat.compactMap(\.pinned).reduce(0) { $0 + $1.bytes } }
    /// How many ayat have no table row (their size and duration are unknown until downloaded).
    public var unpinnedCount: Int { ayat.filter { $0.pinned == nil }.count }
}
