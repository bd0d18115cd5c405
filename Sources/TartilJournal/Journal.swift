import Glibc
import TartilCore
import TartilSQLite
import TartilSystem

/// The error TartilJournal throws: what went wrong with which file, with SQLite's own words.
public struct JournalError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The file is not a tartil journal (or is damaged): nothing was written to it.
        case notAJournal
        /// A file to merge from holds events that cannot be true (a time in the future, an unknown kind, a note
        /// over the size limit, …): nothing was merged.
        case refused
        /// Ctrl-C or SIGTERM stopped the work; what it was doing was rolled back.
        case interrupted
        /// A backup's destination cannot be written: it is the journal itself, it exists (and replacing it was
        /// not asked for), or it is not a regular file. Nothing was written.
        case badDestination
        /// A file to merge from cannot be read: it is gone (a sync tool replaced or removed it), it cannot be opened,
        /// or a write-ahead log is beside it. Nothing was merged; this journal is fine.
        case unreadable
        /// No bookmark has the id given (or a prefix fits several, or it was removed already). Nothing was written.
        case unknownBookmark
        /// Another kind of failure (disk full, permissions, …).
        case failed
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `unreadable`: the error is about reading another file (one to merge), not about this journal.
    init(_ error: SQLiteError, _ context: String, unreadable: Bool = false) {
        if error.code.primary == .interrupt {
            self.init(.interrupted, "\(context): interrupted; nothing was changed")
            return
        }
        let refused = error.code.primary == .notADatabase || error.code.primary == .corrupt
        self.init(refused ? .notAJournal : unreadable ? .unreadable : .failed, refused ? error.message : "\(context): \(error.message)")
    }

    public var description: String { message }
}

/// The journal: an append-only record of where a listener was, on this device and on others merged in.
///
/// ```swift
/// let journal = try Journal(path: "journal.sqlite")
/// try journal.append(.position(reciter: "r", surah: 36, ayah: 12, offsetSamples: 4410, sampleRate: 22050, reason: .pause))
/// let latest = try journal.latestPositions(reciter: nil, surah: 36)
/// ```
/// Derived state is deterministic: of several positions the latest by (time, device id, event id) wins, so
/// merging journals in any order, any number of times, gives the same positions. An append returns once it is
/// durable (`synchronous=FULL`).
///
/// Confined to one thread (the player appends through `JournalWriter`'s thread, never the audio thread).
public final class Journal {
    public let path: String
    /// This journal's device: made when the journal is created, and changed only when the journal finds that
    /// another journal writes under the same id (a copy used on a second machine: see `SyncIdentity`); the old
    /// id is then retired (`meta` keeps it as `retired_device_id:<id>`). Appends take the id from the journal
    /// itself, so a player in another process that opened the journal before the change writes under the new one.
    public internal(set) var deviceID: String
    /// Where events' times come from (`wallMilliseconds`), and the sync lock's wait.
    public let clock: any TartilClock
    let database: JournalDatabase
    private var insert: Statement?
    /// What the last `merge` found of this device's events in the other file (`SyncIdentity`): `.restored` when
    /// it folded this device's own events back in, `.shared` when it took a new device id first.
    public internal(set) var lastMergeIdentity: SyncIdentity.Verdict = .inStep

