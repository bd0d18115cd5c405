import FoundationEssentials
import Glibc
import Synchronization
import TartilCore
import TartilJournal
import TartilMPRIS
import TartilPlayer

/// The player a prompt or script controls, shared by its commands: `play` starts one (stopping any before it),
/// `pause`, `seek`, `status` and the rest act on it, and `events` chooses whether its events are printed.
final class PlaybackSession: Sendable {
    private struct State {
        var player: Player?
        /// The journal positions go to, opened by the first `play`.
        var journal: JournalWriter?
        /// Counts `begin` calls: events of an earlier player are not printed.
        var generation = 0
        /// Where events are printed (`--events`, `events on`), if anywhere.
        var printer: EventPrinter?
        /// Clients of the control socket watching events (`watch`), by number.
        var watchers: [Int: Watcher] = [:]
        var nextWatcher = 0
        /// The control socket this session serves, once a player has started here.
        var server: ControlServer?
        /// The MPRIS service on the session bus, once a player has started here (nil when MPRIS is off).
        var mpris: MPRISService?
        var mprisStarted = false
        /// The reciter's name the current player recites as (MPRIS's artist).
        var reciterName = ""
        /// The output and device the session's last `play` used.
        var lastOutput: (output: String, device: String)?
        /// Where a journal failure during playback is reported, once per playback.
        var errorConsole: Console?
        /// The journal writer's count of failed events when the current playback began.
        var failedAtBegin = 0
        /// The first journal failure of the current playback, and whether it was printed.
        var playbackFailure: JournalError?
        var failureReported = false
    }

    private let state = Mutex(State())

    /// The player, or a usage error saying how to start one.
    func player(for command: String) throws(TartilError) -> Player {
        guard let player = state.withLock({ $0.player }) else {
            throw .usage("\(command): nothing is playing (start with: play REF)")
        }
        return player
    }

    /// The output and device the session's last `play` used (the default for its next).
    var lastOutput: (output: String, device: String)? {
        get { state.withLock { $0.lastOutput } }
        set { state.withLock { $0.lastOutput = newValue } }
    }

    /// The player, if one was started (ended or not).
    var current: Player? { state.withLock { $0.player } }

    /// Stops the session's player (if any) before a new one starts; returns the new player's generation. A
    /// position the journal cannot make durable from now on is reported once on `console`.
    func begin(console: Console? = nil) -> Int {
        let previous = state.withLock { state in
            defer {
                state.player = nil
                state.generation += 1
                state.errorConsole = console
                state.failedAtBegin = state.journal?.failedEvents ?? 0
                state.playbackFailure = nil
                state.failureReported = false
            }
            return state.player
        }
        previous?.stop()
        previous?.waitUntilEnded()
        return state.withLock { $0.generation }
    }

    /// The player that replaced `player` (started with `generation`) through the control socket, and its
    /// generation, waiting a little while one is being set up; nil when nothing replaced it.
    func replacement(of player: Player, generation: Int) -> (player: Player, generation: Int)? {
        for _ in 0..<200 {
            let (current, now) = state.withLock { ($0.player, $0.generation) }
            if now == generation { return nil }
            if let current, current !== player { return (current, now) }
            usleep(50_000)  // a new player is being set up (its files checked, its output opened)
        }
        return nil
    }

    /// Makes `player` (started after `begin` returned `generation`, reciting as `reciterName`) the session's player.
    func attach(_ player: Player, generation: Int, reciterName: String) {
        state.withLock { state in
            if state.generation == generation {
                state.player = player
                state.reciterName = reciterName
            }
        }
    }

    /// Prints events as JSON lines on `console` from now on (or stops printing them).
    func setPrintEvents(_ on: Bool, console: Console) {
        let previous = state.withLock { state -> EventPrinter? in
            defer { state.printer = on ? (state.printer ?? EventPrinter(console: console)) : nil }
            return on ? nil : state.printer
        }
        previous?.drain()
        previous?.close()
    }

    /// Waits (briefly: see `EventPrinter.drain`) until the events queued for printing are written.
    func drainEvents() {
        state.withLock { $0.printer }?.drain()
    }

