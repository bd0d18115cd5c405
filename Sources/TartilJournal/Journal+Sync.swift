import Glibc
import TartilCore
import TartilSQLite
import TartilSystem

/// `journal sync DIR`: journals exchanged through a folder that a file-sync tool (Syncthing, Dropbox, Nextcloud,
/// rclone, a network share) keeps the same on several machines.
///
/// Each device writes one file there, `DIR/<device-id>.tartil-journal`, and only reads the others. A run:
/// 1. takes the sync lock (`<journal>.sync-lock`, beside the journal, never in DIR), so two runs on one machine
///    (cron and `--watch`, say) take turns; the merges themselves are SQLite transactions, safe without it;
/// 2. takes in the file at this device's own name (`takeInOwnFile`: merged, this device's events a restored
///    journal lacks folded back, or moved aside; never overwritten unread), and finds out whether another journal
///    writes under this device's id (`SyncIdentity`: it then takes a new one);
/// 3. merges every other device's file that `SyncFolder.decide` lets through and that is a valid tartil journal
///    of that device (`merge`, which reads them read-only and immutable and checks everything it takes); any
///    file that is not, or that vanishes or cannot be read meanwhile, is skipped with the reason;
/// 4. then writes this device's snapshot (`backup`, which first removes temporary copies that killed runs left:
///    SQLite's online backup API into a temporary name in DIR,
///    checked, fsynced, renamed, the folder fsynced), unless the one there already holds every event: so what a
///    run learnt is published in the same run, and a run that learnt nothing writes nothing (a sync tool has
///    nothing to send).
extension Journal {

    /// How long a run waits for another run's lock before giving up: 60 s.
    public static let syncLockWaitMilliseconds = 60_000

