import Glibc
import TartilCore
import TartilJournal
import TartilSystem

/// The journal for people and scripts: what was listened to, bookmarks, and the journal's own upkeep (export,
/// merge, sync, backup, stats, check). Reads use a read-only connection of their own; what writes (a merge, a
/// sync, a bookmark edit) runs on the session's journal writer, after every position handed to it.
extension Session {
    /// The journal at `settings.journalFile` opened read-only, or nil when there is none yet (or an empty file the
    /// first writer will make one). A file that is not a journal is refused (a usage error when the user named it).
    func readJournal(_ settings: Settings) throws(TartilError) -> Journal? {
        let path = settings.journalFile
        var info = stat()
        guard stat(path, &info) == 0, info.st_size > 0 || info.st_mode & S_IFMT != S_IFREG else { return nil }
        do {
            return try Journal(path: path, readOnly: true, clock: clock)
        } catch {
            throw TartilError(error.code == .notAJournal && settings.journalIsExplicit ? .usage : .failure, error.message)
        }
    }

    /// Runs `body` on the journal read-only (nil when there is none yet).
    func reading<T>(_ settings: Settings, _ body: (Journal?) throws(TartilError) -> T) throws(TartilError) -> T {
        let journal = try readJournal(settings)
        defer { journal?.close() }
        return try body(journal)
    }

    /// A journal call, its error as tartil's.
    static func call<T>(_ body: () throws(JournalError) -> T) throws(TartilError) -> T {
        do {
            return try body()
        } catch {
            throw journalError(error)
        }
    }

    /// The reciter `name` names for a journal listing: one of mirrors.json's, or one the journal has events of (a
    /// reciter since taken out of mirrors.json); anything else is mirrors.json's usage error.
    func listedReciter(_ name: String?, _ settings: Settings, _ journal: Journal?) throws(TartilError) -> String? {
        guard let name else { return nil }
        do {
            return try settings.library().reciter(named: name).id.rawValue
        } catch {
            if let journal, (try? journal.mentions(reciter: name)) == true { return name }
            throw error
        }
    }

    /// The latest position in each surah, latest first (of the reciter named, in the surah, since the time given).
    public func positions(reciter: String?, surah: Int?, sinceMs: Int64?, settings: Settings) throws(TartilError) -> [JournalEvent] {
        try reading(settings) { journal throws(TartilError) in
            let reciter = try listedReciter(reciter, settings, journal)
            guard let journal else { return [] }
            return try Self.call { () throws(JournalError) in try journal.latestPositions(reciter: reciter, surah: surah, sinceMs: sinceMs) }
        }
    }

    /// Events, oldest first, as `filter` asks (its reciter as the user wrote it).
    public func history(_ filter: JournalHistoryFilter, settings: Settings) throws(TartilError) -> [JournalEvent] {
        try reading(settings) { journal throws(TartilError) in
            var filter = filter
            filter.reciter = try listedReciter(filter.reciter, settings, journal)
            guard let journal else { return [] }
            let chosen = filter
            return try Self.call { () throws(JournalError) in try journal.history(chosen) }
        }
    }

    /// The bookmarks not removed, in the order of the Qur'an; nil when there is no journal yet.
    public func bookmarks(reciter: String?, surah: Int?, settings: Settings) throws(TartilError) -> [Bookmark]? {
        try reading(settings) { journal throws(TartilError) in
            let reciter = try listedReciter(reciter, settings, journal)
            guard let journal else { return nil }
            return try Self.call { () throws(JournalError) in try journal.bookmarks(reciter: reciter, surah: surah) }
        }
    }

    /// Removes the bookmark `id` names (4 or more of its first characters), by appending an event.
    public func removeBookmark(id: String, settings: Settings) throws(TartilError) -> Bookmark {
        try withJournal(settings) { journal throws(JournalError) in try journal.removeBookmark(id: id) }
    }

