import CSystem
import Glibc
import TartilCore
import TartilSystem

/// The verified disk cache: `<directory>/<reciter>/<SSSAAA>.mp3`, temporary `.part` files beside them, and the
/// index (`<directory>/index.sqlite`). A file with a final name was verified when it was written, and every
/// read verifies it again before a byte is used.
///
/// The cache's root is resolved once, when it is opened (it may be a symbolic link: a cache on another disk);
/// everything below it is reached relative to folder descriptors with `O_NOFOLLOW` (`CacheFolder`). A symbolic
/// link where a cached file, a partial file, a lock or a reciter's folder should be is never followed: tartil's
/// own partial files and locks are removed, anything else is refused with `.symbolicLink`.
///
/// An instance owns an index connection and is confined to one thread; each thread that needs the cache opens
/// its own instance (they coordinate through SQLite and file locks, like separate processes do).
public final class Cache {
    public let directory: String
    /// The root, open.
    let root: CacheFolder
    /// The index's path, opened on first use (`index`): playing a pinned file from the cache needs no index before
    /// its first sample, only an access time written after.
    private let indexPath: String
    private let clock: any TartilClock
    private var openedIndex: CacheIndex?
    /// Reciters' folders and lock files this instance has opened, kept open: a prefetch asks for its reciter's
    /// folder and lock file at every file, and one `fstatat` of the name (is it still the folder or file that
    /// was opened?) replaces making, opening and closing them again.
    private var keptFolders: [String: CacheFolder] = [:]
    private var keptLockFiles: [String: LockFile] = [:]

    /// Opens the index now (a no-op when it is open): for a caller that writes to the cache, so that an index that
    /// cannot be opened fails at its start, before anything is downloaded, not at the first commit.
    public func openIndex() throws(CacheError) { _ = try index }

    /// The index, opened (created or migrated as needed) the first time it is needed.
    var index: CacheIndex {
        get throws(CacheError) {
            if let openedIndex { return openedIndex }
            let opened = try CacheIndex(path: indexPath, clock: clock)
            openedIndex = opened
            return opened
        }
    }
    /// Called with each final path just before a committed file gets its name (for tests).
    var willPublish: ((String) -> Void)?

    /// Opens (creating when needed) the cache at `directory`. Files' access times (for eviction) come from
    /// `clock`'s wall time.
    public init(directory: String, clock: any TartilClock = SystemClock.shared) throws(CacheError) {
        self.directory = directory
        do {
            try FileSystem.createDirectories(directory)
        } catch {
            throw CacheError(.io, "cannot create the cache directory \(directory): \(error.cause ?? error.message)")
        }
        // The root is resolved once, here; the index is opened by its resolved path, the rest through `root`.
        let resolved = realpath(directory, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? directory
        root = try CacheFolder(root: resolved, shownAs: directory)
        // SQLite opens its files by name: they must not be links (SQLite would write through them).
        for name in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] where root.isSymbolicLink(name) {
            throw CacheError.symbolicLink(Path.join(directory, name), what: "its index")
        }
        indexPath = Path.join(resolved, "index.sqlite")
        self.clock = clock
    }

    /// A reciter's folder, open (created when `create`); a link at its name is refused. Nil when it does not
    /// exist and `create` is false.
    /// The folder is kept open for the next call, which gives it back while the name still leads to it.
    func folder(_ reciter: String, create: Bool) throws(CacheError) -> CacheFolder? {
        if let kept = keptFolders[reciter] {
            if kept.isAt(reciter, in: root) { return kept }
            keptFolders[reciter] = nil  // removed or replaced since: opened (or made) again, as if never kept
        }
        let opened: CacheFolder
        do {
            opened = try CacheFolder(reciter, in: root, create: create)
        } catch where error.code == .io && !create && root.status(reciter) == nil {
            return nil
        }
        keptFolders[reciter] = opened
        return opened
    }

    /// The lock file `name` of the root, opened (created when needed) or kept open from an earlier call while the
    /// name still leads to it (and no unlock through it failed: `LockFile.isUsable`).
    func lockFile(_ name: String) throws(CacheError) -> LockFile {
        if let kept = keptLockFiles[name], kept.isUsable(as: name, in: root) { return kept }
        let opened = try LockFile(name, in: root)
        keptLockFiles[name] = opened
        return opened
    }

