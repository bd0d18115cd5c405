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

/// What the player is doing.
public enum PlayerState: String, Sendable, Hashable {
    /// Sound is coming out.
    case playing
    /// Paused by the user; `resume` continues from the same sample.
    case paused
    /// Waiting for the item's file (downloading); playing resumes by itself when it arrives.
    case buffering
    /// Stopped by the user (or by Ctrl-C).
    case stopped
    /// Every item has played.
    case finished
    /// Playback could not go on (the sound device failed).
    case failed

    /// True once the player has ended for good.
    public var isEnded: Bool { self == .stopped || self == .finished || self == .failed }
}

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
    /// Where playback is, in samples from the start of the surah's first item in the plan.
    public var position: Int
    /// The length of the surah's part of the plan, in samples.
    public var duration: Int
    public var sampleRate: Int
    /// True when an unpinned ayah's length is still a guess.
    public var isEstimated: Bool
    /// Where each ayah (its group) starts, in samples from the surah's start: the scrubber's ticks.
    public var ayahStarts: [Int]
    /// The ayah being waited for, while buffering.
    public var bufferingAyah: AyahRef?
    /// Ayat skipped because they could not be fetched, with why.
    public var skipped: [AyahRef: String]
    /// The length of the whole plan, in samples.
    public var totalSamples: Int
    /// Why playback failed (with `failed`).
    public var endMessage: String?

    public var positionSeconds: Double { Double(position) / Double(max(1, sampleRate)) }
    public var durationSeconds: Double { Double(duration) / Double(max(1, sampleRate)) }
}

/// The check every downloaded file without a pinned hash must pass, and the size it may have.
public enum AudioValidation {
    /// The largest file accepted for an ayah the table does not pin.
    public static let unpinnedLimit = 16 << 20

    /// Decodes a downloaded file whose hash is not known: it must be MPEG audio.
    public static let validate: @Sendable (String) throws -> Void = { path in
        let decoder = try Mpg123Decoder()
        _ = try decoder.countSamples(path)
    }
}
