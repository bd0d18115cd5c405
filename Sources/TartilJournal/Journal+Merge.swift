import Glibc
import TartilCore
import TartilSQLite
import TartilSystem

/// `journal merge`: adding another device's events, without trusting the other file.
///
/// The other file is opened strictly read-only and immutable (no lock, no `-wal` or `-shm` beside it, so a journal
/// on a read-only mount merges), and refused before a single event is read unless it is exactly a tartil journal:
/// tables (not views) with the columns, indexes and triggers of the migrations it records (this build's, or the
/// first of them: a journal of an older tartil merges too, its events lacking only what it could not record),
/// a device id, and
/// SQLite's `quick_check` passing. Then every event must be one that can be true (see `MergeLimits`); one that is
/// not refuses the whole file. The events are added in one transaction, which Ctrl-C or SIGTERM (through
/// `shouldStop`) rolls back: the journal is then exactly as it was.
extension Journal {
    /// The limits an event from another journal must keep to (the README documents them).
    public enum MergeLimits {
        /// How far in the future an event's time may be: clocks of devices differ a little, but an event from
        /// far ahead would be "the latest" position forever in an append-only journal. 10 minutes.
        public static let futureSkewMs: Int64 = 10 * 60 * 1000
        /// The longest note, in bytes of UTF-8 (a bookmark's `--note` has the same limit). 4 KiB.
        public static let noteBytes = JournalLimits.noteBytes
        /// The longest event id, device id and reciter id, in bytes.
        public static let idBytes = 128
        /// The largest device sequence number (2^53: every device's count stays an exact integer everywhere).
        public static let largestSequence: Int64 = 1 << 53
        /// The longest offset into an ayah's recitation: 24 hours (at most 48000 samples a second).
        public static let longestOffsetMs: Int64 = 24 * 3600 * 1000
        public static let longestOffsetSamples: Int64 = 24 * 3600 * 48000
    }

