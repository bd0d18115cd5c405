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
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
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
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
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
        /// Changes how the plan is laid out (`set repeat 3`): the plan is laid out again and the listener stays on
        /// the same ayah (an A-B loop is cleared).
        case set(PlaybackOptions.Setting)
        /// Loops between two points (and moves to the first); nil clears the loop (`loop off`).
        case loop(LoopRequest?)
        /// The `l` key: marks A where the listener is; then B, starting the loop; then clears it.
        case markLoop
        /// Stops by itself later (`--stop-after`): a time sets the sleep timer, the others the boundary; nil
        /// cancels both.
        case stopAfter(StopAfter?)
        /// The sleep timer alone (`sleep 20m`, `sleep off`): stop after this many seconds of listening.
        case sleep(seconds: Double?)
        /// Speed (`PlaybackSpeed`) and volume (`PlaybackVolume`): positions stay in the recording's samples.
        case setSpeed(Double)
        case setVolume(PlaybackVolume.Change)
    }

    /// An A-B loop in the plan: from `start` to the end of item `endIndex` or, with `endOffset`, to that many
    /// frames into it; `passesLeft` passes still to play, this one included (nil: until cleared).
    public struct Loop: Sendable, Hashable {
        public var start: PlanPosition
        public var endIndex: Int
        public var endOffset: Int?
        public var passesLeft: Int?

        /// True when `position` is inside the loop.
        func contains(_ position: PlanPosition) -> Bool {
            guard position >= start else { return false }
            if position.index < endIndex { return true }
            return position.index == endIndex && endOffset.map { position.offset < $0 } ?? true
        }
    }

    /// The sleep timer's fade over the next frames: the frames left before it stops, and the fade's length.
    public struct Fade: Sendable, Hashable {
        public let framesLeft: Int
        public let fadeFrames: Int

        /// The gain of frame `frame` from now (see `StopAfter.fadeGain`).
        public func gain(at frame: Int) -> Float { StopAfter.fadeGain(framesLeft: framesLeft - frame, fadeFrames: fadeFrames) }
    }

    /// What the engine reports.
    public enum EngineEvent: Sendable, Hashable {
        /// A file's verified bytes are in memory; `samples` and `rate` when its length was not known for certain.
        case fileReady(AyahRef, samples: Int? = nil, rate: Int? = nil)
        /// Closer guesses of files' lengths, worked out without decoding them (`LengthEstimate`: from their sizes):
        /// each replaces an estimated length, still marked estimated; a pinned or measured length is kept.
        case lengthsEstimated([AyahRef: Timeline.Length])
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

    public private(set) var plan: PlaybackPlan
    public private(set) var timeline: Timeline
    /// Lengths estimated from file sizes (`lengthsEstimated`), kept so that a new layout (`set`) has them too.
    private var sizeEstimates: [AyahRef: Timeline.Length] = [:]
    public private(set) var state: State = .playing
    /// The state the listener was last told, and the file they were told playback waits for. Nothing is told
    /// at the start (or on resume, or after a seek while buffering) until sound is written or a download is
    /// awaited, so a `playing` notice means sound.
    private var toldState: State?
    private var toldBuffering: AyahRef?
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

    /// The A-B loop, if any.
    public private(set) var loop: Loop?
    /// Where the `l` key marked A, before B.
    public private(set) var loopMark: PlanPosition?
    /// Where playback stops by itself (a number of ayat, the surah, the juz), if set; the timer is apart.
    public private(set) var stopAfter: StopAfter?
    /// With `stopAfter` at a boundary: the first item not played.
    public private(set) var stopBoundary: Int?
    /// With a timer: the frames still to be heard, at `sleepRate` and normal speed (listening time: at 1.5× a
    /// frame of the recording lasts 1/1.5 of one).
    private var sleepFrames: Int?
    private var sleepRate = 1
    /// True once a timer or boundary ended the writing: the device plays out what it holds, then playback stops.
    private var stoppingByItself = false
    /// What was written since the device last started afresh, item by item, newest last: where the listener is
    /// is found by walking back from the write head over what the device still holds (loops jump back, so the
    /// plan's own order cannot tell).
    private var written: [(index: Int, start: Int, frames: Int)] = []
    private var writtenFrames = 0

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

    /// Whether `next` can move on: an ayah follows the one being heard (MPRIS's `CanGoNext`).
    public var hasNext: Bool {
        !plan.items.isEmpty && plan.group(containing: min(heard.index, plan.items.count - 1)).upperBound < plan.items.count
    }

    // MARK: - Starting

    /// Where playback begins: a place in the plan (`--from`, a resume point), or the start.
    public mutating func start(at position: PlanPosition?) -> [Action] {
        var actions: [Action] = []
        let start = position ?? PlanPosition(index: 0)
        heard = start
        head = start
        written = []
        state = .playing  // told once sound is written, or a download is awaited
        if start.index < plan.items.count { announce(&actions, recordStart: start.offset == 0) }
        pump(&actions)
        return actions
    }

    /// Where a resume point lands: `offsetSamples` into the recitation of `ayah` (the start of its group, with
    /// its basmala, at 0), or nil when the plan does not recite it.
    public func position(resuming ayah: AyahRef, offsetSamples: Int) -> PlanPosition? {
        guard let index = plan.items.firstIndex(where: { $0.kind == .ayah && $0.ayah == ayah && $0.reviewOf == nil })
            ?? plan.items.firstIndex(where: { $0.kind == .ayah && $0.ayah == ayah })
        else { return nil }
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
            guard let item = plan.firstItem(of: ayah, near: index) else {
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
            state = .playing  // told once sound is written, or a download is awaited
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
            guard hasNext else {
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
        case .set(let setting):
            let options = plan.options.with(setting)
            guard options != plan.options else { return actions }
            replan(try PlaybackPlan(ayat: plan.ayat, options: options), &actions)
        case .loop(let request):
            loopMark = nil
            guard let request else {
                loop = nil
                return actions
            }
            let newLoop = try resolve(request)
            loop = newLoop
            move(to: newLoop.start, &actions)
        case .markLoop:
            if loop != nil {
                loop = nil
                loopMark = nil
            } else if let mark = loopMark {
                guard heard > mark else {
                    loopMark = nil
                    throw .usage("the loop's end must come after its start: mark A, let it play, then mark B")
                }
                loopMark = nil
                let newLoop = heard.offset == 0
                    ? Loop(start: mark, endIndex: heard.index - 1, endOffset: nil, passesLeft: nil)
                    : Loop(start: mark, endIndex: heard.index, endOffset: heard.offset, passesLeft: nil)
                loop = newLoop
                move(to: mark, &actions)
            } else {
                loopMark = heard
            }
        case .stopAfter(let stop):
            switch stop {
            case .seconds(let seconds)?:
                setTimer(seconds)
            case nil:
                setTimer(nil)
                setStopAfter(nil, &actions)
            default:
                setStopAfter(stop, &actions)
            }
        case .sleep(let seconds):
            setTimer(seconds)
        }
        return actions
    }

    // MARK: - Memorisation controls

    /// Lays the plan out again with other options, keeping the listener on the same ayah (the same repetition and
    /// the same place in it where the new plan has them). Known lengths carry over, and so do size estimates (still
    /// marked as estimates); an A-B loop is cleared.
    private mutating func replan(_ newPlan: PlaybackPlan, _ actions: inout [Action]) {
        let mapped = Self.map(heard, from: plan, to: newPlan)
        var known: [AyahRef: Timeline.Length] = [:]
        for (index, item) in plan.items.enumerated() {
            if let file = item.file, known[file] == nil, !timeline.lengths[index].isEstimated { known[file] = timeline.lengths[index] }
        }
        plan = newPlan
        // Measured lengths carry over as they are, size estimates as estimates; the rest gets the mean again.
        timeline = Self.timeline(for: newPlan) { file in
            known[file] ?? sizeEstimates[file].map { Timeline.Length(samples: $0.samples, rate: $0.rate, isEstimated: true) }
        }
        loop = nil
        loopMark = nil
        let position = PlanPosition(index: mapped.index, offset: mapped.index < plan.items.count ? min(mapped.offset, max(0, timeline.lengths[mapped.index].samples - 1)) : 0)
        if let stopAfter, stopBoundary != nil {
            stopBoundary = plan.items.isEmpty ? nil : boundary(of: stopAfter, from: min(position.index, plan.items.count - 1))
        }
        announced = nil
        move(to: position, recording: false, &actions)
    }

    /// Where `position` in `old` is in `new`, laid out from the same ayat: the same ayah in the same cycle (and
    /// stepped review), the same repetition when the new plan has it, the same offset into a recitation.
    static func map(_ position: PlanPosition, from old: PlaybackPlan, to new: PlaybackPlan) -> PlanPosition {
        guard position.index < old.items.count, !new.items.isEmpty else { return PlanPosition(index: new.items.count) }
        let item = old.items[position.index]
        let cycle = min(item.cycle, new.items.last!.cycle)
        let groupStart = new.items.firstIndex { $0.ayah == item.ayah && $0.cycle == cycle && $0.reviewOf == item.reviewOf && !$0.isPause }
            ?? new.items.firstIndex { $0.ayah == item.memorised && $0.cycle == cycle && $0.reviewOf == nil && !$0.isPause }
            ?? new.firstItem(of: item.memorised)
        guard let groupStart else { return PlanPosition(index: 0) }
        let group = new.group(containing: groupStart)
        let recitations = group.filter { new.items[$0].kind == .ayah }
        let repetition = min(item.repetition, recitations.count)
        let recitation = recitations.first { new.items[$0].repetition == repetition } ?? group.lowerBound
        switch item.kind {
        case .ayah:
            return PlanPosition(index: recitation, offset: position.offset)
        case .basmala:
            if new.items[group.lowerBound].kind == .basmala { return PlanPosition(index: group.lowerBound, offset: position.offset) }
            return PlanPosition(index: recitation)
        case .pause:
            return PlanPosition(index: recitation + 1)  // its pause in the new layout, or what follows the recitation
        case .cyclePause:
            return PlanPosition(index: group.upperBound)
        }
    }

    /// Where a loop request lands in the plan; a usage error when an end is not in it or B is not after A.
    private func resolve(_ request: LoopRequest) throws(TartilError) -> Loop {
        guard !plan.items.isEmpty else { throw .usage("nothing is playing") }
        let first = try place(request.start, asEnd: false)
        let start = PlanPosition(index: first.index, offset: first.offset ?? 0)
        let end = try place(request.end, asEnd: true)
        let endPosition = PlanPosition(index: end.index, offset: end.offset ?? timeline.lengths[end.index].samples)
        guard start < endPosition else {
            throw .usage("the loop's end (\(request.end)) must come after its start (\(request.start))")
        }
        return Loop(start: start, endIndex: end.index, endOffset: end.offset, passesLeft: request.passes)
    }

    /// A loop point as a plan position (as A) or as the end of an item or an offset into one (as B).
    private func place(_ point: LoopPoint, asEnd: Bool) throws(TartilError) -> (index: Int, offset: Int?) {
        let near = min(heard.index, plan.items.count - 1)
        switch point {
        case .time(let seconds):
            let span = plan.surahSpan(containing: near)
            let length = timeline.seconds(in: span)
            guard seconds <= length else {
                throw .usage("\(Self.clock(seconds)) is past the end of what is playing of surah \(plan.items[span.lowerBound].ayah.surah), which lasts \(Self.clock(length))")
            }
            guard let position = timeline.position(atSeconds: seconds, from: span.lowerBound), position.index < span.upperBound else {
                return asEnd ? (span.upperBound - 1, nil) : (span.upperBound - 1, max(0, timeline.lengths[span.upperBound - 1].samples - 1))
            }
            if asEnd && position.offset == 0 && position.index > 0 { return (position.index - 1, nil) }
            return (position.index, position.offset)
        case .ayah(let ayah, let offset):
            guard let first = plan.firstItem(of: ayah, near: near) else {
                throw .usage("\(ayah) is not in what is playing (\(plan.rangeDescription))")
            }
            let group = plan.group(containing: first)
            guard let offset else { return asEnd ? (group.upperBound - 1, nil) : (group.lowerBound, 0) }
            let recitation = group.first { plan.items[$0].kind == .ayah } ?? first
            let length = timeline.lengths[recitation]
            let frames = Int((offset * Double(length.rate)).rounded())
            guard frames < length.samples else {
                throw .usage("\(ayah)+\(NumberText.format(offset)) is past the end of \(ayah), which lasts \(Self.clock(length.seconds))")
            }
            if asEnd && frames == 0 { return recitation > 0 ? (recitation - 1, nil) : (0, 0) }
            return (recitation, frames)
        }
    }

    /// Sets (from now) or cancels the sleep timer.
    private mutating func setTimer(_ seconds: Double?) {
        sleepFrames = nil
        guard let seconds, !plan.items.isEmpty else { return }
        sleepRate = timeline.lengths[min(heard.index, plan.items.count - 1)].rate
        sleepFrames = max(1, Int((seconds * Double(sleepRate)).rounded()))
    }

    /// Sets or cancels the boundary: the end of the ayat, surah or juz heard now.
    private mutating func setStopAfter(_ stop: StopAfter?, _ actions: inout [Action]) {
        stopAfter = stop
        stopBoundary = nil
        guard let stop, !plan.items.isEmpty else { return }
        let near = min(heard.index, plan.items.count - 1)
        let boundary = boundary(of: stop, from: near)
        stopBoundary = boundary
        // The engine may already have written past it (what the device holds): write again from what is heard.
        if state != .paused && head.index >= boundary && heard.index < boundary {
            close(&actions, discard: true)
            head = heard
            lastWritten = nil
            pump(&actions)
        }
    }

    /// The first item after the stop `stop` names, from item `index`.
    private func boundary(of stop: StopAfter, from index: Int) -> Int {
        let items = plan.items
        switch stop {
        case .seconds: return items.count
        case .ayat(let count):
            let last = items[index].group + count - 1
            return items[index...].firstIndex { $0.group > last } ?? items.count
        case .surah:
            return plan.surahSpan(containing: index).upperBound
        case .juz:
            let (juz, cycle) = (Catalog.juz(containing: items[index].ayah), items[index].cycle)
            return items[index...].firstIndex { $0.cycle != cycle || Catalog.juz(containing: $0.ayah) != juz } ?? items.count
        }
    }

    /// How many frames of the open item the engine may write next, at most `chunk`: fewer at an A-B loop's end
    /// or when the sleep timer runs out. 0 means the item ends here: the engine reports `.sourceEnded`.
    public func allowance(_ chunk: Int) -> Int {
        guard isOpen, head.index < plan.items.count else { return chunk }
        var frames = chunk
        if let loop, loop.endIndex == head.index, let end = loop.endOffset, loop.passesLeft != 1 {
            frames = min(frames, max(0, end - head.offset))
        }
        if let left = sleepFramesLeft { frames = min(frames, left) }
        return frames
    }

    /// The sleep timer's fade over the next frames, when it is set.
    public var fade: Fade? {
        guard let left = sleepFramesLeft, head.index < plan.items.count else { return nil }
        let rate = timeline.lengths[head.index].rate
        return Fade(framesLeft: left, fadeFrames: Int((StopAfter.fadeSeconds * Double(rate) * speed).rounded()))
    }

    /// Seconds left on the sleep timer.
    public var sleepSecondsLeft: Double? { sleepFrames.map { Double($0) / Double(sleepRate) } }

    /// The sleep timer's frames left, at the rate of the item at the write head.
    private var sleepFramesLeft: Int? {
        guard let sleepFrames else { return nil }
        let rate = head.index < plan.items.count ? timeline.lengths[head.index].rate : sleepRate
        if rate == sleepRate && speed == 1 { return sleepFrames }
        return Int((Double(sleepFrames) * Double(rate) / Double(sleepRate) * speed).rounded())
    }

    /// Moves the listener to `position`: paused, the pause moves there; playing, the device's sound is dropped
    /// and playback opens there.
    /// `recording` the new position as a seek (not when only the layout changed).
    private mutating func move(to position: PlanPosition, recording: Bool = true, _ actions: inout [Action]) {
        if let loop, !loop.contains(position) { self.loop = nil }
        if state == .paused {
            heard = position
            head = position
            if recording { actions.append(.record(record(at: position, .seek))) }
            want(&actions)  // fetch there while paused, so resume starts at once
            return
        }
        close(&actions, discard: true)
        heard = position
        head = position
        lastWritten = nil
        announce(&actions, recordStart: false)
        if recording { actions.append(.record(record(at: position, .seek))) }
        if state == .buffering { state = .playing }  // told once sound is written, or buffering for the new file
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
        case .lengthsEstimated(let lengths):
            sizeEstimates.merge(lengths) { _, new in new }
            estimate(lengths)
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
            noteWritten(frames)
            hear(unplayed: unplayed, &actions)
            prepareNext(&actions)
            return actions
        case .heard(let unplayed):
            if state == .playing && (isOpen || draining) { hear(unplayed: unplayed, &actions) }
            return actions
        case .sourceEnded:
            guard isOpen else { return actions }
            isOpen = false
            let cutByLoop = loop.map { $0.endIndex == head.index && $0.endOffset.map { head.offset >= $0 } == true && $0.passesLeft != 1 } ?? false
            let cutByTimer = sleepFrames == 0
            if !cutByLoop && !cutByTimer {
                // The decode is the truth: a file longer or shorter than its table says gets its real length.
                let length = timeline.lengths[head.index]
                if head.offset != length.samples || length.isEstimated {
                    setLength(Timeline.Length(samples: head.offset, rate: length.rate), of: head.index)
                }
            }
            lastWritten = head.index
            if cutByTimer {
                stopByItself(&actions)
                return actions
            }
            if var current = loop, current.endIndex == head.index {
                if current.passesLeft != 1 {
                    // An A-B loop's end (cut there, or the item ended before B): back to A.
                    current.passesLeft = current.passesLeft.map { $0 - 1 }
                    loop = current
                    head = current.start
                } else {
                    loop = nil  // its last pass went through B
                    head = following(head.index)
                }
            } else {
                head = following(head.index)
            }
        case .openFailed(let reason):
            guard isOpen else { return actions }
            isOpen = false
            if let file = plan.items[head.index].file { files[file] = .failed(reason) }
        case .drained:
            guard draining, !state.isEnded else { return actions }
            draining = false
            if stoppingByItself {
                // The timer ran out: record where its fade began, so that resuming replays what was faded.
                let rate = timeline.lengths[min(head.index, plan.items.count - 1)].rate
                let fadeStart = position(before: Int((StopAfter.fadeSeconds * Double(rate) * speed).rounded()))
                heard = head
                actions.append(.record(record(at: fadeStart ?? heard, .stop)))
                setState(.stopped, &actions)
                actions.append(.end(.stopped, message: "stopped by the sleep timer"))
                return actions
            }
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
        // Loops can bring the head back to items already passed over: after a whole lap with nothing playable,
        // nothing will be.
        var steps = 0
        while head.index < endIndex && steps <= plan.items.count + 1 {
            steps += 1
            let item = plan.items[head.index]
            if timeline.lengths[head.index].samples == 0 || head.offset >= timeline.lengths[head.index].samples {
                if lastWritten == head.index - 1 { lastWritten = head.index }
                head = following(head.index)
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
            let window = filesAhead(from: head.index)
            var looked = 0
            while looked < plan.items.count, let next = nextFileItem(after: index), let file = plan.items[next].file, window.contains(file) {
                looked += 1
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
            head = following(head.index)
        }
        if head.index < endIndex {
            // A loop with nothing in it that can play.
            actions.append(.record(record(at: heard, .stop)))
            fail(Self.skippedMessage(skipped) ?? "nothing in the loop could be played", &actions)
            return
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

    /// The first item not played: the stop boundary (`--stop-after`), else the end of the plan.
    private var endIndex: Int { stopBoundary ?? plan.items.count }

    /// Where the write head goes after item `index`: back to the start of its ayah's recitations when each ayah
    /// repeats for ever; the stop boundary; back to the start of the plan when the range repeats for ever; else
    /// the next item. (An A-B loop's end is taken before this.)
    private func following(_ index: Int) -> PlanPosition {
        if plan.options.repeatEach == .forever && plan.items[index].reviewOf == nil {
            let group = plan.group(containing: index)
            if index == group.upperBound - 1, let first = group.first(where: { plan.items[$0].kind == .ayah }) {
                return PlanPosition(index: first)
            }
        }
        let next = index + 1
        if next == stopBoundary { return PlanPosition(index: next) }
        if next == plan.items.count && plan.options.repeatRange == .forever { return PlanPosition(index: 0) }
        return PlanPosition(index: next)
    }

    /// The next item with a file that the write head reaches after item `index`, through loops (nil at the end).
    private func nextFileItem(after index: Int) -> Int? {
        var position = PlanPosition(index: index)
        if let loop, loop.endIndex == index, loop.passesLeft != 1 {
            position = loop.start
            if plan.items[position.index].file != nil { return position.index }
        }
        for _ in 0...plan.items.count {
            position = following(position.index)
            guard position.index < endIndex else { return nil }
            if plan.items[position.index].file != nil { return position.index }
        }
        return nil
    }

    /// The files wanted with the write head at item `index`: its file and those of the next `queueAhead` items
    /// with a file, in the order they play (through loops), without repeats.
    private func filesAhead(from index: Int) -> [AyahRef] {
        guard index < endIndex else { return [] }
        var files: [AyahRef] = []
        var fileItems = 0
        if let file = plan.items[index].file {
            files.append(file)
            fileItems = 1
        }
        var at = index
        while fileItems <= PlaybackPlan.queueAhead, let next = nextFileItem(after: at) {
            fileItems += 1
            if let file = plan.items[next].file, !files.contains(file) { files.append(file) }
            at = next
        }
        return files
    }

    private mutating func open(_ actions: inout [Action]) {
        isOpen = true
        if plan.items[head.index].file != nil {
            hasFormat = true
            prepared = nil  // the engine hands over to the prepared decoder, or opens afresh
        }
        setState(.playing, &actions)
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
        head = following(head.index)
        return false
    }

    /// Opens the next file ahead once the current item is being written, so one runs into the next.
    private mutating func prepareNext(_ actions: inout [Action]) {
        guard prepared == nil, isOpen, let next = nextFileItem(after: head.index), let file = plan.items[next].file,
            files[file] == .ready
        else { return }
        prepared = next
        actions.append(.prepare(next))
    }

    private mutating func close(_ actions: inout [Action], discard: Bool) {
        if discard {
            actions.append(.discardOutput)
            written = []
        }
        isOpen = false
        prepared = nil
        draining = false
    }

    // MARK: - Where the listener is

    /// The write head less what the device holds; announces each item reached and records ayah starts.
    private mutating func hear(unplayed: Int, _ actions: inout [Action]) {
        // Never behind where playback (re)started: the device holds only frames written since.
        if let position = position(before: unplayed) { heard = position }
        announce(&actions, recordStart: true)
    }

    /// Keeps `frames` just written at the write head (which has moved past them), and counts them against the
    /// sleep timer.
    private mutating func noteWritten(_ frames: Int) {
        guard frames > 0 else { return }
        let start = head.offset - frames
        if let last = written.last, last.index == head.index, last.start + last.frames == start {
            written[written.count - 1].frames += frames
        } else {
            written.append((head.index, start, frames))
            if written.count > 256 { written.removeFirst(written.count - 256) }
        }
        if let left = sleepFrames {
            let rate = timeline.lengths[head.index].rate
            let counted = rate == sleepRate && speed == 1
                ? frames : Int((Double(frames) * Double(sleepRate) / Double(rate) / speed).rounded())
            sleepFrames = max(0, left - counted)
        }
    }

    /// The position `unplayed` frames before the write head, walking back over what was written; nil when
    /// nothing was.
    private func position(before unplayed: Int) -> PlanPosition? {
        var left = max(0, unplayed)
        for segment in written.reversed() {
            if left <= segment.frames { return PlanPosition(index: segment.index, offset: segment.start + segment.frames - left) }
            left -= segment.frames
        }
        return written.first.map { PlanPosition(index: $0.index, offset: $0.start) }
    }

    /// The timer ran out (or a boundary was reached): the device plays out what it holds, then playback stops.
    private mutating func stopByItself(_ actions: inout [Action]) {
        stoppingByItself = true
        draining = true
        actions.append(.drainOutput)
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
        if recordStart && plan.items[index].reviewOf == nil && previous.map({ !group.contains($0) }) ?? true {
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
            ayah: item.memorised, offsetSamples: item.kind == .ayah && item.reviewOf == nil ? position.offset : 0,
            rate: timeline.lengths[position.index].rate, reason: reason)
    }

    /// The files wanted now: those of the item at `head` and the next ones ahead.
    private mutating func want(_ actions: inout [Action]) {
        let files = filesAhead(from: head.index).filter { file in
            if case .failed? = self.files[file] { return false }
            return true
        }
        guard files != wanted else { return }
        wanted = files
        actions.append(.want(files))
    }

    /// An unpinned ayah's length becomes exact once its file is measured (every item that plays that file).
    private mutating func measure(_ file: AyahRef, samples: Int, rate: Int) {
        var changes: [(Int, Timeline.Length)] = []
        for index in plan.items.indices where plan.items[index].file == file {
            guard index != head.index || !isOpen else { continue }  // the open item is measured as it ends
            let old = timeline.lengths[index]
            guard old.isEstimated || old.rate != rate else { continue }
            let length = Timeline.Length(samples: samples, rate: rate)
            changes.append((index, length))
            changes += pauseLengths(after: index, recitation: length)
        }
        timeline.setLengths(changes)
    }

    /// Estimated lengths become closer estimates (every item that plays the file, but the open one).
    private mutating func estimate(_ lengths: [AyahRef: Timeline.Length]) {
        var changes: [(Int, Timeline.Length)] = []
        for index in plan.items.indices {
            guard let file = plan.items[index].file, let guess = lengths[file], index != head.index || !isOpen,
                timeline.lengths[index].isEstimated
            else { continue }
            let length = Timeline.Length(samples: guess.samples, rate: guess.rate, isEstimated: true)
            changes.append((index, length))
            changes += pauseLengths(after: index, recitation: length)
        }
        timeline.setLengths(changes)
    }

    /// Gives item `index` its measured length, and the pause after it the length that follows from it.
    private mutating func setLength(_ length: Timeline.Length, of index: Int) {
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

    // MARK: - Ending

    private mutating func finish(_ actions: inout [Action]) {
        if let stopAfter, endIndex < plan.items.count, lastWritten == endIndex - 1 {
            // `--stop-after` a number of ayat, a surah or a juz: the last of them was heard to its end.
            let end = PlanPosition(index: endIndex - 1, offset: timeline.lengths[endIndex - 1].samples)
            heard = end
            actions.append(.record(record(at: end, .end)))
            setState(.stopped, &actions)
            actions.append(.end(.stopped, message: "stopped after \(stopAfter)"))
        } else if lastWritten == plan.items.count - 1 {
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

    /// Changes the state and tells the listener what they have not been told yet: a new state, or buffering for
    /// another file.
    private mutating func setState(_ new: State, _ actions: inout [Action], ayah: AyahRef? = nil) {
        state = new
        let buffering = new == .buffering ? ayah : nil
        if let buffering, buffering != toldBuffering { actions.append(.notify(.buffering(buffering))) }
        toldBuffering = buffering
        guard new != toldState else { return }
        toldState = new
        actions.append(.notify(.state(new)))
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

    /// `N ayat could not be played: 12:1 (why); …`, or nil when none were skipped.
    /// Ayat in a row with the same reason are one range (`18:48-110 (mirror 1: HTTP 404)`), and at most
    /// `skippedRunsShown` ranges are named, so a surah no mirror has is one short line.
    public static func skippedMessage(_ skipped: [(ayah: AyahRef, reason: String)]) -> String? {
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