    /// Called by the player's threads: positions go to the journal (on its own thread), and the event is printed
    /// when events are on and it is the current player's.
    func deliver(_ event: PlayerEvent, generation: Int) {
        let (target, journal) = state.withLock { state -> (EventPrinter?, JournalWriter?) in
            (state.generation == generation ? state.printer : nil, state.journal)
        }
        let (watchers, mpris) = state.withLock { (Array($0.watchers.values), $0.mpris) }
        mpris?.playerEvent(event)
        if !watchers.isEmpty {
            let line = PlayCommands.json(event).rendered()
            for watcher in watchers { watcher.printer.offer(line) }
            if case .end = event {
                for watcher in watchers where !watcher.follow { watcher.finished.store(true, ordering: .relaxed) }
            }
        }
        switch event {
        case .position(let position): journal?.append(position.draft)
        case .end(let final, let message):
            let note = message.map { "\(final.rawValue): \($0)" } ?? final.rawValue
            // Within the journal's note limit (an error message could be longer), cut on a character boundary.
            var kept = Substring(note)
            while kept.utf8.count > Journal.MergeLimits.noteBytes { kept = kept.dropLast(max(1, (kept.utf8.count - Journal.MergeLimits.noteBytes) / 4)) }
            journal?.append(EventDraft(kind: .sessionEnd, note: String(kept)))
        default: break
        }
        target?.offer(PlayCommands.json(event).rendered())
    }

    /// Called on the journal writer's thread when events could not be made durable: during playback, the first
    /// such failure is printed at once (playback goes on); `checkPlaybackJournal` turns it into the exit status.
    private func journalFailed(_ error: JournalError) {
        let console = state.withLock { state -> Console? in
            guard state.errorConsole != nil, state.playbackFailure == nil else { return nil }
            state.playbackFailure = error
            guard state.player.map({ !$0.status.state.isEnded }) ?? true else { return nil }
            state.failureReported = true
            return state.errorConsole
        }
        guard let console else { return }
        let clear = console.errorIsTerminal ? "\r\u{1B}[K" : ""
        console.writeError("\(clear)Error: \(error.message); playback goes on, but its positions are not being saved\n")
    }

    /// Throws when positions of the current playback could not be made durable (after waiting for the journal):
    /// the listener must know that resume will not find them. The error's text was printed when it happened;
    /// this one says how many were lost.
    func checkPlaybackJournal() throws(TartilError) {
        guard let writer = state.withLock({ $0.journal }) else { return }
        writer.flush()
        let (lost, failure, reported) = state.withLock { state in
            (writer.failedEvents - state.failedAtBegin, state.playbackFailure, state.failureReported)
        }
        guard lost > 0 else { return }
        let what = "\(Plural.count(lost, "event")) of this playback could not be saved to the journal \(writer.path)"
        if reported || failure == nil {
            throw TartilError(.failure, what + " (the error is above)")
        }
        throw TartilError(.failure, what + ": \(failure!.message)")
    }

    /// The journal at `settings.journalFile`, opened once per session. A file that is not a journal is refused
    /// (a usage error when the user named it).
    func journal(_ settings: Settings) throws(TartilError) -> JournalWriter {
        let writer = startJournal(settings)
        do {
            try writer.opened()
        } catch {
            state.withLock { if $0.journal === writer { $0.journal = nil } }
            // A file that is not a journal, named by the user, is bad input; a disk that is full or read-only is
            // a failure.
            let named = settings.journalIsExplicit && error.code == .notAJournal
            throw TartilError(named ? .usage : .failure, "\(error.message)\(named ? " (--journal or TARTIL_JOURNAL)" : "")")
        }
        return writer
    }

    /// Starts opening the journal (on its own thread) without waiting; `journal(_:)` later waits for it.
    @discardableResult
    func startJournal(_ settings: Settings) -> JournalWriter {
        if let open = state.withLock({ $0.journal }), open.path == settings.journalFile { return open }
        let directory = Path.parent(settings.journalFile)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let writer = JournalWriter(path: settings.journalFile) { [weak self] error, _ in self?.journalFailed(error) }
        let previous = state.withLock { state in
            defer { state.journal = writer }
            return state.journal
        }
        previous?.close()
        return writer
    }

