import TartilControl
import TartilCore
import TartilSession

/// `play`, `render` and the commands that control a playing session: `pause`, `resume`, `toggle`, `stop`,
/// `next`, `prev`, `seek`, `status`, `wait`, `watch`, `events`. Each builds the session's typed request from
/// what it parsed (`ControlRequest`), hands it to the session of this process or, when this process has no
/// player, to the player serving the control socket, and renders the typed result the same way either way.
enum PlayCommands {
    /// The command line's own options of `play` and `resume`: where the sound goes, and printing events. A play
    /// naming an output plays in this process, never replacing another terminal's player.
    static let outputOptions: [CommandSpec.Option] = [
        .init(names: ["--output"], valueName: "alsa|wav:path|null|silent", help: "Where the sound goes: alsa (the default), a WAV file, null (discard as fast as decoded) or silent (discard in real time, for machines without sound) [env: TARTIL_OUTPUT]."),
        .init(names: ["--device"], valueName: "name", help: "The ALSA device (default 'default'; 'null' discards at once and saves no positions) [env: TARTIL_DEVICE]."),
        .init(names: ["--events"], valueName: nil, help: "Print playback events as JSON lines."),
    ]

    /// Options that only shape what this process prints: never sent to another player.
    static let localOptions = ["--output", "--device", "--events", "--format", "--csv", "--ndjson"]

    static let play = CommandSpec(ControlVerbs.play, adding: outputOptions, run: runPlay)
    static let resume = CommandSpec(ControlVerbs.resume, adding: outputOptions, run: runPlay)

    static let render = CommandSpec(
        path: ["render"],
        overview: "Write ayat as one WAV file: the exact PCM play would send to the sound card.",
        discussion: """
            The same plan as play (basmala, repeats, pauses), decoded gaplessly as fast as the machine allows. \
            Missing files are downloaded first. The file appears under its name only when complete; if an ayah \
            cannot be fetched, nothing is written and the exit code is 1. The file is RIFF WAV (16-bit PCM), and \
            RF64 past 4 GiB (its header has room for that from the start).
            """,
        arguments: [.init(name: "ref", help: "What to render: 36, 2:255-257, juz 30, …", repeating: true)],
        options: ControlVerbs.planOptions + [
            .init(
                names: ["-o", "--to"], valueName: "file.wav",
                help: "The WAV file to write (-o FILE, -oFILE, --to FILE; --output is play's sink, not a file name).",
                required: true, formerNames: ["--output"]),
            OutputFormat.option(),
        ],
        examples: ["tartil render 112 --reciter ibrahim-alakhdar -o ikhlas.wav", "tartil render 36 --to yasin.wav --pause 1.5s"],
        run: runRender)

    static let pause = control(ControlVerbs.pause)
    static let toggle = control(ControlVerbs.toggle)
    static let stop = control(ControlVerbs.stop)
    static let next = control(ControlVerbs.next)
    static let prev = control(ControlVerbs.prev)
    static let seek = control(ControlVerbs.seek)
    static let set = control(ControlVerbs.set)
    static let loop = control(ControlVerbs.loop)
    static let sleep = control(ControlVerbs.sleep)
    static let stopAfter = control(ControlVerbs.stopAfter)
    static let speed = control(ControlVerbs.speed)
    static let volume = control(ControlVerbs.volume)
    static let status = control(ControlVerbs.status, adding: [OutputFormat.option()])

    static let wait = CommandSpec(ControlVerbs.wait) { invocation, context in
        let (result, remote) = try dispatch(try ControlRequest(invocation), invocation, context)
        report(result, context, remote: remote)
    }

    static let watch = CommandSpec(ControlVerbs.watch) { invocation, context in
        try runWatch(follow: invocation.flag("--follow"), context)
    }

    static let events = CommandSpec(
        path: ["events"],
        overview: "Print playback events as JSON lines from now on (events off stops).",
        arguments: [.init(name: "on|off", help: "on (the default) or off", optional: true)],
        run: { invocation, context in
            let word = invocation.arguments.first ?? "on"
            guard word == "on" || word == "off" else {
                throw Suggestion.unknownValue(word, for: "events", among: ["on", "off"])
            }
            context.events.set(word == "on", session: context.session, console: context.console)
            if context.settings.json { context.console.json(.object([("events", .string(word))])) }
        })

