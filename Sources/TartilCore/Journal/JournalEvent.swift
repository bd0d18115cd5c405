/// One event of the journal, as stored.
public struct JournalEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case position
        case sessionStart = "session-start"
        case sessionEnd = "session-end"
        case bookmark
        /// A bookmark removed: `targetID` is the removed bookmark's event id. The bookmark event stays in the
        /// journal (it is append-only); lists leave it out.
        case bookmarkRemoved = "bookmark-removed"
        /// A bookmark's note replaced: `targetID` is the bookmark's event id, `note` the new note (empty: none).
        /// Of several, the latest by (time, device id, event id) wins.
        case bookmarkNote = "bookmark-note"
        /// A memorisation plan: `note` is the plan (`HifzPlan.encoded`). The latest replaces the earlier ones.
        case hifzPlan = "hifz-plan"
        /// A mark on an ayah (`surah`, `ayah`): `note` is `memorised` or `weak` (`HifzMark`).
        case hifzMark = "hifz-mark"
        /// Ayat heard in full in a part of a day's hifz session: `note` is `HifzHeardNote.encoded`.
        case hifzHeard = "hifz-heard"
    }

    /// Why a position was recorded.
    public enum Reason: String, Sendable, Codable, CaseIterable {
        case ayahStart = "ayah-start"
        case pause, seek, stop, quit
        /// Playback reached the end of what was asked (the position is the end of the last ayah).
        case end
    }

    public let eventID: String
    public let deviceID: String
    /// The device's own count of its events (1, 2, …).
    public let deviceSeq: Int64
    /// Wall-clock time, milliseconds since 1970 (UTC).
    public let timeMs: Int64
    public let kind: Kind
    public let reciter: String?
    public let surah: Int?
    public let ayah: Int?
    /// Where in the ayah's recitation, in PCM frames and in milliseconds.
    public let offsetSamples: Int64?
    public let offsetMs: Int64?
    public let reason: Reason?
    public let note: String?
    /// The event this one is about (the bookmark a `bookmark-removed` or `bookmark-note` changes).
    public let targetID: String?

    /// The columns of an event, in order: `journal export`'s and `history`'s fields (stable; documented in the
    /// README).
    public static let columnNames = [
        "event_id", "device_id", "device_seq", "ts_ms", "kind", "reciter", "surah", "ayah", "offset_samples", "offset_ms", "reason",
        "note", "target_id",
    ]

    public init(
        eventID: String, deviceID: String, deviceSeq: Int64, timeMs: Int64, kind: Kind, reciter: String?, surah: Int?, ayah: Int?,
        offsetSamples: Int64?, offsetMs: Int64?, reason: Reason?, note: String?, targetID: String?
    ) {
        self.eventID = eventID
        self.deviceID = deviceID
        self.deviceSeq = deviceSeq
        self.timeMs = timeMs
        self.kind = kind
        self.reciter = reciter
        self.surah = surah
        self.ayah = ayah
        self.offsetSamples = offsetSamples
        self.offsetMs = offsetMs
        self.reason = reason
        self.note = note
        self.targetID = targetID
    }
}

/// What to append; the journal adds the event id, device, sequence number and time.
public struct EventDraft: Sendable, Hashable {
    public var kind: JournalEvent.Kind
    public var reciter: String?
    public var surah: Int?
    public var ayah: Int?
    public var offsetSamples: Int64?
    public var offsetMs: Int64?
    public var reason: JournalEvent.Reason?
    public var note: String?
    public var targetID: String?

    public init(
        kind: JournalEvent.Kind, reciter: String? = nil, surah: Int? = nil, ayah: Int? = nil, offsetSamples: Int64? = nil,
        offsetMs: Int64? = nil, reason: JournalEvent.Reason? = nil, note: String? = nil, targetID: String? = nil
    ) {
        self.targetID = targetID
        self.kind = kind
        self.reciter = reciter
        self.surah = surah
        self.ayah = ayah
        self.offsetSamples = offsetSamples
        self.offsetMs = offsetMs
        self.reason = reason
        self.note = note
    }

    /// A listening position: `offsetSamples` into the ayah's recitation at `sampleRate`.
    public static func position(
        reciter: String, surah: Int, ayah: Int, offsetSamples: Int, sampleRate: Int, reason: JournalEvent.Reason
    ) -> EventDraft {
        EventDraft(
            kind: .position, reciter: reciter, surah: surah, ayah: ayah, offsetSamples: Int64(offsetSamples),
            offsetMs: Int64((Double(offsetSamples) * 1000 / Double(max(1, sampleRate))).rounded()), reason: reason)
    }
}

/// A bookmark as it stands after the events about it: not removed, with its latest note.
public struct Bookmark: Sendable, Hashable, Codable {
    /// The bookmark event's id: what `bookmark rm` and `bookmark note` take (or a unique prefix of it).
    public let eventID: String
    public let deviceID: String
    /// When it was made, milliseconds since 1970 (UTC).
    public let timeMs: Int64
    public let reciter: String?
    public let surah: Int
    public let ayah: Int
    /// The latest note: of the `bookmark-note` events about it, the latest by (time, device id, event id), else
    /// the bookmark's own. Nil when there is none (an edit to an empty note clears it).
    public let note: String?

    public init(eventID: String, deviceID: String, timeMs: Int64, reciter: String?, surah: Int, ayah: Int, note: String?) {
        self.eventID = eventID
        self.deviceID = deviceID
        self.timeMs = timeMs
        self.reciter = reciter
        self.surah = surah
        self.ayah = ayah
        self.note = note
    }
}

extension Bookmark {
    /// The bookmark a `bookmark` event makes, as it was made (its own note); nil for another kind of event.
    public init?(_ event: JournalEvent) {
        guard event.kind == .bookmark, let surah = event.surah, let ayah = event.ayah else { return nil }
        self.init(
            eventID: event.eventID, deviceID: event.deviceID, timeMs: event.timeMs, reciter: event.reciter, surah: surah, ayah: ayah,
            note: event.note)
    }
}


/// The limits every journal event keeps to, wherever it is made.
public enum JournalLimits {
    /// The longest note, in bytes of UTF-8 (a bookmark's `--note`, a session's note). 4 KiB.
    public static let noteBytes = 4096
}
