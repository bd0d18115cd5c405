import TartilCore

/// What MPRIS clients see of a player (the `org.mpris.MediaPlayer2.Player` properties), decided from its status
/// alone: pure, so every mapping is tested directly. One track is one surah; its position and length are the
/// scrubber's (`status`: `position_samples`, `duration_samples`), in microseconds.
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
    public init(status: PlayerStatus?, reciterName: String) {
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
                lengthMicroseconds: Self.microseconds(samples: status.durationSamples, rate: status.sampleRate))
            positionMicroseconds = Self.microseconds(samples: status.positionSamples, rate: status.sampleRate)
        }
        // Speed and volume (`MPRISCall.decide` carries out setting them): Rate is the speed, Volume the percent / 100.
        rate = status?.speed ?? PlaybackSpeed.normal
        minimumRate = PlaybackSpeed.range.lowerBound
        maximumRate = status?.maximumSpeed ?? PlaybackSpeed.range.upperBound
        volume = Double(status?.volume ?? PlaybackVolume.normal) / 100
        let hasTrack = live && track != nil
        canGoNext = hasTrack && status?.hasNext == true
        canGoPrevious = hasTrack
        canPlay = hasTrack
        canPause = hasTrack
        canSeek = hasTrack && (track?.lengthMicroseconds ?? 0) > 0
    }

    /// The names of the properties whose value differs from `old`, in the order MPRIS lists them: what
    /// `PropertiesChanged` carries. `Position` is never among them (clients extrapolate it; jumps are `Seeked`).
    public func changed(since old: MPRISProperties) -> [String] {
        var names: [String] = []
        if playbackStatus != old.playbackStatus { names.append("PlaybackStatus") }
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

    /// `samples` at `rate` in microseconds, rounded to the nearest (0 when the rate is not known yet).
    public static func microseconds(samples: Int, rate: Int) -> Int64 {
        guard rate > 0, samples > 0 else { return 0 }
        let (whole, rest) = Int64(samples).quotientAndRemainder(dividingBy: Int64(rate))
        return whole * 1_000_000 + (rest * 1_000_000 + Int64(rate) / 2) / Int64(rate)
    }

    /// Microseconds as the seconds a seek takes (the machine starts on sample round(t · rate)).
    public static func seconds(microseconds: Int64) -> Double { Double(microseconds) / 1_000_000 }
}

/// A call from an MPRIS client.
public enum MPRISCall: Sendable, Hashable {
    case play, pause, playPause, stop, next, previous
    /// Move by this many microseconds (negative: back).
    case seek(offsetMicroseconds: Int64)
    /// Go to this many microseconds into the track named.
    case setPosition(trackID: String, microseconds: Int64)
    case setRate(Double)
    case setVolume(Double)

    /// What a call does to a player in `status`.
    public enum Decision: Sendable, Equatable {
        /// Hand this command to the player (as the prompt and the control socket do).
        case perform(PlaybackMachine.Command)
        /// Nothing to do: MPRIS asks players to ignore it (pausing what is paused, a position outside the track…).
        case ignore
        /// Refused, with why (the client gets an error reply).
        case refuse(String)
    }

    /// What this call does, following MPRIS 2.2. `status` is nil before any player has started.
    public func decide(status: PlayerStatus?) -> Decision {
        guard let status, !status.state.isEnded else {
            switch self {
            case .pause, .stop: return .ignore
            default: return .refuse("nothing is playing (start with: tartil play REF)")
            }
        }
        let properties = MPRISProperties(status: status, reciterName: "")
        switch self {
        case .play: return status.state == .paused ? .perform(.resume) : .ignore
        case .pause: return status.state == .paused ? .ignore : .perform(.pause)
        case .playPause: return .perform(.toggle)
        case .stop: return .perform(.stop)
        case .next: return .perform(.next)
        case .previous: return .perform(.previous)
        case .seek(let offset):
            guard let track = properties.track, properties.canSeek else { return .ignore }
            let (target, overflow) = properties.positionMicroseconds.addingReportingOverflow(offset)
            if overflow { return offset < 0 ? .perform(.seek(.time(seconds: 0))) : .ignore }
            if target < 0 { return .perform(.seek(.time(seconds: 0))) }
            // Past the end "acts like a call to Next", and Next with nothing after it stops.
            if target >= track.lengthMicroseconds { return .perform(properties.canGoNext ? .next : .stop) }
            return .perform(.seek(.time(seconds: MPRISProperties.seconds(microseconds: target))))
        case .setPosition(let id, let microseconds):
            guard let track = properties.track, id == track.id, properties.canSeek,
                (0...track.lengthMicroseconds).contains(microseconds)
            else { return .ignore }
            return .perform(.seek(.time(seconds: MPRISProperties.seconds(microseconds: microseconds))))
        case .setRate(let rate):
            // MPRIS leaves values a player cannot use to it: the nearest speed tartil has (0.5 to 2 in 0.05 steps).
            guard rate.isFinite, rate > 0 else { return .refuse("Rate must be more than 0 (pause with Pause)") }
            let range = PlaybackSpeed.range
            let nearest = (min(max(rate, range.lowerBound), range.upperBound) / PlaybackSpeed.step).rounded() * PlaybackSpeed.step
            let speed = (nearest * 100).rounded() / 100
            return speed == properties.rate ? .ignore : .perform(.setSpeed(speed))
        case .setVolume(let volume):
            // A negative volume is 0; above 1.5 (150 %) is as loud as tartil goes (a limiter keeps it from clipping).
            guard volume.isFinite else { return .refuse("Volume must be a number") }
            let level = Int((min(max(volume, 0), 1.5) * 100).rounded())
            return level == status.volume ? .ignore : .perform(.setVolume(.to(level)))
        }
    }
}
