import TartilAudio
import TartilCache
import TartilCore
import TartilNet
import TartilSystem

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
    /// How hard to try for each file (`DownloadPolicy.playback` by default: a mirror that cannot be reached is
    /// passed over at once).
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
    /// For a reciter of one file per surah, its surah table as the player uses it: `table` is then its parts
    /// (each an ayah's or basmala's byte range, pinned), fetched by range from the surah's file and played within
    /// their windows. Set with `playing(_:)`.
    public private(set) var parts: PlayableParts?
    /// The surahs of the plan that no table covers yet and that the player learns as it plays (`SurahLearning`,
    /// in `LearningOrder`: the one playback waits for, or the next one the plan plays), for a surah-file reciter
    /// that publishes its timings.
    public private(set) var learnable: Set<Int> = []

    /// This setup playing a surah-file reciter's `parts` (its table becomes theirs), learning the surahs
    /// `learnable` as it plays.
    public func playing(_ parts: PlayableParts, learnable: Set<Int> = []) -> PlayerSetup {
        var setup = self
        setup.parts = parts
        setup.table = parts.pinned
        setup.learnable = learnable
        return setup
    }

    public init(
        reciter: Reciter, table: ReciterTable?, cacheDirectory: String, output: OutputChoice, plan: PlaybackPlan,
        start: SeekTarget? = nil, limits: DownloadLimits = DownloadLimits(parallel: 4),
        policy: DownloadPolicy = .playback, unpinnedLimit: Int = AudioValidation.unpinnedLimit
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

/// The check every downloaded file without a pinned hash must pass, and the size it may have.
public enum AudioValidation {
    /// The largest file accepted for an ayah the table does not pin.
    public static let unpinnedLimit = 16 << 20

    /// Checks a downloaded file whose hash is not known: it must be one whole MPEG layer III stream
    /// (`MPEGStream`: no bytes appended, no other format), and it must decode. Its exact length, counted on the
    /// way, is remembered in the cache index.
    public static let validate: AudioCheck = { path in
        let bytes = try FileSystem.read(path)
        if let problem = MPEGStream.problem(in: bytes) {
            throw TartilError(.failure, "not one whole MPEG audio stream: \(problem)")
        }
        let decoder = try Mpg123Decoder()
        let decoded = try decoder.countSamples(bytes: bytes, name: path)
        return AudioLength(samples: decoded.samples, sampleRate: decoded.format.sampleRate)
    }
}

extension TartilError {
    /// What a failure of the player's parts (the decoder, the output, the cache) is as tartil's error: a
    /// `TartilError` as it is; an `AudioError`, or any other, a failure with its message.
    public init(failureFrom error: any Error) {
        switch error {
        case let error as TartilError: self = error
        case let error as AudioError: self = TartilError(.failure, error.message)
        default: self = TartilError(.failure, "\(error)")
        }
    }
}
