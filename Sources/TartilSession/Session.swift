import Synchronization
import TartilAudio
import TartilCore
import TartilJournal
import TartilPlayer
import TartilSystem

/// The one owner of playback in a tartil process, and the typed API every front end uses: the command line and
/// the prompt, the keys, scripts, the control socket and MPRIS are all clients of it, and none reads what another
/// printed.
///
/// It owns the player and its replacement (a `play` from any front end replaces what plays, after everything it
/// asks was checked: a play that cannot start leaves the running one as it was), the journal writer (positions
/// are recorded only once sound was heard, a session-start with the first of them), the fan-out of events to
/// subscribers, the set-up of a play (reciter, table, configuration, and what carries over from the last play:
/// reciter, speed, volume, output and a running sleep timer), resume semantics, and the read-your-writes barrier:
/// a command that moves or ends playback returns once its position is durable.
///
/// ```swift
/// let session = Session()
/// let started = try session.play(PlayRequest(source: .ayat(ayat)), settings: settings)
/// try session.perform(.seek(.time(seconds: 200)), verb: "seek")
/// session.status()?.positionSeconds        // 200.0, and moving on while it plays
/// ```
public final class Session: Sendable {
    /// The clock of the session's players, timers and waits (a manual one in tests).
    public let clock: any TartilClock

    /// What one play is, for the journal: who recites, whether its positions are recorded, and whether its
    /// session-start has been (it is, with the first position heard).
    struct Playback: Sendable {
        let reciter: Reciter
        let records: Bool
        var note: String
        var startRecorded = false
        /// A hifz play's record of what was heard in full, part by part (`hifz-heard` events).
        var listening: HifzListening?
    }

    /// What the next play takes from the last when it does not say (like mpd: one player, its settings kept).
    struct Carried: Sendable {
        var reciter: ReciterID?
        var speed: Double?
        var volume: Int?
        var output: (output: String, device: String)?
    }

    struct State: Sendable {
        var player: Player?
        /// True from the moment a play stops the player it replaces until the new one is in `player` (or the play
        /// failed): a request that comes then waits for the new player instead of seeing none.
        var replacing = false
        /// Replacements finished so far, and the status the last one's player started with (nil when it failed):
        /// what `settledStatus` answers when plays follow each other so closely that `replacing` is seldom false.
        var settled = 0
        var settledStatus: PlayerStatus?
        /// Counts plays: events of a replaced player are recorded, not delivered.
        var generation = 0
        var playbacks: [Int: Playback] = [:]
        var journal: JournalWriter?
        var carried = Carried()
        /// The settings of the last play started here (the control socket's plays use them: a remote request
        /// names no paths).
        var settings: Settings?
        /// The last play started here, as it was resolved (its ayat and reciter): what `playAgain` starts again.
        var lastPlay: PlayRequest?
        var reciterName: String?
        var subscribers: [Int: @Sendable (SessionEvent) -> Void] = [:]
        var nextSubscriber = 0
        /// Called once, when the first player starts (the control socket and MPRIS start then).
        var firstPlayerHooks: [@Sendable () -> Void] = []
        /// The first player's hooks, run by the event thread at its first sound (or when it first waits for a file,
        /// fails or ends), so that the control socket and the bus cost nothing before the first sample.
        var firstSoundHooks: [@Sendable () -> Void] = []
        var notices: (@Sendable (String) -> Void)?
        /// The journal writer's count of failed events when the current playback began, its first failure, and
        /// whether that was reported.
        var failedAtBegin = 0
        var playbackFailure: JournalError?
        var failureReported = false
    }

    let state = Mutex(State())
    /// Set while a play is being set up: plays (from the prompt, the socket, MPRIS) are set up one at a time, and
    /// the last one wins.
    let settingUp = Monitor(false)
    /// Set while the session stands by after a stop that keeps it ready to play again (`stopStandingBy`): until a
    /// play starts or the standby ends, playback has not ended for good.
    let standby = Monitor(false)

    public init(clock: any TartilClock = SystemClock.shared) {
        self.clock = clock
    }

