import FoundationEssentials
import Glibc
import TartilCore
import TartilSystem

/// The reciters tartil knows (from `mirrors.json`) with their tables, and what a reference means for one of
/// them: each ayah's download URLs and, where the table pins it, its size, hash and exact sample count.
public struct ReciterLibrary: Sendable {
    /// Where `mirrors.json` was read from.
    public let mirrorsFile: String
    /// Directories searched, in order, for `<id>.tsv`.
    public let tableDirectories: [String]
    public let mirrorList: MirrorList

    /// Reads and validates `mirrorsFile`.
    public init(mirrorsFile: String, tableDirectories: [String]) throws(TartilError) {
        self.mirrorsFile = mirrorsFile
        self.tableDirectories = tableDirectories
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

    /// `reciter`'s table, or nil when it has none (every ayah is then unpinned) or when the reciter's files are
    /// whole surahs (their tables are another format, not a per-ayah table).
    public func table(for reciter: Reciter) throws(TartilError) -> ReciterTable? {
        guard reciter.files == .ayah, let path = tablePath(for: reciter) else { return nil }
        return try ReciterTable.parse(bytes: try FileSystem.read(path), file: path, expected: reciter.id)
    }

    /// `reciter`'s table for playing, rendering, prefetching or resolving its ayat (`table(for:)`), after refusing
    /// (a usage error) a reciter whose files are whole surahs: this build cannot do those for one yet. The one
    /// place `play`, `render`, `prefetch` and `resolve` check it.
    public func playableTable(for reciter: Reciter) throws(TartilError) -> ReciterTable? {
        guard reciter.files == .ayah else {
            throw .usage(
                "\(reciter.id) is recorded as one file per surah (\"files\": \"surah\" in \(mirrorsFile)): this build cannot play, render, prefetch or resolve surah files yet; choose a reciter of one file per ayah (`tartil reciters` lists them)")
        }
        return try table(for: reciter)
    }

    /// Each ayah of `references` (in order, each once) with its URLs and pinned facts.
    public func resolve(_ references: [Reference], reciter id: ReciterID) throws(TartilError) -> Resolution {
        let reciter = try reciter(id)
        let table = try playableTable(for: reciter)
        let ayat = ReferenceParser.uniqueAyat(of: references).map { ayah in
            ResolvedAyah(
                ayah: ayah, urls: reciter.mirrors.map { $0.template.url(for: ayah) }, pinned: table?.files[ayah])
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