    /// Opens (creating when needed) the journal at `path`. A file that is not a journal is refused unchanged.
    /// Events appended without a time get `clock`'s wall time.
    public init(
        path: String, readOnly: Bool = false, clock: any TartilClock = SystemClock.shared
    ) throws(JournalError) {
        self.path = path
        self.clock = clock
        do {
            database = try JournalDatabase(path: path, readOnly: readOnly)
        } catch {
            throw JournalError(error, "cannot open the journal \(path)")
        }
        do {
            try Self.checkOwnSchema(database.connection, path)
        } catch {
            try? database.close()
            throw error
        }
        do {
            let connection = database.connection
            if let existing = try connection.scalarText("SELECT value FROM meta WHERE key = 'device_id'") {
                deviceID = existing
            } else if readOnly {
                deviceID = ""
            } else {
                let made = RandomUUID.make()
                try connection.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('device_id', '\(made)')")
                deviceID = try connection.scalarText("SELECT value FROM meta WHERE key = 'device_id'") ?? made
            }
        } catch {
            try? database.close()
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }

    /// Closes the journal.
    /// Closes the journal. Returns why the write-ahead log could not be folded into the file, if it could not
    /// (another program kept reading for longer than the busy timeout): the events are safe in the log, and the
    /// next tartil that writes folds them in.
    @discardableResult
    public func close() -> JournalError? {
        insert = nil
        do {
            try database.close()
            return nil
        } catch {
            return JournalError(error, "the journal's log could not be folded into \(path)")
        }
    }

    // MARK: - Appending

    /// Appends an event and returns it once it is durable. Its time is the wall clock's, but always after the
    /// device's previous event (a millisecond later when the clock has not moved, or went back), so that "the
    /// latest by time" is also the last appended on one device.
    ///
    /// Both the sequence number and the previous time come from the device's last event by sequence number, one
    /// index lookup each (times only go forward on a device, so its last event has its latest time; asking for
    /// `max(ts_ms)` instead read every event of the device, 1 MB of a journal after some months of use).
    @discardableResult
    public func append(_ draft: EventDraft, timeMs: Int64? = nil) throws(JournalError) -> JournalEvent {
        let eventID = RandomUUID.make()
        let time = timeMs ?? clock.wallMilliseconds
        do throws(SQLiteError) {
            if insert == nil {
                // The device id is read from the journal in the same statement (not this object's copy of it): it
                // changes when the journal finds its id shared, perhaps in another process.
                insert = try database.connection.prepare("""
                    INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples,
                                       offset_ms, reason, note, target_id)
                    SELECT ?1, d.value, (SELECT coalesce(max(device_seq), 0) + 1 FROM events WHERE device_id = d.value),
                           max(?3, coalesce((SELECT ts_ms + 1 FROM events WHERE device_id = d.value
                                             ORDER BY device_seq DESC LIMIT 1), 0)),
                           ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12
                    FROM meta AS d WHERE d.key = 'device_id'
                    RETURNING device_seq, ts_ms, device_id
                    """)
            }
            let statement = insert!
            try statement.bind([
                .text(eventID), .null, .integer(time), .text(draft.kind.rawValue), Self.value(draft.reciter),
                Self.value(draft.surah.map(Int64.init)), Self.value(draft.ayah.map(Int64.init)), Self.value(draft.offsetSamples),
                Self.value(draft.offsetMs), Self.value(draft.reason?.rawValue), Self.value(draft.note),
                Self.value(draft.targetID),
            ])
            guard try statement.step() else { throw SQLiteError(code: .error, message: "the insert returned no sequence number") }
            let sequence = statement.integer(at: 0)
            let stored = statement.integer(at: 1)
            if let current = statement.text(at: 2), current != deviceID { deviceID = current }
            while try statement.step() {}
            return JournalEvent(
                eventID: eventID, deviceID: deviceID, deviceSeq: sequence, timeMs: stored, kind: draft.kind,
                reciter: draft.reciter, surah: draft.surah, ayah: draft.ayah, offsetSamples: draft.offsetSamples,
                offsetMs: draft.offsetMs, reason: draft.reason, note: draft.note, targetID: draft.targetID)
        } catch {
            throw JournalError(error, "cannot append to the journal \(path)")
        }
    }

    /// Appends several events in one transaction (one fsync for them all) and returns them once durable.
    @discardableResult
    public func append(contentsOf drafts: [EventDraft]) throws(JournalError) -> [JournalEvent] {
        guard drafts.count > 1 else { return try drafts.map { draft throws(JournalError) in try append(draft) } }
        let connection = database.connection
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            throw JournalError(error, "cannot append to the journal \(path)")
        }
        do {
            let events = try drafts.map { draft throws(JournalError) in try append(draft) }
            try connection.execute("COMMIT")
            return events
        } catch let error as JournalError {
            try? connection.execute("ROLLBACK")
            throw error
        } catch {
            try? connection.execute("ROLLBACK")
            throw JournalError(.failed, "cannot append to the journal \(path): \(error)")
        }
    }

    // MARK: - Reading

    static let columns = JournalEvent.columnNames.joined(separator: ", ")

    /// `columns` as a query of this journal selects them: a journal made before `target_id` existed (opened
    /// read-only, so not migrated) gives NULL for it.
    var selectColumns: String {
        database.hasTargetColumn ? Self.columns : Self.columns.replacingEvery("target_id", with: "NULL AS target_id")
    }

