import TartilAudio
import TartilCache
import TartilCore
import TartilJournal
import TartilNet

/// Everything a player needs to start.
public struct PlayerSetup: Sendable {
    public var reciter: Reciter
    /// The reciter's table (sample counts for the scrubber, sizes and hashes for the cache), if it has one.
    public var table: ReciterTable?
    public var cacheDirectory: String
    public var output: OutputChoice
    public var plan: PlaybackPlan
    /// Where to begin (`--from`): a time or share of the first surah, or an ayah; nil for the beginning.
    public var start: SeekTarget?
    /// Where to begin when resuming: this far into the recitation of an ayah of the plan (wins over `start`).
    public var resumeAt: (ayah: AyahRef, offsetSamples: Int)?
    public var limits: DownloadLimits
    public var policy: DownloadPolicy
    /// The largest file accepted for an ayah the table does not pin.
    public var unpinnedLimit: Int
    /// End with `failed` instead of skipping an ayah that cannot be had (`render`: a WAV with a hole in it is
    /// worse than none).
    public var stopOnSkip = false
    /// Stop by itself (`--stop-after`).
    public var stopAfter: StopAfter?
    /// Loop between two points from the start (`--loop`).
    public var loop: LoopRequest?
    /// How fast (`PlaybackSpeed`), up to `maximumSpeed`, and how loud (`PlaybackVolume`) it starts.
    public var speed = PlaybackSpeed.normal
    public var maximumSpeed = PlaybackSpeed.range.upperBound
    public var volume = PlaybackVolume.normal

    public init(
        reciter: Reciter, table: ReciterTable?, cacheDirectory: String, output: OutputChoice, plan: PlaybackPlan,
        start: SeekTarget? = nil, limits: DownloadLimits = DownloadLimits(parallel: 4),
        policy: DownloadPolicy = DownloadPolicy(), unpinnedLimit: Int = AudioValidation.unpinnedLimit
    ) {
        self.reciter = reciter
        self.table = table
        self.cacheDirectory = cacheDirectory
        self.output = output
        self.plan = plan
        self.start = start
        self.limits = limits
        self.policy = policy
        self.unpinnedLimit = unpinnedLimit
    }
}

/// What the player is doing (the playback machine's states).
public typealias PlayerState = PlaybackMachine.State

/// What the player reports as it goes, in order, from its own threads.
public enum PlayerEvent: Sendable, Hashable {
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
public struct PlaybackPosition: Sendable, Hashable {
    public let reciter: ReciterID
    public let ayah: AyahRef
    public let offsetSamples: Int
    public let sampleRate: Int
    public let reason: JournalEvent.Reason

    public init(reciter: ReciterID, ayah: AyahRef, offsetSamples: Int, sampleRate: Int, reason: JournalEvent.Reason) {
        self.reciter = reciter
        self.ayah = ayah
        self.offsetSamples = offsetSamples
        self.sampleRate = sampleRate
        self.reason = reason
    }

    /// The journal's form of it.
    public var draft: EventDraft {
        .position(
            reciter: reciter.rawValue, surah: ayah.surah, ayah: ayah.ayah, offsetSamples: offsetSamples, sampleRate: sampleRate,
            reason: reason)
    }
}

/// An A-B loop as the status shows it: seconds from the start of the surah's part of the plan, and the passes
/// left (nil: until cleared).
public struct LoopSpan: Sendable, Hashable {
    public let startSeconds: Double
    public let endSeconds: Double
    public let passesLeft: Int?
}

/// A snapshot of the player, for `status`.
public struct PlayerStatus: Sendable, Hashable {
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
    /// The frames of the whole plan, and how many were written (what `render` wrote).
    public var totalSamples: Int
    public var writtenFrames: Int
    public var writtenSeconds: Double
    /// Why playback failed (with `failed`).
    public var endMessage: String?
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
}

/// The check every downloaded file without a pinned hash must pass, and the size it may have.
public enum AudioValidation {
    /// The largest file accepted for an ayah the table does not pin.
    public static let unpinnedLimit = 16 << 20

    /// Decodes a downloaded file whose hash is not known: it must be MPEG audio. Its exact length, counted on
    /// the way, is remembered in the cache index.
    public static let validate: AudioCheck = { path in
        let decoder = try Mpg123Decoder()
        let decoded = try decoder.countSamples(path)
        return AudioLength(samples: decoded.samples, sampleRate: decoded.format.sampleRate)
    }
}
