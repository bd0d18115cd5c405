import Glibc
import TartilCLI
import TartilCore
import TartilSession
import TartilSystem

/// `tartil play` on a terminal: keys (see `PlayerKeys`) read on the thread that waits for the end, and the live
/// line on standard error, fitted to the terminal's width. The shell's way of following playback until it ends.
enum PlaybackFollower {
    /// How long a notice (a refused key's message, a bookmark) stays on the live line.
    static let noticeSeconds = 3.0
    /// How long the key help stays (when it fits on the live line; otherwise it is printed above it).
    static let helpSeconds = 6.0

    /// How the command line follows playback until it ends: reading keys with the live line (`keysAllowed`, on a
    /// terminal in the foreground), or drawing the live line alone (`progress`), or just waiting. Keys are not read
    /// when started in the background (`tartil play 36 &`), where setting the terminal would stop tartil (SIGTTOU)
    /// and the keys are the shell's.
    static func follow(_ context: Context, keysAllowed: Bool, progress: Bool) throws {
        if keysAllowed && context.inputIsTerminal && tcgetpgrp(0) == getpgrp() {
            try waitWithKeys(context)
        } else {
            try waitForEnd(context, stopOnInterrupt: true, progress: progress ? context.console : nil)
        }
    }

    /// Blocks until the session's playback ends (a replacement from another terminal is followed too). Ctrl-C
    /// stops it (`stopOnInterrupt`) or only stops the waiting, and throws `.interrupted` either way. With
    /// `progress`, the live line is redrawn on standard error.
    static func waitForEnd(_ context: Context, stopOnInterrupt: Bool, progress: Console? = nil) throws {
        let session = context.session
        var width = progress.flatMap { _ in RawTerminal.columns(of: 2) } ?? 80
        var saidHeld: AyahRef?
        while !session.hasEnded(waiting: 0.25) {
            if Interrupt.isPending {
                if stopOnInterrupt { session.stopAndWait(quitting: true) }
                progress?.writeError("\n")
                throw stopOnInterrupt ? TartilError.playbackStopped(session.lastStatus) : TartilError(.interrupted, "stopped waiting; playback goes on")
            }
            if let progress {
                width = RawTerminal.columns(of: 2) ?? width  // cheap, and no handler needed without keys
                if let note = LiveStatus.heldElsewhereNote(session.status(), said: &saidHeld) {
                    progress.writeError("\r\u{1B}[K")
                    progress.note(note)  // above the live line, wrapped
                }
                if let line = liveLine(session, notice: nil, width: width) { progress.writeError("\r\u{1B}[K" + line) }
            }
        }
        session.flushJournal()
        progress?.writeError("\r\u{1B}[K")
    }

    /// Blocks until playback ends, reading keys and redrawing the live line every 0.25 s (at once after a key, a
    /// resize or a return from Ctrl-Z). Raw mode is left on every way out, a thrown error included. Ctrl-C and
    /// SIGTERM stop playback (recording the position as a quit) and throw `.interrupted`, like `waitForEnd`.
    static func waitWithKeys(_ context: Context) throws {
        do {
            try RawTerminal.enter()
        } catch {
            // No keys (the terminal would not change modes): playback goes on with the live line alone.
            context.console.note("Error: \(error.message); keys are off")
            return try waitForEnd(context, stopOnInterrupt: true, progress: context.console.errorIsTerminal ? context.console : nil)
        }
        defer { RawTerminal.leave() }
        let session = context.session
        let console = context.console
        let draws = console.errorIsTerminal
        var decoder = KeyDecoder()
        var notice: (text: String, until: ClockInstant)?
        var saidHeld: AyahRef?
        var width = RawTerminal.columns(of: 2) ?? 80
        var inputOpen = true
        var buffer = [UInt8](repeating: 0, count: 256)
        while !session.hasEnded(waiting: 0) {
            if Interrupt.isPending {
                RawTerminal.leave()
                session.stopAndWait(quitting: true)
                if draws { console.writeError("\n") }
                throw TartilError.playbackStopped(session.lastStatus)
            }
            // Keys only in the foreground: a background process reading its terminal is stopped (SIGTTIN), and
            // waiting on input the shell reads would wake at once, again and again.
            let foreground = tcgetpgrp(0) == getpgrp()
            var descriptors = [pollfd(fd: inputOpen && foreground ? 0 : -1, events: Int16(POLLIN), revents: 0)]
            for wake in [Interrupt.wakeDescriptor, RawTerminal.wakeDescriptor] where wake >= 0 {
                descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            }
            // An interrupted poll counts as nothing ready: the loop looks at the interrupt and the window again.
            let ready =
                (try? SystemCall.retrying(retryOnInterrupt: false) { poll(&descriptors, nfds_t(descriptors.count), 250) })
                ?? -1
            if RawTerminal.takeRedraw() { width = RawTerminal.columns(of: 2) ?? width }
            var keys: [Key] = []
            if ready > 0 && descriptors[0].revents & Int16(POLLIN) == 0 && descriptors[0].revents != 0 {
                inputOpen = false  // hung up or closed: playback goes on without keys
            } else if ready > 0 && descriptors[0].revents != 0 {
                let result = buffer.withUnsafeMutableBytes { bytes in
                    Result { () throws(Errno) in
                        try SystemCall.retrying { Glibc.read(0, bytes.baseAddress, bytes.count) }
                    }
                }
                switch result {
                case .success(let count) where count > 0: keys = decoder.feed(buffer[..<count])
                case .failure(.wouldBlock): break
                case .success, .failure: inputOpen = false  // the terminal went away: playback goes on without keys
                }
            } else if ready == 0 {
                decoder.idle()
            }
            for key in keys {
                guard let action = PlayerKeys.action(for: key) else { continue }
                if let text = perform(action, context) {
                    // Too long for the live line: printed above it, wrapped, and the live line drawn again below.
                    let above = action == .help ? PlayerKeys.helpLines(width: width) : LiveLine.linesAbove(notice: text, width: width)
                    if draws && foreground, let above {
                        console.writeError("\r\u{1B}[K" + above.map { $0 + "\n" }.joined())
                    } else {
                        let seconds = action == .help ? helpSeconds : noticeSeconds
                        notice = (text, session.clock.now.adding(seconds: seconds))
                    }
                }
                if action == .command(.quit) { break }
            }
            if let shown = notice, shown.until < session.clock.now { notice = nil }
            if let note = LiveStatus.heldElsewhereNote(session.status(), said: &saidHeld), draws && foreground {
                console.writeError("\r\u{1B}[K")
                console.note(note)  // above the live line, wrapped
            }
            // In the background, the shell's line is left alone.
            if draws && foreground, let line = liveLine(session, notice: notice?.text, width: width) {
                console.writeError("\r\u{1B}[K" + line)
            }
        }
        session.flushJournal()
        if draws { console.writeError("\r\u{1B}[K") }
    }