    /// The latest position of each surah (of `reciter` when given; only `surah` when given), latest first. With
    /// `sinceMs`, only the surahs whose latest position is from then on.
    public func latestPositions(reciter: String?, surah: Int?, sinceMs: Int64? = nil) throws(JournalError) -> [JournalEvent] {
        var conditions = ["kind = 'position'"]
        var values: [Statement.Value] = []
        if let sinceMs {
            // The latest of a surah is from `sinceMs` on exactly when one of its positions is.
            conditions.append("ts_ms >= ?")
            values.append(.integer(sinceMs))
        }
        if let reciter {
            conditions.append("reciter = ?")
            values.append(.text(reciter))
        }
        if let surah {
            conditions.append("surah = ?")
            values.append(.integer(Int64(surah)))
        }
        return try query("""
            SELECT \(selectColumns) FROM (
                SELECT *, row_number() OVER (PARTITION BY surah ORDER BY ts_ms DESC, device_id DESC, event_id DESC) AS rank
                FROM events WHERE \(conditions.joined(separator: " AND ")))
            WHERE rank = 1 ORDER BY ts_ms DESC, device_id DESC, event_id DESC
            """, values)
    }

    /// The latest position of all (of `reciter`, of `surah` when given): where `resume` continues.
    public func lastPosition(reciter: String?, surah: Int?) throws(JournalError) -> JournalEvent? {
        try latestPositions(reciter: reciter, surah: surah).first
    }