    /// Where messages the session has for the listener go (a journal that stopped saving positions during
    /// playback); the command line prints them on standard error.
    public func setNotices(_ handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.notices = handler }
    }

    /// Runs `hook` once the first player of this session has started, on the event thread at its first sound (or
    /// when it first waits for a file, fails or ends), so nothing of it runs before the first sample; at once when
    /// a player has already started: how the control socket and MPRIS come up only in a process that plays.
    public func whenFirstPlayerStarts(_ hook: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.generation > 0 { return true }
            state.firstPlayerHooks.append(hook)
            return false
        }
        if now { hook() }
    }

    // MARK: - Status

    /// Where playback is now, or nil when nothing is playing (no player yet, or the last one ended).
    public func status() -> PlayerStatus? {
        guard let status = state.withLock({ $0.player })?.status, !status.state.isEnded else { return nil }
        return status
    }

    /// The status of the session's last player, ended or not (what `play` from the command line turns into its
    /// exit code); nil before any.
    public var lastStatus: PlayerStatus? { state.withLock { $0.player }?.status }

    /// The settings of the last play started here.
    public var playSettings: Settings? { state.withLock { $0.settings } }

    /// The name of the reciter the current player recites as (MPRIS's artist).
    public var reciterName: String? { state.withLock { $0.reciterName } }

    /// True while a player plays (or is paused, or buffers).
    public var isPlaying: Bool { status() != nil }

    /// The player, or a usage error naming `verb` and how to start one.
    func livePlayer(_ verb: String) throws(TartilError) -> Player {
        guard let player = settledPlayer() else {
            throw .usage("\(verb): nothing is playing (start with: play REF)")
        }
        let state = player.status.state
        guard !state.isEnded else { throw .usage("\(verb): nothing is playing (playback \(state.rawValue); start with: play REF)") }
        return player
    }

    /// Where playback is, for `status`: as `settledPlayer` waits out a replacement; but when another replacement
    /// has begun by the time one finishes (plays one after another, a script's or a crowd's), the status the
    /// finished one's player started with, which was true at a moment of the wait. Nil when nothing plays.
    func settledStatus() -> PlayerStatus? {
        let since = state.withLock { $0.settled }
        for _ in 0..<1000 {
            let (player, replacing, settled, started) = state.withLock { ($0.player, $0.replacing, $0.settled, $0.settledStatus) }
            if !replacing { return player?.status }
            if settled != since { return started }
            SystemClock.shared.sleep(until: SystemClock.shared.now.adding(seconds: 0.005))
        }
        return state.withLock { $0.player }?.status
    }

    /// The player requests act on. During a replacement (see `State.replacing`) this waits for the new player, at
    /// most 5 s of real time, so that no request falls in the moment between two players.
    func settledPlayer() -> Player? {
        for _ in 0..<1000 {
            let (player, replacing) = state.withLock { ($0.player, $0.replacing) }
            if !replacing { return player }
            SystemClock.shared.sleep(until: SystemClock.shared.now.adding(seconds: 0.005))
        }
        return state.withLock { $0.player }
    }

    // MARK: - Control

    /// Carries out a command that moves or ends playback (or changes how it plays), and returns once it took
    /// effect and the position it recorded is durable in the journal (so `stop; positions` sees it). A command
    /// the machine refuses is a usage error, and nothing changed.
    ///
    /// While the session stands by (see `stopStandingBy`), `stop` and `quit` end the standby (the stopped player's
    /// status is returned), and `toggle` and `resume` start the play again (`playAgain`).
    @discardableResult
    public func perform(_ command: PlaybackMachine.Command, verb: String) throws(TartilError) -> PlayerStatus {
        if isStandingBy, let standing = lastStatus, standing.state.isEnded {
            switch command {
            case .stop, .quit:
                endStandby()
                return standing
            case .toggle, .resume:
                return try playAgain().status
            default:
                break
            }
        }
        let player = try livePlayer(verb)
        let status = try player.perform(command)
        flushJournal()
        return status
    }

    /// Carries out `request` as the control socket and a command line that forwards do: the typed result, or the
    /// error. `watch` is not one of these (see `subscribe`); `wait` blocks until playback ends.
    public func handle(_ request: ControlRequest, settings: Settings? = nil, isCancelled: @escaping @Sendable () -> Bool = { false })
        throws(TartilError) -> ControlResult
    {
        switch request {
        case .play(let play):
            return .started(try self.play(play, settings: settings))
        case .resume(let play, let plain):
            if plain, let status = settledPlayer()?.status, !status.state.isEnded {
                return .status(try perform(.resume, verb: "resume"))
            }
            return .started(try self.play(play, settings: settings))
        case .command(let command, let verb):
            return .status(try perform(command, verb: verb))
        case .status(let verb):
            guard let status = settledStatus(), !status.state.isEnded else {
                if verb == "status" { return .stopped }
                throw .usage("\(verb): nothing is playing (start with: play REF)")
            }
            return .status(status)
        case .wait:
            guard lastStatus != nil else { throw .usage("wait: nothing is playing (start with: play REF)") }
            guard waitUntilEnded(isCancelled: isCancelled) else { throw TartilError(.interrupted, "stopped waiting; playback goes on") }
            flushJournal()  // the end's position is durable when wait returns
            return .status(lastStatus!)
        case .watch:
            throw .usage("watch streams events: use subscribe")
        case .bookmark(let bookmark):
            return .bookmark(try self.bookmark(bookmark, settings: settings))
        }
    }

    // MARK: - Waiting

    /// Blocks until playback has ended for good: the current player ended and no play is being set up to replace
    /// it (a `play` from another terminal replaces the player; the wait goes on with the new one). Returns false
    /// when `isCancelled` said so first (it is asked every 50 ms of real time).
    public func waitUntilEnded(isCancelled: @Sendable () -> Bool = { false }) -> Bool {
        while true {
            if hasEnded(waiting: 0.05) { return true }
            if isCancelled() { return false }
        }
    }

    /// Waits at most `seconds` (real time) for playback to end for good; true when it has (or nothing plays). A
    /// session standing by after a stop (`stopStandingBy`) has not ended for good.
    public func hasEnded(waiting seconds: Double) -> Bool {
        let (player, generation, replacing) = state.withLock { ($0.player, $0.generation, $0.replacing) }
        if replacing {
            SystemClock.shared.sleep(until: SystemClock.shared.now.adding(seconds: min(seconds, 0.01)))
            return false
        }
        guard let player else {
            // No player yet: wait for a play being set up, then look again (read after the set-up, so a play that
            // has just started is seen, never taken for the end).
            guard settingUp.wait(until: { !$0 }, timeout: seconds, then: { _, idle in idle }) else { return false }
            return state.withLock { $0.player == nil && !$0.replacing }
        }
        guard player.waitUntilEnded(timeout: seconds) else { return false }
        // Standing by: until a play starts (a new generation, below) or the standby ends.
        guard standby.wait(until: { !$0 }, timeout: seconds, then: { _, ended in ended }) else { return false }
        // Ended: unless a replacement is being set up or has begun since (settingUp is read first: a play that
        // starts after it has a new generation, or is replacing, by the time the state is read).
        let settingUpNow = settingUp.read { $0 }
        return !settingUpNow && state.withLock { !$0.replacing && $0.generation == generation }
    }

    /// Stops playback (`quitting`: tartil is leaving, the last position is recorded as a quit), waits until it has
    /// stopped, and until every position is durable and every event delivered.
    public func stopAndWait(quitting: Bool = true) {
        endStandby()
        if let player = state.withLock({ $0.player }) {
            player.stop(quitting: quitting)
            player.waitUntilEnded()
        }
        flushJournal()
    }

    // MARK: - Events

    /// Events from now on, for a subscriber that takes them on its own thread; `unsubscribe` with the stream when
    /// done (a stream cut off for falling behind stays subscribed until then, receiving nothing).
    public func subscribe() -> EventStream {
        let stream = EventStream()
        let token = subscribe { stream.offer($0) }
        streams.withLock { $0[ObjectIdentifier(stream)] = token }
        return stream
    }

    /// Ends `stream`'s subscription.
    public func unsubscribe(_ stream: EventStream) {
        stream.close()
        if let token = streams.withLock({ $0.removeValue(forKey: ObjectIdentifier(stream)) }) { unsubscribe(token) }
    }

    private let streams = Mutex<[ObjectIdentifier: Int]>([:])

    /// Calls `receiver` with every event from now on, on the player's event thread: it must not wait (MPRIS only
    /// wakes its own thread). Returns a token for `unsubscribe`.
    public func subscribe(_ receiver: @escaping @Sendable (SessionEvent) -> Void) -> Int {
        state.withLock { state in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = receiver
            return state.nextSubscriber
        }
    }

    public func unsubscribe(_ token: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: token) }
    }

    /// Called on a player's event thread with each of its events: the journal gets its positions (a replaced
    /// player's last ones too), subscribers the current player's events.
    func deliver(_ event: PlayerEvent, generation: Int) {
        let (playback, journal, subscribers, current, hooks) = state.withLock { state in
            var hooks: [@Sendable () -> Void] = []
            if !state.firstSoundHooks.isEmpty {
                switch event {
                case .position, .buffering, .error, .end:
                    hooks = state.firstSoundHooks
                    state.firstSoundHooks = []
                default: break
                }
            }
            return (state.playbacks[generation], state.journal, Array(state.subscribers.values), state.generation == generation, hooks)
        }
        defer { for hook in hooks { hook() } }  // after the event's journal append and its subscribers
        if let playback, playback.records, let journal {
            switch event {
            case .position(let position):
                var drafts = [position.draft]
                if !playback.startRecorded {
                    // The session begins with the first sound heard: a play that never sounded records nothing.
                    state.withLock { $0.playbacks[generation]?.startRecorded = true }
                    drafts.insert(EventDraft(kind: .sessionStart, reciter: playback.reciter.id.rawValue, note: playback.note), at: 0)
                }
                drafts += hifzHeard(event, generation: generation)
                journal.append(contentsOf: drafts)
            case .end(let final, let message):
                var drafts = hifzHeard(event, generation: generation)
                if playback.startRecorded {
                    let note = message.map { "\(final.rawValue): \($0)" } ?? final.rawValue
                    drafts.append(EventDraft(kind: .sessionEnd, note: Self.fitted(JournalNote.cleaned(note), bytes: JournalLimits.noteBytes)))
                }
                journal.append(contentsOf: drafts)
            default:
                journal.append(contentsOf: hifzHeard(event, generation: generation))
            }
        }
        if case .end = event { _ = state.withLock { $0.playbacks.removeValue(forKey: generation) } }
        guard current else { return }
        for subscriber in subscribers { subscriber(.player(event)) }
    }

    /// The `hifz-heard` events a hifz play's event gives (none for another play).
    private func hifzHeard(_ event: PlayerEvent, generation: Int) -> [EventDraft] {
        let heard = state.withLock { state -> [HifzListening.Heard] in
            guard state.playbacks[generation]?.listening != nil else { return [] }
            return state.playbacks[generation]!.listening!.on(event)
        }
        guard !heard.isEmpty, let day = state.withLock({ $0.playbacks[generation]?.listening?.day }) else { return [] }
        return heard.flatMap { part in
            HifzHeardNote.notes(day: day, part: part.part, ayat: part.ayat).map { EventDraft(kind: .hifzHeard, note: $0) }
        }
    }

    /// `text` cut on a character boundary to at most `bytes` bytes of UTF-8.
    static func fitted(_ text: String, bytes: Int) -> String {
        var kept = Substring(text)
        while kept.utf8.count > bytes { kept = kept.dropLast(max(1, (kept.utf8.count - bytes) / 4)) }
        return String(kept)
    }
}

