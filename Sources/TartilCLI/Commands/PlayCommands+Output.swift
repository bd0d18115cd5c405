import TartilCore
import TartilPlayer

/// How playback events and status look: JSON objects for scripts, lines and a scrubber bar for people.
extension PlayCommands {
    /// One event as a JSON object: `{"event":"ayah","index":3,"surah":36,"ayah":2,"kind":"ayah",…}`.
    static func json(_ event: PlayerEvent) -> JSONValue {
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
            let draft = position.draft
            return .object([
                ("event", .string("position")), ("reason", .string(position.reason.rawValue)),
                ("surah", .int(position.ayah.surah)), ("ayah", .int(position.ayah.ayah)),
                ("offset_samples", .int(position.offsetSamples)), ("offset_ms", .int(Int(draft.offsetMs ?? 0))),
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

    private static func itemMembers(_ item: PlanItem) -> [(String, JSONValue)] {
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
    static func json(_ status: PlayerStatus) -> JSONValue { .object(fields(status)) }

    /// The status's fields, in order.
    static func fields(_ status: PlayerStatus) -> Fields {
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
            ("skipped", .array(status.skipped.sorted { $0.key < $1.key }.map {
                .object([("surah", .int($0.key.surah)), ("ayah", .int($0.key.ayah)), ("reason", .string($0.value))])
            })),
            ("options", .string(status.options.summary)),
            ("cycle", .int(status.cycle)),
            ("loop", loopJSON),
            ("stop_after", stopAfter),
            ("sleep_left_ms", sleepLeft),
        ]
    }

    /// `status` for people: a line of facts, and on a terminal the surah's bar with a tick at each ayah, `width`
    /// columns wide in all (the terminal's width).
    static func text(_ status: PlayerStatus, bar: Bool, width: Int = 80) -> [String] {
        var lines = [progressLine(status)]
        if bar { lines.append(scrubber(status, width: max(LiveLine.minimumBar, width - 3))) }
        for (ayah, reason) in status.skipped.sorted(by: { $0.key < $1.key }) { lines.append("skipped \(ayah): \(reason)") }
        return lines
    }

    /// `playing 36:12  3:20 / 21:45  Ya-Sin` (with `~` before a duration that is still partly estimated).
    static func progressLine(_ status: PlayerStatus) -> String {
        let name = surahName(status)
        return progressFacts(status) + (name.isEmpty ? "" : "  " + name)
    }

    /// `playing  36:12  3:20 / 21:45`: the progress line without the surah's name.
    static func progressFacts(_ status: PlayerStatus) -> String {
        progressFields(status).joined(separator: FieldLine.separator)
    }

    /// The facts of the progress line as fields, most important first (the live line leaves out whole ones
    /// from the end when narrow): state, where, time, then cycle, loop, stop-after, sleep, speed, volume.
    static func progressFields(_ status: PlayerStatus) -> [String] {
        var where_ = "—"
        if let item = status.item {
            switch item.kind {
            case .ayah: where_ = "\(item.ayah)" + (item.repetition > 1 ? " ×\(item.repetition)" : "")
            case .basmala: where_ = "basmala (\(item.ayah.surah))"
            case .pause: where_ = "pause after \(item.ayah)"
            case .cyclePause: where_ = "pause after cycle \(item.cycle)"
            }
            if let review = item.reviewOf { where_ += " (review for \(review))" }
        }
        let state = status.state.rawValue
        var fields = [state, where_, "\(clock(status.positionSeconds)) / \(status.isEstimated ? "~" : "")\(clock(status.durationSeconds))"]
        if let cycles = status.options.repeatRange.count, cycles > 1 {
            fields.append("cycle \(status.cycle)/\(cycles)")
        } else if status.options.repeatRange == .forever {
            fields.append("cycle \(status.cycle)/∞")
        }
        if let loop = status.loop {
            fields.append("loop \(clock(loop.startSeconds))-\(clock(loop.endSeconds))" + (loop.passesLeft.map { " ×\($0)" } ?? ""))
        } else if let mark = status.loopMarkSeconds {
            fields.append("A \(clock(mark))")
        }
        if let stop = status.stopAfter { fields.append("stop after \(stop)") }
        if let left = status.sleepSecondsLeft { fields.append("sleep \(clock(left))") }
        // The times are the recitation's own; the speed is said beside them.
        if status.speed != PlaybackSpeed.normal { fields.append("\(PlaybackSpeed.text(status.speed))×") }
        if status.volume != PlaybackVolume.normal { fields.append("vol \(status.volume)%") }
        return fields
    }

    /// The transliterated name of the surah playing (`Ya-Sin`), or nothing.
    static func surahName(_ status: PlayerStatus) -> String {
        (try? Catalog.surah(status.surah))?.nameTransliterated ?? ""
    }

    /// The scrubber of `status`: where the listener is in the surah, and when each ayah starts.
    static func bar(_ status: PlayerStatus) -> ScrubberBar {
        ScrubberBar(
            positionSeconds: status.positionSeconds, durationSeconds: status.durationSeconds, ayahStarts: status.ayahStarts,
            paused: status.state == .paused)
    }

    /// `[=====|====|===>-----|-----]`, `width` columns between the brackets: see `ScrubberBar`.
    static func scrubber(_ status: PlayerStatus, width: Int) -> String {
        bar(status).rendered(inner: width)
    }

    /// `3:20`, `1:02:03`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.down))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? "\(hours):\(Formatting.pad(minutes, 2)):\(Formatting.pad(secs, 2))" : "\(minutes):\(Formatting.pad(secs, 2))"
    }
}
