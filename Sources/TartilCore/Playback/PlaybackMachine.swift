/// Every decision of playback, and nothing else: the state, where the listener is, what to open, fetch, record
/// and report. Commands (`pause`, `seek`…) and the engine's reports (a file is here, a chunk was written, the
/// device drained) go in; `Action`s come out, for the audio thread to carry out. It has no threads, clock,
/// sound or I/O, so every case is tested directly.
///
/// ```swift
/// var machine = PlaybackMachine(plan: plan, timeline: timeline)
/// var actions = machine.start(at: nil)                       // [.want([1:1, 112:1, …])]
/// actions = machine.on(.fileReady(AyahRef(1, 1)))            // [.open(item 0 +0), .emit(.item(0)), …]
/// actions = machine.on(.wrote(frames: 1024, unplayed: 900))  // where the listener is moves on
/// actions = try machine.on(.pause)                           // [.discardOutput, .record(… pause), .emit(.state(.paused))]
/// ```
///
/// Positions:
/// - `heard` is what the listener hears (the write head less what the device still holds) while playing, and
///   exactly where `resume` starts while paused;
/// - `head` is where the engine writes: the open item and how far into it, or the next place to open.
public struct PlaybackMachine: Sendable {
    /// What playback is doing.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Sound is coming out (or about to: the wanted bytes are being read from the cache).
        case playing
        /// Paused by the listener; `resume` continues on the very sample.
        case paused
        /// The item's file is being downloaded; playback goes on by itself when it arrives.
        case buffering
        /// Stopped by the listener (or by Ctrl-C).
        case stopped
        /// The last item was heard to its end.
        case finished
        /// Playback could not go on (a device error, or nothing after some point could be had).
        case failed

