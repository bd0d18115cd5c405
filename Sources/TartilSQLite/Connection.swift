import CSQLite
import Glibc

/// One SQLite database connection. Not thread-safe by design: reach it through one serializing owner.
///
/// ```swift
/// let db = try Connection(path: "journal.sqlite")
/// try db.execute("CREATE TABLE t(x)")
/// try db.close()
/// ```
/// The corresponding C functions are `sqlite3_open_v2`, `sqlite3_exec` and `sqlite3_close`.
public final class Connection {
    /// How to open the database file.
    public enum Mode: Sendable {
        case readOnly
        case readWrite
        /// Read-write, creating the file when it does not exist.
        case readWriteCreate
    }

    let handle: OpaquePointer
    private var isClosed = false
    /// The closure the progress handler calls, retained while it is installed.
    private var progressCheck: ProgressCheck?
    public let path: String

    /// SQLite's process-wide settings (`csqlite_prepare`), made once before the first connection opens.
    private static let prepared: Void = csqlite_prepare()

    /// Opens `path` (`:memory:` for an in-memory database). `path` is always a file name, never a URI: a name
    /// that starts with `file:` (a user's `--journal 'file:x.db'`) is opened as `./file:x.db`, and `?` or `#` in a
    /// name are part of the name. (URI processing stays on for the connection, so that `ATTACH` can take the
    /// read-only URIs `readOnlyURI` makes.)
    public convenience init(path: String, mode: Mode = .readWriteCreate) throws(SQLiteError) {
        try self.init(name: Self.fileName(path), path: path, mode: mode)
    }

    /// Opens the database an SQLite `file:` URI names (`readOnlyURI`, say): for tartil's own URIs, never a user's
    /// path.
    public convenience init(uri: String, mode: Mode = .readOnly) throws(SQLiteError) {
        try self.init(name: uri, path: uri, mode: mode)
    }

    private init(name fileName: String, path: String, mode: Mode) throws(SQLiteError) {
        _ = Self.prepared
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(fileName, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(handle)
            throw SQLiteError(code: ResultCode(rawValue: result), message: "\(path): \(message)")
        }
        self.handle = handle
        self.path = path
    }

    deinit {
        assert(isClosed, "Connection to \(path) was not closed")
        if !isClosed { sqlite3_close_v2(handle) }
    }

    /// Makes `close` leave the write-ahead log as it is: without this, the last connection to a database
    /// checkpoints the log into the database on close (two fsyncs, on every exit of a command). The log stays
    /// durable, and is checkpointed when it reaches `PRAGMA wal_autocheckpoint` pages; keep that small, since the
    /// next process to open the database reads the whole log.
    public func keepLogOnClose() throws(SQLiteError) {
        try check(csqlite_no_checkpoint_on_close(handle))
    }

    /// How much a checkpoint does (https://sqlite.org/c3ref/wal_checkpoint_v2.html).
    public enum CheckpointMode: Sendable {
        /// Copies what it can without waiting for readers or writers.
        case passive
        /// Waits (busy handler) for writers and for readers of the log, copies every frame and truncates the log
        /// to zero bytes.
        case truncate
    }

    /// Checkpoints the write-ahead log into the database file. Throws `.busy` when readers or a writer kept it
    /// from completing within the busy timeout (what was copied stays copied).
    ///
    /// The corresponding C function is `sqlite3_wal_checkpoint_v2`.
    public func checkpoint(_ mode: CheckpointMode) throws(SQLiteError) {
        var logFrames: Int32 = 0
        var copiedFrames: Int32 = 0
        let cMode = mode == .truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE
        try check(sqlite3_wal_checkpoint_v2(handle, nil, cMode, &logFrames, &copiedFrames), sql: "checkpoint")
    }

