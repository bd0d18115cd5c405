import TartilCore

/// What MPRIS clients see of a player (the `org.mpris.MediaPlayer2.Player` properties), decided from its status
/// alone: pure, so every mapping is tested directly. One track is one surah; its position and length are the
/// scrubber's times (`status`: `position_ms`, `duration_ms`, each item at its own sample rate, which is what a
/// seek takes), in microseconds.
public struct MPRISProperties: Sendable, Equatable {
    /// The track: the surah being heard.
    public struct Track: Sendable, Equatable {
        /// `/org/tartil/surah/36`.
        public var id: String
        /// `Ya-Sin 36:12`: the surah and the ayah being heard.
        public var title: String
        /// The surah, `Ya-Sin`.
        public var album: String
        /// The reciter's name.
        public var artist: String
        /// The ayah being heard.
        public var number: Int
        /// The surah's part of the plan.
        public var lengthMicroseconds: Int64
    }

    /// `Playing`, `Paused` or `Stopped`.
    public var playbackStatus: String
    /// `None`, `Track` (each ayah repeated: `--repeat` more than once, or `inf`) or `Playlist` (the range
    /// repeated: `--repeat-range`); `Track` when both are.
    public var loopStatus: String
    /// nil before anything plays and once playback has finished (MPRIS's NoTrack).
    public var track: Track?
    public var positionMicroseconds: Int64
    public var rate: Double
    public var minimumRate: Double
    public var maximumRate: Double
    public var volume: Double
    public var canGoNext: Bool
    public var canGoPrevious: Bool
    public var canPlay: Bool
    public var canPause: Bool
    public var canSeek: Bool

    /// The properties of a player with `status` reciting as `reciterName`; nil: no player has started.
    /// `canPlayAgain`: the player has ended and Play starts its play again (`Session.playAgain`).
    public init(status: PlayerStatus?, reciterName: String, canPlayAgain: Bool = false) {
        let live = status.map { !$0.state.isEnded } ?? false
        switch status?.state {
        case .playing?, .buffering?: playbackStatus = "Playing"
        case .paused?: playbackStatus = "Paused"
        default: playbackStatus = "Stopped"
        }
        track = nil
        positionMicroseconds = 0
        if let status, let item = status.item {
            let surahName = (try? Catalog.surah(item.ayah.surah).nameTransliterated) ?? "Surah \(item.ayah.surah)"
            track = Track(
                id: Self.trackID(surah: item.ayah.surah), title: "\(surahName) \(item.ayah)", album: surahName, artist: reciterName,
                number: item.ayah.ayah,
                lengthMicroseconds: Self.microseconds(seconds: status.durationSeconds))
            // The live position (the status is read at the moment asked: `PlayerStatus.at`); 0 once stopped, where
            // Play starts again.
            if live { positionMicroseconds = Self.microseconds(seconds: status.positionSeconds) }
        }
        loopStatus = status.map { Self.loopStatus(of: $0.options) } ?? "None"
        // Speed and volume (`MPRISCall.decide` carries out setting them): Rate is the speed, Volume the percent / 100.
        rate = status?.speed ?? PlaybackSpeed.normal
        minimumRate = PlaybackSpeed.range.lowerBound
        maximumRate = status?.maximumSpeed ?? PlaybackSpeed.range.upperBound
        volume = Double(status?.volume ?? PlaybackVolume.normal) / 100
        let hasTrack = live && track != nil
        canGoNext = hasTrack && status?.hasNext == true
        canGoPrevious = hasTrack
        canPlay = hasTrack || (!live && canPlayAgain && status != nil)
        canPause = hasTrack
        canSeek = hasTrack && (track?.lengthMicroseconds ?? 0) > 0
    }

    /// The names of the properties whose value differs from `old`, in the order MPRIS lists them: what
    /// `PropertiesChanged` carries. `Position` is never among them (clients extrapolate it; jumps are `Seeked`).
    public func changed(since old: MPRISProperties) -> [String] {
        var names: [String] = []
        if playbackStatus != old.playbackStatus { names.append("PlaybackStatus") }
        if loopStatus != old.loopStatus { names.append("LoopStatus") }
        if rate != old.rate { names.append("Rate") }
        if track != old.track { names.append("Metadata") }
        if volume != old.volume { names.append("Volume") }
        if minimumRate != old.minimumRate { names.append("MinimumRate") }
        if maximumRate != old.maximumRate { names.append("MaximumRate") }
        if canGoNext != old.canGoNext { names.append("CanGoNext") }
        if canGoPrevious != old.canGoPrevious { names.append("CanGoPrevious") }
        if canPlay != old.canPlay { names.append("CanPlay") }
        if canPause != old.canPause { names.append("CanPause") }
        if canSeek != old.canSeek { names.append("CanSeek") }
        return names
    }

    // MARK: - Conversions

    /// The track id of a surah: a D-Bus object path outside /org/mpris.
    public static func trackID(surah: Int) -> String { "/org/tartil/surah/\(surah)" }

    /// `seconds` in microseconds, rounded to the nearest (0 for a time not above 0, or not a number). The
    /// scrubber's seconds count each item at its own rate: frames of items at different rates do not add up.
    public static func microseconds(seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64((min(seconds, 1e12) * 1_000_000).rounded())
    }

    /// The MPRIS loop status of a plan laid out with `options`.
    public static func loopStatus(of options: PlaybackOptions) -> String {
        if options.repeatEach != .times(1) { return "Track" }
        if options.repeatRange != .times(1) { return "Playlist" }
        return "None"
    }

    /// Microseconds as the seconds a seek takes (the machine starts on sample round(t · rate)).
    public static func seconds(microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }
}

