import Glibc
import TartilCore
import TartilSQLite
import TartilSystem

/// The cache's SQLite index (`<cache>/index.sqlite`): for each cached file its size and SHA-256 (recorded on
/// first verified download for unpinned ayat, and checked on every read after), when it was last read, the
/// cross-check's mark, the mirror it came from, its exact length once decoded, and the user's pins. WAL mode with a busy timeout, so several tartil processes can share one cache.
///
/// The connection is confined to the thread that uses the owning `Cache`.
final class CacheIndex {
    /// One indexed file.
    struct Entry: Sendable, Hashable {
        let reciter: String
        let ayah: AyahRef
        let bytes: Int
        let sha256: String
        /// When it was recorded (`accessed_ms`). Eviction goes by the file's own access time (`Cache.touch`); the
        /// column is still written, for the tartil versions before that, which read it.
        let accessedMilliseconds: Int64
        /// The cross-check's mark (unpinned files downloaded since marks exist).
        let mark: SourceMark?
        /// The file's exact length (PCM frames mpg123 decodes, gapless) once it was decoded, and its rate.
        let length: AudioLength?
        /// Where it came from: the mirror's name in mirrors.json, the URL of the learned surah's file a part was
        /// cut from, or `import` for `cache import`.
        let source: String?
    }

    /// One file to record.
    struct Record {
        let reciter: String
        let ayah: AyahRef
        let bytes: Int
        let sha256: String
        var mark: SourceMark? = nil
        var length: AudioLength? = nil
        var source: String? = nil
    }

    private let connection: Connection
    /// Where access and record times come from (`wallMilliseconds`).
    private let clock: any TartilClock

    init(path: String, clock: any TartilClock) throws(CacheError) {
        self.clock = clock
        do {
            connection = try Self.openForWriting(path)
        } catch {
            // A cache on a read-only file system, or on a full one, still reads: the index is opened read-only,
            // and without its write-ahead log's shared memory (which cannot be made there) only when there is no
            // log to miss.
            guard FileSystem.exists(path), let readOnly = Self.openForReading(path) else {
                throw CacheError(.index, "the cache index \(path): \(error)")
            }
            connection = readOnly
        }
    }

    /// The index read-only: through its log when that can be shared, else the database file alone when no log
    /// holds anything (`immutable`); nil when neither opens.
    private static func openForReading(_ path: String) -> Connection? {
        if let shared = try? Connection(uri: Connection.readOnlyURI(path), mode: .readOnly) {
            if readable(shared) { return shared }
            try? shared.close()
        }
        return Connection.fileAlone(path, isReadable: readable)
    }

    /// Whether the index reads through `connection`.
    private static func readable(_ connection: Connection) -> Bool {
        do {
            try connection.execute("PRAGMA busy_timeout = 10000")
            let statement = try connection.prepare("SELECT count(*) FROM files")
            while try statement.step() {}
            return true
        } catch {
            return false
        }
    }

    /// The schema version an index is migrated to (`PRAGMA user_version`).
    static let currentVersion: Int64 = 2