    /// Adds every event of the journal at `otherPath` that this one lacks (by event id) and returns how many were
    /// new. The other file is only read. Throws `.notAJournal` for a file that is not exactly a tartil journal (or,
    /// with `expectedDeviceID`, not that device's), `.refused` for one holding events that cannot be true (nothing
    /// is merged from either), `.unreadable` when the file cannot be read (gone, unreadable, a log beside it),
    /// `.interrupted` when `shouldStop` returned true (checked every few thousand SQLite steps; the merge is rolled
    /// back).
    ///
    /// What is new is found by device and sequence number, not by reading every event: the cost of a merge is
    /// that of the events it adds (see `findNewEvents`).
    @discardableResult
    public func merge(
        from otherPath: String, expectedDeviceID: String? = nil, shouldStop: @escaping @Sendable () -> Bool = { false },
        nowMs: Int64? = nil
    ) throws(JournalError) -> Int {
        var mine = stat()
        var theirs = stat()
        if stat(path, &mine) == 0, stat(otherPath, &theirs) == 0, mine.st_dev == theirs.st_dev, mine.st_ino == theirs.st_ino {
            return 0  // this journal itself: the union adds nothing
        }
        try Self.checkMergeSource(otherPath)
        let connection = database.connection
        connection.setProgressHandler(every: 2000, shouldStop)
        do throws(JournalError) {
            try attachOther(otherPath)
        } catch {
            connection.setProgressHandler(nil)
            throw error
        }
        defer {
            // Without the progress handler: after an interrupt it would stop the clean-up too.
            connection.setProgressHandler(nil)
            try? connection.execute("DETACH DATABASE other")
        }
        var identity = SyncIdentity.Verdict.inStep
        lastMergeIdentity = .inStep
        do {
            // Anything SQLite cannot read in the other file before the merge starts means it is not a journal.
            let source: String
            do {
                try Self.checkWhole(connection, otherPath)
                let migrations = try Self.checkSchema(connection, otherPath)
                if let expectedDeviceID { try Self.checkDeviceID(connection, otherPath, expected: expectedDeviceID) }
                // What is new: per device, the events after the last this journal holds (see `findNewEvents`).
                let readsEverything = try Self.findNewEvents(connection)
                if readsEverything { try Self.quickCheck(connection, otherPath) }
                // This device's events in the file, by identity: a journal restored from an older copy folds its
                // own later events back in; one whose id another journal writes under takes a new id first.
                identity = SyncIdentity.verdict(try compareOwnEvents(connection))
                if identity == .shared {
                    try connection.execute(
                        "UPDATE temp.merge_from SET after_seq = -9223372036854775808 WHERE device_id = '\(deviceID)'")
                }
                // A journal from before migration v2 has no target_id column (and no events that need one).
                source = """
                    (SELECT o.*\(migrations >= 2 ? "" : ", NULL AS target_id")
                     FROM temp.merge_from AS f CROSS JOIN other.events AS o
                     ON o.device_id = f.device_id AND o.device_seq > f.after_seq)
                    """
                try Self.checkEvents(
                    connection, otherPath, source: source, nowMs: nowMs ?? clock.wallMilliseconds,
                    ownDevice: identity == .inStep ? deviceID : nil)
            } catch let error as SQLiteError where error.code.primary != .interrupt {
                throw JournalError(.notAJournal, "\(otherPath) is not a tartil journal (\(error.message))")
            }
            if identity == .shared {
                // Checked, and about to be merged: the old id is retired first, so that its events from both
                // journals are merged as another device's, by event id.
                try takeNewDeviceID(reason: "another journal wrote events under this id (found in \(otherPath))")
            }
            lastMergeIdentity = identity
            try connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                try connection.execute("""
                    INSERT OR IGNORE INTO main.events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah,
                                                      offset_samples, offset_ms, reason, note, target_id)
                        SELECT \(Self.columns) FROM \(source) ORDER BY ts_ms, device_id, event_id
                    """)
                // The rows the INSERT added (not those it ignored): no count(*) of the whole journal.
                let added = Int(try connection.scalarInteger("SELECT changes()") ?? 0)
                try connection.execute("COMMIT")
                return added
            } catch {
                // Rolled back before the deferred DETACH runs (a database cannot be detached inside a transaction).
                connection.setProgressHandler(nil)
                try? connection.execute("ROLLBACK")
                throw error
            }
        } catch let error as JournalError {
            throw error
        } catch let error as SQLiteError {
            throw JournalError(error, "cannot merge \(otherPath) into \(path)")
        } catch {
            throw JournalError(.failed, "cannot merge \(otherPath) into \(path): \(error)")
        }
    }

    // MARK: - This device's events in the other file

    /// This device's events in the attached file compared with the journal's, by event id. One index lookup when
    /// the file's last event of this device is the journal's and no later than the journal's last (the usual
    /// case: the file holds a prefix of this device's events); otherwise every event of this device on both
    /// sides is looked up on the other.
    func compareOwnEvents(_ connection: Connection) throws -> SyncIdentity.Comparison {
        let statement = try connection.prepare("""
            WITH mine(last) AS (SELECT max(device_seq) FROM main.events WHERE device_id = ?1),
                 theirs(last) AS (SELECT max(device_seq) FROM other.events WHERE device_id = ?1)
            SELECT theirs.last IS NULL
                OR (theirs.last <= coalesce(mine.last, 0)
                    AND (SELECT count(*) FROM other.events o WHERE o.device_id = ?1 AND o.device_seq = theirs.last) = 1
                    AND (SELECT count(*) FROM other.events o WHERE o.device_id = ?1) = theirs.last
                    AND EXISTS (SELECT 1 FROM other.events o JOIN main.events m ON m.event_id = o.event_id
                                WHERE o.device_id = ?1 AND o.device_seq = theirs.last AND m.device_id = ?1))
            FROM mine, theirs
            """)
        try statement.bind([.text(deviceID)])
        if try statement.step(), statement.integer(at: 0) == 1 {
            return SyncIdentity.Comparison(journalOnly: 0, fileOnly: 0, fileOnlyFollowJournal: true)
        }
        let counts = try connection.prepare("""
            WITH mine(last) AS (SELECT coalesce(max(device_seq), 0) FROM main.events WHERE device_id = ?1),
                 extra AS (SELECT o.device_seq FROM other.events o WHERE o.device_id = ?1
                           AND NOT EXISTS (SELECT 1 FROM main.events m WHERE m.event_id = o.event_id))
            SELECT (SELECT count(*) FROM main.events m WHERE m.device_id = ?1
                    AND NOT EXISTS (SELECT 1 FROM other.events o WHERE o.event_id = m.event_id AND o.device_id = ?1)),
                   (SELECT count(*) FROM extra),
                   (SELECT count(*) FROM extra, mine WHERE extra.device_seq <= mine.last),
                   (SELECT count(*) - count(DISTINCT device_seq) FROM extra)
            """)
        try counts.bind([.text(deviceID)])
        guard try counts.step() else { throw SQLiteError(code: .error, message: "no answer comparing this device's events") }
        return SyncIdentity.Comparison(
            journalOnly: Int(counts.integer(at: 0)), fileOnly: Int(counts.integer(at: 1)),
            fileOnlyFollowJournal: counts.integer(at: 2) == 0 && counts.integer(at: 3) == 0)
    }

    // MARK: - Reading the other file

    /// Attaches `otherPath` as the schema `other`, read-only and immutable: SQLite takes no lock and makes no side
    /// file (`checkMergeSource` made sure no log is beside it).
    func attachOther(_ otherPath: String) throws(JournalError) {
        do throws(SQLiteError) {
            let attach = try database.connection.prepare("ATTACH DATABASE ? AS other")
            try attach.bind([.text(Connection.readOnlyURI(otherPath, immutable: true))])
            try attach.step()
        } catch {
            let unreadable = [ResultCode.cantOpen, .ioError, .busy, .locked, .interrupt].contains(error.code.primary)
            throw unreadable
                ? JournalError(error, "cannot merge \(otherPath) into \(path)", unreadable: true)
                : JournalError(.notAJournal, "\(otherPath) is not a tartil journal (\(error.message))")
        }
    }

    /// The most devices a merge looks at in one file (far more than anyone has; a crafted file with more has the
    /// rest left out, never a merge that does not end).
    static let mostDevices = 100_000

    /// Fills `temp.merge_from` with, for each device the other file has events of, the sequence number after which
    /// its events are new here, and returns whether the merge reads every event of the other file (a first merge
    /// from it).
    ///
    /// Every device numbers its own events 1, 2, 3… (`append`), and a merge takes a device's events after the last
    /// it holds, so a journal holds, of each device, its events 1 to n. When this journal's last event of a device
    /// (at sequence m, and only one there) is in the other file too, or the other's last is here (the other holds
    /// 1 to k ≤ m), only the other's events after m can be new: found by the index on (device, sequence), one
    /// lookup per device, whatever the size of either file. Otherwise (the two disagree about a device: a journal
    /// file copied to a second machine and used on both, so two devices share an id) every event of that device in
    /// the other file is compared by event id, as a union must. Both sides must also hold exactly as many events
    /// of the device as the numbers say (1 to m, none twice): an id two journals wrote under (retired since, see
    /// `SyncIdentity`) has two events at some numbers, and its events are then always compared by id. (Counting is
    /// one pass over the device's index entries, no event read.)
    static func findNewEvents(_ connection: Connection) throws -> Bool {
        try connection.execute("""
            CREATE TEMP TABLE IF NOT EXISTS merge_from(device_id PRIMARY KEY, held, theirs, after_seq) WITHOUT ROWID;
            DELETE FROM temp.merge_from;
            WITH RECURSIVE devices(id) AS (
                SELECT (SELECT min(device_id) FROM other.events WHERE typeof(device_id) = 'text')
                UNION ALL
                SELECT (SELECT min(device_id) FROM other.events WHERE device_id > devices.id AND typeof(device_id) = 'text')
                FROM devices WHERE devices.id IS NOT NULL
                LIMIT \(mostDevices))
            INSERT OR IGNORE INTO temp.merge_from(device_id, held, theirs)
                SELECT id, (SELECT max(device_seq) FROM main.events WHERE device_id = id),
                       (SELECT max(device_seq) FROM other.events WHERE device_id = id)
                FROM devices WHERE id IS NOT NULL;
            UPDATE temp.merge_from SET after_seq = CASE
                WHEN held IS NOT NULL
                    AND (SELECT count(*) FROM main.events WHERE device_id = merge_from.device_id AND device_seq = held) = 1
                    AND (SELECT count(*) FROM main.events WHERE device_id = merge_from.device_id) = held
                    AND (SELECT count(*) FROM other.events AS o
                         WHERE o.device_id = merge_from.device_id AND o.device_seq <= min(held, theirs)) = min(held, theirs)
                    AND EXISTS (SELECT 1 FROM other.events AS o
                                WHERE o.device_id = merge_from.device_id AND o.device_seq = min(held, theirs))
                    AND NOT EXISTS (SELECT 1 FROM other.events AS o
                                    WHERE o.device_id = merge_from.device_id AND o.device_seq = min(held, theirs)
                                      AND NOT EXISTS (SELECT 1 FROM main.events AS m WHERE m.event_id = o.event_id))
                THEN held ELSE -9223372036854775808 END;
            """)
        return try connection.scalarText("SELECT count(*) FROM temp.merge_from WHERE after_seq > -9223372036854775808") == "0"
    }

    // MARK: - Checks of the other file

    /// The other file must be a regular, non-empty file starting with SQLite's header, with no write-ahead log
    /// beside it that could hold events the file lacks.
    static func checkMergeSource(_ path: String) throws(JournalError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw JournalError(.unreadable, "cannot merge \(path): \(Errno.current)")
        }
        guard info.st_size > 0 || info.st_mode & S_IFMT != S_IFREG else {
            throw JournalError(.notAJournal, "\(path) is not a tartil journal (it is empty)")
        }
        do {
            try JournalDatabase.checkHeader(path)
        } catch {
            throw JournalError(.notAJournal, error.message)
        }
        var log = stat()
        if stat(path + "-wal", &log) == 0 && log.st_size > 0 {
            throw JournalError(
                .unreadable,
                "cannot merge \(path): a write-ahead log is beside it (\(path)-wal), so a tartil is using it or did not close it; merge once that tartil has exited (its exit folds the log into the file), or run 'tartil journal check --journal \(path)' on that device")
        }
    }

    /// The schema a tartil journal has: every object of `sqlite_master` but the root pages, from this build's
    /// migrations applied to an empty database.
    static func expectedSchema(migrations count: Int? = nil) throws(SQLiteError) -> [SchemaObject] {
        let reference = try Connection(path: ":memory:")
        defer { try? reference.close() }
        try JournalDatabase.migrator.migrate(reference, count: count)
        return try schema(reference, "main")
    }

    /// The schema this build's migrations make: `currentSchema` (JournalSchema.swift), which a test keeps equal to
    /// `expectedSchema()`, so that opening a journal does not first apply every migration to a scratch database
    /// (SQLite parsing each statement of them was an eighth of a short play's instructions).
    static let ownSchema: [SchemaObject]? = currentSchema

    /// A journal opened as this device's must be one tartil wrote: each table, index and trigger it has is a
    /// tartil journal's, with the same SQL as the migrations it records made, and
    /// nothing else: no view, no other trigger. A file crafted to loop (a view over a recursive query in place of
    /// `events`) is refused here, before any query runs on it. One read of `sqlite_master`.
    static func checkOwnSchema(_ connection: Connection, _ path: String) throws(JournalError) {
        let found: [SchemaObject]
        do {
            found = try schema(connection, "main")
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
        var expected = ownSchema
        // An older tartil's journal, opened read-only (a writer has migrated it already): the schema its own
        // migrations made.
        let names = JournalDatabase.migrator.migrations.map(\.name)
        if let recorded = try? Migrator.applied(connection, schema: "main"), recorded.count < names.count,
            names.starts(with: recorded), !recorded.isEmpty
        {
            expected = try? expectedSchema(migrations: recorded.count)
        }
        guard let expected else { return }
        /// The first object of `found` that `schema` does not have (just so), if any.
        func stranger(to schema: [SchemaObject]) -> SchemaObject? {
            let known = Dictionary(schema.map { ("\($0.type) \($0.name)", $0) }, uniquingKeysWith: { first, _ in first })
            return found.first { !$0.name.hasPrefix("sqlite_stat") && known["\($0.type) \($0.name)"] != $0 }
        }
        guard var object = stranger(to: expected) else { return }
        // The written-out schema is the text of the SQLite this build was tested with: before refusing, this build's
        // migrations are run on the SQLite loaded now, in case it writes its schema differently.
        if expected == ownSchema, let made = try? expectedSchema() {
            guard let still = stranger(to: made) else { return }
            object = still
        }
        throw JournalError(
            .notAJournal,
            "\(path) is not a tartil journal: it has the \(object.type) \(object.name.prefix(80)), which a tartil journal does not have (or not like this)")
    }

    struct SchemaObject: Hashable {
        let type: String
        let name: String
        let table: String
        let sql: String
    }

    static func schema(_ connection: Connection, _ database: String) throws(SQLiteError) -> [SchemaObject] {
        let statement = try connection.prepare(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM \(database).sqlite_master ORDER BY type, name")
        var objects: [SchemaObject] = []
        while try statement.step() {
            objects.append(
                SchemaObject(
                    type: statement.text(at: 0) ?? "", name: statement.text(at: 1) ?? "", table: statement.text(at: 2) ?? "",
                    sql: statement.text(at: 3) ?? ""))
            if objects.count > 1000 { break }  // far more than a journal has: enough to say it is not one
        }
        return objects
    }

    /// Exactly a tartil journal's tables, columns, indexes and triggers (no views) for the migrations it records
    /// (this build's, or the first of them), a device id, and SQLite's quick check passing. Returns how many
    /// migrations it has had.
    @discardableResult
    static func checkSchema(_ connection: Connection, _ path: String) throws -> Int {
        let known = JournalDatabase.migrator.migrations.map(\.name)
        let found = try schema(connection, "other")
        // An older tartil's journal: the schema its migrations made. Anything else is compared with this build's.
        var recorded: [String] = []
        if found.contains(where: { $0.type == "table" && $0.name == "migrations" }) {
            recorded = (try? Migrator.applied(connection, schema: "other")) ?? []
        }
        let count = !recorded.isEmpty && known.starts(with: recorded) ? recorded.count : known.count
        let expected = try expectedSchema(migrations: count)
        if found != expected {
            if let newer = try? newerMigration(connection, found) {
                throw JournalError(
                    .notAJournal, "\(path) was written by a newer version (its schema has '\(newer)', which this build does not know)")
            }
            throw JournalError(.notAJournal, "\(path) is not a tartil journal: \(schemaDifference(expected: expected, found: found))")
        }
        let applied = try Migrator.applied(connection, schema: "other")
        guard applied == Array(known.prefix(count)) else {
            throw JournalError(.notAJournal, "\(path) is not a tartil journal: its migrations are \(applied), not \(known)")
        }
        let devices = try connection.prepare(
            "SELECT count(*), sum(typeof(value) = 'text' AND length(CAST(value AS BLOB)) BETWEEN 1 AND \(MergeLimits.idBytes)) FROM other.meta WHERE key = 'device_id'")
        guard try devices.step(), devices.integer(at: 0) == 1, devices.integer(at: 1) == 1 else {
            throw JournalError(.notAJournal, "\(path) is not a tartil journal: its meta table has no valid device id")
        }
        return count
    }

    /// The other file is as long as its header says (pages × page size): a copy cut short (a sync tool still
    /// writing it in place, a copy interrupted) is refused before anything is read from the pages it lacks.
    static func checkWhole(_ connection: Connection, _ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw JournalError(.unreadable, "cannot merge \(path): \(Errno.current)") }
        let pages = try connection.scalarInteger("PRAGMA other.page_count") ?? 0
        let pageSize = try connection.scalarInteger("PRAGMA other.page_size") ?? 0
        guard pages * pageSize == Int64(info.st_size) else {
            throw JournalError(
                .notAJournal,
                "\(path) is not a whole tartil journal: it has \(info.st_size) bytes, its header says \(pages * pageSize) (a partial copy)")
        }
    }

    /// SQLite's quick check of the whole other file (it reads every page).
    static func quickCheck(_ connection: Connection, _ path: String) throws {
        let check = try connection.prepare("PRAGMA other.quick_check(5)")
        var lines: [String] = []
        while try check.step() { lines.append(check.text(at: 0) ?? "") }
        guard lines == ["ok"] else {
            throw JournalError(.notAJournal, "\(path) is not a tartil journal (damaged: \(lines.joined(separator: "; ").prefix(300)))")
        }
    }

    /// The other file is the journal of the device `expected` (`journal sync` names files by device).
    static func checkDeviceID(_ connection: Connection, _ path: String, expected: String) throws {
        let found = try connection.scalarText("SELECT value FROM other.meta WHERE key = 'device_id'") ?? ""
        guard found == expected else {
            throw JournalError(
                .notAJournal,
                "\(path) is not the journal of the device its name says (\(expected.prefix(40))): it is \(found.prefix(40))'s (a copy under another name)")
        }
    }

    /// A migration the other file records that this build does not know (a newer tartil wrote it), if any.
    static func newerMigration(_ connection: Connection, _ found: [SchemaObject]) throws(SQLiteError) -> String? {
        guard found.contains(where: { $0.type == "table" && $0.name == "migrations" }) else { return nil }
        let statement = try connection.prepare("SELECT name FROM other.migrations LIMIT 100")
        let known = Set(JournalDatabase.migrator.migrations.map(\.name))
        while try statement.step() {
            let name = statement.text(at: 0) ?? ""
            if !known.contains(name) { return String(name.prefix(80)) }
        }
        return nil
    }

    /// The first way `found` differs from `expected`, in words.
    static func schemaDifference(expected: [SchemaObject], found: [SchemaObject]) -> String {
        for object in expected {
            if let match = found.first(where: { $0.name == object.name }), match.type != object.type {
                return "its \(object.name) is a \(match.type), not a \(object.type)"
            }
        }
        for object in expected.sorted(by: { ($0.type == "table" ? 0 : 1, $0.name) < ($1.type == "table" ? 0 : 1, $1.name) }) {
            guard let match = found.first(where: { $0.name == object.name }) else { return "it has no \(object.type) \(object.name)" }
            if match != object { return "its \(object.type) \(object.name) is not a tartil journal's" }
        }
        if let extra = found.first(where: { !expected.contains($0) }) {
            return "it has the \(extra.type) \(extra.name.prefix(80)), which a tartil journal does not"
        }
        return "its schema differs"
    }

    /// Every event must be one that can be true; the first that is not refuses the file.
    /// `ownDevice`: events of that device that the journal lacks are refused (it did not write them); nil when
    /// they are this device's own to fold back, or its id is being retired (`SyncIdentity`).
    static func checkEvents(_ connection: Connection, _ path: String, source: String = "other.events", nowMs: Int64, ownDevice: String?) throws {
        let kinds = JournalEvent.Kind.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let kindNames = JournalEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")
        let reasons = JournalEvent.Reason.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let ayahCounts = Catalog.surahs.map { "WHEN \($0.number) THEN \($0.ayahCount)" }.joined(separator: " ")
        let latest = nowMs + MergeLimits.futureSkewMs
        let id = MergeLimits.idBytes
        func isText(_ column: String, _ most: Int) -> String {
            "typeof(\(column)) = 'text' AND length(CAST(\(column) AS BLOB)) BETWEEN 1 AND \(most)"
        }
        func isCount(_ column: String, from least: Int) -> String { "typeof(\(column)) = 'integer' AND \(column) >= \(least)" }
        let statement = try connection.prepare("""
            SELECT event_id, problem FROM (
                SELECT event_id, CASE
                    WHEN NOT (\(isText("event_id", id))) OR event_id GLOB '*[^0-9A-Za-z_-]*' THEN 'its event id is not an id (letters, digits, - and _)'
                    WHEN NOT (\(isText("device_id", id))) OR device_id GLOB '*[^0-9A-Za-z_-]*' THEN 'its device id is not an id (letters, digits, - and _)'
                    WHEN \(ownDevice == nil ? "0" : "1") AND device_id = (SELECT value FROM main.meta WHERE key = 'device_id')
                        AND NOT EXISTS (SELECT 1 FROM main.events AS mine WHERE mine.event_id = candidate.event_id)
                        THEN 'it claims to come from this device, which did not write it'
                    WHEN NOT (\(isCount("device_seq", from: 1))) OR device_seq > \(MergeLimits.largestSequence) THEN 'its device sequence number is not a whole number from 1 to 2^53'
                    WHEN NOT (\(isCount("ts_ms", from: 0))) THEN 'its time is not a whole number of milliseconds since 1970'
                    WHEN ts_ms > \(latest) THEN 'its time (ts_ms ' || ts_ms || ') is in the future, more than 10 minutes after this device''s clock (' || \(nowMs) || ')'
                    WHEN typeof(kind) != 'text' OR kind NOT IN (\(kinds)) THEN 'its kind ' || quote(substr(CAST(kind AS TEXT), 1, 40)) || ' is not one tartil knows (\(kindNames))'
                    WHEN reason IS NOT NULL AND (typeof(reason) != 'text' OR reason NOT IN (\(reasons))) THEN 'its reason ' || quote(substr(CAST(reason AS TEXT), 1, 40)) || ' is not one tartil knows'
                    WHEN surah IS NOT NULL AND NOT (typeof(surah) = 'integer' AND surah BETWEEN 1 AND 114) THEN 'its surah is not 1-114'
                    WHEN ayah IS NOT NULL AND NOT (typeof(ayah) = 'integer' AND surah IS NOT NULL AND ayah BETWEEN 1 AND (CASE surah \(ayahCounts) END)) THEN 'its ayah is not one of its surah'
                    WHEN offset_samples IS NOT NULL AND NOT (\(isCount("offset_samples", from: 0)) AND offset_samples <= \(MergeLimits.longestOffsetSamples)) THEN 'its offset in samples is negative, not a number or longer than 24 hours'
                    WHEN offset_ms IS NOT NULL AND NOT (\(isCount("offset_ms", from: 0)) AND offset_ms <= \(MergeLimits.longestOffsetMs)) THEN 'its offset in milliseconds is negative, not a number or longer than 24 hours'
                    WHEN reciter IS NOT NULL AND NOT (\(isText("reciter", 64)) AND reciter GLOB '[a-z0-9]*' AND reciter NOT GLOB '*[^a-z0-9._-]*') THEN 'its reciter is not a reciter id ([a-z0-9][a-z0-9._-]*)'
                    WHEN note IS NOT NULL AND NOT (typeof(note) = 'text' AND length(CAST(note AS BLOB)) <= \(MergeLimits.noteBytes)) THEN 'its note is longer than \(MergeLimits.noteBytes) bytes'
                    WHEN note IS NOT NULL AND (note GLOB \(JournalNote.sqlPattern) OR instr(CAST(note AS BLOB), x'00') > 0) THEN 'its note has control characters or bidirectional overrides (C0, C1, U+2028-U+202E, U+2066-U+2069)'
                    WHEN kind = 'position' AND (surah IS NULL OR ayah IS NULL OR reciter IS NULL OR reason IS NULL OR offset_samples IS NULL OR offset_ms IS NULL) THEN 'it is a position without a surah, ayah, reciter, reason or offset'
                    WHEN kind = 'bookmark' AND (surah IS NULL OR ayah IS NULL) THEN 'it is a bookmark without a surah and ayah'
                    WHEN kind IN ('bookmark-removed', 'bookmark-note') AND NOT (\(isText("target_id", id))) THEN 'it changes a bookmark without naming it'
                    WHEN kind NOT IN ('bookmark-removed', 'bookmark-note') AND target_id IS NOT NULL THEN 'it names another event, which its kind does not'
                    WHEN kind = 'bookmark-note' AND note IS NULL THEN 'it is a note edit without a note'
                    WHEN kind IN ('hifz-plan', 'hifz-heard') AND note IS NULL THEN 'it is a hifz plan or session without its note'
                    WHEN kind = 'hifz-mark' AND (surah IS NULL OR ayah IS NULL OR note IS NULL OR note NOT IN (\(HifzMark.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")))) THEN 'it is a hifz mark without an ayah, or with a mark tartil does not know'
                    END AS problem
                FROM \(source) AS candidate)
            WHERE problem IS NOT NULL LIMIT 1
            """)
        if try statement.step() {
            let event = (statement.text(at: 0) ?? "").prefix(40)
            throw JournalError(
                .refused, "\(path) is refused: its event \(event) cannot be true (\(statement.text(at: 1) ?? "")); nothing was merged")
        }
    }
}
