/// What the journal's reports hold: plain values, so that front ends can show them without the journal.

/// What a backup wrote.
public struct JournalBackupResult: Sendable, Hashable, Codable {
    /// The destination.
    public let path: String
    /// Events in the copy.
    public let events: Int
    /// Size of the copy, in bytes.
    public let bytes: Int

    public init(path: String, events: Int, bytes: Int) {
        self.path = path
        self.events = events
        self.bytes = bytes
    }
}

/// One file `journal sync` did not merge, and why.
public struct JournalSyncSkip: Sendable, Hashable {
    /// The file's name in the folder.
    public let name: String
    public let reason: String

    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

/// One file `journal sync` merged.
public struct JournalSyncMerge: Sendable, Hashable {
    public let name: String
    /// Events it had that this journal lacked.
    public let newEvents: Int

    public init(name: String, newEvents: Int) {
        self.name = name
        self.newEvents = newEvents
    }
}

/// What a sync did.
public struct JournalSyncReport: Sendable, Hashable {
    /// The folder.
    public let folder: String
    /// This device's snapshot in it (under the new id when this journal took one).
    public var ownFile: String
    public var merged: [JournalSyncMerge] = []
    public var skipped: [JournalSyncSkip] = []
    /// The snapshot written, or nil when the one in the folder already held every event.
    public var published: JournalBackupResult?
    /// How many entries of the folder were not tartil's (not listed).
    public var ignored = 0
    /// Files from which this device's own events were folded back (this journal was restored from an older copy).
    public var restoredFrom: [String] = []
    /// The device id this journal had before this run, when it took a new one (another journal wrote under it).
    public var previousDeviceID: String?
    /// Files moved aside from this device's name (never overwritten), with why: their new names.
    public var movedAside: [JournalSyncSkip] = []

    public init(folder: String, ownFile: String) {
        self.folder = folder
        self.ownFile = ownFile
    }
}

/// What `history` asks for; nil fields do not filter.
public struct JournalHistoryFilter: Sendable, Hashable {
    public var reciter: String?
    public var surah: Int?
    public var kinds: Set<JournalEvent.Kind>?
    public var sinceMs: Int64?
    /// Up to (not including) this time.
    public var untilMs: Int64?
    /// Only the latest this many (still returned oldest first).
    public var limit: Int?

    public init(
        reciter: String? = nil, surah: Int? = nil, kinds: Set<JournalEvent.Kind>? = nil, sinceMs: Int64? = nil,
        untilMs: Int64? = nil, limit: Int? = nil
    ) {
        self.reciter = reciter
        self.surah = surah
        self.kinds = kinds
        self.sinceMs = sinceMs
        self.untilMs = untilMs
        self.limit = limit
    }
}

/// Counts for `journal stats`.
public struct JournalStats: Sendable, Hashable {
    /// One device's share of the journal.
    public struct Device: Sendable, Hashable {
        public var deviceID: String
        public var events: Int
        public var firstMs: Int64
        public var lastMs: Int64

        public init(deviceID: String, events: Int, firstMs: Int64, lastMs: Int64) {
            self.deviceID = deviceID
            self.events = events
            self.firstMs = firstMs
            self.lastMs = lastMs
        }
    }

    public var events = 0
    public var byKind: [JournalEvent.Kind: Int] = [:]
    /// Every device with events, most events first (then by device id).
    public var byDevice: [Device] = []
    public var devices = 0
    public var surahsWithPositions = 0
    public var firstMs: Int64?
    public var lastMs: Int64?

    public init() {}
}

/// How `journal export` writes events.
public enum JournalExportFormat: String, Sendable, CaseIterable {
    /// One object per line.
    case ndjson
    /// One array of the same objects, on one line.
    case json
    /// A header line, then one line per event.
    case csv
}

