import CSQLite
import Glibc

// MARK: - Online backup

extension Connection {
    /// Copies this connection's `main` database into `destination`'s `main` database, page for page, with
    /// SQLite's online backup API, and returns how many pages were copied.
    ///
    /// Every page is copied in one step, inside one read transaction of the source: the copy is a consistent
    /// snapshot of the database as of one commit, even while other connections (other processes) append to it.
    /// In WAL mode those writers are not blocked while the copy is made. A step that finds the source or the
    /// destination busy or locked is retried every 20 ms for up to `busyTimeoutMilliseconds`.
    ///
    /// ```swift
    /// let copy = try Connection(path: "copy.sqlite")
    /// try journal.backup(into: copy)
    /// try copy.close()
    /// ```
    /// The corresponding C functions are `sqlite3_backup_init`, `sqlite3_backup_step` and `sqlite3_backup_finish`
    /// (https://sqlite.org/backup.html).
    @discardableResult
    public func backup(into destination: Connection, busyTimeoutMilliseconds: Int = 10_000) throws(SQLiteError) -> Int {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            // The error is the destination connection's (https://sqlite.org/c3ref/backup_finish.html).
            let code = sqlite3_errcode(destination.handle)
            throw SQLiteError(
                code: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(destination.handle)),
                sql: "sqlite3_backup_init")
        }
        var waited = 0
        var result: Int32
        while true {
            result = sqlite3_backup_step(backup, -1)
            let primary = result & 0xff
            guard (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) && waited < busyTimeoutMilliseconds else { break }
            usleep(20_000)
            waited += 20
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        // `finish` releases the backup whatever happened, and returns the error of the last step, if any.
        let finished = sqlite3_backup_finish(backup)
        guard result == SQLITE_DONE else {
            let code = result == SQLITE_OK ? SQLITE_ERROR : result
            throw SQLiteError(
                code: ResultCode(rawValue: code),
                message: result == SQLITE_OK
                    ? "the backup stopped before it was complete"
                    // `finish` left the step's error on the destination connection, with SQLite's own words.
                    : String(cString: sqlite3_errmsg(destination.handle)),
                sql: "sqlite3_backup_step")
        }
        try destination.check(finished, sql: "sqlite3_backup_finish")
        return pages
    }
}