    /// Merges the other devices' journals in `folder` and then writes this device's snapshot there. Throws
    /// `.badDestination` when `folder` cannot be used (not a directory, not writable), `.interrupted` when
    /// `shouldStop` returned true (the merge under way is rolled back), `.failed` for a failure of this journal
    /// or of writing the snapshot; a file of the folder that cannot be merged is never an error, only a skip.
    public func sync(folder: String, shouldStop: @escaping @Sendable () -> Bool = { false }) throws(JournalError) -> SyncReport {
        try Self.checkSyncFolder(folder)
        let lock = try SyncLock(journalPath: path, clock: clock, shouldStop: shouldStop)
        defer { lock.release() }
        try refreshDeviceID()
        let startID = deviceID
        let ownName = SyncFolder.fileName(deviceID: deviceID)
        var report = SyncReport(folder: folder, ownFile: folder + "/" + ownName)
        // The file at this device's name first: what it holds is taken in (this device's events a restored journal
        // lacks are folded back) or it is moved aside, never overwritten.
        try takeInOwnFile(folder: folder, name: ownName, report: &report, shouldStop: shouldStop)
        let entries: [SyncFolder.Entry]
        do {
            entries = try FileSystem.names(in: folder).sorted().compactMap { name in Self.entry(folder, name) }
        } catch {
            throw JournalError(.failed, "cannot list \(folder): \(error.description)")
        }
        for entry in entries {
            if entry.name.hasPrefix(ownName + ".tmp-") {
                // A snapshot being written, or one of a run that was killed: `backup` removes those when no backup
                // on this machine is writing in the folder (another journal with this id may be, mid-write).
                continue
            }
            if entry.name == ownName && deviceID == startID { continue }  // taken in above
            switch SyncFolder.decide(entry, ownDeviceID: deviceID) {
            case .ignore: report.ignored += 1
            case .own: break
            case .skip(let reason): report.skipped.append(SyncSkip(name: entry.name, reason: reason))
            case .merge(let device):
                if shouldStop() { throw JournalError(.interrupted, "journal sync \(folder): interrupted; nothing more was merged") }
                do throws(JournalError) {
                    let added = try merge(from: folder + "/" + entry.name, expectedDeviceID: device, shouldStop: shouldStop)
                    report.merged.append(SyncMerge(name: entry.name, newEvents: added))
                    noteIdentity(of: entry.name, in: &report, startID: startID)
                } catch {
                    switch error.code {
                    case .notAJournal, .refused, .badDestination, .unknownBookmark:
                        report.skipped.append(SyncSkip(name: entry.name, reason: error.message))
                    case .unreadable:
                        let gone = access(folder + "/" + entry.name, F_OK) != 0 && Errno.current == .noEntry
                        report.skipped.append(
                            SyncSkip(name: entry.name, reason: gone ? "gone while being read (a sync tool replaced or removed it)" : error.message))
                    case .interrupted, .failed:
                        throw error
                    }
                }
            }
        }
        if shouldStop() { throw JournalError(.interrupted, "journal sync \(folder): interrupted before this device's snapshot was written") }
        if deviceID != startID {
            // A new id: the snapshot goes under the new name; what is at that name is taken in first, as above.
            report.ownFile = folder + "/" + SyncFolder.fileName(deviceID: deviceID)
            try takeInOwnFile(folder: folder, name: SyncFolder.fileName(deviceID: deviceID), report: &report, shouldStop: shouldStop)
        }
        // Another journal writing under this id (a copy, not yet found out) may have replaced the file since it
        // was taken in: it is taken in again rather than overwritten.
        var current = false
        for attempt in 0..<3 {
            do throws(JournalError) {
                current = try snapshotIsCurrent(report.ownFile)
                break
            } catch {
                guard attempt < 2, error.code == .failed, access(report.ownFile, F_OK) == 0 else { throw error }
                try takeInOwnFile(
                    folder: folder, name: String(report.ownFile.dropFirst(folder.count + 1)), report: &report, shouldStop: shouldStop)
                if deviceID != startID { report.ownFile = folder + "/" + SyncFolder.fileName(deviceID: deviceID) }
            }
        }
        if !current {
            do throws(JournalError) {
                report.published = try backup(to: report.ownFile, replacing: true)
            } catch {
                // Something else has this device's name in the folder (a directory, a file with a log beside it):
                // the folder is fine otherwise, so it is a failure to write, not a bad argument.
                throw error.code == .badDestination ? JournalError(.failed, error.message) : error
            }
        }
        return report
    }

    // MARK: - Steps

