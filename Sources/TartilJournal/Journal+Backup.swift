import TartilCore
import Glibc
import TartilSQLite
import TartilSystem

/// `journal backup`: a consistent, self-contained copy of the journal, made while players may be appending.
///
/// The copy is made with SQLite's online backup API from one read transaction (a snapshot as of one commit; in
/// WAL mode writers go on meanwhile) into a temporary file beside the destination. That file is then reopened,
/// kept in WAL mode like a live journal, checkpointed and closed (so it needs no `-wal` beside it), checked with
/// SQLite's quick check, fsynced, and only then given its name; the directory is fsynced after. A reader of the
/// destination sees the old file or the complete new one, never a part.
extension Journal {

    /// Writes a consistent copy of this journal to `destination`. Throws `.badDestination` (nothing written)
    /// when `destination` is this journal or one of its side files, is not a regular file, has a non-empty
    /// write-ahead log beside it, or exists while `replacing` is false; `.failed` when the copy cannot be made
    /// (its temporary file is then removed).
    @discardableResult
    public func backup(to destination: String, replacing: Bool) throws(JournalError) -> BackupResult {
        try Self.checkBackupDestination(destination, journal: path, replacing: replacing)
        let folderLock = Self.removeStaleTemporaries(of: destination)
        defer { if folderLock >= 0 { Glibc.close(folderLock) } }
        let temporary = "\(destination).tmp-\(RandomUUID.make().prefix(8))"
        func removeTemporary() {
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) }
        }
        let events: Int
        do throws(SQLiteError) {
            events = try Self.writeCopy(of: database.connection, to: temporary)
        } catch {
            removeTemporary()
            throw JournalError(.failed, "cannot back up \(path) to \(destination): \(error.message)")
        }
        do throws(JournalError) {
            try Self.syncFile(temporary)
            try Self.publish(temporary, as: destination, replacing: replacing)
        } catch {
            removeTemporary()
            throw error
        }
        var info = stat()
        let bytes = stat(destination, &info) == 0 ? Int(info.st_size) : 0
        return BackupResult(path: destination, events: events, bytes: bytes)
    }

    // MARK: - Steps

    /// Removes the temporary copies (`<destination>.tmp-XXXXXXXX` and their SQLite side files) that backups to
    /// `destination` killed midway left beside it, and returns a descriptor of the folder that the caller keeps
    /// open (closing it releases its lock) while it writes its own, or -1.
    ///
    /// Backups hold a shared `flock` on the folder while they write; the clean-up needs the exclusive lock, so it
    /// runs only when no backup of a tartil on this machine is writing there, and never removes a copy being
    /// written. Where the folder cannot be locked (some network file systems), nothing is removed.
    static func removeStaleTemporaries(of destination: String) -> Int32 {
        let base = destination.lastIndex(of: "/").map { String(destination[destination.index(after: $0)...]) } ?? destination
        return JournalDatabase.lockFolderRemovingStale(JournalDatabase.parentDirectory(destination)) { isTemporaryCopy($0, of: base, marker: ".tmp-") }
    }

    /// Whether `name` is a temporary copy a backup to `base` makes (`marker` `.tmp-`; a new journal's is `.new-`):
    /// `base`, `marker` and 8 lowercase hex digits, then
    /// nothing or an SQLite side file's ending.
    static func isTemporaryCopy(_ name: String, of base: String, marker: String) -> Bool {
        guard name.hasPrefix(base + marker) else { return false }
        var rest = name.dropFirst(base.count + marker.count)
        for side in ["-journal", "-wal", "-shm"] where rest.hasSuffix(side) { rest = rest.dropLast(side.count) }
        return rest.utf8.count == 8 && rest.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The destination may be written: not the journal or its side files, a regular file or nothing yet, no
    /// log beside it, and not there at all unless `replacing`.
    static func checkBackupDestination(_ destination: String, journal: String, replacing: Bool) throws(JournalError) {
        var target = stat()
        guard stat(destination, &target) == 0 else {
            let error = Errno.current
            if error == .noEntry { return }
            throw JournalError(.failed, "cannot back up to \(destination): \(error)")
        }
        for suffix in ["", "-wal", "-shm"] {
            var live = stat()
            if stat(journal + suffix, &live) == 0, live.st_dev == target.st_dev, live.st_ino == target.st_ino {
                let what = suffix.isEmpty ? "the journal itself" : "the journal's \(suffix) file"
                throw JournalError(.badDestination, "\(destination) is \(what) (\(journal + suffix)): back up to another file")
            }
        }
        guard target.st_mode & S_IFMT == S_IFREG else {
            throw JournalError(
                .badDestination, "\(destination) is \(JournalDatabase.fileKind(target.st_mode)): name a file to write the backup to")
        }
        guard replacing else {
            throw JournalError(.badDestination, "\(destination) exists: add --force to replace it")
        }
        var log = stat()
        if stat(destination + "-wal", &log) == 0, log.st_size > 0 {
            throw JournalError(
                .badDestination,
                "\(destination) has a write-ahead log beside it (\(destination)-wal): a tartil may be using it as its journal; it was left alone")
        }
    }

    /// Copies `source` into a new database at `temporary`, leaves it in WAL mode with every page in the file
    /// itself (checkpointed, the log removed at close), checks it, and returns how many events it holds.
    static func writeCopy(of source: Connection, to temporary: String) throws(SQLiteError) -> Int {
        let copy = try Connection(path: temporary, mode: .readWriteCreate)
        do throws(SQLiteError) {
            try copy.execute("PRAGMA synchronous = FULL")
            try source.backup(into: copy)
            try copy.close()
        } catch {
            try? copy.close()
            throw error
        }
        // Reopened, so that the header the copy took from the source (WAL mode) is read afresh.
        let check = try Connection(path: temporary, mode: .readWrite)
        do throws(SQLiteError) {
            try check.execute("PRAGMA synchronous = FULL")
            try check.enableWAL()
            try check.checkpoint(.truncate)
            let verdict = try check.scalarText("PRAGMA quick_check")
            guard verdict == "ok" else {
                throw SQLiteError(code: .corrupt, message: "the copy failed SQLite's quick check (\(verdict ?? "no answer"))")
            }
            let events = Int(try check.scalarInteger("SELECT count(*) FROM events") ?? 0)
            try check.close()
            var log = stat()
            if stat(temporary + "-wal", &log) == 0, log.st_size > 0 {
                throw SQLiteError(code: .ioError, message: "the copy's write-ahead log was not folded into it")
            }
            return events
        } catch {
            try? check.close()
            throw error
        }
    }

    /// fsync: the copy's bytes are on disk before it gets its name.
    static func syncFile(_ path: String) throws(JournalError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            let reason = Errno.current
            if descriptor >= 0 { Glibc.close(descriptor) }
            throw JournalError(.failed, "cannot sync the backup \(path): \(reason)")
        }
        Glibc.close(descriptor)
    }

    /// Gives `temporary` the name `destination` and fsyncs the directory. Without `replacing` the name is taken
    /// with `link`, which fails when a file appeared there meanwhile (where hard links are not supported, a
    /// rename after checking again); with it, `rename` replaces the old file atomically.
    static func publish(_ temporary: String, as destination: String, replacing: Bool) throws(JournalError) {
        var done = false
        if !replacing {
            if link(temporary, destination) == 0 {
                unlink(temporary)
                done = true
            } else if Errno.current == .exists {
                throw JournalError(.badDestination, "\(destination) exists: add --force to replace it")
            } else if access(destination, F_OK) == 0 {
                throw JournalError(.badDestination, "\(destination) exists: add --force to replace it")
            }
        }
        if !done && rename(temporary, destination) != 0 {
            throw JournalError(.failed, "cannot name the backup \(destination): \(Errno.current)")
        }
        FileSystem.syncDirectory(JournalDatabase.parentDirectory(destination))
    }
}
