extension PlaybackMachine {
    // MARK: - Lengths learned while playing

    /// An unpinned ayah's length becomes exact once its file is measured (every item that plays that file).
    mutating func measure(_ file: AyahRef, samples: Int, rate: Int) {
        var changes: [(Int, Timeline.Length)] = []
        let open = isOpen ? head.index : nil  // measured as it ends
        for index in plan.items.indices where plan.items[index].file == file && index != open {
            let old = timeline.lengths[index]
            guard old.isEstimated || old.rate != rate else { continue }
            let length = Timeline.Length(samples: samples, rate: rate)
            changes.append((index, length))
            changes += pauseLengths(after: index, recitation: length)
        }
        timeline.setLengths(changes)
    }

    /// Estimated lengths become closer estimates (every item that plays the file, but the open one).
    mutating func estimate(_ lengths: [AyahRef: Timeline.Length]) {
        var changes: [(Int, Timeline.Length)] = []
        let open = isOpen ? head.index : nil
        for index in plan.items.indices {
            guard let file = plan.items[index].file, let guess = lengths[file], index != open,
                timeline.lengths[index].isEstimated
            else { continue }
            let length = Timeline.Length(samples: guess.samples, rate: guess.rate, isEstimated: true)
            changes.append((index, length))
            changes += pauseLengths(after: index, recitation: length)
        }
        timeline.setLengths(changes)
    }

    /// Gives item `index` its measured length, and the pause after it the length that follows from it.
    mutating func setLength(_ length: Timeline.Length, of index: Int) {
        timeline.setLengths([(index, length)] + pauseLengths(after: index, recitation: length))
    }

    /// The pauses right after item `index` (a recitation of `recitation`'s length): at its rate, and as long as
    /// their multiple of it.
    private func pauseLengths(after index: Int, recitation: Timeline.Length) -> [(Int, Timeline.Length)] {
        var changes: [(Int, Timeline.Length)] = []
        var next = index + 1
        while next < plan.items.count, plan.items[next].isPause {
            changes.append((next, Self.pauseLength(plan.items[next].kind, after: recitation)))
            next += 1
        }
        return changes
    }

    /// A pause's length after an item of length `before`: at its rate; a multiple of it (estimated with it).
    static func pauseLength(_ kind: PlanItem.Kind, after before: Timeline.Length) -> Timeline.Length {
        switch kind {
        case .pause(let pause):
            return Timeline.Length(
                samples: pause.frames(afterRecitationOf: before.samples, rate: before.rate), rate: before.rate,
                isEstimated: pause.followsRecitation && before.isEstimated)
        case .cyclePause(let seconds):
            return Timeline.Length(samples: silence(seconds: seconds, rate: before.rate), rate: before.rate)
        case .ayah, .basmala:
            return before
        }
    }

    // MARK: - The time axis

    /// A plan's time axis from a reciter table: pinned ayat exactly, at their own rates, then the exact lengths
    /// `remembered` (unpinned files decoded before: the cache index keeps their counts); the others estimated
    /// (the mean length of the plan's known files at their most common rate, or 10 s at 22050 Hz without any)
    /// until their files are measured; pauses at the rate of the recitation they follow.
    public static func timeline(for plan: PlaybackPlan, table: ReciterTable?, remembered: [AyahRef: Timeline.Length] = [:]) -> Timeline {
        timeline(for: plan) { file in
            table?.files[file].map { Timeline.Length(samples: $0.samples, rate: $0.sampleRate) } ?? remembered[file]
        }
    }