        /// True once playback has ended for good.
        public var isEnded: Bool { self == .stopped || self == .finished || self == .failed }
    }

    /// Why a position is recorded (the journal's reasons).
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        case ayahStart = "ayah-start"
        case pause, seek, stop, quit, end
    }

    /// A position worth keeping: `offsetSamples` into the recitation of `ayah` (0 while its basmala or a pause
    /// plays) at `rate`.
    public struct Record: Sendable, Hashable {
        public let ayah: AyahRef
        public let offsetSamples: Int
        public let rate: Int
        public let reason: Reason
    }

    /// What the listener is told.
    public enum Notice: Sendable, Hashable {
        case state(State)
        /// Item `index` began to be heard.
        case item(Int)
        /// Waiting for this ayah's file to download.
        case buffering(AyahRef)
        /// An item was skipped (its file failed everywhere, or did not decode).
        case skipped(AyahRef, reason: String)
    }

    /// What the engine must do, in order.
    public enum Action: Sendable, Hashable {
        /// Fetch these files (the one needed now first), and no others for playback.
        case want([AyahRef])
        /// Start writing item `index` from `offset`: its file (whose bytes are ready) with `offset` frames passed
        /// over, or `length − offset` frames of silence. Report `.wrote` and then `.sourceEnded`.
        case open(PlanPosition)
        /// Open item `index`'s file ahead, for a gapless hand-over (and to give silence before it a format).
        case prepare(Int)
        /// Drop what the device holds and has not played.
        case discardOutput
        /// Let the device play what it holds, then report `.drained`.
        case drainOutput
        /// Keep this position (the journal).
        case record(Record)
        case notify(Notice)
        /// Playback is over.
        case end(State, message: String?)
        /// Stretch what is written from now on to this speed, pitch preserved (1: the decode as it is).
        case setSpeed(Double)
        /// Play at this volume, in percent (100: the decode as it is).
        case setVolume(Int)
    }

    /// What the listener (or a script) asks.
    public enum Command: Sendable, Hashable {
        case pause, resume, toggle, next, previous
        case stop, quit
        case seek(SeekTarget)
        /// Speed (`PlaybackSpeed`) and volume (`PlaybackVolume`): positions stay in the recording's samples.
        case setSpeed(Double)
        case setVolume(PlaybackVolume.Change)
    }

    /// What the engine reports.
    public enum EngineEvent: Sendable, Hashable {
        /// A file's verified bytes are in memory; `samples` and `rate` when its length was not known for certain.
        case fileReady(AyahRef, samples: Int? = nil, rate: Int? = nil)
        /// A file is not in the cache and is being downloaded.
        case fileDownloading(AyahRef)
        /// A file could not be had (every mirror failed, or it is bad).
        case fileFailed(AyahRef, reason: String)
        /// A file's bytes were let go (no longer wanted); it must be read again before it opens.
        case fileDropped(AyahRef)
        /// The item just opened could not be: its file's bytes had been let go meanwhile (the engine learnt it
        /// at the open). It is read again, and opened when it is here.
        case openedFileGone(AyahRef)
        /// `frames` of the open item were written; the device holds `unplayed` frames not yet heard.
        case wrote(frames: Int, unplayed: Int)
        /// The device holds `unplayed` frames not yet heard (before a command, so it acts on what is heard).
        case heard(unplayed: Int)
        /// The open item has no more frames.
        case sourceEnded
        /// The open item's file did not decode.
        case openFailed(reason: String)
        /// The device has played everything it held.
        case drained
        /// The device failed.
        case outputFailed(String)
    }

    private enum FileStatus: Sendable, Hashable {
        case ready
        case downloading
        case failed(String)
    }

    public let plan: PlaybackPlan
    public private(set) var timeline: Timeline
    public private(set) var state: State = .playing
    /// What the listener hears, or (paused) exactly where `resume` starts.
    public private(set) var heard: PlanPosition
    /// Where the engine writes: the open item and how far into it, or where the next item opens.
    public private(set) var head: PlanPosition
    /// True while an item is open in the engine.
    public private(set) var isOpen = false
    /// Ayat skipped, in the order they were, with why.
    public private(set) var skipped: [(ayah: AyahRef, reason: String)] = []
    /// Why playback ended, when it failed.
    public private(set) var endMessage: String?
    /// End with `failed` instead of skipping an item that cannot be had (`render`).
    public let stopOnSkip: Bool
    /// How fast and how loud it plays (`setSpeed`, `setVolume`); positions are counted in the recording's samples
    /// whatever the speed.
    public private(set) var speed = PlaybackSpeed.normal
    public private(set) var volume = PlaybackVolume.normal
    /// The fastest speed allowed (a reciter's `max_speed`).
    public var maximumSpeed = PlaybackSpeed.range.upperBound

    private var files: [AyahRef: FileStatus] = [:]
    private var wanted: [AyahRef] = []
    private var prepared: Int?
    /// True once the engine has a format (a file was opened or prepared), so silence can be written.
    private var hasFormat = false
    /// The item last announced as heard.
    private var announced: Int?
    private var draining = false
    /// The last item written to its end (the plan is finished only when that is its last item).
    private var lastWritten: Int?
    private var wroteAnything = false

    public init(plan: PlaybackPlan, timeline: Timeline, stopOnSkip: Bool = false) {
        precondition(plan.items.count == timeline.count, "the timeline must have one length per item")
        self.plan = plan
        self.timeline = timeline
        self.stopOnSkip = stopOnSkip
        heard = PlanPosition(index: 0)
        head = heard
    }

    // MARK: - Starting

    /// Where playback begins: a place in the plan (`--from`, a resume point), or the start.
    public mutating func start(at position: PlanPosition?) -> [Action] {
        var actions: [Action] = []
        let start = position ?? PlanPosition(index: 0)
        heard = start
        head = start
        actions.append(.notify(.state(.playing)))
        if start.index < plan.items.count { announce(&actions, recordStart: start.offset == 0) }
        pump(&actions)
        return actions
    }

    /// Where a resume point lands: `offsetSamples` into the recitation of `ayah` (the start of its group, with
    /// its basmala, at 0), or nil when the plan does not recite it.
    public func position(resuming ayah: AyahRef, offsetSamples: Int) -> PlanPosition? {
        guard let index = plan.items.firstIndex(where: { $0.kind == .ayah && $0.ayah == ayah }) else { return nil }
        guard offsetSamples > 0 else { return PlanPosition(index: plan.group(containing: index).lowerBound) }
        return PlanPosition(index: index, offset: min(offsetSamples, max(0, timeline.lengths[index].samples - 1)))
    }

    /// The place a seek target names, relative to where the listener is; a usage error when it is not in the
    /// plan (past the end, or an ayah it does not play).
    public func target(of seek: SeekTarget) throws(TartilError) -> PlanPosition {
        guard !plan.items.isEmpty else { throw .usage("nothing is playing") }
        let index = min(heard.index, plan.items.count - 1)
        let span = plan.surahSpan(containing: index)
        let surah = plan.items[span.lowerBound].ayah.surah
        let length = timeline.seconds(in: span)
        let (first, last) = (plan.items[span.lowerBound].ayah, plan.items[span.upperBound - 1].ayah)
        let isWholeSurah = first.ayah == 1 && last.ayah == (try? Catalog.surah(surah))?.ayahCount
        let surahText = isWholeSurah ? "surah \(surah)" : first == last ? "\(first)" : "\(first)-\(last.ayah)"
        switch seek {
        case .time(let seconds):
            if seconds < length, let position = timeline.position(atSeconds: seconds, from: span.lowerBound) { return position }
            var message = "\(Self.clock(seconds)) is past the end of \(surahText), which lasts \(Self.clock(length))"
            let whole = Int(seconds)
            if Double(whole) == seconds, let ayah = try? AyahRef(whole / 60, whole % 60), plan.firstItem(of: ayah) != nil {
                message += "; for ayah \(ayah) write 'ayah \(ayah)'"
            }
            throw .usage(message)
        case .offset(let seconds):
            let now = timeline.seconds(at: heard)
            guard let position = timeline.position(atSeconds: max(0, now + seconds), from: 0) else {
                throw .usage("\(seconds >= 0 ? "+" : "-")\(Self.clock(abs(seconds))) goes past the end of what is playing (\(Self.clock(timeline.startSeconds[timeline.count] - now)) are left)")
            }
            return position
        case .fraction(let share):
            guard let position = timeline.position(atShare: share, of: span) else {
                throw .usage("\(Int((share * 100).rounded()))% is the end of what is playing: nothing is left to play there")
            }
            return position
        case .ayah(let ayah):
            guard let item = plan.firstItem(of: ayah) else {
                throw .usage("\(ayah) is not in what is playing (\(plan.rangeDescription))")
            }
            return PlanPosition(index: item)
        }
    }

    // MARK: - Commands

    /// Carries out a command; a usage error (nothing changed) when it cannot be.
    public mutating func on(_ command: Command) throws(TartilError) -> [Action] {
        var actions: [Action] = []
        guard !state.isEnded else { return actions }
        switch command {
        case .pause:
            guard state != .paused else { return actions }
            close(&actions, discard: true)
            head = heard
            setState(.paused, &actions)
            actions.append(.record(record(at: heard, .pause)))
        case .resume:
            guard state == .paused else { return actions }
            head = heard
            setState(.playing, &actions)
            pump(&actions)
        case .toggle:
            return try on(state == .paused ? .resume : .pause)
        case .stop, .quit:
            actions.append(.record(record(at: heard, command == .quit ? .quit : .stop)))
            close(&actions, discard: true)
            setState(.stopped, &actions)
            actions.append(.end(.stopped, message: nil))
        case .seek(let seek):
            move(to: try target(of: seek), &actions)
        case .setSpeed(let new):
            speed = try PlaybackSpeed.checked(new, maximum: maximumSpeed, for: "speed")
            actions.append(.setSpeed(speed))
        case .setVolume(let change):
            volume = try change.applied(to: volume)
            actions.append(.setVolume(volume))
        case .next:
            let group = plan.group(containing: min(heard.index, plan.items.count - 1))
            guard group.upperBound < plan.items.count else {
                throw .usage("\(plan.items[group.lowerBound].ayah) is the last ayah of what is playing (\(plan.rangeDescription))")
            }
            move(to: PlanPosition(index: group.upperBound), &actions)
        case .previous:
            let index = min(heard.index, plan.items.count - 1)
            let groupStart = plan.group(containing: index).lowerBound
            let into = timeline.seconds(at: heard) - timeline.startSeconds[groupStart]
            let target = into > PlaybackPlan.restartThresholdSeconds || groupStart == 0
                ? groupStart : plan.group(containing: groupStart - 1).lowerBound
            move(to: PlanPosition(index: target), &actions)
        }
        return actions
    }

    /// Moves the listener to `position`: paused, the pause moves there; playing, the device's sound is dropped
    /// and playback opens there.
    private mutating func move(to position: PlanPosition, _ actions: inout [Action]) {
        if state == .paused {
            heard = position
            head = position
            actions.append(.record(record(at: position, .seek)))
            want(&actions)  // fetch there while paused, so resume starts at once
            return
        }
        close(&actions, discard: true)
        heard = position
        head = position
        lastWritten = nil
        announce(&actions, recordStart: false)
        actions.append(.record(record(at: position, .seek)))
        if state == .buffering { setState(.playing, &actions) }
        pump(&actions)
    }

    // MARK: - Engine events

    /// Takes a report from the engine.
    public mutating func on(_ event: EngineEvent) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .fileReady(let ayah, let samples, let rate):
            files[ayah] = .ready
            if let samples, let rate { measure(ayah, samples: samples, rate: rate) }
        case .fileDownloading(let ayah):
            if files[ayah] == nil { files[ayah] = .downloading }
        case .fileFailed(let ayah, let reason):
            files[ayah] = .failed(reason)
        case .fileDropped(let ayah):
            if files[ayah] == .ready { files[ayah] = nil }
            wanted = []  // ask again
        case .openedFileGone(let ayah):
            if files[ayah] == .ready { files[ayah] = nil }
            wanted = []  // ask again
            if isOpen && plan.items[head.index].file == ayah { isOpen = false }
        case .wrote(let frames, let unplayed):
            guard isOpen else { return actions }
            head.offset += frames
            wroteAnything = wroteAnything || frames > 0
            hear(unplayed: unplayed, &actions)
            prepareNext(&actions)
            return actions
        case .heard(let unplayed):
            if state == .playing && (isOpen || draining) { hear(unplayed: unplayed, &actions) }
            return actions
        case .sourceEnded:
            guard isOpen else { return actions }
            isOpen = false
            // The decode is the truth: a file longer or shorter than its table says gets its real length.
            let length = timeline.lengths[head.index]
            if head.offset != length.samples || length.isEstimated {
                timeline.setLength(Timeline.Length(samples: head.offset, rate: length.rate), of: head.index)
            }
            lastWritten = head.index
            head = PlanPosition(index: head.index + 1)
            if prepared == head.index - 1 { prepared = nil }
        case .openFailed(let reason):
            guard isOpen else { return actions }
            isOpen = false
            if let file = plan.items[head.index].file { files[file] = .failed(reason) }
        case .drained:
            guard draining, !state.isEnded else { return actions }
            draining = false
            // Everything written was heard: the listener is at the end of the last item written.
            if let lastWritten { heard = PlanPosition(index: lastWritten, offset: timeline.lengths[lastWritten].samples) }
            finish(&actions)
            return actions
        case .outputFailed(let message):
            guard !state.isEnded else { return actions }
            actions.append(.record(record(at: heard, .stop)))
            fail(message, &actions)
            return actions
        }
        if !state.isEnded && state != .paused { pump(&actions) }
        return actions
    }

    // MARK: - Moving on

    /// Opens what comes next at `head` when nothing is open: a file whose bytes are here, silence once a format
    /// is known; passes over failed files (reporting them) and empty items; waits (buffering while downloading)
    /// for a file that is not here; drains at the end.
    private mutating func pump(_ actions: inout [Action]) {
        guard !isOpen, !draining, !state.isEnded, state != .paused else { return }
        while head.index < plan.items.count {
            let item = plan.items[head.index]
            if timeline.lengths[head.index].samples == 0 || head.offset >= timeline.lengths[head.index].samples {
                if lastWritten == head.index - 1 { lastWritten = head.index }
                head = PlanPosition(index: head.index + 1)
                continue
            }
            if let file = item.file {
                switch files[file] {
                case .ready?:
                    open(&actions)
                    return
                case .failed(let reason)?:
                    if skip(item, reason: reason, &actions) { return }
                    continue
                case .downloading?:
                    want(&actions)
                    setState(.buffering, &actions, ayah: file)
                    return
                case nil:
                    want(&actions)  // being read from the cache: no need to say buffering
                    return
                }
            }
            // Silence: the engine needs a format, which only a file gives.
            if hasFormat {
                open(&actions)
                return
            }
            var index = head.index
            var probe = plan
            probe.jump(to: head.index)
            let window = probe.filesAhead()
            while let next = plan.nextFileItem(after: index), let file = plan.items[next].file, window.contains(file) {
                switch files[file] {
                case .ready?:
                    actions.append(.prepare(next))
                    prepared = next
                    hasFormat = true
                    open(&actions)
                    return
                case .downloading?:
                    want(&actions)
                    setState(.buffering, &actions, ayah: file)
                    return
                case nil:
                    want(&actions)
                    return
                case .failed?:
                    index = next
                }
            }
            // No file fetched ahead can play (this silence follows ayat that could not be had): pass it over.
            head = PlanPosition(index: head.index + 1)
        }
        want(&actions)
        // The end: play out what the device holds.
        if wroteAnything {
            draining = true
            actions.append(.drainOutput)
        } else {
            finish(&actions)
        }
    }

    private mutating func open(_ actions: inout [Action]) {
        isOpen = true
        if plan.items[head.index].file != nil { hasFormat = true }
        if prepared != nil && prepared! <= head.index { prepared = nil }
        if state == .buffering { setState(.playing, &actions) }
        want(&actions)
        actions.append(.open(head))
    }

    /// Reports an item that cannot play and moves past it; true when that ended playback (`stopOnSkip`).
    private mutating func skip(_ item: PlanItem, reason: String, _ actions: inout [Action]) -> Bool {
        if !skipped.contains(where: { $0.ayah == item.ayah }) { skipped.append((item.ayah, reason)) }
        actions.append(.notify(.skipped(item.ayah, reason: reason)))
        if stopOnSkip {
            actions.append(.record(record(at: heard, .stop)))
            fail("\(item) cannot be played: \(reason)", &actions)
            return true
        }
        head = PlanPosition(index: head.index + 1)
        return false
    }

    /// Opens the next file ahead once the current item is being written, so one runs into the next.
    private mutating func prepareNext(_ actions: inout [Action]) {
        guard prepared == nil, isOpen, let next = plan.nextFileItem(after: head.index), let file = plan.items[next].file,
            files[file] == .ready
        else { return }
        prepared = next
        actions.append(.prepare(next))
    }

    private mutating func close(_ actions: inout [Action], discard: Bool) {
        if discard { actions.append(.discardOutput) }
        isOpen = false
        prepared = nil
        draining = false
    }

    // MARK: - Where the listener is

    /// The write head less what the device holds; announces each item reached and records ayah starts.
    private mutating func hear(unplayed: Int, _ actions: inout [Action]) {
        let position = timeline.position(atSample: timeline.sample(at: head) - max(0, unplayed))
        // Never behind where playback (re)started (the device holds only frames from after it), never ahead of
        // what was written.
        heard = max(heard, min(position, head))
        announce(&actions, recordStart: true)
    }

    /// Announces the item being heard when it changed; entering another ayah's group by playing records its
    /// start (a seek records itself instead).
    private mutating func announce(_ actions: inout [Action], recordStart: Bool) {
        let index = heard.index
        guard index < plan.items.count, index != announced else { return }
        let previous = announced
        announced = index
        actions.append(.notify(.item(index)))
        let group = plan.group(containing: index)
        if recordStart && previous.map({ !group.contains($0) }) ?? true {
            actions.append(.record(record(at: PlanPosition(index: group.lowerBound), .ayahStart)))
        }
    }

    /// A position in the plan as a position in an ayah's recitation (its start while its basmala or a pause
    /// plays; the end of the last item at the end).
    public func record(at position: PlanPosition, _ reason: Reason) -> Record {
        var position = position
        if position.index >= plan.items.count {
            position = PlanPosition(index: plan.items.count - 1, offset: timeline.lengths[plan.items.count - 1].samples)
        }
        let item = plan.items[position.index]
        return Record(
            ayah: item.ayah, offsetSamples: item.kind == .ayah ? position.offset : 0,
            rate: timeline.lengths[position.index].rate, reason: reason)
    }

    /// The files wanted now: those of the item at `head` and the next ones ahead.
    private mutating func want(_ actions: inout [Action]) {
        var probe = plan
        probe.jump(to: head.index)
        let files = probe.filesAhead().filter { file in
            if case .failed? = self.files[file] { return false }
            return true
        }
        guard files != wanted else { return }
        wanted = files
        actions.append(.want(files))
    }

    /// An unpinned ayah's length becomes exact once its file is measured (every item that plays that file).
    private mutating func measure(_ file: AyahRef, samples: Int, rate: Int) {
        for index in plan.items.indices where plan.items[index].file == file {
            guard index != head.index || !isOpen else { continue }  // the open item is measured as it ends
            let old = timeline.lengths[index]
            guard old.isEstimated || old.rate != rate else { continue }
            timeline.setLength(Timeline.Length(samples: samples, rate: rate), of: index)
            // A pause after it counts at the recitation's rate.
            var next = index + 1
            while next < plan.items.count, case .pause(let seconds) = plan.items[next].kind, plan.items[next].ayah == plan.items[index].ayah {
                timeline.setLength(Timeline.Length(samples: Self.silence(seconds: seconds, rate: rate), rate: rate), of: next)
                next += 1
            }
        }
    }

    // MARK: - Ending

    private mutating func finish(_ actions: inout [Action]) {
        if lastWritten == plan.items.count - 1 {
            heard = timeline.end
            announced = plan.items.count
            actions.append(.record(record(at: timeline.end, .end)))
            setState(.finished, &actions)
            actions.append(.end(.finished, message: nil))
        } else {
            actions.append(.record(record(at: heard, .stop)))
            fail(Self.skippedMessage(skipped) ?? "nothing could be played", &actions)
        }
    }

    private mutating func fail(_ message: String, _ actions: inout [Action]) {
        close(&actions, discard: false)
        endMessage = message
        setState(.failed, &actions)
        actions.append(.end(.failed, message: message))
    }

    private mutating func setState(_ new: State, _ actions: inout [Action], ayah: AyahRef? = nil) {
        guard new != state else { return }
        state = new
        if new == .buffering, let ayah { actions.append(.notify(.buffering(ayah))) }
        actions.append(.notify(.state(new)))
    }

    // MARK: - The time axis

    /// A plan's time axis from a reciter table: pinned ayat exactly, at their own rates; unpinned ones estimated
    /// (the mean length of the plan's pinned files at their most common rate, or 10 s at 22050 Hz without any)
    /// until their files are measured; pauses at the rate of the recitation they follow.
    public static func timeline(for plan: PlaybackPlan, table: ReciterTable?) -> Timeline {
        let rows = plan.items.compactMap { $0.file.flatMap { table?.files[$0] } }
        var rateCounts: [Int: Int] = [:]
        for row in rows { rateCounts[row.sampleRate, default: 0] += 1 }
        let rate = rateCounts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }?.key ?? 22050
        let sameRate = rows.filter { $0.sampleRate == rate }
        let mean = sameRate.isEmpty ? rate * 10 : sameRate.reduce(0) { $0 + $1.samples } / sameRate.count
        var lengths: [Timeline.Length] = []
        lengths.reserveCapacity(plan.items.count)
        for item in plan.items {
            switch item.kind {
            case .pause(let seconds):
                let ayahRate = table?.files[item.ayah]?.sampleRate ?? rate
                lengths.append(Timeline.Length(samples: silence(seconds: seconds, rate: ayahRate), rate: ayahRate))
            case .ayah, .basmala:
                if let file = item.file, let row = table?.files[file] {
                    lengths.append(Timeline.Length(samples: row.samples, rate: row.sampleRate))
                } else {
                    lengths.append(Timeline.Length(samples: mean, rate: rate, isEstimated: true))
                }
            }
        }
        return Timeline(lengths: lengths)
    }

    // MARK: - Helpers

    /// `round(seconds × rate)` frames: a pause's length at a rate.
    public static func silence(seconds: Double, rate: Int) -> Int { Int((seconds * Double(rate)).rounded()) }

    /// `N ayat could not be played: 12:1 (why); …`, or nil when none were skipped.
    public static func skippedMessage(_ skipped: [(ayah: AyahRef, reason: String)]) -> String? {
        guard !skipped.isEmpty else { return nil }
        return "\(skipped.count) ayat could not be played: " + skipped.map { "\($0.ayah) (\($0.reason))" }.joined(separator: "; ")
    }

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
