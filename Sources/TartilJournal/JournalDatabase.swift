import TartilCore
import Glibc
import TartilSQLite
import TartilSystem

/// The journal's database file, opened with the guarantees the journal rests on: WAL mode (checked, not
/// assumed), `synchronous=FULL` (a commit is on disk when it returns), a busy timeout so concurrent readers and
/// writers wait instead of failing, and an `events` table whose triggers refuse every UPDATE and DELETE.
///
/// A file that is not a tartil journal (another program's database, a text file, a corrupt file) is refused
/// before anything is written to it.
///
/// The write-ahead log is kept while the journal is open (appends cost one fsync each) and checkpointed into the
/// database file when a writing connection closes (`PRAGMA wal_checkpoint(TRUNCATE)`), so after a clean exit the
/// journal file alone holds every event: users copy, rsync and sync that one file.
///
/// The connection is confined to the thread that opened it.
public final class JournalDatabase {
    public let connection: Connection
    /// True when opened read-only (nothing is created, migrated or checkpointed).
    public let isReadOnly: Bool
    /// True when it was opened read-only as the file alone (`immutable`: no log beside it, and a file system that
    /// refused the log's shared memory): `PRAGMA journal_mode` then says `delete` whatever the file is in, and
    /// `fileIsInWALMode` reads the file's header instead.
    public private(set) var readsFileAlone = false
    private var isClosed = false