    /// Replaces the note of the bookmark `id` names (empty clears it).
    public func editBookmarkNote(id: String, note: String, settings: Settings) throws(TartilError) -> Bookmark {
        guard note.utf8.count <= JournalLimits.noteBytes else {
            throw .usage("a note takes at most \(JournalLimits.noteBytes) bytes, not \(note.utf8.count)")
        }
        if let problem = JournalNote.problem(note) { throw .usage("bookmark note: \(problem)") }
        return try withJournal(settings) { journal throws(JournalError) in try journal.editBookmarkNote(id: id, note: note) }
    }

    /// Streams the raw events (since the time given) as `format` to `descriptor`; false when there is no journal
    /// yet (nothing written).
    public func exportJournal(sinceMs: Int64?, format: JournalExportFormat, to descriptor: Int32, settings: Settings) throws(TartilError) -> Bool {
        try reading(settings) { journal throws(TartilError) in
            guard let journal else { return false }
            _ = try Self.call { () throws(JournalError) in try journal.export(sinceMs: sinceMs, format: format, to: descriptor) }
            return true
        }
    }

    /// What `journal merge` did: how many events were new, and what it found of this device's own events in the
    /// other file (`SyncIdentity`): folded back (`.restored`), or a new device id taken (`.shared`, with the old
    /// and new ids).
    public struct MergeOutcome: Sendable {
        public let added: Int
        public let identity: SyncIdentity.Verdict
        public let previousDeviceID: String
        public let deviceID: String
    }

    /// Adds the events of the journal at `path` that this one lacks.
    public func mergeJournal(from path: String, settings: Settings, shouldStop: @escaping @Sendable () -> Bool) throws(TartilError) -> MergeOutcome {
        guard FileSystem.exists(path) else { throw .usage("\(path) does not exist") }
        return try withJournal(settings) { journal throws(JournalError) in
            let before = journal.deviceID
            let added = try journal.merge(from: path, shouldStop: shouldStop)
            return MergeOutcome(added: added, identity: journal.lastMergeIdentity, previousDeviceID: before, deviceID: journal.deviceID)
        }
    }

    /// Writes a consistent, self-contained copy of the journal to `destination`; the journal's path and the copy.
    public func backupJournal(to destination: String, replacing: Bool, settings: Settings) throws(TartilError) -> (journal: String, backup: JournalBackupResult) {
        try reading(settings) { journal throws(TartilError) in
            guard let journal else { throw TartilError(.notFound, "there is no journal at \(settings.journalFile) yet") }
            let result = try Self.call { () throws(JournalError) in try journal.backup(to: destination, replacing: replacing) }
            return (journal.path, result)
        }
    }

    /// One round of `journal sync` through `folder`: what it merged and published, and this device's id.
    public func syncJournal(folder: String, settings: Settings, shouldStop: @escaping @Sendable () -> Bool) throws(TartilError) -> (report: JournalSyncReport, deviceID: String) {
        try withJournal(settings) { journal throws(JournalError) in (try journal.sync(folder: folder, shouldStop: shouldStop), journal.deviceID) }
    }

    /// `journal stats`: counts, sizes, the journal's path and this device's id.
    public struct JournalReport: Sendable {
        public let path: String
        public let deviceID: String
        public let stats: JournalStats
        public let bytes: Int
        public let logBytes: Int
    }

    public func journalStats(settings: Settings) throws(TartilError) -> JournalReport {
        try reading(settings) { journal throws(TartilError) in
            guard let journal else { throw TartilError(.notFound, "there is no journal at \(settings.journalFile) yet") }
            let stats = try Self.call { () throws(JournalError) in try journal.stats() }
            let sizes = journal.fileSizes()
            return JournalReport(path: journal.path, deviceID: journal.deviceID, stats: stats, bytes: sizes.journal, logBytes: sizes.log)
        }
    }

    /// `journal check`: the journal's path and its problems (none when all is well).
    public func journalProblems(settings: Settings) throws(TartilError) -> (path: String, problems: [String]) {
        try reading(settings) { journal throws(TartilError) in
            guard let journal else { throw TartilError(.notFound, "there is no journal at \(settings.journalFile) yet") }
            return (journal.path, try Self.call { () throws(JournalError) in try journal.problems() })
        }
    }
}