    /// What the file at this device's name in the folder is (`SyncIdentity.OwnFile`).
    func inspectOwnFile(_ file: String) throws(JournalError) -> SyncIdentity.OwnFile {
        var info = stat()
        guard lstat(file, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFREG else { return .absent }  // a directory or a link: the write fails, saying so
        let bytes = Int64(info.st_size)
        do {
            try Self.checkMergeSource(file)
        } catch {
            if error.code == .unreadable && access(file, F_OK) == 0 { throw JournalError(.failed, error.message) }
            return error.code == .unreadable ? .absent : .unusable(reason: error.message, bytes: bytes)
        }
        do {
            try attachOther(file)
        } catch {
            return .unusable(reason: error.message, bytes: bytes)
        }
        let connection = database.connection
        defer { try? connection.execute("DETACH DATABASE other") }
        do {
            try Self.checkWhole(connection, file)
            try Self.checkSchema(connection, file)
            let owner = try connection.scalarText("SELECT value FROM other.meta WHERE key = 'device_id'") ?? ""
            return owner == deviceID ? .ownJournal : .otherDevice(deviceID: owner)
        } catch let error as JournalError {
            return .unusable(reason: error.message, bytes: bytes)
        } catch let error as SQLiteError {
            return .unusable(reason: error.message, bytes: bytes)
        } catch {
            return .unusable(reason: "\(error)", bytes: bytes)
        }
    }

    /// Takes in the file at this device's name `name` before the snapshot is written there (see
    /// `SyncIdentity.action`): merged, or moved aside when it cannot be.
    func takeInOwnFile(folder: String, name: String, report: inout SyncReport, shouldStop: @escaping @Sendable () -> Bool) throws(JournalError) {
        let file = folder + "/" + name
        let found = try inspectOwnFile(file)
        var action = SyncIdentity.action(for: found)
        if action == .mergeThenWrite {
            let before = deviceID
            do throws(JournalError) {
                let added = try merge(from: file, shouldStop: shouldStop)
                if added > 0 { report.merged.append(SyncMerge(name: name, newEvents: added)) }
                noteIdentity(of: name, in: &report, startID: before)
            } catch {
                switch error.code {
                case .notAJournal, .refused, .badDestination, .unknownBookmark:
                    // This device's own snapshot refused for what it holds (notes an older tartil allowed, say):
                    // written over when it holds no event the journal lacks, else kept aside.
                    let known = found == .ownJournal && holdsOnlyKnownEvents(file)
                    action = known ? .write : .moveAside(reason: error.message)
                case .unreadable:
                    report.skipped.append(SyncSkip(name: name, reason: error.message))
                case .interrupted, .failed:
                    throw error
                }
            }
        }
        guard case .moveAside(let reason) = action else { return }
        let aside = SyncIdentity.asideName(deviceID: String(name.dropLast(SyncFolder.suffix.count)), timeMs: clock.wallMilliseconds)
        guard rename(file, folder + "/" + aside) == 0 else {
            throw JournalError(.failed, "cannot move \(file) aside to \(aside) (it holds what this journal cannot merge: \(reason)): \(Errno.current)")
        }
        FileSystem.syncDirectory(folder)
        report.movedAside.append(SyncSkip(name: aside, reason: reason))
    }

    /// Whether every event of the journal at `file` is in this journal (by event id): one lookup per event of the
    /// file, for the rare file that a merge refused.
    func holdsOnlyKnownEvents(_ file: String) -> Bool {
        do {
            try attachOther(file)
        } catch {
            return false
        }
        let connection = database.connection
        defer { try? connection.execute("DETACH DATABASE other") }
        let unknown = try? connection.scalarText(
            "SELECT count(*) FROM other.events AS o WHERE NOT EXISTS (SELECT 1 FROM main.events AS m WHERE m.event_id = o.event_id)")
        return unknown == "0"
    }

    /// Records in `report` what the last merge (of the file `name`) found of this device's events.
    func noteIdentity(of name: String, in report: inout SyncReport, startID: String) {
        switch lastMergeIdentity {
        case .inStep: break
        case .restored: if !report.restoredFrom.contains(name) { report.restoredFrom.append(name) }
        case .shared: if report.previousDeviceID == nil { report.previousDeviceID = startID }
        }
    }

    /// The folder must be a directory this user can list, read and write.
    static func checkSyncFolder(_ folder: String) throws(JournalError) {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            throw JournalError(.badDestination, "journal sync: \(folder): \(Errno.current) (name the folder your sync tool keeps in sync)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw JournalError(.badDestination, "journal sync: \(folder) is not a directory (name the folder your sync tool keeps in sync)")
        }
        guard access(folder, R_OK | W_OK | X_OK) == 0 else {
            throw JournalError(.badDestination, "journal sync: \(folder) is not writable and readable by this user (\(Errno.current))")
        }
    }

    /// `name` in `folder` as `lstat` sees it (a symbolic link is not followed), or nil when it is gone already.
    static func entry(_ folder: String, _ name: String) -> SyncFolder.Entry? {
        var info = stat()
        guard lstat(folder + "/" + name, &info) == 0 else { return nil }
        let kind: SyncFolder.EntryKind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        return SyncFolder.Entry(name: name, kind: kind, size: Int64(info.st_size))
    }

    /// Whether the snapshot at `snapshot` is a journal of this device holding, of every device this journal has
    /// events of, the same last sequence number (one index lookup per device on each side). Anything unusual (no
    /// file, not a journal, damaged, a log beside it) is "not current": it is then written again. Throws `.failed`
    /// when it holds events of this device that this journal lacks: this journal was restored from an older copy,
    /// or another machine uses a copy of it (the same device id); replacing the file would lose those events.
    func snapshotIsCurrent(_ snapshot: String) throws(JournalError) -> Bool {
        do {
            try Self.checkMergeSource(snapshot)
            try attachOther(snapshot)
        } catch {
            return false
        }
        let connection = database.connection
        defer { try? connection.execute("DETACH DATABASE other") }
        do {
            try Self.checkWhole(connection, snapshot)
            try Self.checkSchema(connection, snapshot)
            try Self.checkDeviceID(connection, snapshot, expected: deviceID)
            let ahead = try connection.prepare("""
                SELECT (SELECT max(device_seq) FROM other.events WHERE device_id = ?1)
                       > coalesce((SELECT max(device_seq) FROM main.events WHERE device_id = ?1), 0)
                """)
            try ahead.bind([.text(deviceID)])
            if try ahead.step(), ahead.integer(at: 0) == 1 {
                throw JournalError(
                    .failed,
                    "\(snapshot) holds events of this device that this journal lacks: this journal was restored from an older copy, or another machine uses a copy of it (the same device id). It was left as it is (the events only it holds are there); move it out of the folder to let this device write its snapshot")
            }
            // Devices of this journal missing from the snapshot or behind there, and the other way round.
            func differing(_ schema: String) throws(SQLiteError) -> String? {
                try connection.scalarText("""
                    WITH RECURSIVE devices(id) AS (
                        SELECT (SELECT min(device_id) FROM \(schema).events)
                        UNION ALL
                        SELECT (SELECT min(device_id) FROM \(schema).events WHERE device_id > devices.id)
                        FROM devices WHERE devices.id IS NOT NULL
                        LIMIT \(Self.mostDevices))
                    SELECT count(*) FROM devices WHERE id IS NOT NULL
                      AND ((SELECT max(device_seq) FROM main.events WHERE device_id = id)
                              IS NOT (SELECT max(device_seq) FROM other.events WHERE device_id = id)
                           OR (SELECT count(*) FROM main.events WHERE device_id = id)
                              IS NOT (SELECT count(*) FROM other.events WHERE device_id = id))
                    """)
            }
            let behind = try differing("main")
            let extra = try differing("other")
            return behind == "0" && extra == "0"
        } catch let error as JournalError where error.code == .failed {
            throw error
        } catch {
            return false
        }
    }
}

/// The lock that lets one `journal sync` run at a time on a machine: `flock` on `<journal>.sync-lock`, a file
/// beside the journal (it is never removed: removing a lock file races with the next run opening it). The kernel
/// releases it when the process ends, however it ends.
final class SyncLock {
    private var descriptor: Int32

    init(journalPath: String, clock: any TartilClock, shouldStop: @Sendable () -> Bool) throws(JournalError) {
        let path = journalPath + ".sync-lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw JournalError(.failed, "cannot open the sync lock \(path): \(Errno.current)")
        }
        let deadline = clock.now.adding(seconds: Double(Journal.syncLockWaitMilliseconds) / 1000)
        while true {
            do throws(Errno) {
                _ = try SystemCall.retrying { flock(descriptor, LOCK_EX | LOCK_NB) }
                break
            } catch {
                guard error == .wouldBlock else {
                    release()
                    throw JournalError(.failed, "cannot lock \(path): \(error)")
                }
            }
            if shouldStop() {
                release()
                throw JournalError(.interrupted, "journal sync: interrupted while waiting for another sync to finish")
            }
            guard clock.now < deadline else {
                release()
                throw JournalError(
                    .failed,
                    "another 'tartil journal sync' of this journal has been running for over \(Journal.syncLockWaitMilliseconds / 1000) s (it holds \(path)); nothing was done")
            }
            clock.sleep(seconds: 0.05)
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)  // closing the descriptor releases the flock
        descriptor = -1
    }

    deinit { release() }
}
