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
///
/// The journal gets what was heard and what the listener asked, nothing else: a play's first ayah start once its
/// first sound is written (a play that fails before that records nothing), the start of each group entered by
/// playing, and the place of each pause, seek, stop and end.
///
/// Where playback is lives in `phase` (`PlaybackMachine+State.swift`): an enum whose cases carry what each state
/// needs, so a combination that cannot happen cannot be written; `state`, `heard` and `head` are read from it.
/// Commands are in `PlaybackMachine+Commands.swift`, the engine's reports in `PlaybackMachine+Events.swift`, the
/// time axis in `PlaybackMachine+Lengths.swift`.
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
        /// The basmala before this ayah (ayah 1 of its surah) was skipped: its file, 1:1, failed everywhere or did
        /// not decode.
        case skippedBasmala(AyahRef, reason: String)
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
        /// Files' exact lengths, known before their bytes are here (a surah-file reciter's surah learned while
        /// playing: its table's rows): each replaces an estimated length, as a measured one does.
        case lengthsKnown([AyahRef: Timeline.Length])
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
        /// The open item's file stopped decoding part of the way through (`Mpg123Decoder.read` threw): its ayah
        /// is skipped, like a file that cannot be had, and playback goes on with the next item.
        case decodeFailed(reason: String)
        /// The device has played everything it held.
        case drained
        /// The device failed.
        case outputFailed(String)
    }

    public internal(set) var plan: PlaybackPlan
    public internal(set) var timeline: Timeline
    /// End with `failed` instead of skipping an item that cannot be had (`render`).
    public let stopOnSkip: Bool
    /// How fast and how loud it plays (`setSpeed`, `setVolume`); positions are counted in the recording's samples
    /// whatever the speed.
    public internal(set) var speed = PlaybackSpeed.normal
    public internal(set) var volume = PlaybackVolume.normal
    /// The fastest speed allowed (a reciter's `max_speed`).
    public var maximumSpeed = PlaybackSpeed.range.upperBound
    /// Ayat skipped, in the order they were, with why.
    public internal(set) var skipped: [(ayah: AyahRef, reason: String)] = []
    /// Basmalas skipped (named by the ayah 1 each comes before), in the order they were, with why.
    public internal(set) var skippedBasmala: [(ayah: AyahRef, reason: String)] = []

    /// Where playback is: playing (with the listener's side and the engine's), paused, or ended.
    var phase: Phase
    /// The A-B loop: off, its start marked, or on.
    var looping = LoopSetting.off
    /// `--stop-after` a number of ayat, the surah or the juz.
    var boundary: Boundary?
    /// `--stop-after` a time, `sleep`.
    var sleepTimer: SleepTimer?
    /// What the engine said of each file, and the files last asked for.
    var files: [AyahRef: FileStatus] = [:]
    var wanted: [AyahRef] = []
    /// Lengths estimated from file sizes (`lengthsEstimated`), kept so that a new layout (`set`) has them too.
    var sizeEstimates: [AyahRef: Timeline.Length] = [:]
    /// True once the engine has a format (a file was opened or prepared), so silence can be written.
    var engineHasFormat = false
    /// What the listener was last told.
    var told = Told()
    /// What playback writes to when it is a file that must end (`render`, `--output wav:PATH`), for messages; nil
    /// otherwise. A command that would make playback endless (`set repeat inf`, a loop without a count, a timer
    /// cancelled under them) is then refused, and nothing changes.
    public var writesFile: String?
    /// Surahs whose lengths are estimated now and will all be known at once (a surah-file reciter's surahs that
    /// are learned as they play): a time asked for in one of them is placed again when they are known.
    public var surahsToLearn: Set<Int> = []
    /// A start (`--from 0:38`, `--from 50%`) and a loop with times (`--loop 0:30-0:35`) placed on estimated
    /// lengths in a surah of `surahsToLearn`: a time there means the recording's time, not the estimate's, so
    /// each is placed again once that surah's lengths are known (the start while no sound has been written yet).
    var timesOnEstimates = TimesOnEstimates()

    struct TimesOnEstimates: Sendable, Hashable {
        var start: SeekTarget?
        var loop: LoopRequest?
    }

    public init(plan: PlaybackPlan, timeline: Timeline, stopOnSkip: Bool = false) {
        precondition(plan.items.count == timeline.count, "the timeline must have one length per item")
        self.plan = plan
        self.timeline = timeline
        self.stopOnSkip = stopOnSkip
        phase = .playing(Listener(heard: PlanPosition(index: 0)), Writing(head: PlanPosition(index: 0)))
    }

    // MARK: - What the status reads

    /// What playback is doing: paused or ended, else buffering while the item waits for its download, else playing.
    public var state: State {
        switch phase {
        case .playing(_, let writing):
            if case .waiting(_, downloading: true) = writing.step { return .buffering }
            return .playing
        case .paused: return .paused
        case .ended(let ending, _): return ending.state
        }
    }

    /// What the listener hears, or (paused) exactly where `resume` starts; where they were left once ended.
    public var heard: PlanPosition {
        switch phase {
        case .playing(let listener, _), .paused(let listener): listener.heard
        case .ended(_, let heard): heard
        }
    }

    /// Where the engine writes: the open item and how far into it, or where the next item opens (while paused or
    /// ended: `heard`).
    public var head: PlanPosition {
        if case .playing(_, let writing) = phase { return writing.head }
        return heard
    }

    /// True while an item is open in the engine.
    public var isOpen: Bool {
        if case .playing(_, let writing) = phase, writing.step == .open { return true }
        return false
    }

    /// Why playback ended, when it failed.
    public var endMessage: String? {
        if case .ended(.failed(let message, _), _) = phase { return message }
        return nil
    }

    /// Whether playback failed on what the listener asked for (a time past the end, found once a surah's lengths
    /// were known): the command then exits as for bad input (64).
    public var endIsUsage: Bool {
        if case .ended(.failed(_, let isUsage), _) = phase { return isUsage }
        return false
    }

    /// The A-B loop, if any.
    public var loop: Loop? {
        if case .on(let loop) = looping { return loop }
        return nil
    }

    /// Where the `l` key marked A, before B.
    public var loopMark: PlanPosition? {
        if case .marked(let mark) = looping { return mark }
        return nil
    }

    /// Where playback stops by itself (a number of ayat, the surah, the juz), if set; the timer is apart.
    public var stopAfter: StopAfter? { boundary?.stop }

    /// With `stopAfter`: the first item not played.
    public var stopBoundary: Int? { boundary?.firstItemNotPlayed }

    /// Seconds left on the sleep timer.
    public var sleepSecondsLeft: Double? { sleepTimer.map { Double($0.framesLeft) / Double($0.rate) } }

    /// Whether `next` can move on: an ayah follows the one being heard (MPRIS's `CanGoNext`).
    public var hasNext: Bool {
        !plan.items.isEmpty && plan.group(containing: min(heard.index, plan.items.count - 1)).upperBound < plan.items.count
    }

    // MARK: - Starting

    /// Where playback begins: a place in the plan (`--from`, a resume point), or the start.
    /// Nothing is recorded yet: the first ayah start is recorded once sound is written, and a start inside an ayah
    /// (a resume point, `--from 0:30`) records none (its place is the journal's already, or the listener's choice).
    /// Nothing is told either until sound is written or a download is awaited.
    public mutating func start(at position: PlanPosition?) -> [Action] {
        var actions: [Action] = []
        let start = position ?? PlanPosition(index: 0)
        var listener = Listener(heard: start)
        if start.offset > 0 { listener.journaled = group(at: start.index) }
        announce(&listener, &actions)
        pump(listener, Writing(head: start), &actions)
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

    /// Where playback starts for `target` (as `target(of:)` places it). A time or a share in a surah whose lengths
    /// are still estimated and will be learned (`surahsToLearn`) is placed on the estimate for now (at the
    /// surah's last item when the estimate is shorter) and again once its lengths are known.
    public mutating func startPosition(for target: SeekTarget) throws(TartilError) -> PlanPosition {
        switch target {
        case .time, .fraction:
            guard let span = heardSurahSpan, awaitsLengths(span) else { break }
            timesOnEstimates.start = target
            return (try? self.target(of: target)) ?? PlanPosition(index: span.upperBound - 1)
        case .offset, .ayah:
            break
        }
        timesOnEstimates.start = nil
        return try self.target(of: target)
    }

    /// The items of the surah the listener is in (the scrubber's span, where times are placed); nil for an empty
    /// plan.
    var heardSurahSpan: Range<Int>? {
        plan.items.isEmpty ? nil : plan.surahSpan(containing: min(heard.index, plan.items.count - 1))
    }

    /// Whether the items `span` (one surah's) have lengths still estimated that will all be known at once.
    func awaitsLengths(_ span: Range<Int>) -> Bool {
        guard let first = span.first, surahsToLearn.contains(plan.items[first].ayah.surah) else { return false }
        return timeline.lengths[span].contains(where: \.isEstimated)
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

    // MARK: - Records

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
}
