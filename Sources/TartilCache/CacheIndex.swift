import FoundationEssentials
import Glibc
import TartilCore
import TartilSQLite

/// The cache's SQLite index (`<cache>/index.sqlite`): for each cached file its size and SHA-256 (recorded on
/// first verified download for unpinned ayat, and checked on every read after), when it was last read, and the
/// user's pins. WAL mode with a busy timeout, so several tartil processes can share one cache.
///
/// The connection is confined to the thread that uses the owning `Cache`.
final class CacheIndex {
    /// One indexed file.
    struct Entry: Sendable, Hashable {
        let reciter: String
        let ayah: AyahRef
        let bytes: Int
        let sha256: String
        let accessedMilliseconds: Int64
        /// The cross-check's mark (unpinned files downloaded since marks exist).
        let mark: SourceMark?
    }

    private let connection: Connection

    init(path: String) throws(CacheError) {
        do {
            connection = try Connection(path: path)
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
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS files(
                    reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                    bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, accessed_ms INTEGER NOT NULL,
                    PRIMARY KEY(reciter, surah, ayah));
                CREATE TABLE IF NOT EXISTS pins(
                    reciter TEXT NOT NULL, surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                    PRIMARY KEY(reciter, surah, ayah));
                """)
            // Version 1 adds the cross-check's mark (NULL for pinned files and files recorded before).
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
            if try integer("PRAGMA user_version") < 1 {
                try connection.transaction {
                    if try integer("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'mark'") == 0 {
                        try connection.execute("ALTER TABLE files ADD COLUMN mark TEXT")
                    }
                    try connection.execute("PRAGMA user_version = 1")
                }
            }
        } catch {
            throw CacheError(.index, "the cache index \(path): \(error)")
        }
    }

    deinit { try? connection.close() }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Records files (reciter, ayah, bytes, sha256) in one transaction.
    func record(_ files: [(String, AyahRef, Int, String)]) throws(CacheError) {
        try record(files.map { ($0.0, $0.1, $0.2, $0.3, nil) })
    }

    /// Records files (reciter, ayah, bytes, sha256, cross-check mark) in one transaction.
    func record(_ files: [(String, AyahRef, Int, String, SourceMark?)]) throws(CacheError) {
        guard !files.isEmpty else { return }
        let now = Self.now()
        do {
            try connection.transaction {
                let statement = try connection.prepare(
                    "INSERT OR REPLACE INTO files(reciter, surah, ayah, bytes, sha256, accessed_ms, mark) VALUES (?, ?, ?, ?, ?, ?, ?)")
                for (reciter, ayah, bytes, sha256, mark) in files {
                    try statement.bind([
                        .text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah)), .integer(Int64(bytes)),
                        .text(sha256), .integer(now), mark.map { .text($0.rawValue) } ?? .null,
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

    func touch(reciter: String, ayah: AyahRef) throws(CacheError) {
        try run(
            "UPDATE files SET accessed_ms = ? WHERE reciter = ? AND surah = ? AND ayah = ?",
            [.integer(Self.now()), .text(reciter), .integer(Int64(ayah.surah)), .integer(Int64(ayah.ayah))])
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

    func pins(reciter: String?) throws(CacheError) -> Set<String> {
        do {
            let statement = try connection.prepare(
                reciter == nil ? "SELECT reciter, surah, ayah FROM pins" : "SELECT reciter, surah, ayah FROM pins WHERE reciter = ?")
            try statement.bind(reciter.map { [.text($0)] } ?? [])
            var keys: Set<String> = []
            while try statement.step() {
                keys.insert("\(statement.text(at: 0) ?? "")/\(statement.integer(at: 1)):\(statement.integer(at: 2))")
            }
            return keys
        } catch {
            throw CacheError(.index, "the cache index: \(error)")
        }
    }

    static func key(_ reciter: String, _ ayah: AyahRef) -> String { "\(reciter)/\(ayah.surah):\(ayah.ayah)" }

    private func entries(where condition: String, _ values: [Statement.Value]) throws(CacheError) -> [Entry] {
        do {
            let statement = try connection.prepare(
                "SELECT reciter, surah, ayah, bytes, sha256, accessed_ms, mark FROM files WHERE \(condition) ORDER BY reciter, surah, ayah")
            try statement.bind(values)
            var result: [Entry] = []
            while try statement.step() {
                guard let ayah = try? AyahRef(Int(statement.integer(at: 1)), Int(statement.integer(at: 2))) else { continue }
                result.append(Entry(
                    reciter: statement.text(at: 0) ?? "", ayah: ayah, bytes: Int(statement.integer(at: 3)),
                    sha256: statement.text(at: 4) ?? "", accessedMilliseconds: statement.integer(at: 5),
                    mark: statement.text(at: 6).flatMap(SourceMark.init(rawValue:))))
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
