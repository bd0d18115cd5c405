/// What the player is doing (the playback machine's states).
public typealias PlayerState = PlaybackMachine.State

/// What the player reports as it goes, in order, from its own threads.
public enum PlayerEvent: Sendable, Hashable, Codable {
    /// The state changed.
    case state(PlayerState)
    /// Item `index` of the plan started to be heard.
    case item(index: Int, PlanItem)
    /// Waiting for `ayah`'s file.
    case buffering(AyahRef)
    /// An ayah was skipped because its file failed on every mirror (or in the cache), or another problem.
    case error(message: String, ayah: AyahRef?)
    /// A position worth keeping (for the journal): an ayah began, or playback paused, moved, stopped or ended.
    case position(PlaybackPosition)
    /// Playback ended: `finished`, `stopped` or `failed`.
    case end(PlayerState, message: String?)
    /// The speed changed (a command, a key, MPRIS): not at the start, whose speed the status has.
    case speed(Double)
    /// The volume changed, in percent (likewise).
    case volume(Int)
}

/// Where a listener was: `offsetSamples` into the recitation of `ayah` (0 while its basmala or a pause plays).
public struct PlaybackPosition: Sendable, Hashable, Codable {
    public let reciter: ReciterID
    public let ayah: AyahRef
    public let offsetSamples: Int
    public let sampleRate: Int
    public let reason: PlaybackMachine.Reason

    public init(reciter: ReciterID, ayah: AyahRef, offsetSamples: Int, sampleRate: Int, reason: PlaybackMachine.Reason) {
        self.reciter = reciter
        self.ayah = ayah
        self.offsetSamples = offsetSamples
        self.sampleRate = sampleRate
        self.reason = reason
    }

    /// The offset in milliseconds, rounded to the nearest.
    public var offsetMilliseconds: Int64 { Int64((Double(offsetSamples) * 1000 / Double(max(1, sampleRate))).rounded()) }
}

/// An A-B loop as the status shows it: seconds from the start of the surah's part of the plan, and the passes
/// left (nil: until cleared).
public struct LoopSpan: Sendable, Hashable, Codable {
    public let startSeconds: Double
    public let endSeconds: Double
    public let passesLeft: Int?

    public init(startSeconds: Double, endSeconds: Double, passesLeft: Int?) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.passesLeft = passesLeft
    }
}

/// A snapshot of the player, for `status`.
public struct PlayerStatus: Sendable, Hashable, Codable {
    public var state: PlayerState
    public var reciter: ReciterID
    /// The item being heard (`plan.items.count` once finished).
    public var index: Int
    public var item: PlanItem?
    public var itemCount: Int
    /// The scrubber: the current surah's items in the plan, as a time axis.
    public var surah: Int
    /// Where the listener is, from the start of the surah's first item in the plan: in seconds (each item at its
    /// own rate) and in frames (each item's own, added up).
    public var positionSeconds: Double
    public var positionSamples: Int
    /// The length of the surah's part of the plan.
    public var durationSeconds: Double
    public var durationSamples: Int
    /// The sample rate of the item being heard.
    public var sampleRate: Int
    /// True when an unpinned ayah's length is still a guess.
    public var isEstimated: Bool
    /// When each ayah (its group) starts, in seconds from the surah's start: the scrubber's ticks.
    public var ayahStarts: [Double]
    /// The ayah being waited for, while buffering.
    public var bufferingAyah: AyahRef?
    /// Ayat skipped because they could not be fetched, with why.
    public var skipped: [AyahRef: String]
    /// Basmalas skipped (by the ayah 1 each comes before) because 1:1 could not be had, with why; nil from a
    /// player that does not tell them apart.
    public var skippedBasmala: [AyahRef: String]?
    /// The frames of the whole plan, and how many were written (what `render` wrote).
    public var totalSamples: Int
    public var writtenFrames: Int
    public var writtenSeconds: Double
    /// Why playback failed (with `failed`).
    public var endMessage: String?
    /// True when it failed on what the listener asked for (`PlaybackMachine.endIsUsage`): exit 64, as for bad
    /// input; nil otherwise.
    public var endIsUsage: Bool?
    /// How the plan is laid out (`--repeat`, `--pause`…), and the cycle of the range being heard.
    public var options: PlaybackOptions
    public var cycle: Int
    /// The A-B loop, as seconds from the start of the surah's part of the plan, and the passes left (nil: until
    /// cleared).
    public var loop: LoopSpan?
    /// Where the `l` key marked A, in seconds from the start of the surah's part of the plan.
    public var loopMarkSeconds: Double?
    /// When playback stops by itself, and for a timer the seconds left.
    public var stopAfter: StopAfter?
    public var sleepSecondsLeft: Double?

