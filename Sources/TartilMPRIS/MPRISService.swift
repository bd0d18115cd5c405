import CSdBus
import Glibc
import TartilCore
import TartilSession
import TartilSystem

/// What the MPRIS thread needs from the session that owns the player: its published status (with the reciter's
/// name), and the ways every other front end controls it.
public struct MPRISController: Sendable {
    /// What MPRIS shows: the player's status as it is now, the reciter's name, and whether Play starts the last
    /// play again (its player stopped or finished).
    public struct View: Sendable {
        public var status: PlayerStatus
        public var reciterName: String
        public var canPlayAgain: Bool

        public init(status: PlayerStatus, reciterName: String, canPlayAgain: Bool) {
            self.status = status
            self.reciterName = reciterName
            self.canPlayAgain = canPlayAgain
        }
    }

    /// The current player's view (the last one's, ended, while it can be played again); nil before a player has
    /// started.
    public var view: @Sendable () -> View?
    /// Carries out a command as the prompt and the control socket do (returns once it has taken effect).
    /// Returns the status the moment the command took effect.
    public var perform: @Sendable (PlaybackMachine.Command) throws(TartilError) -> PlayerStatus?
    /// Stops, standing by ready to play again (`Session.stopStandingBy`).
    public var stop: @Sendable () throws(TartilError) -> Void
    /// Starts the last play again (`Session.playAgain`).
    public var playAgain: @Sendable () throws(TartilError) -> Void

    public init(
        view: @escaping @Sendable () -> View?,
        perform: @escaping @Sendable (PlaybackMachine.Command) throws(TartilError) -> PlayerStatus?,
        stop: @escaping @Sendable () throws(TartilError) -> Void,
        playAgain: @escaping @Sendable () throws(TartilError) -> Void
    ) {
        self.view = view
        self.perform = perform
        self.stop = stop
        self.playAgain = playAgain
    }
}

/// tartil as an MPRIS media player (`org.mpris.MediaPlayer2.tartil` on the session bus), so media keys, desktop
/// widgets and `playerctl` control it.
///
/// The **MPRIS thread** owns the sd-bus connection (no other thread touches it): it answers calls by turning them
/// into the player's commands (`MPRISCall.decide`, then `MPRISController.perform`), reads properties from the
/// published status (`MPRISProperties`), and after every wake compares them with what it last announced, emitting
/// `PropertiesChanged` for what differs and `Seeked` after a seek. Other threads only wake it (`playerEvent`).
/// With no session bus, no libsystemd or a bus that refuses, nothing happens and nothing is printed.
public final class MPRISService: Sendable {
    private struct Shared {
        var stopping = false
        var ended = false
        /// A seek happened since `Seeked` was last emitted, landing here (in microseconds into the track), and
        /// whether that is exact (a seek MPRIS made itself) or read after another front end's seek.
        var seeked: (microseconds: Int64, exact: Bool)?
        /// The bus name owned, once it is.
        var name: String?
    }

    private let shared = Monitor(Shared())
    /// An eventfd the MPRIS thread polls beside the bus: writing to it wakes the thread.
    private let wakeDescriptor: Int32

    private let controller: MPRISController

    private init(wakeDescriptor: Int32, controller: MPRISController) {
        self.wakeDescriptor = wakeDescriptor
        self.controller = controller
    }

    deinit { close(wakeDescriptor) }