    /// The final path of an ayah's file.
    public func path(reciter: ReciterID, ayah: AyahRef) -> String {
        "\(directory)/\(reciter.rawValue)/\(ayah.fileStem).mp3"
    }

    /// What the file must be: the table's row when pinned, else the hash recorded on its first download, else
    /// only `unpinnedLimit` bytes at most.
    public func expectation(
        reciter: ReciterID, ayah: AyahRef, pinned: PinnedFile?, pinnedSource: String = "table", unpinnedLimit: Int
    ) throws(CacheError) -> FileExpectation {
        if let pinned { return .pinned(pinned, source: pinnedSource) }
        if let entry = try index.entry(reciter: reciter.rawValue, ayah: ayah) {
            // Kept by an older tartil although its mirrors disagreed: not vouched for, so it goes and is
            // downloaded and compared again.
            if entry.mark == .disputed {
                try remove(reciter: reciter, ayah: ayah)
                return .unknown(maxBytes: unpinnedLimit)
            }
            return .recorded(bytes: entry.bytes, sha256: entry.sha256)
        }
        return .unknown(maxBytes: unpinnedLimit)
    }

    // MARK: - Writing

    /// Starts (or resumes) writing an ayah's file.
    public func writer(reciter: ReciterID, ayah: AyahRef, expectation: FileExpectation) throws(CacheError)
        -> CacheWriter
    {
        try CacheWriter(
            folder: try folder(reciter.rawValue, create: true)!, finalName: "\(ayah.fileStem).mp3",
            lockFile: try lockFile(".\(reciter.rawValue).lock"), lockKey: ayah.surah * 1000 + ayah.ayah, expectation: expectation)
    }

    /// A finished download waiting to be committed.
    public struct PendingFile {
        public let writer: CacheWriter
        public let reciter: ReciterID
        public let ayah: AyahRef
        /// What the cross-check found (unpinned files), recorded with the hash.
        public let mark: SourceMark?
        /// Where it came from (a mirror's name), recorded with the hash.
        public let source: String?

        public init(writer: CacheWriter, reciter: ReciterID, ayah: AyahRef, mark: SourceMark? = nil, source: String? = nil) {
            self.writer = writer
            self.reciter = reciter
            self.ayah = ayah
            self.mark = mark
            self.source = source
        }
    }

    /// Finishes `writer` (see `CacheWriter.finish`), fsyncs its directory and records the file in the index.
    public func commit(
        _ writer: CacheWriter, reciter: ReciterID, ayah: AyahRef, source: String? = nil, validate: (String) throws -> AudioLength?
    ) throws(CacheError) {
        let file = PendingFile(writer: writer, reciter: reciter, ayah: ayah, source: source)
        if case .failure(let error) = try commit([file], validate: validate)[0] {
            throw error
        }
    }

    /// Group commit: checks every file (size, hash, audio), makes the good ones durable — one `syncfs` for a
    /// batch of four or more (one device flush instead of one per file), `fdatasync` each otherwise — renames
    /// them to their final names, fsyncs each directory touched once, and records them in the index in one
    /// transaction. Returns each file's outcome in order; only the directory sync and the index failing throw.
    /// `validate` checks a file whose hash is not known, and the length it returns is remembered in the index.
    public func commit(_ files: [PendingFile], validate: (String) throws -> AudioLength?) throws(CacheError)
        -> [Result<(bytes: Int, sha256: String, length: AudioLength?), CacheError>]
    {
        var results = files.map { file -> Result<(bytes: Int, sha256: String, length: AudioLength?), CacheError> in
            do throws(CacheError) { return .success(try file.writer.check(validate: validate)) } catch { return .failure(error) }
        }
        let good = results.indices.filter { if case .success = results[$0] { true } else { false } }
        if good.count >= 4 {
            if csystem_syncfs(files[good[0]].writer.openDescriptor) != 0 {
                let error = CacheError.system("syncfs", path: directory)
                for index in good { files[index].writer.abandon(keepPartial: true); results[index] = .failure(error) }
            }
        } else {
            for index in good {
                do throws(CacheError) { try files[index].writer.syncData() } catch {
                    files[index].writer.abandon(keepPartial: true)
                    results[index] = .failure(error)
                }
            }
        }
        // The hashes are recorded before any name appears: a reader that finds a file at its final name finds its
        // hash too (it looks in the index after opening the file), and never takes a fresh file for one that
        // nothing vouches for.
        let publishing = files.indices.filter { if case .success = results[$0] { true } else { false } }
        try index.record(publishing.map { index in
            guard case .success(let finished) = results[index] else { preconditionFailure() }
            let file = files[index]
            return CacheIndex.Record(
                reciter: file.reciter.rawValue, ayah: file.ayah, bytes: finished.bytes, sha256: finished.sha256, mark: file.mark,
                length: finished.length, source: file.source)
        })
        var folders: [String: CacheWriter] = [:]
        var unpublished: [(String, AyahRef)] = []
        for index in publishing {
            do throws(CacheError) {
                willPublish?(files[index].writer.finalPath)
                try files[index].writer.publish()
                files[index].writer.setAccessTime(milliseconds: clock.wallMilliseconds)  // `touch`, in the open folder
                folders[files[index].writer.folderPath] = files[index].writer
            } catch {
                results[index] = .failure(error)
                unpublished.append((files[index].reciter.rawValue, files[index].ayah))
            }
        }
        for path in folders.keys.sorted() { try folders[path]!.syncFolder() }
        for (reciter, ayah) in unpublished { try index.remove(reciter: reciter, ayah: ayah) }
        return results
    }

