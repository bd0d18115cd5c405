import TartilSession
import TartilCore

/// How playback events and status look: JSON objects for scripts, lines and a scrubber bar for people.
extension PlayCommands {
    /// `status` for people: a line of facts, and on a terminal the surah's bar with a tick at each ayah, `width`
    /// columns wide in all (the terminal's width).
    /// On a terminal (`bar`) the lines are wrapped to `width`: the progress line between its fields, the others
    /// between words (later lines indented two spaces); to a pipe, each is one line.
    static func text(_ status: PlayerStatus, bar: Bool, width: Int = 80) -> [String] {
        let wrapped = { (line: String, pieces: TextWrap.Pieces) in bar ? TextWrap.lines(line, width: width, hangingIndent: 2, pieces: pieces) : [line] }
        var lines = wrapped(progressLine(status), .fields)
        if bar { lines.append(scrubber(status, width: max(LiveLine.minimumBar, width - 3))) }
        for (ayah, reason) in (status.skippedBasmala ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines += wrapped(PlaybackMachine.skippedBasmalaLine(before: ayah, reason: reason, files: status.item?.files ?? .ayah), .words)
        }
        // Ayat in a row skipped for one reason are one range (a surah that could not be learned is one line).
        let skipped = status.skipped.sorted(by: { $0.key < $1.key }).map { (ayah: $0.key, reason: $0.value) }
        if let message = PlaybackMachine.skippedMessage(skipped, files: status.item?.files ?? .ayah) { lines += wrapped(message, .words) }
        return lines
    }

    /// `playing 36:12  3:20 / 21:45  Ya-Sin` (with `~` before a duration that is still partly estimated).
    static func progressLine(_ status: PlayerStatus) -> String {
        let name = surahName(status)
        return progressFacts(status) + (name.isEmpty ? "" : "  " + name)
    }

    /// `playing  36:12  3:20 / 21:45`: the progress line without the surah's name.
    static func progressFacts(_ status: PlayerStatus) -> String {
        progressFields(status).joined(with: FieldLine.separator)
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
        if status.state == .buffering, let surah = status.learningSurah, status.bufferingAyah?.surah == surah {
            fields.append("learning surah \(surah)")
        }
        if status.state == .buffering, status.bufferingHeldElsewhere == true, let waited = status.bufferingAyah {
            fields.append("\(waited) held by another tartil")
        }
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

/// The status as the shell's live line shows it (the line `tartil play` redraws on a terminal).
public enum LiveStatus {
    /// The live line for `status` at `width` columns: the facts, the bar, the surah's name, or a notice.
    public static func line(_ status: PlayerStatus, notice: String? = nil, width: Int) -> String {
        LiveLine.render(
            facts: PlayCommands.progressFields(status), name: PlayCommands.surahName(status), bar: PlayCommands.bar(status),
            notice: notice, width: width)
    }

    /// The live line of a player stopped from the desktop and standing by (`Session.stopStandingBy`): what starts
    /// it again and what leaves.
    public static func standingBy(_ stopped: PlayerStatus, notice: String? = nil, width: Int) -> String {
        let name = PlayCommands.surahName(stopped)
        return LiveLine.render(
            facts: ["stopped", "space: play again", "q: quit"], name: name.isEmpty ? "" : "\(name) from its start", bar: nil,
            notice: notice, width: width)
    }

    /// `3:20`, `1:02:03`.
    public static func clock(_ seconds: Double) -> String { PlayCommands.clock(seconds) }

    /// The line to print once above the live line when the player starts waiting for a file another tartil process
    /// holds (`bufferingHeldElsewhere`): the live line has room only for a short field, which a narrow terminal
    /// drops. `said` is the file last said, so each wait is said once.
    public static func heldElsewhereNote(_ status: PlayerStatus?, said: inout AyahRef?) -> String? {
        guard let status, status.state == .buffering, status.bufferingHeldElsewhere == true, let waited = status.bufferingAyah else {
            said = nil
            return nil
        }
        guard said != waited else { return nil }
        said = waited
        return PrefetchCommand.heldElsewhereLine(waited)
    }
}