    /// A plan's time axis from the lengths `known` gives its files (nil: estimated, as above).
    static func timeline(for plan: PlaybackPlan, known: (AyahRef) -> Timeline.Length?) -> Timeline {
        var fileLengths: [AyahRef: Timeline.Length] = [:]
        for item in plan.items {
            if let file = item.file, fileLengths[file] == nil, let length = known(file) { fileLengths[file] = length }
        }
        var rateCounts: [Int: Int] = [:]
        for length in fileLengths.values { rateCounts[length.rate, default: 0] += 1 }
        let rate = rateCounts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }?.key ?? 22050
        let sameRate = fileLengths.values.filter { $0.rate == rate }
        let mean = sameRate.isEmpty ? rate * 10 : sameRate.reduce(0) { $0 + $1.samples } / sameRate.count
        let estimate = Timeline.Length(samples: mean, rate: rate, isEstimated: true)
        var lengths: [Timeline.Length] = []
        lengths.reserveCapacity(plan.items.count)
        for item in plan.items {
            if let file = item.file {
                lengths.append(fileLengths[file] ?? estimate)
            } else {
                lengths.append(pauseLength(item.kind, after: lengths.last ?? Timeline.Length(samples: 0, rate: rate)))
            }
        }
        return Timeline(lengths: lengths)
    }

    // MARK: - Helpers

    /// `round(seconds × rate)` frames: a pause's length at a rate.
    public static func silence(seconds: Double, rate: Int) -> Int { Int((seconds * Double(rate)).rounded()) }

    /// `N ayat could not be played: 12:1 (why); …`, or nil when none were skipped; a basmala that was skipped
    /// (`basmala`: the ayat 1 they come before) is named as the basmala first: `the basmala (1:1) of surah 36
    /// could not be played: why`. Ayat in a row with the same reason are one range (`18:48-110 (mirror 1: HTTP
    /// 404)`), and at most `skippedRunsShown` ranges are named, so a surah no mirror has is one short line.
    /// `files`: how the reciter's recordings are cut (a surah-file reciter's basmala is its surah's own).
    public static func skippedMessage(
        _ skipped: [(ayah: AyahRef, reason: String)], basmala: [(ayah: AyahRef, reason: String)] = [], files: FileLayout = .ayah
    ) -> String? {
        var reasons: [String] = []
        var surahs: [String: [Int]] = [:]
        for (ayah, reason) in basmala.sorted(by: { $0.ayah < $1.ayah }) {
            if surahs[reason] == nil { reasons.append(reason) }
            surahs[reason, default: []].append(ayah.surah)
        }
        let basmalaParts = reasons.map { "\(basmalaName(of: surahs[$0]!, files: files)) could not be played: \($0)" }
        guard let ayat = ayatSkippedMessage(skipped) else { return basmalaParts.isEmpty ? nil : basmalaParts.joined(separator: "; ") }
        return (basmalaParts + [ayat]).joined(separator: "; ")
    }

    /// The line that says the basmala before `ayah` (ayah 1 of its surah) was skipped, and why.
    public static func skippedBasmalaLine(before ayah: AyahRef, reason: String, files: FileLayout = .ayah) -> String {
        "skipped \(basmalaName(of: [ayah.surah], files: files)): \(reason)"
    }

    /// `the basmala (1:1) of surah 36`, `the basmala (1:1) of surahs 36, 67`; for a reciter of one file per
    /// surah, whose basmala is each surah's own, `the basmala of surah 36`.
    static func basmalaName(of surahs: [Int], files: FileLayout = .ayah) -> String {
        let file = files == .surah ? "" : " (\(PlayFiles.basmala))"
        return "the basmala\(file) of \(surahs.count == 1 ? "surah" : "surahs") " + surahs.map(String.init).joined(separator: ", ")
    }

    private static func ayatSkippedMessage(_ skipped: [(ayah: AyahRef, reason: String)]) -> String? {
        guard !skipped.isEmpty else { return nil }
        var runs: [(first: AyahRef, last: AyahRef, reason: String)] = []
        for (ayah, reason) in skipped.sorted(by: { $0.ayah < $1.ayah }) {
            if let run = runs.last, run.reason == reason, run.last.surah == ayah.surah, run.last.ayah + 1 == ayah.ayah {
                runs[runs.count - 1].last = ayah
            } else {
                runs.append((ayah, ayah, reason))
            }
        }
        let named = runs.prefix(skippedRunsShown).map { run in
            (run.first == run.last ? "\(run.first)" : "\(run.first)-\(run.last.ayah)") + " (\(run.reason))"
        }
        let more = runs.count > skippedRunsShown ? "; and \(runs.count - skippedRunsShown) more" : ""
        return "\(Plural.count(skipped.count, "ayah")) could not be played: \(named.joined(separator: "; "))\(more)"
    }

    static let skippedRunsShown = 8

    /// `3:20`, `1:02:03`, `0:07.5` for messages.
    static func clock(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        let whole = tenths / 10
        let fraction = tenths % 10 == 0 ? "" : ".\(tenths % 10)"
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))\(fraction)" : "\(minutes):\(twoDigits(secs))\(fraction)"
    }
}