    // MARK: - Reading

    /// The file's bytes, after checking its size and SHA-256 against `expectation`. A file that fails the check
    /// is removed (it can never play) and `.mismatch` is thrown; a missing file throws `.io`.
    ///
    /// An unpinned file whose hash `expectation` does not know is looked up in the index again after the file is
    /// opened (a download may have recorded it since); when no hash is recorded yet, `.unvouched` is thrown and
    /// the file is left alone: it is treated as not cached, never deleted as bad.
    ///
    /// The file's access time (which orders eviction) is set unless `touching` is false, when the caller calls
    /// `touch` itself once the bytes are where they are needed (a player, after handing them to its audio thread).
    public func readVerified(
        reciter: ReciterID, ayah: AyahRef, expectation: FileExpectation, touching: Bool = true
    ) throws(CacheError) -> [UInt8] {
        let path = path(reciter: reciter, ayah: ayah)
        guard let folder = try folder(reciter.rawValue, create: false), let bytes = try folder.read("\(ayah.fileStem).mp3") else {
            throw CacheError(.io, "\(path) is not in the cache")
        }
        var expectation = expectation
        if !expectation.isKnown, let entry = try index.entry(reciter: reciter.rawValue, ayah: ayah) {
            expectation = .recorded(bytes: entry.bytes, sha256: entry.sha256)
        }
        guard expectation.isKnown else {
            throw CacheError(.unvouched, "\(path) has no recorded hash (yet): it is not treated as cached")
        }
        let digest = try SHA256.hash(bytes)
        if let problem = expectation.mismatch(bytes: bytes.count, sha256: digest) {
            try remove(reciter: reciter, ayah: ayah)
            throw CacheError(.mismatch, "\(path) was removed: \(problem)")
        }
        if touching { touch(reciter: reciter, ayah: ayah) }
        return bytes
    }

    /// Sets a file's access time (what eviction goes by) to the clock's wall time now. It is the file's own
    /// access time (atime), which tartil sets itself and its reads leave alone (`O_NOATIME`): setting it is one
    /// metadata change that needs no fsync and no index, so a play from the cache opens no database. (The index
    /// held it until 2026-12: a write, and a checkpoint with three fsyncs, at every exit of a play.) Best effort:
    /// the access time only orders eviction, and a cache on a read-only file system must still play.
    public func touch(reciter: ReciterID, ayah: AyahRef) {
        guard let folder = try? folder(reciter.rawValue, create: false) else { return }
        folder.setAccessTime("\(ayah.fileStem).mp3", milliseconds: clock.wallMilliseconds)
    }

    /// Whether something is at the ayah's final name (a link included, which reading refuses).
    public func hasFile(reciter: ReciterID, ayah: AyahRef) -> Bool {
        ((try? folder(reciter.rawValue, create: false)) ?? nil)?.status("\(ayah.fileStem).mp3") != nil
    }

    /// Whether the file is cached and passes the size and hash check (a failing file is removed). Throws
    /// `.symbolicLink` for a link at its name.
    public func containsVerified(reciter: ReciterID, ayah: AyahRef, expectation: FileExpectation) throws(CacheError) -> Bool {
        guard hasFile(reciter: reciter, ayah: ayah) else {
            return false
        }
        do {
            _ = try readVerified(reciter: reciter, ayah: ayah, expectation: expectation)
            return true
        } catch where error.code == .mismatch || error.code == .unvouched {
            return false
        }
    }