    /// Makes every statement on this connection call `shouldStop` every `instructions` virtual-machine steps and
    /// stop with `ResultCode.interrupt` when it returns true (Ctrl-C during a long merge, say). The check runs on
    /// the connection's own thread, so no other thread needs the handle (as `sqlite3_interrupt` would); nil
    /// removes it.
    ///
    /// The corresponding C function is `sqlite3_progress_handler`.
    public func setProgressHandler(every instructions: Int32 = 1000, _ shouldStop: (@Sendable () -> Bool)?) {
        guard let shouldStop else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            progressCheck = nil
            return
        }
        let check = ProgressCheck(shouldStop)
        progressCheck = check
        sqlite3_progress_handler(handle, instructions, { context in
            Unmanaged<ProgressCheck>.fromOpaque(context!).takeUnretainedValue().shouldStop() ? 1 : 0
        }, Unmanaged.passUnretained(check).toOpaque())
    }

    final class ProgressCheck {
        let shouldStop: @Sendable () -> Bool
        init(_ shouldStop: @escaping @Sendable () -> Bool) { self.shouldStop = shouldStop }
    }

    /// Closes the connection; statements must have been released first.
    public func close() throws(SQLiteError) {
        guard !isClosed else { return }
        try check(sqlite3_close(handle))
        isClosed = true
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: ResultCode(rawValue: result), message: message, sql: sql)
        }
    }

    /// Prepares `sql` for repeated use.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// The first column of the first row of `sql`, as text (nil for no row or NULL). For pragmas and checks.
    public func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// The first column of the first row `sql` returns, as SQLite's 64-bit integer (nil when there is no row or
    /// it is NULL): for counts and pragmas, read as the number SQLite holds rather than parsed from its text.
    public func scalarInteger(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.optionalInteger(at: 0)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; any throw rolls back and is rethrown.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Switches the database to WAL mode and checks that it took (the answer must be `wal`). Two processes
    /// creating the same database at once can find it locked for the switch, which the busy timeout does not
    /// cover, so a busy answer is retried for up to `timeoutMilliseconds`.
    public func enableWAL(timeoutMilliseconds: Int = 10_000) throws(SQLiteError) {
        var waited = 0
        while true {
            do throws(SQLiteError) {
                let mode = try scalarText("PRAGMA journal_mode = WAL")
                guard mode?.lowercased() == "wal" else {
                    throw SQLiteError(code: .error, message: "\(path): WAL mode could not be enabled (got \(mode ?? "nothing"))")
                }
                return
            } catch where (error.code.primary == .busy || error.code.primary == .locked) && waited < timeoutMilliseconds {
                usleep(20_000)
                waited += 20
            }
        }
    }

    func check(_ result: Int32, sql: String? = nil) throws(SQLiteError) {
        guard result == SQLITE_OK else {
            throw SQLiteError(code: ResultCode(rawValue: result), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
        }
    }

    /// `path` as `sqlite3_open_v2` must be given it with URI processing on so that it is read as a file name:
    /// SQLite reads a name as a URI only when it starts with `file:`, so such a relative name gets `./` before
    /// it (an absolute one cannot start with `file:`).
    static func fileName(_ path: String) -> String {
        path.hasPrefix("file:") ? "./" + path : path
    }

    /// A `file:` URI that opens (or attaches) `path` read-only: `ATTACH DATABASE ? AS x` with it never writes
    /// to the file. (Connections accept URIs; a plain path is still a plain path.) With `immutable`, SQLite also
    /// takes no locks and opens no `-wal` or `-shm` file beside it (so a file on a read-only mount can be read),
    /// and reads the database file alone: a write-ahead log beside it is ignored.
    public static func readOnlyURI(_ path: String, immutable: Bool = false) -> String {
        var encoded = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7f...:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            default:
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        // An absolute path gets an empty authority (`file:///x`), so that one starting with `//` is not read as
        // a host name; a relative one is relative to the working directory, as a plain path is.
        return (path.hasPrefix("/") ? "file://" : "file:") + "\(encoded)?mode=ro" + (immutable ? "&immutable=1" : "")
    }

    /// `path` opened read-only as the database file alone (`readOnlyURI(path, immutable: true)`: no lock and no
    /// `-shm`, which a full or read-only file system refuses), when no write-ahead log beside it holds anything
    /// the file lacks and `isReadable` accepts the connection; else nil (a connection refused is closed).
    public static func fileAlone(_ path: String, isReadable: (Connection) -> Bool) -> Connection? {
        var log = stat()
        guard stat(path + "-wal", &log) != 0 || log.st_size == 0,
            let connection = try? Connection(uri: readOnlyURI(path, immutable: true), mode: .readOnly)
        else { return nil }
        if isReadable(connection) { return connection }
        try? connection.close()
        return nil
    }

    /// The SQLite library version, e.g. `3.40.1`.
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

@available(*, unavailable) extension Connection: Sendable {}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