    /// A control verb: its request goes to the session (here or the serving player's), and the result is printed.
    private static func control(_ syntax: CommandSyntax, adding more: [CommandSpec.Option] = []) -> CommandSpec {
        CommandSpec(syntax, adding: more) { invocation, context in
            let request = try ControlRequest(invocation)
            let (result, remote) = try dispatch(request, invocation, context)
            if case .status(let verb) = request, verb == "status" {
                try printStatus(result, invocation, context)
                return
            }
            if case .status = request {
                report(result, context, remote: remote, always: true)  // `speed`, `volume` without a value
                return
            }
            report(result, context, remote: remote)
        }
    }

    // MARK: - Where a request goes

    /// Carries out `request` on this process's session or, when this process has no player and the request needs
    /// one, on the player serving this user's control socket (like mpc: `tartil pause` in a second terminal
    /// pauses the first). Returns the typed result and whether it came from another process.
    static func dispatch(_ request: ControlRequest, _ invocation: Invocation, _ context: Context) throws -> (ControlResult, remote: Bool) {
        if request.needsPlayer, !context.session.isPlaying, context.mayForward(request) {
            let client = ControlClient(ControlSocketPath(context.settings))
            switch client.send(invocation.words(dropping: localOptions), cancellation: context.cancellation) {
            case .replied(let reply):
                if reply.exitCode != ExitCode.success && reply.exitCode != ExitCode.notPlaying {
                    throw TartilError(ExitCode.code(for: reply.exitCode), reply.error ?? "the player refused the request")
                }
                guard let result = reply.result else { throw TartilError(.failure, "the player at \(client.socket.path) replied without a result") }
                return (result, true)
            case .noPlayer:
                break
            case .untrusted(let why):
                context.console.note("note: the control socket is not used (\(why))")
            case .interrupted:
                throw TartilError(.interrupted, "stopped waiting for the player; it goes on")
            case .lost(let message):
                // The request may have been carried out before the player went: a bookmark says how to look.
                if case .bookmark = request { throw TartilError(.failure, message + "; the bookmark may or may not have been recorded: see 'tartil bookmarks'") }
                throw TartilError(.failure, message)
            }
        }
        return (try context.session.handle(request, settings: context.settings, isCancelled: context.isCancelled), false)
    }

    // MARK: - Printing results

    /// After a control command: the status object with `--json`; the status line at the interactive prompt, and
    /// for a command sent to another terminal's player (what the prompt prints).
    static func report(_ result: ControlResult, _ context: Context, remote: Bool = false, always: Bool = false) {
        switch result {
        case .status, .started:
            let status: PlayerStatus
            if case .started(let started) = result { status = started.status } else if case .status(let now) = result { status = now } else { return }
            if context.settings.json {
                context.console.json(SessionJSON.json(status))
            } else if context.interactive || remote || always {
                context.console.line(progressLine(status))
            }
        case .stopped:
            if context.settings.json { context.console.json(.object(SessionJSON.stoppedFields)) } else { context.console.line("stopped") }
        case .bookmark(let bookmark):
            if context.settings.json { context.console.json(.object(SessionJSON.fields(bookmark))) }
        }
    }

    /// `status`: the fields in the format asked, or for people the status line and (on a terminal) the bar; with
    /// nothing playing, `stopped` (exit 3).
    static func printStatus(_ result: ControlResult, _ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        switch result {
        case .status(let status):
            context.console.print(report: SessionJSON.fields(status), as: format) {
                let width = context.console.columns() ?? 80
                for line in text(status, bar: context.console.outputIsTerminal, width: width) { context.console.line(line) }
            }
        default:
            context.console.print(report: SessionJSON.stoppedFields, as: format) { context.console.line("stopped") }
            throw QuietExit(code: ExitCode.notPlaying)
        }
    }

    // MARK: - play and render

    static func runPlay(_ invocation: Invocation, _ context: Context) throws {
        let request = try ControlRequest(invocation)
        let printsEvents = invocation.flag("--events")
        if printsEvents { context.events.set(true, session: context.session, console: context.console) }
        let (result, remote) = try dispatch(request, invocation, context)
        guard case .started(let started) = result else {
            report(result, context, remote: remote)  // `resume` of a paused player
            return
        }
        if let resumed = started.resumed { context.console.note(resumeNote(resumed)) }
        try follow(started, remote: remote, printsEvents: printsEvents, context)
    }