    /// How fast (positions and durations stay recitation time, whatever the speed) and how loud, in percent.
    public var speed = PlaybackSpeed.normal
    public var volume = PlaybackVolume.normal
    /// The fastest this player may go (the reciter's `max_speed`, else the top of `PlaybackSpeed.range`).
    public var maximumSpeed = PlaybackSpeed.range.upperBound
    /// Whether `next` can move on (an ayah follows the one heard).
    public var hasNext = false
    /// The surah a player of a surah-file reciter is learning as it plays (its published timings and whole file
    /// fetched, then cut into parts: `LearningOrder`), or nil.
    public var learningSurah: Int?
    /// True while the file waited for (`bufferingAyah`) has been held for a few seconds by another tartil process,
    /// which is downloading it (`DownloadEvent.heldElsewhere`); nil otherwise. It plays once that process has it.
    public var bufferingHeldElsewhere: Bool?

    /// While sound flows: when this snapshot was taken and how far it may move on by itself (see `at(_:)`); nil
    /// when the position stands still (paused, buffering, ended, or between a device's drain and the end).
    public var motion: Motion?

    /// How a snapshot taken while sound flows moves on: from `since`, at `speed` × the clock, by at most
    /// `limitSamples` (to the end of the item being heard, whose ayah the snapshot names).
    public struct Motion: Sendable, Hashable, Codable {
        public var since: ClockInstant
        public var limitSamples: Int

        public init(since: ClockInstant, limitSamples: Int) {
            self.since = since
            self.limitSamples = limitSamples
        }
    }

    public init(
        state: PlayerState, reciter: ReciterID, index: Int, item: PlanItem?, itemCount: Int, surah: Int, positionSeconds: Double,
        positionSamples: Int, durationSeconds: Double, durationSamples: Int, sampleRate: Int, isEstimated: Bool,
        ayahStarts: [Double], bufferingAyah: AyahRef?, skipped: [AyahRef: String], totalSamples: Int, writtenFrames: Int,
        writtenSeconds: Double, endMessage: String?, options: PlaybackOptions, cycle: Int, loop: LoopSpan?,
        loopMarkSeconds: Double?, stopAfter: StopAfter?, sleepSecondsLeft: Double?, speed: Double = PlaybackSpeed.normal,
        volume: Int = PlaybackVolume.normal, maximumSpeed: Double = PlaybackSpeed.range.upperBound, hasNext: Bool = false,
        skippedBasmala: [AyahRef: String] = [:]
    ) {
        self.skippedBasmala = skippedBasmala
        self.state = state
        self.reciter = reciter
        self.index = index
        self.item = item
        self.itemCount = itemCount
        self.surah = surah
        self.positionSeconds = positionSeconds
        self.positionSamples = positionSamples
        self.durationSeconds = durationSeconds
        self.durationSamples = durationSamples
        self.sampleRate = sampleRate
        self.isEstimated = isEstimated
        self.ayahStarts = ayahStarts
        self.bufferingAyah = bufferingAyah
        self.skipped = skipped
        self.totalSamples = totalSamples
        self.writtenFrames = writtenFrames
        self.writtenSeconds = writtenSeconds
        self.endMessage = endMessage
        self.options = options
        self.cycle = cycle
        self.loop = loop
        self.loopMarkSeconds = loopMarkSeconds
        self.stopAfter = stopAfter
        self.sleepSecondsLeft = sleepSecondsLeft
        self.speed = speed
        self.volume = volume
        self.maximumSpeed = maximumSpeed
        self.hasNext = hasNext
    }

    /// The snapshot as it stands at `now`: while sound flows, the position has moved on by the time since it was
    /// taken (at the playback speed, in the recording's time), never past `motion.limitSamples`, and a sleep
    /// timer has run down by that time. So a status read between two of the player's chunks is still where the
    /// listener is, and it never moves back while sound flows.
    public func at(_ now: ClockInstant) -> PlayerStatus {
        guard let motion, sampleRate > 0, now > motion.since else { return self }
        let elapsed = now.seconds(since: motion.since)
        let frames = min(Int((elapsed * speed * Double(sampleRate)).rounded(.down)), max(0, motion.limitSamples - positionSamples))
        guard frames > 0 else { return self }
        var moved = self
        moved.positionSamples += frames
        moved.positionSeconds += Double(frames) / Double(sampleRate)
        moved.motion = Motion(since: now, limitSamples: motion.limitSamples)
        if let left = sleepSecondsLeft { moved.sleepSecondsLeft = max(0, left - Double(frames) / Double(sampleRate) / speed) }
        return moved
    }
}


extension TartilError {
    /// What a play stopped by Ctrl-C or SIGTERM ends with (`.interrupted`), naming the surah it was learning when
    /// it stopped (`status.learningSurah`: nothing of that surah is kept).
    public static func playbackStopped(_ status: PlayerStatus?) -> TartilError {
        TartilError(.interrupted, "playback stopped" + (status?.learningSurah.map { ": surah \($0) was not learned" } ?? ""))
    }
}