/// A call from an MPRIS client: a method, or a property set.
public enum MPRISCall: Sendable, Hashable {
    case play, pause, playPause, stop, next, previous
    /// Move by this many microseconds (negative: back).
    case seek(offsetMicroseconds: Int64)
    /// Go to this many microseconds into the track named.
    case setPosition(trackID: String, microseconds: Int64)
    case setRate(Double)
    case setVolume(Double)
    /// `LoopStatus` set: `None`, `Track` or `Playlist`.
    case setLoopStatus(String)

    /// What a call does to a player in `status`.
    public enum Decision: Sendable, Equatable {
        /// Hand this command to the player (as the prompt and the control socket do).
        case perform(PlaybackMachine.Command)
        /// Hand these commands to the player, one after the other (a loop status is two options).
        case performInTurn([PlaybackMachine.Command])
        /// Stop, and stand by ready to play again (`Session.stopStandingBy`): the player stays on the bus.
        case stopAndStandBy
        /// Start the play that stopped or finished again (`Session.playAgain`).
        case playAgain
        /// Nothing to do: MPRIS asks players to ignore it (pausing what is paused, Next with nothing after it, a
        /// position outside the track…).
        case ignore
        /// Refused, with why (the client gets an error reply).
        case refuse(String)
    }

    static let nothingPlaying = "nothing is playing (start with: tartil play REF)"

    /// What this call does, following MPRIS 2.2. `status` is nil before any player has started; `canPlayAgain`:
    /// the player has ended and Play may start its play again.
    public func decide(status: PlayerStatus?, canPlayAgain: Bool = false) -> Decision {
        guard let status, !status.state.isEnded else {
            switch self {
            case .pause, .stop: return .ignore
            case .setRate(let rate) where rate == 0: return .ignore  // Rate 0 is Pause
            case .play, .playPause: return canPlayAgain ? .playAgain : .refuse(Self.nothingPlaying)
            default: return .refuse(Self.nothingPlaying)
            }
        }
        let properties = MPRISProperties(status: status, reciterName: "")
        switch self {
        case .play: return status.state == .paused ? .perform(.resume) : .ignore
        case .pause: return status.state == .paused ? .ignore : .perform(.pause)
        case .playPause: return .perform(.toggle)
        case .stop: return .stopAndStandBy
        // "If CanGoNext is false, attempting to call this method should have no effect": Next on the last ayah.
        case .next: return properties.canGoNext ? .perform(.next) : .ignore
        case .previous: return properties.canGoPrevious ? .perform(.previous) : .ignore
        case .seek(let offset):
            guard let track = properties.track, properties.canSeek else { return .ignore }
            let (target, overflow) = properties.positionMicroseconds.addingReportingOverflow(offset)
            if overflow { return offset < 0 ? .perform(.seek(.time(seconds: 0))) : .ignore }
            if target < 0 { return .perform(.seek(.time(seconds: 0))) }
            // Past the end "acts like a call to Next" (which does nothing on the last ayah).
            if target >= track.lengthMicroseconds { return properties.canGoNext ? .perform(.next) : .ignore }
            return .perform(.seek(.time(seconds: MPRISProperties.seconds(microseconds: target))))
        case .setPosition(let id, let microseconds):
            guard let track = properties.track, id == track.id, properties.canSeek,
                (0...track.lengthMicroseconds).contains(microseconds)
            else { return .ignore }
            return .perform(.seek(.time(seconds: MPRISProperties.seconds(microseconds: microseconds))))
        case .setRate(let rate):
            // "A value of 0.0 should not be set by the client. If it is, the media player should act as though
            // Pause was called": the Rate read stays the speed it plays at.
            if rate == 0 { return status.state == .paused ? .ignore : .perform(.pause) }
            let (lowest, highest) = (properties.minimumRate, properties.maximumRate)
            guard rate.isFinite, rate > 0 else {
                return .refuse("Rate must be 0 (pause) or a speed from \(PlaybackSpeed.text(lowest)) to \(PlaybackSpeed.text(highest))")
            }
            // MPRIS leaves values a player cannot use to it: the nearest speed tartil has (0.5 to the reciter's
            // maximum, 2 at most, in 0.05 steps).
            let nearest = (min(max(rate, lowest), highest) / PlaybackSpeed.step).rounded() * PlaybackSpeed.step
            let speed = (nearest * 100).rounded() / 100
            return speed == properties.rate ? .ignore : .perform(.setSpeed(speed))
        case .setVolume(let volume):
            // A negative volume is 0; above 1.5 (150 %) is as loud as tartil goes (a limiter keeps it from clipping).
            guard volume.isFinite else { return .refuse("Volume must be a number") }
            let level = Int((min(max(volume, 0), 1.5) * 100).rounded())
            return level == status.volume ? .ignore : .perform(.setVolume(.to(level)))
        case .setLoopStatus(let wanted):
            // None: each ayah once, the range once; Track: the ayah until you move on (`set repeat inf`, the r
            // key); Playlist: the range until stopped (`set repeat-range inf`).
            let once = RepeatCount.times(1)
            let options = status.options
            let (each, range): (RepeatCount, RepeatCount)
            switch wanted {
            case "None": (each, range) = (once, once)
            case "Track": (each, range) = (.forever, once)
            case "Playlist": (each, range) = (once, .forever)
            default: return .refuse("LoopStatus is None, Track or Playlist, not '\(wanted.prefix(40))'")
            }
            if MPRISProperties.loopStatus(of: options) == wanted { return .ignore }  // `--repeat 3` is Track already
            var commands: [PlaybackMachine.Command] = []
            if options.repeatEach != each { commands.append(.set(.repeatEach(each))) }
            if options.repeatRange != range { commands.append(.set(.repeatRange(range))) }
            return .performInTurn(commands)
        }
    }
}