    /// The session bus address from `environment`, if there is one.
    static func busAddress(_ environment: Environment) -> String? {
        environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Starts serving MPRIS for `controller`'s player on its own thread, when `enabled` and a session bus is
    /// named in `environment` (sd-bus connects to the process's `DBUS_SESSION_BUS_ADDRESS`); nil otherwise.
    public static func start(environment: Environment, enabled: Bool, controller: MPRISController) -> MPRISService? {
        guard enabled, busAddress(environment) != nil else { return nil }
        guard csdbus_load() == nil else { return nil }
        let wake = csdbus_eventfd()
        guard wake >= 0 else { return nil }
        let service = MPRISService(wakeDescriptor: wake, controller: controller)
        NativeThread.start(stackSize: 512 << 10) { service.run() }
        return service
    }

    /// Whether MPRIS is on here and, when not, why (for `tartil version`).
    public static func availability(environment: Environment, enabled: Bool) -> String {
        guard enabled else { return "off (--no-mpris or TARTIL_MPRIS=0)" }
        guard busAddress(environment) != nil else { return "off: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)" }
        if let reason = csdbus_load() { return "off: " + String(cString: reason) }
        return "on while playing, as org.mpris.MediaPlayer2.tartil (sd-bus from libsystemd.so.0)"
    }

    /// Serves MPRIS for `session`'s player (the calls become the session's commands, as the prompt's and the
    /// control socket's do), when MPRIS is on and a session bus is named in `environment`; nil otherwise.
    public static func start(session: Session, environment: Environment, enabled: Bool) -> MPRISService? {
        let controller = MPRISController(
            view: { [weak session] in
                guard let session else { return nil }
                if let status = session.status() {
                    return MPRISController.View(status: status, reciterName: session.reciterName ?? "", canPlayAgain: false)
                }
                // Stopped or finished: shown as it ended while Play can start it again (the player stays on the bus).
                guard session.canPlayAgain, let ended = session.lastStatus else { return nil }
                return MPRISController.View(status: ended, reciterName: session.reciterName ?? "", canPlayAgain: true)
            },
            perform: { [weak session] command throws(TartilError) in
                guard let session else { return nil }
                return try session.perform(command, verb: "mpris")
            },
            stop: { [weak session] () throws(TartilError) in _ = try session?.stopStandingBy(verb: "mpris") },
            playAgain: { [weak session] () throws(TartilError) in _ = try session?.playAgain() })
        guard let service = start(environment: environment, enabled: enabled, controller: controller) else { return nil }
        _ = session.subscribe { event in
            if case .player(let playerEvent) = event { service.playerEvent(playerEvent) } else { service.wake() }
        }
        return service
    }

    /// The bus name owned (`org.mpris.MediaPlayer2.tartil`, or `….instance<pid>` when that was taken), once it is.
    public var busName: String? { shared.read { $0.name } }

    /// Called with each of the player's events (any thread; never waits): the MPRIS thread looks at the status
    /// again, and a seek is announced with `Seeked`.
    public func playerEvent(_ event: PlayerEvent) {
        if case .position(let position) = event, position.reason == .seek, let status = controller.view()?.status {
            // Where it landed: read now, right after the seek took effect (a seek MPRIS made itself is known exactly).
            let landed = MPRISProperties(status: status, reciterName: "").positionMicroseconds
            shared.update { $0.seeked = $0.seeked ?? (landed, false) }
        }
        wake()
    }

    /// Leaves the bus and waits (briefly) until the MPRIS thread has ended.
    public func stop() {
        shared.update { $0.stopping = true }
        wake()
        shared.wait(until: { $0.ended }, timeout: 2) { _, _ in }
    }

    /// The text in a NUL-terminated buffer C filled.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A seek MPRIS made itself landed here: `Seeked` says exactly this.
    func landed(_ microseconds: Int64) {
        shared.update { $0.seeked = (microseconds, true) }
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    // MARK: - The MPRIS thread

    /// The MPRIS thread: connects, owns the name, and serves until `stop` or the bus goes away.
    private func run() {
        defer { shared.update { $0.ended = true } }
        let connection = MPRISConnection(controller: controller, service: self)
        defer { withExtendedLifetime(connection) {} }  // the C callbacks reach it until the connection is closed
        var name = [CChar](repeating: 0, count: 256)
        var reason = [CChar](repeating: 0, count: 512)
        guard let handle = csdbus_open(connection.callbacks, &name, name.count, &reason, reason.count) else { return }
        defer { csdbus_close(handle) }
        shared.update { $0.name = Self.text(name) }
        var announced = connection.properties()
        var timeout: Int32 = 500
        while !shared.read({ $0.stopping }) {
            let woken = csdbus_run_once(handle, wakeDescriptor, timeout)
            if woken < 0 { return }  // the bus went away: MPRIS ends quietly, playback goes on
            // The player publishes its status just after handing over the events that woke this thread: look again
            // shortly after a wake, and announce another front end's seek only once things are quiet (its position
            // is then current); a seek MPRIS made itself is known exactly, and announced at once.
            timeout = woken == 1 ? 20 : 500
            let now = connection.properties()
            let changed = now.changed(since: announced)
            if !changed.isEmpty {
                var names: [UnsafePointer<CChar>?] = changed.map { UnsafePointer(strdup($0)) } + [nil]
                _ = csdbus_emit_changed(handle, &names)
                for name in names { free(UnsafeMutablePointer(mutating: name)) }
                announced = now
            }
            let seek = shared.update { state -> Int64? in
                guard let seeked = state.seeked, seeked.exact || woken == 0 || state.stopping else { return nil }
                state.seeked = nil
                return seeked.microseconds
            }
            if let seek { _ = csdbus_emit_seeked(handle, seek) }
        }
    }
}

/// The MPRIS thread's side of the C callbacks: it lives on that thread, as long as the connection.
private final class MPRISConnection {
    let controller: MPRISController
    /// The service whose thread this connection lives on (it outlives the connection).
    unowned let service: MPRISService

    init(controller: MPRISController, service: MPRISService) {
        self.controller = controller
        self.service = service
    }

    func properties() -> MPRISProperties {
        let view = controller.view()
        return MPRISProperties(status: view?.status, reciterName: view?.reciterName ?? "", canPlayAgain: view?.canPlayAgain ?? false)
    }

    /// Carries out a call; nil, or why it was refused.
    func handle(_ call: MPRISCall) -> String? {
        let view = controller.view()
        do throws(TartilError) {
            switch call.decide(status: view?.status, canPlayAgain: view?.canPlayAgain ?? false) {
            case .ignore: return nil
            case .refuse(let reason): return reason
            case .perform(let command):
                let effect = try controller.perform(command)
                if case .seek = command, let effect { service.landed(MPRISProperties(status: effect, reciterName: "").positionMicroseconds) }
            case .performInTurn(let commands):
                for command in commands { _ = try controller.perform(command) }
            case .stopAndStandBy:
                try controller.stop()
            case .playAgain:
                try controller.playAgain()
            }
        } catch {
            return error.message
        }
        // Announce what changed at once (the wake after a call is seen within a round of the loop).
        service.wake()
        return nil
    }

    var callbacks: csdbus_callbacks {
        csdbus_callbacks(
            context: Unmanaged.passUnretained(self).toOpaque(),
            call: { context, which, microseconds, number, text, error, capacity in
                let connection = Unmanaged<MPRISConnection>.fromOpaque(context!).takeUnretainedValue()
                let call: MPRISCall
                switch which {
                case CSDBUS_CALL_PLAY: call = .play
                case CSDBUS_CALL_PAUSE: call = .pause
                case CSDBUS_CALL_PLAY_PAUSE: call = .playPause
                case CSDBUS_CALL_STOP: call = .stop
                case CSDBUS_CALL_NEXT: call = .next
                case CSDBUS_CALL_PREVIOUS: call = .previous
                case CSDBUS_CALL_SEEK: call = .seek(offsetMicroseconds: microseconds)
                case CSDBUS_CALL_SET_POSITION:
                    call = .setPosition(trackID: text.map { String(cString: $0) } ?? "", microseconds: microseconds)
                case CSDBUS_CALL_SET_RATE: call = .setRate(number)
                case CSDBUS_CALL_SET_LOOP_STATUS: call = .setLoopStatus(text.map { String(cString: $0) } ?? "")
                default: call = .setVolume(number)
                }
                guard let reason = connection.handle(call) else { return 0 }
                if let error, capacity > 0 {
                    let bytes = Array(reason.utf8.prefix(capacity - 1))
                    for (index, byte) in bytes.enumerated() { error[index] = CChar(bitPattern: byte) }
                    error[bytes.count] = 0
                }
                return -1
            },
            snapshot: { context, snapshot in
                guard let snapshot else { return }
                let properties = Unmanaged<MPRISConnection>.fromOpaque(context!).takeUnretainedValue().properties()
                csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_PLAYBACK_STATUS, properties.playbackStatus)
                csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_LOOP_STATUS, properties.loopStatus)
                if let track = properties.track {
                    snapshot.pointee.has_track = 1
                    csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_TRACK_ID, track.id)
                    csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_TITLE, track.title)
                    csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_ALBUM, track.album)
                    csdbus_snapshot_set_text(snapshot, CSDBUS_TEXT_ARTIST, track.artist)
                    snapshot.pointee.track_number = Int32(clamping: track.number)
                    snapshot.pointee.length_us = track.lengthMicroseconds
                }
                snapshot.pointee.position_us = properties.positionMicroseconds
                snapshot.pointee.rate = properties.rate
                snapshot.pointee.minimum_rate = properties.minimumRate
                snapshot.pointee.maximum_rate = properties.maximumRate
                snapshot.pointee.volume = properties.volume
                snapshot.pointee.can_go_next = properties.canGoNext ? 1 : 0
                snapshot.pointee.can_go_previous = properties.canGoPrevious ? 1 : 0
                snapshot.pointee.can_play = properties.canPlay ? 1 : 0
                snapshot.pointee.can_pause = properties.canPause ? 1 : 0
                snapshot.pointee.can_seek = properties.canSeek ? 1 : 0
            })
    }
}