    /// Events from `sinceMs` on (all when nil), in order of (time, device id, event id), of `kinds` when given.
    public func events(sinceMs: Int64? = nil, kinds: Set<JournalEvent.Kind>? = nil) throws(JournalError) -> [JournalEvent] {
        var conditions: [String] = []
        var values: [Statement.Value] = []
        if let sinceMs {
            conditions.append("ts_ms >= ?")
            values.append(.integer(sinceMs))
        }
        if let kinds {
            conditions.append("kind IN (\(kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")))")
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try query("SELECT \(selectColumns) FROM events \(filter) ORDER BY ts_ms, device_id, event_id", values)
    }


    /// Events that `filter` keeps, oldest first by (time, device id, event id). A session end records no
    /// reciter or surah: it belongs to the session its device started last before it, so `reciter` and `surah`
    /// match it by that session start's (its reciter; a surah its `play` covered is not known, so `surah`
    /// leaves session starts and ends out).
    public func history(_ filter: HistoryFilter) throws(JournalError) -> [JournalEvent] {
        var conditions: [String] = []
        var values: [Statement.Value] = []
        if let reciter = filter.reciter {
            conditions.append("""
                coalesce(reciter, CASE WHEN kind = 'session-end' THEN (
                    SELECT s.reciter FROM events s WHERE s.device_id = e.device_id AND s.kind = 'session-start'
                    AND s.device_seq < e.device_seq ORDER BY s.device_seq DESC LIMIT 1) END) = ?
                """)
            values.append(.text(reciter))
        }
        if let surah = filter.surah {
            conditions.append("surah = ?")
            values.append(.integer(Int64(surah)))
        }
        if let kinds = filter.kinds {
            conditions.append("kind IN (\(kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")))")
        }
        if let sinceMs = filter.sinceMs {
            conditions.append("ts_ms >= ?")
            values.append(.integer(sinceMs))
        }
        if let untilMs = filter.untilMs {
            conditions.append("ts_ms < ?")
            values.append(.integer(untilMs))
        }
        let filterText = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        guard let limit = filter.limit else {
            return try query("SELECT \(selectColumns) FROM events e \(filterText) ORDER BY ts_ms, device_id, event_id", values)
        }
        return try query("""
            SELECT * FROM (SELECT \(selectColumns) FROM events e \(filterText)
                           ORDER BY ts_ms DESC, device_id DESC, event_id DESC LIMIT \(max(0, limit)))
            ORDER BY ts_ms, device_id, event_id
            """, values)
    }

    /// True when an event of the journal names `reciter` (a reciter since taken out of mirrors.json is still
    /// one the journal's listings may ask for).
    public func mentions(reciter: String) throws(JournalError) -> Bool {
        do {
            let statement = try database.connection.prepare("SELECT 1 FROM events WHERE reciter = ? LIMIT 1")
            try statement.bind([.text(reciter)])
            return try statement.step()
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }

    private func query(_ sql: String, _ values: [Statement.Value]) throws(JournalError) -> [JournalEvent] {
        do {
            let statement = try database.connection.prepare(sql)
            try statement.bind(values)
            var events: [JournalEvent] = []
            while try statement.step() { events.append(try Self.event(statement)) }
            return events
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }

    /// The event in the current row of a query of `columns`. A kind or reason this build does not know (a newer
    /// tartil's, or a damaged row) is an error naming the event: it is never read as another kind.
    static func event(_ row: Statement) throws(SQLiteError) -> JournalEvent {
        let eventID = row.text(at: 0) ?? ""
        let kindText = row.text(at: 4) ?? ""
        guard let kind = JournalEvent.Kind(rawValue: kindText) else {
            throw SQLiteError(
                code: .error,
                message: "the event \(eventID) has the kind '\(kindText)', which this build does not know (known: \(JournalEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let reasonText = row.text(at: 10)
        let reason = reasonText.flatMap(JournalEvent.Reason.init(rawValue:))
        if let reasonText, reason == nil {
            throw SQLiteError(
                code: .error, message: "the event \(eventID) has the reason '\(reasonText)', which this build does not know")
        }
        return JournalEvent(
            eventID: eventID, deviceID: row.text(at: 1) ?? "", deviceSeq: row.integer(at: 2),
            timeMs: row.integer(at: 3), kind: kind,
            reciter: row.text(at: 5), surah: row.optionalInteger(at: 6).map(Int.init), ayah: row.optionalInteger(at: 7).map(Int.init),
            offsetSamples: row.optionalInteger(at: 8), offsetMs: row.optionalInteger(at: 9), reason: reason, note: row.text(at: 11),
            targetID: row.text(at: 12))
    }

    // MARK: - Checks and statistics

    /// What `journal check` finds wrong: an empty list when the integrity check passes, the append-only
    /// triggers are there and WAL is on.
    public func problems() throws(JournalError) -> [String] {
        let connection = database.connection
        do {
            var problems: [String] = []
            let statement = try connection.prepare("PRAGMA integrity_check")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(at: 0) ?? "") }
            if lines != ["ok"] { problems.append("integrity check: " + lines.prefix(5).joined(separator: "; ")) }
            let triggers = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            var present: Set<String> = []
            while try triggers.step() { present.insert(triggers.text(at: 0) ?? "") }
            for name in JournalDatabase.appendOnlyTriggers where !present.contains(name) {
                problems.append("the append-only trigger \(name) is missing")
            }
            let known = JournalEvent.Kind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            let reasons = JournalEvent.Reason.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            let unknown = Int(try connection.scalarInteger(
                "SELECT count(*) FROM events WHERE kind NOT IN (\(known)) OR (reason IS NOT NULL AND reason NOT IN (\(reasons)))") ?? 0)
            if unknown > 0 { problems.append("\(unknown) event\(unknown == 1 ? " has" : "s have") a kind or reason this build does not know") }
            let mode = database.readsFileAlone
                ? (JournalDatabase.fileIsInWALMode(path) ? "wal" : "not wal (by the file's header)") : try connection.scalarText("PRAGMA journal_mode")
            if mode?.lowercased() != "wal" { problems.append("journal_mode is \(mode ?? "unknown"), not wal") }
            return problems
        } catch {
            throw JournalError(error, "cannot check the journal \(path)")
        }
    }


    public func stats() throws(JournalError) -> Stats {
        let connection = database.connection
        do {
            var stats = Stats()
            let kinds = try connection.prepare("SELECT kind, count(*) FROM events GROUP BY kind")
            while try kinds.step() {
                if let kind = JournalEvent.Kind(rawValue: kinds.text(at: 0) ?? "") { stats.byKind[kind] = Int(kinds.integer(at: 1)) }
            }
            stats.events = Int(try connection.scalarInteger("SELECT count(*) FROM events") ?? 0)
            let summary = try connection.prepare("""
                SELECT count(DISTINCT device_id), min(ts_ms), max(ts_ms),
                       (SELECT count(DISTINCT surah) FROM events WHERE kind = 'position') FROM events
                """)
            if try summary.step() {
                stats.devices = Int(summary.integer(at: 0))
                stats.firstMs = summary.optionalInteger(at: 1)
                stats.lastMs = summary.optionalInteger(at: 2)
                stats.surahsWithPositions = Int(summary.integer(at: 3))
            }
            // One pass over the device index; times only go forward on a device, but a merged journal's may not
            // have, so min and max rather than the first and last by sequence number.
            let devices = try connection.prepare("""
                SELECT device_id, count(*), min(ts_ms), max(ts_ms) FROM events GROUP BY device_id
                ORDER BY count(*) DESC, device_id
                """)
            while try devices.step() {
                stats.byDevice.append(
                    Stats.Device(
                        deviceID: devices.text(at: 0) ?? "", events: Int(devices.integer(at: 1)), firstMs: devices.integer(at: 2),
                        lastMs: devices.integer(at: 3)))
            }
            return stats
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }

    /// The sizes of the journal file and of its write-ahead log (0 when there is none), in bytes.
    public func fileSizes() -> (journal: Int, log: Int) {
        func size(_ path: String) -> Int {
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : 0
        }
        return (size(path), size(path + "-wal"))
    }

    static func value(_ text: String?) -> Statement.Value { text.map { .text($0) } ?? .null }
    static func value(_ number: Int64?) -> Statement.Value { number.map { .integer($0) } ?? .null }
}

@available(*, unavailable) extension Journal: Sendable {}

extension Journal {
    public typealias HistoryFilter = JournalHistoryFilter
    public typealias Stats = JournalStats
    public typealias SyncReport = JournalSyncReport
    public typealias SyncSkip = JournalSyncSkip
    public typealias SyncMerge = JournalSyncMerge
    public typealias BackupResult = JournalBackupResult
    public typealias ExportFormat = JournalExportFormat
}

extension Journal {
    /// The SQLite library's version (for `tartil version`).
    public static var sqliteVersion: String { Connection.libraryVersion }
}

// MARK: - The device id

extension Journal {
    /// The prefix of the `meta` keys that keep the ids this journal retired (`retired_device_id:<id>`, the value
    /// saying when and why).
    public static let retiredKeyPrefix = "retired_device_id:"

    /// Reads the device id from the journal again (another process may have changed it).
    func refreshDeviceID() throws(JournalError) {
        do {
            if let current = try database.connection.scalarText("SELECT value FROM meta WHERE key = 'device_id'") { deviceID = current }
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }

    /// Gives the journal a new device id and retires the old one, because `reason` (another journal writes under
    /// it). Events keep the id they were written with; from now on this journal's are written under the new one.
    /// `meta` is write-once by its trigger: the trigger is dropped, the row changed and the trigger made again
    /// with its own text, in one transaction (the schema is the same after). Returns the old id.
    @discardableResult
    func takeNewDeviceID(reason: String) throws(JournalError) -> String {
        let old = deviceID
        let made = RandomUUID.make()
        let connection = database.connection
        do throws(SQLiteError) {
            try connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                guard let trigger = try connection.scalarText("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'meta_no_update'") else {
                    throw SQLiteError(code: .error, message: "the journal has no meta_no_update trigger")
                }
                let current = try connection.scalarText("SELECT value FROM meta WHERE key = 'device_id'")
                if current == old {
                    try connection.execute("DROP TRIGGER meta_no_update")
                    let update = try connection.prepare("UPDATE meta SET value = ?1 WHERE key = 'device_id'")
                    try update.bind([.text(made)])
                    while try update.step() {}
                    let retire = try connection.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)")
                    try retire.bind([.text(Self.retiredKeyPrefix + old), .text("\(clock.wallMilliseconds) \(reason.prefix(500))")])
                    while try retire.step() {}
                    try connection.execute(trigger)
                }
                try connection.execute("COMMIT")
                deviceID = current == old ? made : (current ?? made)
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        } catch {
            throw JournalError(error, "cannot give the journal \(path) a new device id")
        }
        return old
    }

    /// The ids this journal's device had before, oldest first.
    public func retiredDeviceIDs() throws(JournalError) -> [String] {
        do {
            let statement = try database.connection.prepare(
                "SELECT substr(key, \(Self.retiredKeyPrefix.count + 1)) FROM meta WHERE key GLOB 'retired_device_id:*' ORDER BY value")
            var ids: [String] = []
            while try statement.step() { ids.append(statement.text(at: 0) ?? "") }
            return ids
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }
}