    /// Stops the player (`quit`, Ctrl-C, the end of a prompt) recording `reason` as the last position, waits
    /// until it has stopped, and until the journal has every position on disk.
    func stopAndWait(reason: JournalEvent.Reason = .quit) {
        if let player = current {
            player.stop(reason: reason)
            player.waitUntilEnded()
        }
        flushJournal()
        drainEvents()
    }

    /// Waits until every position handed to the journal is durable.
    func flushJournal() {
        _ = state.withLock { $0.journal }?.flush()
    }

    /// Carries out a command that moves or ends playback, and returns once the position it recorded is durable
    /// in the journal (so `stop; positions` sees it).
    @discardableResult
    func control(_ name: String, _ command: PlaybackMachine.Command) throws(TartilError) -> PlayerStatus {
        let player = try player(for: name)
        let state = player.status.state
        guard !state.isEnded else { throw .usage("\(name): nothing is playing (playback \(state.rawValue); start with: play REF)") }
        let status = try player.perform(command)
        flushJournal()
        return status
    }

    // MARK: - The control socket

    /// A `watch` client: its printer, and whether it follows across playbacks.
    final class Watcher: Sendable {
        let printer: EventPrinter
        let follow: Bool
        let finished = Atomic<Bool>(false)

        init(printer: EventPrinter, follow: Bool) {
            self.printer = printer
            self.follow = follow
        }
    }

    /// Serves the control socket for this session from now on (the first player started here does this; when
    /// another live player already serves this user, nothing happens).
    func serveControl(_ settings: Settings, table: CommandTable, console: Console) {
        guard state.withLock({ $0.server == nil }) else { return }
        let server = ControlServer.start(settings: settings, table: table, session: self, console: console)
        state.withLock { $0.server = server }
    }

    /// Removes the control socket and leaves the session bus (at exit).
    func stopControl() {
        let (server, mpris) = state.withLock { ($0.server, $0.mpris) }
        server?.stop()
        mpris?.stop()
    }

    /// Appears on the session bus as an MPRIS media player from now on (the first player started here does this),
    /// when MPRIS is on and a session bus is reachable; otherwise nothing happens, silently. Calls from the bus
    /// become the same commands the prompt and the control socket give.
    func serveMPRIS(_ settings: Settings) {
        guard state.withLock({ state in defer { state.mprisStarted = true }; return !state.mprisStarted }) else { return }
        let controller = MPRISController(
            status: { [weak self] in
                self?.state.withLock { state in state.player.map { ($0.status, state.reciterName) } }
            },
            perform: { [weak self] command throws(TartilError) in
                guard let self else { return }
                try self.control("mpris", command)
            })
        let service = MPRISService.start(environment: settings.environment, enabled: settings.mprisEnabled, controller: controller)
        state.withLock { $0.mpris = service }
    }

    /// Streams events as JSON lines through `send` until playback ends (with `follow`, until `send` fails);
    /// true when it ended, false when the receiver went away. With no player it returns at once (true) unless
    /// following.
    func watch(follow: Bool, send: @escaping @Sendable (String) -> Bool) -> Bool {
        let gone = Atomic<Bool>(false)
        let console = Console(writeOut: { text in if !send(text) { gone.store(true, ordering: .relaxed) } }, writeError: { _ in })
        let watcher = Watcher(printer: EventPrinter(console: console), follow: follow)
        let (number, player) = state.withLock { state -> (Int, Player?) in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = watcher
            return (state.nextWatcher, state.player)
        }
        defer {
            _ = state.withLock { $0.watchers.removeValue(forKey: number) }
            watcher.printer.close()
        }
        if !follow && (player == nil || player!.status.state.isEnded) { return true }
        while !gone.load(ordering: .relaxed) {
            if watcher.finished.load(ordering: .relaxed) {
                watcher.printer.drain()
                return !gone.load(ordering: .relaxed)
            }
            usleep(50_000)
        }
        return false
    }

    /// Flushes and closes the journal (before tartil exits); returns a note when the journal file alone does not
    /// hold every event (another program kept it busy: the events are safe in its log beside it).
    @discardableResult
    func closeJournal() -> String? {
        let writer = state.withLock { state in
            defer { state.journal = nil }
            return state.journal
        }
        guard let problem = writer?.close() else { return nil }
        return "note: \(problem.message); every event is safe in \(writer!.path)-wal beside it, and the next tartil that writes folds it in (copy both files until then)"
    }
}