    /// After a play started (here, or in the player of another process when `remote`): prints its notes, then
    /// follows it until it ends (from the command line) and turns how it ended into the exit code.
    static func follow(_ started: PlayStarted, remote: Bool, printsEvents: Bool, _ context: Context) throws {
        for note in started.notes ?? [] { context.console.note(note) }
        if remote {
            if context.settings.json { context.console.json(SessionJSON.json(started.status)) }
            if printsEvents { try runWatch(follow: false, context) }
            return
        }
        guard context.blocking else {
            if context.settings.json { context.console.json(SessionJSON.json(started.status)) }
            return
        }
        // Until playback ends: a `play` from another process (the control socket) replaces the player, and this
        // one then follows the new one.
        try context.follow(keysAllowed: !printsEvents && !context.settings.json, progress: context.console.errorIsTerminal && !printsEvents)
        context.events.drain()
        try checkEnd(context.session.lastStatus, context)
        if let loss = context.session.journalLosses() { throw loss }
        if context.settings.json, let status = context.session.lastStatus { context.console.json(SessionJSON.json(status)) }
    }

    /// `resuming fixture at 1:2 +0.500 s (pause 2026-12-01 10:00:00)`.
    static func resumeNote(_ point: ResumePoint) -> String {
        let offset = point.offsetSamples > 0 ? " +\(Formatting.duration(seconds: Double(point.offsetMs) / 1000))" : ""
        let when = Formatting.timestamp(milliseconds: point.recordedMs)
        let why = point.after.map { "after \($0), played to its end \(when)" } ?? "\(point.reason) \(when)"
        return "resuming \(point.reciter) at \(point.ayah)\(offset) (\(why))"
    }

    static func runRender(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let path = invocation.value("--to")!
        let request = try PlayRequest(invocation)
        let status = try context.session.render(request, to: path, settings: context.settings, isCancelled: context.isCancelled)
        try checkEnd(status, context)
        context.console.note("wrote \(path): \(Formatting.duration(seconds: status.writtenSeconds)) of audio")
        let fields: Fields = [
            ("file", .string(path)), ("duration_samples", .int(status.writtenFrames)),
            ("duration_ms", .int(Int((status.writtenSeconds * 1000).rounded()))), ("sample_rate", .int(status.sampleRate)),
        ]
        context.console.print(report: fields, as: format) {}  // text: the note above
    }

    /// Turns the way playback ended into the exit code: skipped ayat and device failures are failures.
    static func checkEnd(_ status: PlayerStatus?, _ context: Context) throws {
        guard let status else { return }
        if status.state == .failed {
            throw TartilError(status.endIsUsage == true ? .usage : .failure, status.endMessage ?? "playback failed")
        }
        if status.state == .stopped && context.isCancelled() { throw TartilError.playbackStopped(status) }
        if let message = PlaybackMachine.skippedMessage(
            status.skipped.map { ($0.key, $0.value) }, basmala: (status.skippedBasmala ?? [:]).map { ($0.key, $0.value) },
            files: status.item?.files ?? .ayah)
        {
            throw TartilError(.failure, message)
        }
    }

    // MARK: - watch

    /// `watch [--follow]`: this process's player's events, else those of the player serving the control socket;
    /// with `--follow`, across playbacks and waiting for a player to start, until Ctrl-C, SIGTERM or the reader
    /// of standard output going away.
    static func runWatch(follow: Bool, _ context: Context) throws {
        let console = context.console
        if context.session.isPlaying || (follow && context.session.lastStatus != nil) {
            let stream = context.session.subscribe()
            defer { context.session.unsubscribe(stream) }
            while !context.isCancelled() && !context.outputClosed() {
                guard let event = stream.next(timeout: 0.2) else {
                    if !follow && !context.session.isPlaying && stream.drain().isEmpty { break }
                    continue
                }
                guard case .player(let playerEvent) = event else { continue }
                console.writeOut(SessionJSON.json(playerEvent).rendered() + "\n")
                if case .end = playerEvent, !follow { break }
            }
            return
        }
        let client = ControlClient(ControlSocketPath(context.settings))
        let words = ["watch"] + (follow ? ["--follow"] : [])
        while true {
            if follow && !client.waitForPlayer(cancellation: context.cancellation) { return }
            let outcome = client.send(words, cancellation: context.cancellation) { line in
                console.writeOut(line + "\n")
                return true
            }
            switch outcome {
            case .replied:
                if !follow { return }
            case .noPlayer:
                if !follow { throw TartilError.usage("watch: nothing is playing (start with: play REF)") }
            case .untrusted(let why):
                throw TartilError(.failure, "the control socket is not used (\(why))")
            case .interrupted:
                return
            case .lost(let message):
                // A player that ended (and exited) right after its last event: the watch is complete.
                if !follow { throw TartilError(.failure, message) }
            }
            if context.isCancelled() { return }
        }
    }
}

/// Ends a command with `code` and no message: `status` with nothing playing (exit 3) is not an error.
struct QuietExit: Error {
    let code: Int32
}
