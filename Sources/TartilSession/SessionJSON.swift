import TartilCore

/// The JSON every front end writes for the session's values, one encoding each: `status --json`, the events of
/// `--events` and `watch`, a bookmark, and the `data` of the control socket's replies. Field names and order are
/// documented in the README ("Scripts and JSON").
public enum SessionJSON {
    /// One event as a JSON object: `{"event":"ayah","index":3,"surah":36,"ayah":2,"kind":"ayah",…}`.
    public static func json(_ event: PlayerEvent) -> JSONValue {
        switch event {
        case .state(let state):
            return .object([("event", .string("state")), ("state", .string(state.rawValue))])
        case .item(let index, let item):
            return .object([("event", .string("ayah")), ("index", .int(index))] + itemMembers(item))
        case .buffering(let ayah):
            return .object([("event", .string("buffering")), ("surah", .int(ayah.surah)), ("ayah", .int(ayah.ayah))])
        case .error(let message, let ayah):
            return .object(
                [("event", .string("error")), ("message", .string(message))]
                    + (ayah.map { [("surah", JSONValue.int($0.surah)), ("ayah", .int($0.ayah))] } ?? []))
        case .position(let position):
            return .object([
                ("event", .string("position")), ("reason", .string(position.reason.rawValue)),
                ("surah", .int(position.ayah.surah)), ("ayah", .int(position.ayah.ayah)),
                ("offset_samples", .int(position.offsetSamples)), ("offset_ms", .int(Int(position.offsetMilliseconds))),
            ])
        case .end(let state, let message):
            return .object(
                [("event", .string("end")), ("state", .string(state.rawValue))]
                    + (message.map { [("message", JSONValue.string($0))] } ?? []))
        case .speed(let speed):
            return .object([("event", .string("speed")), ("speed", .double(speed))])
        case .volume(let volume):
            return .object([("event", .string("volume")), ("volume", .int(volume))])
        }
    }

    static func itemMembers(_ item: PlanItem) -> [(String, JSONValue)] {
        let kind: String
        var extra: [(String, JSONValue)] = []
        switch item.kind {
        case .ayah: kind = "ayah"
        case .basmala: kind = "basmala"
        case .pause(.seconds(let seconds)):
            kind = "pause"
            extra = [("duration_ms", .int(Int((seconds * 1000).rounded())))]
        case .pause(.multiple(let multiple)):
            kind = "pause"
            extra = [("multiple", .double(multiple))]
        case .cyclePause(let seconds):
            kind = "cycle-pause"
            extra = [("duration_ms", .int(Int((seconds * 1000).rounded())))]
        }
        return [
            ("surah", .int(item.ayah.surah)), ("ayah", .int(item.ayah.ayah)), ("kind", .string(kind)),
            ("repetition", .int(item.repetition)), ("cycle", .int(item.cycle)),
            ("review_for", item.reviewOf.map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) } ?? .null),
        ] + extra
    }

    /// `status --json`.
    public static func json(_ status: PlayerStatus) -> JSONValue { .object(fields(status)) }

    /// The status's fields, in order.
    public static func fields(_ status: PlayerStatus) -> Fields {
        func milliseconds(_ seconds: Double) -> JSONValue { .int(Int((seconds * 1000).rounded())) }
        var loopJSON = JSONValue.null
        if let loop = status.loop {
            let passes: JSONValue = loop.passesLeft.map { .int($0) } ?? .null
            loopJSON = .object([("start_ms", milliseconds(loop.startSeconds)), ("end_ms", milliseconds(loop.endSeconds)), ("passes_left", passes)])
        }
        let stopAfter: JSONValue = status.stopAfter.map { .string("\($0)") } ?? .null
        let sleepLeft: JSONValue = status.sleepSecondsLeft.map(milliseconds) ?? .null
        return [
            ("state", .string(status.state.rawValue)),
            ("reciter", .string(status.reciter.rawValue)),
            ("surah", .int(status.surah)),
            ("ayah", status.item.map { .int($0.ayah.ayah) } ?? .null),
            ("item", status.item.map { .object([("index", .int(status.index))] + itemMembers($0)) } ?? .null),
            ("items", .int(status.itemCount)),
            ("position_ms", milliseconds(status.positionSeconds)),
            ("position_samples", .int(status.positionSamples)),
            ("duration_ms", milliseconds(status.durationSeconds)),
            ("duration_samples", .int(status.durationSamples)),
            ("sample_rate", .int(status.sampleRate)),
            ("estimated", .bool(status.isEstimated)),
            ("speed", .double(status.speed)),
            ("volume", .int(status.volume)),
            ("buffering", status.bufferingAyah.map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) } ?? .null),
            ("learning_surah", status.learningSurah.map { .int($0) } ?? .null),
            ("skipped", .array(
                (status.skippedBasmala ?? [:]).sorted { $0.key < $1.key }.map {
                    .object([("surah", .int($0.key.surah)), ("ayah", .int($0.key.ayah)), ("kind", .string("basmala")), ("reason", .string($0.value))])
                }
                + status.skipped.sorted { $0.key < $1.key }.map {
                    .object([("surah", .int($0.key.surah)), ("ayah", .int($0.key.ayah)), ("kind", .string("ayah")), ("reason", .string($0.value))])
                })),
            ("options", .string(status.options.summary)),
            ("cycle", .int(status.cycle)),
            ("loop", loopJSON),
            ("stop_after", stopAfter),
            ("sleep_left_ms", sleepLeft),
            ("buffering_held_elsewhere", .bool(status.bufferingHeldElsewhere == true)),
        ]
    }

    /// `status --json` with nothing playing: every field of a status, with state `stopped` and the rest null.
    public static let stoppedFields: Fields = [
        ("state", .string("stopped")), ("reciter", .null), ("surah", .null), ("ayah", .null), ("item", .null), ("items", .null),
        ("position_ms", .null), ("position_samples", .null), ("duration_ms", .null), ("duration_samples", .null),
        ("sample_rate", .null), ("estimated", .null), ("speed", .null), ("volume", .null), ("buffering", .null), ("learning_surah", .null),
        ("skipped", .array([])), ("options", .null), ("cycle", .null), ("loop", .null), ("stop_after", .null),
        ("sleep_left_ms", .null), ("buffering_held_elsewhere", .null),
    ]

    /// A bookmark's fields, in order (`bookmark --json`, `bookmarks`).
    public static let bookmarkFieldNames = ["event_id", "surah", "ayah", "reciter", "note", "ts_ms", "device_id"]

    public static func fields(_ bookmark: Bookmark) -> Fields {
        [
            ("event_id", .string(bookmark.eventID)), ("surah", .int(bookmark.surah)), ("ayah", .int(bookmark.ayah)),
            ("reciter", .string(bookmark.reciter)), ("note", .string(bookmark.note)), ("ts_ms", .int(Int(bookmark.timeMs))),
            ("device_id", .string(bookmark.deviceID)),
        ]
    }

    /// The documented JSON of a request's result.
    public static func data(_ result: ControlResult) -> JSONValue {
        switch result {
        case .status(let status): json(status)
        case .started(let started): json(started.status)
        case .stopped: .object(stoppedFields)
        case .bookmark(let bookmark): .object(fields(bookmark))
        }
    }
}