    /// The index opened for reading and writing, created or migrated as needed.
    private static func openForWriting(_ path: String) throws -> Connection {
        let connection = try Connection(path: path)
        do {
            try connection.execute("PRAGMA busy_timeout = 10000")
            try connection.execute("PRAGMA cache_size = -256")  // 256 KiB: the index is small and several threads open it
            try connection.enableWAL()
            // NORMAL in WAL mode: a commit survives a crash of tartil, and only a power cut can lose the last few.
            // That is safe here: the files themselves are fsynced before they get their names, a lost access time
            // only ages a file for eviction, and an unpinned file whose recorded hash was lost is treated as
            // unverifiable (removed and downloaded again). It saves an fsync on every read of a cached file,
            // which is on the path of starting playback.
            try connection.execute("PRAGMA synchronous = NORMAL")
            // Closing leaves the log (no checkpoint, and its fsyncs, on every exit), and the log is checkpointed
            // early instead: a process opening the index reads the valid part of the log, and at SQLite's default
            // of 1000 pages that was 4 MB read on every start of playback.
            try connection.keepLogOnClose()
            try connection.execute("PRAGMA wal_autocheckpoint = 64")
            try connection.execute("PRAGMA journal_size_limit = 1048576")
            // Each query is stepped to its end, so that no read transaction stays open: a write transaction begun
            // on a stale read snapshot fails at once (SQLITE_BUSY_SNAPSHOT) instead of waiting for the other
            // process that is migrating the same index.
            func integer(_ sql: String) throws -> Int64 {
                let statement = try connection.prepare(sql)
                var value: Int64 = 0
                if try statement.step() { value = statement.integer(at: 0) }
                while try statement.step() {}
                return value
            }
            // An index at the current version has every table and column: nothing to create or migrate (this
            // runs on every start of playback; SQLite would parse the statements below only to find them done).
            if try integer("PRAGMA user_version") >= currentVersion { return connection }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS files(
                    reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                    bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, accessed_ms INTEGER NOT NULL,
                    PRIMARY KEY(reciter, surah, ayah));
                CREATE TABLE IF NOT EXISTS pins(
                    reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                    PRIMARY KEY(reciter, surah, ayah));
                CREATE TABLE IF NOT EXISTS disputes(
                    reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                    mirror TEXT NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL,
                    PRIMARY KEY(reciter, surah, ayah, mirror));
                """)
            // Version 1 adds the cross-check's mark (NULL for pinned files and files recorded before).
            if try integer("PRAGMA user_version") < 1 {
                try connection.transaction {
                    if try integer("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'mark'") == 0 {
                        try connection.execute("ALTER TABLE files ADD COLUMN mark TEXT")
                    }
                    try connection.execute("PRAGMA user_version = 1")
                }
            }
            // Version 2 adds each file's exact length once decoded (samples, sample_rate: NULL until then) and the
            // mirror it came from (source: NULL for files recorded before).
            if try integer("PRAGMA user_version") < 2 {
                try connection.transaction {
                    for column in ["samples INTEGER", "sample_rate INTEGER", "source TEXT"] {
                        let name = column.split(separator: " ")[0]
                        if try integer("SELECT count(*) FROM pragma_table_info('files') WHERE name = '\(name)'") == 0 {
                            try connection.execute("ALTER TABLE files ADD COLUMN \(column)")
                        }
                    }
                    try connection.execute("PRAGMA user_version = 2")
                }
            }
            return connection
        } catch {
            try? connection.close()
            throw error
        }
    }

    deinit { try? connection.close() }

    /// Records files in one transaction (a file recorded again loses what was known of its former copy).
    func record(_ files: [Record]) throws(CacheError) {
        guard !files.isEmpty else { return }
        let now = clock.wallMilliseconds
        do {
            try connection.transaction {
                let statement = try connection.prepare(
                    "INSERT OR REPLACE INTO files(reciter, surah, ayah, bytes, sha256, accessed_ms, mark, samples, sample_rate, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                for file in files {
                    try statement.bind([
                        .text(file.reciter), .integer(Int64(file.ayah.surah)), .integer(Int64(file.ayah.ayah)), .integer(Int64(file.bytes)),
                        .text(file.sha256), .integer(now), file.mark.map { .text($0.rawValue) } ?? .null,
                        file.length.map { .integer(Int64($0.samples)) } ?? .null, file.length.map { .integer(Int64($0.sampleRate)) } ?? .null,
                        file.source.map { .text($0) } ?? .null,
                    ])
                    try statement.step()
                }
            }
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    /// Remembers the exact length of files already recorded (decoded since), in one transaction.
    func rememberLengths(_ lengths: [(String, AyahRef, AudioLength)]) throws(CacheError) {
        guard !lengths.isEmpty else { return }
        do {
            try connection.transaction {
                let statement = try connection.prepare(
                    "UPDATE files SET samples = ?, sample_rate = ? WHERE reciter = ? AND surah = ? AND ayah = ?")
                for (reciter, ayah, length) in lengths {
                    try statement.bind([
                        .integer(Int64(length.samples)), .integer(Int64(length.sampleRate)), .text(reciter),
                        .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah)),
                    ])
                    try statement.step()
                }
            }
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    /// Sets the cross-check's mark of files already recorded (a learned surah's parts, learned again), in one
    /// transaction.
    func setMark(_ mark: SourceMark?, source: String? = nil, reciter: String, ayat: [AyahRef]) throws(CacheError) {
        guard !ayat.isEmpty else { return }
        do {
            try connection.transaction {
                // The source is kept when none is given.
                let statement = try connection.prepare("UPDATE files SET mark = ?, source = COALESCE(?, source) WHERE reciter = ? AND surah = ? AND ayah = ?")
                for ayah in ayat {
                    try statement.bind([
                        mark.map { .text($0.rawValue) } ?? .null, source.map { .text($0) } ?? .null, .text(reciter), .integer(Int64(ayah.surah)),
                        .integer(Int64(ayah.ayah)),
                    ])
                    try statement.step()
                }
            }
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    func entry(reciter: String, ayah: AyahRef) throws(CacheError) -> Entry? {
        try entries(where: "reciter = ? AND surah = ? AND ayah = ?", [.text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))]).first
    }

    func entries(reciter: String?) throws(CacheError) -> [Entry] {
        if let reciter { return try entries(where: "reciter = ?", [.text(reciter)]) }
        return try entries(where: "1", [])
    }

    func remove(reciter: String, ayah: AyahRef) throws(CacheError) {
        try run(
            "DELETE FROM files WHERE reciter = ? AND surah = ? AND ayah = ?",
            [.text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))])
    }

    func setPinned(_ pinned: Bool, reciter: String, ayat: [AyahRef]) throws(CacheError) {
        let sql = pinned ? "INSERT OR IGNORE INTO pins VALUES (?, ?, ?)" : "DELETE FROM pins WHERE reciter = ? AND surah = ? AND ayah = ?"
        do {
            try connection.transaction {
                let statement = try connection.prepare(sql)
                for ayah in ayat {
                    try statement.bind([.text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))])
                    try statement.step()
                }
            }
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    /// The pinned ayat, by reciter.
    func pinnedAyat(reciter: String?) throws(CacheError) -> [String: [AyahRef]] {
        do {
            let statement = try connection.prepare(
                reciter == nil ? "SELECT reciter, surah, ayah FROM pins" : "SELECT reciter, surah, ayah FROM pins WHERE reciter = ?")
            try statement.bind(reciter.map { [.text($0)] } ?? [])
            var ayat: [String: [AyahRef]] = [:]
            while try statement.step() {
                guard let ayah = AyahRef(fileKeySurah: Int(statement.integer(at: 1)), ayah: Int(statement.integer(at: 2))) else { continue }
                ayat[statement.text(at: 0) ?? "", default: []].append(ayah)
            }
            return ayat
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    // MARK: - Disputes

    /// One mirror's copy of a disputed ayah, kept aside.
    struct DisputeRow: Sendable, Hashable {
        let reciter: String
        let ayah: AyahRef
        let mirror: String
        let bytes: Int
        let sha256: String
    }

    /// Records a dispute over one ayah (replacing an earlier one) and forgets the file recorded under its name, in
    /// one transaction.
    func recordDispute(reciter: String, ayah: AyahRef, copies: [(mirror: String, bytes: Int, sha256: String)]) throws(CacheError) {
        let key: [Statement.Value] = [.text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))]
        do {
            try connection.transaction {
                for sql in ["DELETE FROM disputes WHERE reciter = ? AND surah = ? AND ayah = ?", "DELETE FROM files WHERE reciter = ? AND surah = ? AND ayah = ?"] {
                    let statement = try connection.prepare(sql)
                    try statement.bind(key)
                    try statement.step()
                }
                let insert = try connection.prepare("INSERT OR REPLACE INTO disputes VALUES (?, ?, ?, ?, ?, ?)")
                for copy in copies {
                    try insert.bind(key + [.text(copy.mirror), .integer(Int64(copy.bytes)), .text(copy.sha256)])
                    try insert.step()
                }
            }
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    /// The disputed ayat's copies (of one reciter, or one ayah), in order.
    func disputes(reciter: String?, ayah: AyahRef? = nil) throws(CacheError) -> [DisputeRow] {
        var condition = "1"
        var values: [Statement.Value] = []
        if let reciter {
            condition = "reciter = ?"
            values.append(.text(reciter))
        }
        if let ayah {
            condition += " AND surah = ? AND ayah = ?"
            values += [.integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))]
        }
        do {
            let statement = try connection.prepare(
                "SELECT reciter, surah, ayah, mirror, bytes, sha256 FROM disputes WHERE \(condition) ORDER BY reciter, surah, ayah, mirror")
            try statement.bind(values)
            var rows: [DisputeRow] = []
            while try statement.step() {
                guard let ayah = AyahRef(fileKeySurah: Int(statement.integer(at: 1)), ayah: Int(statement.integer(at: 2))) else { continue }
                rows.append(DisputeRow(
                    reciter: statement.text(at: 0) ?? "", ayah: ayah, mirror: statement.text(at: 3) ?? "", bytes: Int(statement.integer(at: 4)),
                    sha256: statement.text(at: 5) ?? ""))
            }
            return rows
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    /// Forgets the dispute over one ayah.
    func removeDispute(reciter: String, ayah: AyahRef) throws(CacheError) {
        try run(
            "DELETE FROM disputes WHERE reciter = ? AND surah = ? AND ayah = ?",
            [.text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))])
    }

    static func key(_ reciter: String, _ ayah: AyahRef) -> String { "\(reciter)/\(ayah.surah):\(ayah.ayah)" }

    private func entries(where condition: String, _ values: [Statement.Value]) throws(CacheError) -> [Entry] {
        do {
            let statement = try connection.prepare(
                "SELECT reciter, surah, ayah, bytes, sha256, accessed_ms, mark, samples, sample_rate, source FROM files WHERE \(condition) ORDER BY reciter, surah, ayah")
            try statement.bind(values)
            var result: [Entry] = []
            while try statement.step() {
                guard let ayah = AyahRef(fileKeySurah: Int(statement.integer(at: 1)), ayah: Int(statement.integer(at: 2))) else { continue }
                result.append(Entry(
                    reciter: statement.text(at: 0) ?? "", ayah: ayah, bytes: Int(statement.integer(at: 3)),
                    sha256: statement.text(at: 4) ?? "", accessedMilliseconds: statement.integer(at: 5),
                    mark: statement.text(at: 6).flatMap(SourceMark.init(rawValue:)),
                    length: AudioLength(samples: statement.optionalInteger(at: 7), sampleRate: statement.optionalInteger(at: 8)),
                    source: statement.text(at: 9)))
            }
            return result
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    private func run(_ sql: String, _ values: [Statement.Value]) throws(CacheError) {
        do {
            let statement = try connection.prepare(sql)
            try statement.bind(values)
            try statement.step()
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }
}

@available(*, unavailable) extension CacheIndex: Sendable {}

/// A file's exact length: the PCM frames mpg123 decodes from it with gapless trimming on, and its sample rate.
public struct AudioLength: Sendable, Hashable {
    public let samples: Int
    public let sampleRate: Int

    public init(samples: Int, sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// A length read back from the index: nil unless both are there and sane.
    init?(samples: Int64?, sampleRate: Int64?) {
        guard let samples, let sampleRate, samples >= 0, samples < 1 << 40, (1...1_000_000).contains(sampleRate) else { return nil }
        self.init(samples: Int(samples), sampleRate: Int(sampleRate))
    }
}

/// Checks a downloaded file whose hash is not known (it must decode as MPEG audio), given by a path, and returns
/// its exact length when it decoded it (nil: checked without counting).
public typealias AudioCheck = @Sendable (String) throws -> AudioLength?