    /// The live line: the status while a player plays; while the session stands by after a Stop from the desktop,
    /// what starts it again; nil otherwise.
    private static func liveLine(_ session: Session, notice: String?, width: Int) -> String? {
        if let status = session.status() { return LiveStatus.line(status, notice: notice, width: width) }
        guard session.isStandingBy, let stopped = session.lastStatus else { return nil }
        return LiveStatus.standingBy(stopped, notice: notice, width: width)
    }

    /// Carries out what a key asks; returns what the live line should say about it (a refusal's message, the
    /// bookmark made, the help), if anything. Nothing a key does ends playback but `q`.
    private static func perform(_ action: PlayerKeys.Action, _ context: Context) -> String? {
        do throws(TartilError) {
            switch action {
            case .command(.markLoop):
                let status = try context.session.perform(.markLoop, verb: "loop")
                if let loop = status.loop { return "loop \(LiveStatus.clock(loop.startSeconds))-\(LiveStatus.clock(loop.endSeconds)) (l again: off)" }
                if let mark = status.loopMarkSeconds { return "loop from \(LiveStatus.clock(mark)): l again marks its end" }
                return "loop off"
            case .command(let command):
                let status = try context.session.perform(command, verb: name(of: command))
                if case .setVolume = command { return "volume \(status.volume)%" }
                return nil
            case .bookmark:
                let bookmark = try context.session.bookmark(BookmarkRequest(), settings: context.settings)
                return "bookmarked \(bookmark.surah):\(bookmark.ayah)"
            case .markWeak:
                let marked = try context.session.markHifz(nil, as: .weak, settings: context.settings)
                return marked.first.map { "marked \($0.surah ?? 0):\($0.ayah ?? 0) weak: it comes back in the next days' revision" }
            case .toggleRepeat:
                let forever = context.session.status()?.options.repeatEach == .forever
                try context.session.perform(.set(.repeatEach(forever ? .times(1) : .forever)), verb: "set")
                return forever ? "repeat off" : "repeating this ayah until you move on (r again: off)"
            case .help:
                return PlayerKeys.helpLine
            case .speed(let steps):
                guard let current = context.session.status()?.speed else { throw TartilError.usage("speed: nothing is playing") }
                let status = try context.session.perform(.setSpeed(PlaybackSpeed.stepped(current, by: steps)), verb: "speed")
                return "speed \(PlaybackSpeed.text(status.speed))×"
            }
        } catch {
            return error.description
        }
    }

    /// The command's name as the prompt knows it, for messages.
    private static func name(of command: PlaybackMachine.Command) -> String {
        switch command {
        case .pause: return "pause"
        case .resume: return "resume"
        case .toggle: return "toggle"
        case .next: return "next"
        case .previous: return "prev"
        case .stop: return "stop"
        case .quit: return "quit"
        case .seek: return "seek"
        case .set: return "set"
        case .loop, .markLoop: return "loop"
        case .stopAfter: return "stop-after"
        case .sleep: return "sleep"
        case .setSpeed: return "speed"
        case .setVolume: return "volume"
        }
    }
}