    /// An unpinned file cached and verified against its recorded hash: its size and the cross-check's mark; nil
    /// when it is not cached (or fails its check, and is removed).
    public func verifiedUnpinned(reciter: ReciterID, ayah: AyahRef) throws(CacheError) -> (bytes: Int, mark: SourceMark?)? {
        guard hasFile(reciter: reciter, ayah: ayah), let entry = try index.entry(reciter: reciter.rawValue, ayah: ayah) else { return nil }
        do {
            _ = try readVerified(reciter: reciter, ayah: ayah, expectation: .recorded(bytes: entry.bytes, sha256: entry.sha256))
            return (entry.bytes, entry.mark)
        } catch where error.code == .mismatch || error.code == .io {
            return nil
        }
    }

    /// The cross-check's mark recorded for a cached file, if any.
    public func mark(reciter: ReciterID, ayah: AyahRef) throws(CacheError) -> SourceMark? {
        try index.entry(reciter: reciter.rawValue, ayah: ayah)?.mark
    }

    /// Where a cached file came from, as recorded: the mirror's name in mirrors.json for a download, the URL of the
    /// surah's file for a learned surah's part cut from it, `import` for `cache import`; or nil.
    public func source(reciter: ReciterID, ayah: AyahRef) throws(CacheError) -> String? {
        try index.entry(reciter: reciter.rawValue, ayah: ayah)?.source
    }

    /// Sets the cross-check's mark of files already in the index (a learned surah's parts, once a second mirror
    /// served its file).
    public func setMark(_ mark: SourceMark, reciter: ReciterID, ayat: [AyahRef]) throws(CacheError) {
        try index.setMark(mark, reciter: reciter.rawValue, ayat: ayat)
    }

    /// Removes a file (a link at its name: the link, never its target) and its index entry.
    public func remove(reciter: ReciterID, ayah: AyahRef) throws(CacheError) {
        if let folder = try folder(reciter.rawValue, create: false) { try folder.remove("\(ayah.fileStem).mp3") }
        try index.remove(reciter: reciter.rawValue, ayah: ayah)
    }

    // MARK: - Listing

    /// A cached file as found on disk.
    public struct CachedFile: Sendable, Hashable {
        public let reciter: String
        public let ayah: AyahRef
        public let path: String
        public let bytes: Int
        /// Last played (or written), in milliseconds since 1970: the file's access time, which tartil sets (`touch`);
        /// 0 for a symbolic link.
        public let accessedMilliseconds: Int64
        /// The hash recorded when it was written, if any.
        public let recordedSHA256: String?
        /// Whether a symbolic link is at the name (not followed: `bytes` is 0; verify removes the link).
        public let isSymbolicLink: Bool
        /// What the cross-check found when it was downloaded (unpinned files), if it was recorded.
        public let mark: SourceMark?
        /// Its exact length, once it was decoded (remembered in the index).
        public let length: AudioLength?
        /// Where it came from, when that was recorded (see `source(reciter:ayah:)`).
        public let source: String?
    }

    /// The reciters with a folder in the cache (real folders: a link at a reciter's name is not followed).
    public func reciterFolders() -> [String] {
        root.names().filter { name in
            guard (try? ReciterID(name)) != nil, let status = root.status(name) else { return false }
            return (status.st_mode & S_IFMT) == S_IFDIR
        }.sorted()
    }

