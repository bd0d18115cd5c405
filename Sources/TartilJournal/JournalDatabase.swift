import TartilSQLite

/// The journal's database file, opened with the guarantees the journal rests on: WAL mode (checked, not
/// assumed), `synchronous=FULL` (a commit is on disk when it returns), a busy timeout so concurrent readers and
/// writers wait instead of failing, and an `events` table whose triggers refuse every UPDATE and DELETE.
///
/// The connection is confined to the thread that opened it.
public final class JournalDatabase {
    /// The schema version this build creates and reads (`PRAGMA user_version`).
    public static let schemaVersion = 1

    public let connection: Connection

    /// Opens (creating when needed) the journal at `path`. Throws when the file is not a tartil journal or WAL
    /// cannot be enabled; nothing is written to a file that is not a journal.
    public init(path: String, busyTimeoutMilliseconds: Int = 5000) throws(SQLiteError) {
        connection = try Connection(path: path)
        do {
            try configure(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        } catch {
            try? connection.close()
            throw error
        }
    }

    private func configure(busyTimeoutMilliseconds: Int) throws(SQLiteError) {
        try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
        let tables = try connection.scalarText(
            "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        let version = Int(try connection.scalarText("PRAGMA user_version") ?? "0") ?? 0
        if let tables, !tables.isEmpty, version != Self.schemaVersion {
            throw SQLiteError(
                code: .notADatabase,
                message: "\(connection.path) is not a tartil journal (schema version \(version), tables \(tables))")
        }
        try connection.enableWAL()
        try connection.execute("PRAGMA synchronous = FULL")
        if tables == nil || tables?.isEmpty == true {
            try connection.execute(Self.schema)
        }
    }

    /// Closes the database.
    public func close() throws(SQLiteError) { try connection.close() }

    static let schema = """
        BEGIN IMMEDIATE;
        CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS events(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL UNIQUE,
            device_id TEXT NOT NULL,
            ts_ms INTEGER NOT NULL,
            kind TEXT NOT NULL,
            reciter TEXT, surah INTEGER, ayah INTEGER, offset_samples INTEGER, offset_ms INTEGER, reason TEXT,
            note TEXT
        );
        CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be updated'); END;
        CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be deleted'); END;
        CREATE TRIGGER IF NOT EXISTS meta_no_update BEFORE UPDATE ON meta
            BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END;
        PRAGMA user_version = 1;
        COMMIT;
        """
}

@available(*, unavailable) extension JournalDatabase: Sendable {}