    /// The schema, as named migrations (see `Migrator`).
    static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.register("v1-events") { db throws(SQLiteError) in
            try db.execute("""
                CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE events(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    event_id TEXT NOT NULL UNIQUE,
                    device_id TEXT NOT NULL,
                    device_seq INTEGER NOT NULL,
                    ts_ms INTEGER NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('position', 'session-start', 'session-end', 'bookmark')),
                    reciter TEXT,
                    surah INTEGER CHECK (surah BETWEEN 1 AND 114),
                    ayah INTEGER CHECK (ayah >= 1),
                    offset_samples INTEGER CHECK (offset_samples >= 0),
                    offset_ms INTEGER CHECK (offset_ms >= 0),
                    reason TEXT CHECK (reason IN ('ayah-start', 'pause', 'seek', 'stop', 'quit', 'end')),
                    note TEXT
                );
                CREATE INDEX events_by_time ON events(ts_ms, device_id, event_id);
                CREATE INDEX events_by_device ON events(device_id, device_seq);
                CREATE INDEX events_positions ON events(kind, surah, ts_ms);
                CREATE TRIGGER events_no_update BEFORE UPDATE ON events
                    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be updated'); END;
                CREATE TRIGGER events_no_delete BEFORE DELETE ON events
                    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be deleted'); END;
                CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta
                    BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
                CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta
                    BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
                """)
        }
        // Bookmarks can be removed and their notes edited, by events that name the bookmark (`target_id`): two
        // more kinds, which the v1 CHECK refuses. SQLite cannot change a CHECK in place, so the table is made
        // anew with the events copied over as they are (same seq, ids and times), through a temporary copy, so
        // that the new table's schema text is exactly the text below on every SQLite version (a RENAME would
        // rewrite it). Triggers and indexes go with the old table and are made again.
        migrator.register("v2-bookmark-edits") { db throws(SQLiteError) in
            try db.execute("""
                CREATE TEMP TABLE events_v1 AS SELECT * FROM main.events;
                DROP TABLE main.events;
                CREATE TABLE events(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    event_id TEXT NOT NULL UNIQUE,
                    device_id TEXT NOT NULL,
                    device_seq INTEGER NOT NULL,
                    ts_ms INTEGER NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('position', 'session-start', 'session-end', 'bookmark',
                                                       'bookmark-removed', 'bookmark-note')),
                    reciter TEXT,
                    surah INTEGER CHECK (surah BETWEEN 1 AND 114),
                    ayah INTEGER CHECK (ayah >= 1),
                    offset_samples INTEGER CHECK (offset_samples >= 0),
                    offset_ms INTEGER CHECK (offset_ms >= 0),
                    reason TEXT CHECK (reason IN ('ayah-start', 'pause', 'seek', 'stop', 'quit', 'end')),
                    note TEXT,
                    target_id TEXT CHECK ((target_id IS NOT NULL) = (kind IN ('bookmark-removed', 'bookmark-note')))
                );
                INSERT INTO main.events(seq, event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah,
                                        offset_samples, offset_ms, reason, note)
                    SELECT seq, event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples,
                           offset_ms, reason, note FROM temp.events_v1 ORDER BY seq;
                DROP TABLE temp.events_v1;
                """ + eventIndexesAndTriggers)
        }
        // Memorisation plans, marks and what was heard of a day's session (`hifz`): three more kinds, made the
        // same way as v2's (the events copied over as they are, through a temporary copy).
        migrator.register("v3-hifz") { db throws(SQLiteError) in
            try db.execute("""
                CREATE TEMP TABLE events_v2 AS SELECT * FROM main.events;
                DROP TABLE main.events;
                CREATE TABLE events(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    event_id TEXT NOT NULL UNIQUE,
                    device_id TEXT NOT NULL,
                    device_seq INTEGER NOT NULL,
                    ts_ms INTEGER NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('position', 'session-start', 'session-end', 'bookmark',
                                                       'bookmark-removed', 'bookmark-note',
                                                       'hifz-plan', 'hifz-mark', 'hifz-heard')),
                    reciter TEXT,
                    surah INTEGER CHECK (surah BETWEEN 1 AND 114),
                    ayah INTEGER CHECK (ayah >= 1),
                    offset_samples INTEGER CHECK (offset_samples >= 0),
                    offset_ms INTEGER CHECK (offset_ms >= 0),
                    reason TEXT CHECK (reason IN ('ayah-start', 'pause', 'seek', 'stop', 'quit', 'end')),
                    note TEXT,
                    target_id TEXT CHECK ((target_id IS NOT NULL) = (kind IN ('bookmark-removed', 'bookmark-note')))
                );
                INSERT INTO main.events(seq, event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah,
                                        offset_samples, offset_ms, reason, note, target_id)
                    SELECT seq, event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples,
                           offset_ms, reason, note, target_id FROM temp.events_v2 ORDER BY seq;
                DROP TABLE temp.events_v2;
                """ + eventIndexesAndTriggers)
        }
        return migrator
    }()

    /// The events table's indexes and append-only triggers as v2 and later make them, after making the table anew
    /// (they go with the table it replaces).
    static let eventIndexesAndTriggers = """
        CREATE INDEX events_by_time ON events(ts_ms, device_id, event_id);
        CREATE INDEX events_by_device ON events(device_id, device_seq);
        CREATE INDEX events_positions ON events(kind, surah, ts_ms);
        CREATE INDEX events_by_target ON events(target_id) WHERE target_id IS NOT NULL;
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be updated'); END;
        CREATE TRIGGER events_no_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be deleted'); END;
        """

    /// True when the events table has the `target_id` column (migration v2; a journal made by an older tartil
    /// and opened read-only has not had it yet).
    public private(set) var hasTargetColumn = true

    /// The triggers that make the journal append-only (`journal check` looks for them).
    public static let appendOnlyTriggers = ["events_no_update", "events_no_delete", "meta_no_update", "meta_no_delete"]

    /// Opens (creating when needed) the journal at `path`. With `readOnly`, nothing is created or migrated.
    public init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int = 10_000) throws(SQLiteError) {
        isReadOnly = readOnly
        try Self.checkHeader(path)
        if !readOnly && access(path, F_OK) != 0 && Errno.current == .noEntry {
            try Self.create(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
        var opened = try Connection(path: path, mode: readOnly ? .readOnly : .readWriteCreate)
        if readOnly, !Self.readable(opened) {
            // Reading a journal in WAL mode makes its `-shm` file, which a full or read-only file system refuses;
            // with no log beside it there is nothing the file alone lacks, so it is read as it is (`immutable`).
            // (When the file alone does not read either, the first connection's error is the one reported.)
            if let alone = Connection.fileAlone(path, isReadable: Self.readable) {
                try? opened.close()
                opened = alone
                readsFileAlone = true
            }
        }
        connection = opened
        do {
            try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
            try Self.migrator.check(connection, what: "a tartil journal")
            if !readOnly {
                try connection.enableWAL()
                try connection.execute("PRAGMA synchronous = FULL")
                // While open, the log is checkpointed every 64 pages (256 KiB), so it stays small during a long
                // session; `close` checkpoints whatever is left.
                try connection.execute("PRAGMA wal_autocheckpoint = 64")
                try Self.migrator.migrate(connection)
            }
            hasTargetColumn = try connection.scalarText(
                "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'target_id'") != "0"
        } catch {
            try? connection.close()
            throw error
        }
    }

    /// Whether the database file at `path` is in WAL mode, by its header (bytes 18 and 19, the read and write
    /// versions, are 2 in WAL mode).
    public static func fileIsInWALMode(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        var header = [UInt8](repeating: 0, count: 20)
        let count = header.withUnsafeMutableBytes { bytes in (try? SystemCall.readAll(descriptor, into: bytes)) ?? -1 }
        return count == 20 && header[18] == 2 && header[19] == 2
    }

    /// Whether `connection` can read its schema (a read-only one may not, where SQLite cannot make the log's
    /// shared memory).
    private static func readable(_ connection: Connection) -> Bool {
        guard let statement = try? connection.prepare("SELECT count(*) FROM sqlite_master") else { return false }
        return (try? statement.step()) != nil
    }

    /// A journal path must name a regular file or nothing yet (a device such as `/dev/null`, a directory or a
    /// FIFO is refused before SQLite opens it, which would create `/dev/null-journal` beside it or block), and a
    /// file that exists and is not empty must start with SQLite's header: anything else is refused before SQLite
    /// opens it (which could write to it).
    static func checkHeader(_ path: String) throws(SQLiteError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = Errno.current
            if error == .noEntry { return }  // not there yet: it will be created
            throw SQLiteError(code: .cantOpen, message: "\(path): \(error)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SQLiteError(
                code: .notADatabase,
                message: "\(path) is not a tartil journal: it is \(fileKind(info.st_mode)), not a regular file (name a journal file, or a path where one may be created)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return }  // unreadable: SQLite says why
        defer { Glibc.close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { bytes in (try? SystemCall.readAll(descriptor, into: bytes)) ?? -1 }
        guard count != 0 else { return }  // an empty file becomes a journal
        guard count == 16, header == Array("SQLite format 3\0".utf8) else {
            throw SQLiteError(code: .notADatabase, message: "\(path) is not a tartil journal (not an SQLite database)")
        }
    }

    /// Makes a new journal at `path` atomically, as readers see it: the schema, WAL mode and the device id are
    /// written to a temporary file beside it, checkpointed into it and synced, and the file is then linked to
    /// `path` (`link` fails when another process made the journal first: theirs is used). So a reader finds
    /// either no journal or a complete one, never a file without its tables. Where hard links are not supported
    /// the journal is made in place.
    static func create(_ path: String, busyTimeoutMilliseconds: Int) throws(SQLiteError) {
        // The temporary files of a creation that was killed are removed first (when no other creation is under
        // way in the folder).
        let base = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let folderLock = lockFolderRemovingStale(parentDirectory(path)) { Journal.isTemporaryCopy($0, of: base, marker: ".new-") }
        defer { if folderLock >= 0 { Glibc.close(folderLock) } }
        let temporary = "\(path).new-\(RandomUUID.make().prefix(8))"
        func removeTemporary() {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
        }
        do throws(SQLiteError) {
            let connection = try Connection(path: temporary, mode: .readWriteCreate)
            do throws(SQLiteError) {
                try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
                try connection.enableWAL()
                try connection.execute("PRAGMA synchronous = FULL")
                try migrator.migrate(connection)
                try connection.execute("INSERT INTO meta(key, value) VALUES ('device_id', '\(RandomUUID.make())')")
                try connection.checkpoint(.truncate)
                try connection.close()
            } catch {
                try? connection.close()
                throw error
            }
        } catch {
            removeTemporary()
            throw error
        }
        let linked = link(temporary, path) == 0
        let linkError = Errno.current
        removeTemporary()
        if linked {
            FileSystem.syncDirectory(parentDirectory(path))
        } else if linkError != .exists {
            return  // no hard links here (some FUSE and FAT file systems): the caller makes it in place
        }
    }

    /// Removes the entries of `folder` that `isStale` picks (temporary files of work that was killed) when no
    /// tartil on this machine holds `folder`'s lock, and returns a descriptor of `folder` holding its shared lock,
    /// which the caller keeps open (closing it releases the lock) while it writes temporary files of its own there;
    /// -1 when the folder cannot be locked (then nothing is removed).
    ///
    /// Work that writes temporary files holds the shared `flock`; the clean-up needs the exclusive one, so it never
    /// removes a file being written.
    static func lockFolderRemovingStale(_ folder: String, _ isStale: (String) -> Bool) -> Int32 {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        if (try? SystemCall.retrying { flock(descriptor, LOCK_EX | LOCK_NB) }) != nil {
            for name in (try? FileSystem.names(in: folder)) ?? [] where isStale(name) { unlink(folder + "/" + name) }
        }
        // Shared from here on: other work may write beside it meanwhile; a clean-up waits for it.
        if (try? SystemCall.retrying { flock(descriptor, LOCK_SH) }) == nil {
            Glibc.close(descriptor)
            return -1
        }
        return descriptor
    }

    static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// What a file that is not a regular one is, for messages.
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        default: return "a special file"
        }
    }

    /// Checkpoints the write-ahead log into the database file and truncates it (a writing connection only), then
    /// closes the database: afterwards the file alone holds every event. The checkpoint waits (up to the busy
    /// timeout) for readers still reading the log; if it cannot finish, the events stay durable in the log, the
    /// connection is closed anyway and the checkpoint's error is thrown.
    ///
    /// The corresponding C function is `sqlite3_wal_checkpoint_v2` with `SQLITE_CHECKPOINT_TRUNCATE`.
    public func close() throws(SQLiteError) {
        guard !isClosed else { return }
        isClosed = true
        var checkpointError: SQLiteError?
        if !isReadOnly {
            do throws(SQLiteError) {
                try connection.checkpoint(.truncate)
            } catch {
                checkpointError = error
            }
        }
        try connection.close()
        if let checkpointError { throw checkpointError }
    }
}

@available(*, unavailable) extension JournalDatabase: Sendable {}