/// What a request to the session gives back, typed, whichever front end asked.
public enum ControlResult: Sendable, Hashable, Codable {
    /// Where playback is after the request.
    case status(PlayerStatus)
    /// A play began (with the note of where a resume continues, when it resumed).
    case started(PlayStarted)
    /// Nothing is playing (`status` with no player).
    case stopped
    /// The bookmark made.
    case bookmark(Bookmark)
}

/// A play that began: its status as it starts and, for a resume, where it continues and why.
public struct PlayStarted: Sendable, Hashable, Codable {
    public var status: PlayerStatus
    public var resumed: ResumePoint?
    /// What the listener is told once, as the play starts (nil when nothing): the plan's unpinned files that only
    /// one mirror vouches for so far (single-source).
    public var notes: [String]?

    public init(status: PlayerStatus, resumed: ResumePoint?, notes: [String]? = nil) {
        self.status = status
        self.resumed = resumed
        self.notes = notes
    }
}

extension PlaybackPosition {
    /// The journal's form of it.
    var draft: EventDraft {
        .position(
            reciter: reciter.rawValue, surah: ayah.surah, ayah: ayah.ayah, offsetSamples: offsetSamples, sampleRate: sampleRate,
            reason: JournalEvent.Reason(rawValue: reason.rawValue) ?? .seek)
    }
}