    /// A file time in milliseconds since 1970.
    static func milliseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000 }

    /// Every `SSSAAA.mp3` under the cache (or one reciter's folder), in order.
    public func files(reciter: String? = nil) throws(CacheError) -> [CachedFile] {
        // The folders are listed before the index is read: a file committed meanwhile had its hash recorded before
        // its name appeared, so every file listed finds its entry.
        var folders: [(String, CacheFolder, [String])] = []
        for name in reciter.map({ [$0] }) ?? reciterFolders() {
            guard let folder = try folder(name, create: false) else { continue }
            folders.append((name, folder, folder.names().sorted()))
        }
        let indexed = Dictionary(
            try index.entries(reciter: reciter).map { (CacheIndex.key($0.reciter, $0.ayah), $0) }, uniquingKeysWith: { a, _ in a })
        var result: [CachedFile] = []
        for (folder, handle, names) in folders {
            for name in names {
                // Only names `path(reciter:ayah:)` makes (lowercase `.mp3`) are cache files.
                guard let ayah = AyahRef(fileKeyName: name), name == ayah.fileStem + ".mp3" else { continue }
                let path = "\(directory)/\(folder)/\(name)"
                guard let status = handle.status(name) else { continue }
                let link = (status.st_mode & S_IFMT) == S_IFLNK
                let entry = indexed[CacheIndex.key(folder, ayah)]
                result.append(CachedFile(
                    reciter: folder, ayah: ayah, path: path, bytes: link ? 0 : Int(status.st_size),
                    accessedMilliseconds: link ? 0 : Self.milliseconds(status.st_atim), recordedSHA256: entry?.sha256, isSymbolicLink: link,
                    mark: entry?.mark, length: entry?.length, source: entry?.source))
            }
        }
        return result
    }

    // MARK: - Lengths

    /// Remembers files' exact lengths (decoded since they were recorded), so that the next listen has an exact
    /// scrubber without decoding them again. Files the index does not know are passed over.
    public func rememberLengths(reciter: ReciterID, _ lengths: [AyahRef: AudioLength]) throws(CacheError) {
        try index.rememberLengths(lengths.sorted { $0.key < $1.key }.map { (reciter.rawValue, $0.key, $0.value) })
    }

    /// The exact length remembered for one file, if it was decoded since it was cached.
    public func rememberedLength(reciter: ReciterID, ayah: AyahRef) throws(CacheError) -> AudioLength? {
        try index.entry(reciter: reciter.rawValue, ayah: ayah)?.length
    }

    /// The exact lengths remembered for a reciter's files (those decoded since they were cached).
    public func rememberedLengths(reciter: ReciterID) throws(CacheError) -> [AyahRef: AudioLength] {
        var lengths: [AyahRef: AudioLength] = [:]
        for entry in try index.entries(reciter: reciter.rawValue) {
            if let length = entry.length { lengths[entry.ayah] = length }
        }
        return lengths
    }

    // MARK: - Pins and budget

    /// Pins or unpins ayat: pinned ayat, and the files playing them needs (`PlayFiles.kept`: the basmala's 1:1
    /// for an ayah 1), are never evicted.
    public func setPinned(_ pinned: Bool, reciter: ReciterID, ayat: [AyahRef]) throws(CacheError) {
        try index.setPinned(pinned, reciter: reciter.rawValue, ayat: ayat)
    }

    /// `reciter/surah:ayah`, the key `evict(protecting:)` uses.
    public static func key(_ reciter: String, _ ayah: AyahRef) -> String { CacheIndex.key(reciter, ayah) }

    /// The keys of the files eviction spares for the pins: every file playing a pinned ayah needs
    /// (`PlayFiles.kept`), so a pinned surah keeps its basmala: the 1:1 a per-ayah reciter recites it from and
    /// the surah's own basmala part of a surah-file reciter's (the cache does not know which the reciter is, and
    /// sparing a file more costs nothing).
    public func keptForPins() throws(CacheError) -> Set<String> {
        var kept: Set<String> = []
        for (reciter, ayat) in try index.pinnedAyat(reciter: nil) {
            for file in PlayFiles.kept(for: ayat).union(PlayFiles.kept(for: ayat, files: .surah)) { kept.insert(Self.key(reciter, file)) }
        }
        return kept
    }

    /// Removes least-recently-used files until the cache holds at most `budget` bytes, never touching what
    /// pinned ayat need (`keptForPins`) or the files in `protecting` (files in use or just asked for, with what
    /// playing them needs: see `PlayFiles.kept`). Returns the removed files.
    @discardableResult
    public func evict(toFit budget: Int, protecting: Set<String> = []) throws(CacheError) -> [CachedFile] {
        let all = try files()
        var total = all.reduce(0) { $0 + $1.bytes }
        guard total > budget else { return [] }
        let kept = try keptForPins().union(protecting)
        var removed: [CachedFile] = []
        for file in all.sorted(by: { $0.accessedMilliseconds < $1.accessedMilliseconds }) where total > budget {
            let key = Self.key(file.reciter, file.ayah)
            guard !kept.contains(key), let reciter = try? ReciterID(file.reciter) else { continue }
            try remove(reciter: reciter, ayah: file.ayah)
            total -= file.bytes
            removed.append(file)
        }
        return removed
    }
}

@available(*, unavailable) extension Cache: Sendable {}
