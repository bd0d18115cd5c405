import FoundationEssentials
import Glibc
import TartilAudio
import TartilCache
import TartilCore
import TartilJournal
import TartilNet
import TartilPlayer

/// `play`, `render` and the commands that control a playing session: `pause`, `resume`, `toggle`, `stop`,
/// `next`, `prev`, `seek`, `status`, `wait`, `events`.
enum PlayCommands {
    static let planOptions: [CommandSpec.Option] = [
        .init(names: ["--reciter"], valueName: "id", help: "The reciter (default: TARTIL_RECITER, else the first in mirrors.json)."),
        .init(names: ["--from"], valueName: "time", help: "Start here: a time into the first surah (3:20), a share (45%) or an ayah (2:255)."),
        .init(names: ["--basmala"], valueName: "auto|off", help: "Recite the basmala before ayah 1 of each surah but 1 and 9 (auto, the default) or not."),
        .init(names: ["--repeat"], valueName: "n|inf", help: "Recite each ayah n times in a row, 1-99, or inf: until you move on (default 1)."),
        .init(names: ["--repeat-range"], valueName: "n|inf", help: "Play the whole range n times over (cycles), 1-99 or inf (default 1)."),
        .init(names: ["--pause"], valueName: "time|Kx", help: "Silence after each recitation: a time up to 60 s (2, 1.5s, 500ms), or K times that ayah's own length, 0x-10x (1x, 0.5x) (default 0)."),
        .init(names: ["--cycle-pause"], valueName: "time", help: "Silence between two cycles of --repeat-range, up to 10 min (5, 90s, 1:30, 2m) (default 0)."),
        .init(
            names: ["--stepped"], valueName: "window=n",
            help: "Stepped memorisation: each new ayah, then a review from the first up to it (1, 2, 1-2, 3, 1-3, ...); with window=n, of the last n ayat only.",
            optionalValuePrefix: "window="),
        .init(names: ["--loop"], valueName: "A-B", help: "Loop from A to B until stopped: times in the surah (1:05-1:12) or ayat with seconds into them (36:12+3.5-36:12+9); 'A B n' for n passes."),
        .init(names: ["--stop-after"], valueName: "when", help: "Stop by itself: after a time (20m, 1h30m, 90s, 1:30:00; a bare number is minutes; the last 3 s fade out), n ayat (5 ayat), the surah or the juz."),
        .init(names: ["--speed"], valueName: "x", help: "Speed, pitch preserved: 0.5-2 in steps of 0.05 (default 1; positions stay recitation time)."),
        .init(names: ["--volume"], valueName: "percent", help: "Volume, 0-150 (default 100); above full scale a limiter lowers the gain, nothing clips."),
    ]

    static let play = CommandSpec(
        path: ["play"],
        overview: "Play ayat gaplessly, fetching each a few ayat ahead.",
        discussion: """
            Files come from the verified cache; the current ayah and the next three are downloaded at top priority \
            when they are not there, and playback shows "buffering" until they arrive. An ayah that fails on every \
            mirror is reported and skipped. From the command line, play returns when playback ends (exit 0 when \
            every ayah played, 1 when one was skipped or a position could not be saved to the journal, 130 on \
            Ctrl-C). At the prompt or in a script it returns at once, and pause, seek, status and the rest control \
            it; a script that ends waits for playback to end.
            With --events, one JSON object per line for each change: state, ayah, position, buffering, error, speed, volume, end.
            Keys, on a terminal (not with --events or --json): \(PlayerKeys.bindings.map { "\($0.label) \($0.help)" }.joined(separator: ", ")). \
            A key that cannot be carried out says why on the live line (above it when too long for it); playback \
            goes on. The live line and the key help (?) follow the terminal's width.
            While it plays, tartil serves the control socket ($XDG_RUNTIME_DIR/tartil/control.sock; --socket): \
            pause, seek, status, watch and the rest from another terminal act on this player, and a play from \
            there replaces what it plays.
            """,
        arguments: [
            .init(name: "ref", help: "What to play: 36, yasin, 2:255, 2:255-257, juz 30, 112-114, … (optional with --resume)", repeating: true, optional: true)
        ],
        options: planOptions + [
            .init(names: ["--resume"], valueName: nil, help: "Continue from the last position in the journal (within <ref> when given)."),
            .init(names: ["--output"], valueName: "alsa|wav:path|null|silent", help: "Where the sound goes: alsa (the default), a WAV file, null (discard as fast as decoded) or silent (discard in real time, for machines without sound) [env: TARTIL_OUTPUT]."),
            .init(names: ["--device"], valueName: "name", help: "The ALSA device (default 'default'; 'null' needs no sound card) [env: TARTIL_DEVICE]."),
            .init(names: ["--events"], valueName: nil, help: "Print playback events as JSON lines."),
        ],
        examples: [
            "tartil play 36 --reciter ibrahim-alakhdar",
            "tartil play 2:255-257 --repeat 3 --pause 2",
            "tartil play 78:1-11 --stepped window=3 --pause 1x",
            "tartil play 36 --loop 36:12+3.5-36:12+9",
            "tartil play 67 --repeat-range inf --stop-after 20m",
            "tartil play 67 --from 45% --device null --events",
            "tartil play 36 --resume",
            "tartil play 67 --speed 1.25 --volume 80",
        ],
        run: runPlay)

    static let resume = CommandSpec(
        path: ["resume"],
        overview: "Resume paused playback, or continue from the last position in the journal.",
        discussion: """
            At the prompt, with playback paused, resume continues it. Otherwise the journal's latest position wins \
            (of --reciter, of --surah when given) and playback goes on from that very sample to the end of its \
            surah; after a surah that was played to its end, the next surah follows. Takes the same options as play.
            """,
        options: [.init(names: ["--surah"], valueName: "n|name", help: "The last position in this surah: 1-114 or a name (yasin).")]
            + planOptions.filter { $0.names != ["--from"] } + [
                .init(names: ["--output"], valueName: "alsa|wav:path|null|silent", help: "As for play [env: TARTIL_OUTPUT]."),
                .init(names: ["--device"], valueName: "name", help: "As for play [env: TARTIL_DEVICE]."),
                .init(names: ["--events"], valueName: nil, help: "Print playback events as JSON lines."),
            ],
        examples: ["tartil resume", "tartil resume --surah 36", "tartil resume --reciter ibrahim-alakhdar"],
        run: { invocation, context in
            if let player = context.session.current, !player.status.state.isEnded, invocation.values.filter({ $0.key != "--json" }).isEmpty {
                reportStatus(try context.session.control("resume", .resume), context)
                return
            }
            try runPlay(invocation, context)
        })

    static let render = CommandSpec(
        path: ["render"],
        overview: "Write ayat as one WAV file: the exact PCM play would send to the sound card.",
        discussion: """
            The same plan as play (basmala, repeats, pauses), decoded gaplessly as fast as the machine allows. \
            Missing files are downloaded first. The file appears under its name only when complete; if an ayah \
            cannot be fetched, nothing is written and the exit code is 1.
            """,
        arguments: [.init(name: "ref", help: "What to render: 36, 2:255-257, juz 30, …", repeating: true)],
        options: planOptions + [
            .init(
                names: ["-o", "--to"], valueName: "file.wav",
                help: "The WAV file to write (-o FILE, -oFILE, --to FILE; --output is play's sink, not a file name).",
                required: true, formerNames: ["--output"]),
            OutputFormat.option(),
        ],
        examples: ["tartil render 112 --reciter ibrahim-alakhdar -o ikhlas.wav", "tartil render 36 --to yasin.wav --pause 1.5s"],
        run: runRender)

    static let pause = control(["pause"], "Pause playback (resume continues from the same sample).", .pause)
    static let toggle = control(["toggle"], "Pause when playing, resume when paused.", .toggle)
    static let stop = control(["stop"], "Stop playback.", .stop)
    static let next = control(["next"], "Skip to the next ayah.", .next)
    static let prev = control(
        ["prev"], "Go back to the previous ayah (or to the start of this one when more than 1.5 s into it).", .previous)

    static let seek = CommandSpec(
        path: ["seek"],
        overview: "Move playback within the current surah, or to an ayah.",
        discussion: """
            Targets: a time into the surah (3:20, 1:02:03, 95, 95.5s, 2m, 1m30s), forwards or back (+30, -10, -1:00, \
            -500ms), a share of the surah (45%), or an ayah of what is playing (2:255, 36:1, ayah 3:20). M:SS reads as \
            a time, so for ayah 3:20 write 'ayah 3:20'. An ayah not downloaded yet is fetched first.
            """,
        arguments: [.init(name: "target", help: "3:20, +30, -10, 45%, 2:255, ayah 3:20", repeating: true)],
        examples: ["seek 3:20", "seek -10", "seek 45%", "seek 2:255"],
        run: { invocation, context in
            let target = try SeekTarget.parse(invocation.arguments.joined(separator: " "))
            reportStatus(try context.session.control("seek", .seek(target)), context)
        })

    static let speed = CommandSpec(
        path: ["speed"],
        overview: "Set the playback speed, pitch preserved: 0.5-2 in steps of 0.05.",
        discussion: """
            Takes effect within a chunk, without a gap; positions, seeks and the journal stay in the recording's own \
            time. Without a value, prints the speed. Kept by the next play of this prompt or session. Keys: [ and ].
            """,
        arguments: [.init(name: "x", help: "0.5-2 in steps of 0.05 (1.25, 0.9)", optional: true)],
        examples: ["speed 1.25", "speed 1"],
        run: { invocation, context in
            guard let text = invocation.arguments.first else {
                reportStatus(try context.session.player(for: "speed").status, context, always: true)
                return
            }
            let speed = try PlaybackSpeed.parse(text, for: "speed")
            reportStatus(try context.session.control("speed", .setSpeed(speed)), context)
        })

    static let volume = CommandSpec(
        path: ["volume"],
        overview: "Set the volume in percent (0-150), or change it by +N/-N.",
        discussion: """
            100 is the recording's own level. Above it, a limiter lowers the gain where a sample would pass full \
            scale, so nothing clips or wraps. +N and -N stop at 0 and 150. Without a value, prints the volume. Kept \
            by the next play of this prompt or session. Keys: 9 and 0.
            """,
        arguments: [.init(name: "level", help: "0-150, +5, -5", optional: true)],
        examples: ["volume 80", "volume +5", "volume -10"],
        run: { invocation, context in
            guard let text = invocation.arguments.first else {
                reportStatus(try context.session.player(for: "volume").status, context, always: true)
                return
            }
            let change = try PlaybackVolume.parse(text, for: "volume")
            reportStatus(try context.session.control("volume", .setVolume(change)), context)
        })

    static let status = CommandSpec(
        path: ["status"],
        overview: "Show where playback is: state, ayah, time, and the surah's scrubber bar.",
        discussion: "Fields (json, ndjson, csv): state, reciter, surah, ayah, item, items, position_ms, position_samples, duration_ms, duration_samples (the surah's part of the plan), sample_rate, estimated, speed, volume, buffering, skipped, options, cycle, loop, stop_after, sleep_left_ms. Times are recitation time whatever the speed.",
        options: [OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let player = try context.session.player(for: "status")
            let status = player.status
            context.console.print(report: fields(status), as: format) {
                let width = RawTerminal.columns(of: context.console.outputDescriptor) ?? 80
                for line in text(status, bar: context.console.outputIsTerminal, width: width) { context.console.line(line) }
            }
        })

    static let wait = CommandSpec(
        path: ["wait"],
        overview: "Wait until playback ends (Ctrl-C stops waiting).",
        run: { _, context in
            let player = try context.session.player(for: "wait")
            try waitForEnd(of: player, stopOnInterrupt: false)
            context.session.flushJournal()  // the end's position is durable when wait returns
            reportStatus(player.status, context)
        })

    static let watch = CommandSpec(
        path: ["watch"],
        overview: "Print the player's events as JSON lines until playback ends.",
        discussion: """
            Watches the player of this prompt or script, or else the player another tartil serves on the control \
            socket. With --follow it goes on across playbacks until interrupted.
            """,
        options: [.init(names: ["--follow"], valueName: nil, help: "Go on across playbacks (until Ctrl-C).")],
        run: { invocation, context in
            guard context.session.current != nil else { throw TartilError.usage("watch: nothing is playing (start with: play REF)") }
            let console = context.console
            _ = context.session.watch(follow: invocation.flag("--follow")) { line in
                console.writeOut(line)
                return !Interrupt.isPending
            }
        })

    static let events = CommandSpec(
        path: ["events"],
        overview: "Print playback events as JSON lines from now on (events off stops).",
        arguments: [.init(name: "on|off", help: "on (the default) or off", optional: true)],
        run: { invocation, context in
            let word = invocation.arguments.first ?? "on"
            guard word == "on" || word == "off" else {
                throw Suggestion.unknownValue(word, for: "events", among: ["on", "off"])
            }
            context.session.setPrintEvents(word == "on", console: context.console)
            if context.settings.json { context.console.json(.object([("events", .string(word))])) }
        })

    static let set = CommandSpec(
        path: ["set"],
        overview: "Change a memorisation option while playing (repeat, pause, stepped, ...).",
        discussion: """
            Takes the values the options of play take (set repeat 3, set repeat inf, set pause 1x, set repeat-range 2, \
            set cycle-pause 5, set stepped window=3, set stepped off, set basmala off). The plan is laid out again and \
            playback stays on the same ayah (the same repetition, where the new plan has it); an A-B loop is cleared. \
            With --json, prints the status object.
            """,
        arguments: [
            .init(name: "option", help: PlaybackOptions.Setting.names.joined(separator: ", ")),
            .init(name: "value", help: "as for play's option of that name"),
        ],
        examples: ["set repeat 3", "set pause 1.5x", "set stepped window=3", "set repeat-range inf"],
        run: { invocation, context in
            let setting = try PlaybackOptions.Setting.parse(name: invocation.arguments[0], value: invocation.arguments[1])
            reportStatus(try context.session.control("set", .set(setting)), context)
        })

    static let loop = CommandSpec(
        path: ["loop"],
        overview: "Loop between two points (A-B), n times or until 'loop off'.",
        discussion: """
            A and B are times in the surah (1:05, 95.5s), ayat (36:12: from its start, or to its end as B), or ayat \
            with seconds into their recitation (36:12+3.5). Playback moves to A, plays to B and goes back, exactly on \
            those samples; after n passes (or 'loop off') it goes on past B. Moving outside the loop (seek, next, \
            prev) ends it. The l key marks A, then B, then clears the loop.
            """,
        arguments: [.init(name: "A B [n|inf] | off", help: "the loop's start, end and passes (inf by default), or off", repeating: true)],
        examples: ["loop 36:12+3.5 36:12+9", "loop 1:05 1:12 5", "loop 2:255 2:256", "loop off"],
        run: { invocation, context in
            let words = invocation.arguments
            let request = words.count == 1 && words[0].lowercased() == "off" ? nil : try LoopRequest.parse(words)
            reportStatus(try context.session.control("loop", .loop(request)), context)
        })

    static let sleep = CommandSpec(
        path: ["sleep"],
        overview: "A sleep timer: stop after this much listening, fading the last 3 seconds out (sleep off cancels).",
        discussion: """
            The time counts while sound plays (not while paused or buffering). Over its last 3 seconds the sound \
            fades out (its gain falls as the square of the time left), then playback stops and the position where \
            the fade began is saved, so resume replays what faded.
            """,
        arguments: [.init(name: "time|off", help: "20m, 1h30m, 90s, 1:30:00, 45 (a bare number is minutes), or off")],
        examples: ["sleep 20m", "sleep off"],
        run: { invocation, context in
            let text = invocation.arguments[0]
            let stop: StopAfter?
            do {
                stop = try StopAfter.parse(text, for: "sleep")
            } catch {
                throw TartilError.usage("sleep takes \(DurationText.allowed(1...StopAfter.maximumSeconds, bare: .minutes)), or off; not '\(text)'")
            }
            var seconds: Double?
            switch stop {
            case .seconds(let time)?: seconds = time
            case nil: seconds = nil
            default: throw TartilError.usage("sleep takes a time (20m, 1h30m, 90s) or off; for ayat, a surah or a juz use stop-after")
            }
            reportStatus(try context.session.control("sleep", .sleep(seconds: seconds)), context)
        })

    static let stopAfter = CommandSpec(
        path: ["stop-after"],
        overview: "Stop by itself after a time, a number of ayat, the surah or the juz (stop-after off cancels).",
        discussion: """
            A time is a sleep timer (see sleep). '5 ayat' stops at the end of the fifth ayah from the one playing (an \
            ayah with its repeats and pauses counts once; one repeated for ever never ends); 'surah' and 'juz' stop at \
            the end of the surah or juz playing, in this cycle of the range. A timer and one of the others can be set \
            together: the first reached stops playback. stop-after off cancels both; sleep off the timer alone.
            """,
        arguments: [.init(name: "when", help: StopAfter.forms + ", or off", repeating: true)],
        examples: ["stop-after 5 ayat", "stop-after surah", "stop-after 20m", "stop-after off"],
        run: { invocation, context in
            let stop = try StopAfter.parse(invocation.arguments.joined(separator: " "), for: "stop-after")
            reportStatus(try context.session.control("stop-after", .stopAfter(stop)), context)
        })

    /// A command that moves or ends playback: it returns once it took effect and its position is durable, and
    /// prints the status (the JSON object with `--json`; the status line at the prompt).
    private static func control(_ path: [String], _ overview: String, _ command: PlaybackMachine.Command) -> CommandSpec {
        CommandSpec(
            path: path, overview: overview,
            discussion: """
                Acts on the playback of this prompt or script, or else on the player another tartil serves on the \
                control socket (see tartil help play). Returns once it has taken effect and the position it moved \
                to is in the journal. With --json, prints the status object; at the prompt, the status line.
                """,
            run: { _, context in
                reportStatus(try context.session.control(path[0], command), context)
            })
    }

    /// After a control command: the status object with `--json`, the status line at the interactive prompt.
    static func reportStatus(_ status: PlayerStatus, _ context: Context, always: Bool = false) {
        if context.settings.json {
            context.console.json(json(status))
        } else if context.interactive || always {
            context.console.line(progressLine(status))
        }
    }

    // MARK: - play and render

    static func runPlay(_ invocation: Invocation, _ context: Context) throws {
        context.session.startJournal(context.settings)  // opens while the plan and the table are read
        // The output: as given, else the session's (what its last play used: a `play` sent from another
        // terminal plays where the player it replaces did), else TARTIL_OUTPUT and TARTIL_DEVICE.
        let previous = context.session.lastOutput
        let settings = context.settings
        let device = invocation.value("--device") ?? previous?.device ?? settings.environment["TARTIL_DEVICE"] ?? settings.configured("device") ?? "default"
        let outputText = invocation.value("--output") ?? previous?.output ?? settings.environment["TARTIL_OUTPUT"] ?? settings.configured("output") ?? "alsa"
        guard let output = OutputChoice.parse(outputText, device: device) else {
            throw TartilError.usage(
                "--output takes \(OutputChoice.forms), not '\(outputText)'"
                    + (outputText.lowercased().hasSuffix(".wav") ? "; did you mean wav:\(outputText)?" : Suggestion.hint(for: outputText, among: OutputChoice.names)))
        }
        context.session.lastOutput = (outputText, device)
        var setup: PlayerSetup
        if invocation.command.name == "resume" || invocation.flag("--resume") {
            if invocation.value("--from") != nil { throw TartilError.usage("--from and --resume cannot be used together") }
            let point = try resumePoint(invocation, context)
            setup = try playerSetup(invocation, context, output: output, ayat: point.ayat, reciterID: point.reciter)
            setup.resumeAt = (point.ayat[0], point.offsetSamples)
            context.console.note("resuming \(point.reciter) at \(point.ayat[0])\(point.offsetSamples > 0 ? " +\(Formatting.duration(seconds: Double(point.offsetMs) / 1000))" : "") (\(point.why))")
        } else {
            guard !invocation.arguments.isEmpty else { throw TartilError.usage("play needs <ref> (or --resume)") }
            setup = try playerSetup(invocation, context, output: output)
        }
        let session = context.session
        let journal = try session.journal(context.settings)
        if invocation.flag("--events") { session.setPrintEvents(true, console: context.console) }
        let generation = session.begin(console: context.console)
        let plan = setup.plan
        journal.append(EventDraft(kind: .sessionStart, reciter: setup.reciter.id.rawValue, note: "play \(plan.rangeDescription)"))
        let player = try start(setup) { event in session.deliver(event, generation: generation) }
        session.attach(player, generation: generation, reciterName: setup.reciter.name)
        session.serveControl(context.settings, table: context.table, console: context.console)
        session.serveMPRIS(context.settings)
        guard context.blocking else {
            if context.settings.json { context.console.json(json(player.status)) }
            return
        }
        // Until playback ends: a `play` from another process (the control socket) replaces the player, and this
        // one then watches the new one.
        let keys = readsKeys(invocation, context)
        var (watched, watchedGeneration) = (player, generation)
        while true {
            if keys {
                try waitWithKeys(of: watched, context)
            } else {
                try waitForEnd(of: watched, stopOnInterrupt: true, progress: context.console.errorIsTerminal && !invocation.flag("--events") ? context.console : nil)
            }
            guard let next = session.replacement(of: watched, generation: watchedGeneration) else { break }
            (watched, watchedGeneration) = next
        }
        session.flushJournal()
        session.drainEvents()
        try checkEnd(of: watched)
        try session.checkPlaybackJournal()
        if context.settings.json { context.console.json(json(watched.status)) }
    }

    static func runRender(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let path = invocation.value("--to")!
        var setup = try playerSetup(invocation, context, output: .wav(path: path))
        setup.stopOnSkip = true
        try checkRenderEnds(setup)
        let player = try start(setup) { _ in }
        try waitForEnd(of: player, stopOnInterrupt: true)
        try checkEnd(of: player)
        let status = player.status
        context.console.note("wrote \(path): \(Formatting.duration(seconds: status.writtenSeconds)) of audio")
        let fields: Fields = [
            ("file", .string(path)), ("duration_samples", .int(status.writtenFrames)),
            ("duration_ms", .int(Int((status.writtenSeconds * 1000).rounded()))), ("sample_rate", .int(status.sampleRate)),
        ]
        context.console.print(report: fields, as: format) {}  // text: the note above
    }

    /// `render` writes a file, so what it plays must end: `inf` and an endless loop need a timer
    /// (`--stop-after 20m`), or a boundary for a range repeated for ever.
    static func checkRenderEnds(_ setup: PlayerSetup) throws(TartilError) {
        var timer = false
        if case .seconds? = setup.stopAfter { timer = true }
        let options = setup.plan.options
        if !timer && options.repeatEach == .forever {
            throw .usage("render writes a file, which must end: --repeat inf goes on for ever; give a count, or add --stop-after with a time (20m)")
        }
        if !timer, let loop = setup.loop, loop.passes == nil {
            throw .usage("render writes a file, which must end: the loop goes on for ever; give it a count ('\(loop.start) \(loop.end) 5'), or add --stop-after with a time (20m)")
        }
        if setup.stopAfter == nil && options.repeatRange == .forever {
            throw .usage("render writes a file, which must end: --repeat-range inf goes on for ever; give a count, or add --stop-after")
        }
    }

    private static func start(_ setup: PlayerSetup, events: @escaping @Sendable (PlayerEvent) -> Void) throws -> Player {
        do {
            return try Player(setup: setup, events: events)
        } catch let error as AudioError {
            throw TartilError(.failure, error.message)
        }
    }

    /// The plan and everything else `play` and `render` need, from their shared options.
    static func playerSetup(
        _ invocation: Invocation, _ context: Context, output: OutputChoice, ayat resumed: [AyahRef]? = nil,
        reciterID: String? = nil
    ) throws -> PlayerSetup {
        let ayat = try resumed ?? ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments))
        var options = PlaybackOptions()
        if let text = invocation.value("--basmala") ?? context.settings.configured("basmala") {
            guard let basmala = PlaybackOptions.Basmala(rawValue: text) else {
                throw Suggestion.unknownValue(text, for: "--basmala", among: PlaybackOptions.Basmala.allCases.map(\.rawValue))
            }
            options.basmala = basmala
        }
        if let text = invocation.value("--repeat") { options.repeatEach = try RepeatCount.parse(text, for: "--repeat") }
        if let text = invocation.value("--repeat-range") { options.repeatRange = try RepeatCount.parse(text, for: "--repeat-range") }
        if let text = invocation.value("--pause") { options.pause = try PauseLength.parse(text, for: "--pause") }
        if let text = invocation.value("--cycle-pause") { options.cyclePauseSeconds = try PlaybackOptions.cyclePause(text, for: "--cycle-pause") }
        if let text = invocation.value("--stepped") { options.stepped = try Stepped.parse(text, for: "--stepped") }
        let stopAfter = try invocation.value("--stop-after").flatMap { text throws(TartilError) in try StopAfter.parse(text, for: "--stop-after") }
        let loop = try invocation.value("--loop").map { text throws(TartilError) in try LoopRequest.parse([text]) }
        let speed = try invocation.value("--speed").map { text throws(TartilError) in try PlaybackSpeed.parse(text, for: "--speed") }
        var volume: Int?
        if let text = invocation.value("--volume"), case .to(let level) = try PlaybackVolume.parse(text, relative: false, for: "--volume") {
            volume = level
        }
        // The config file's speed and volume come after what the session's last player had (checked when read).
        let fromConfig = invocation.command.name != "render"  // a render is the recording as it is unless asked
        let configuredSpeed = fromConfig ? context.settings.configured("speed").flatMap { try? PlaybackSpeed.parse($0, for: "speed") } : nil
        var configuredVolume: Int?
        if fromConfig, let text = context.settings.configured("volume"), case .to(let level)? = try? PlaybackVolume.parse(text, relative: false, for: "volume") {
            configuredVolume = level
        }
        let start = try invocation.value("--from").map(SeekTarget.parse)
        let plan = try PlaybackPlan(ayat: ayat, options: options)
        if case .ayah(let ayah)? = start, plan.firstItem(of: ayah) == nil {
            throw TartilError.usage("--from \(ayah): that ayah is not in \(plan.rangeDescription)")
        }
        if case .offset? = start { throw TartilError.usage("--from takes a time, a share or an ayah, not a relative move") }
        let library = try context.library()
        let reciter: Reciter
        if let id = reciterID {
            reciter = try library.reciter(try ReciterID(id))  // from the journal: exactly that one
        } else if let name = invocation.value("--reciter") ?? context.settings.defaultReciter {
            reciter = try library.reciter(named: name)
        } else if let first = library.reciters.first {
            reciter = first
        } else {
            throw TartilError.usage("\(library.mirrorsFile) lists no reciters")
        }
        var setup = PlayerSetup(
            reciter: reciter, table: try library.table(for: reciter), cacheDirectory: try context.settings.checkedCacheDirectory(),
            output: output, plan: plan, start: start)
        setup.limits = try context.settings.trusting(setup.limits)
        setup.stopAfter = stopAfter
        setup.loop = loop
        // Speed and volume: as given, else (play, resume) what the session's last player had.
        let carried = invocation.command.name == "render" ? nil : context.session.current?.status
        // A reciter's max_speed bounds every speed: one asked for here is refused above it; one carried over or
        // configured is held to it.
        let maximum = reciter.maximumSpeed ?? PlaybackSpeed.range.upperBound
        setup.maximumSpeed = maximum
        if let speed, speed > maximum {
            throw TartilError.usage(
                "--speed \(PlaybackSpeed.text(speed)): \(reciter.id) is played at most at \(PlaybackSpeed.text(maximum)) (max_speed in mirrors.json); allowed: \(PlaybackSpeed.allowed(maximum: maximum))")
        }
        setup.speed = min(speed ?? carried?.speed ?? configuredSpeed ?? PlaybackSpeed.normal, maximum)
        setup.volume = volume ?? carried?.volume ?? configuredVolume ?? PlaybackVolume.normal
        return setup
    }

    /// Where `resume` and `play --resume` continue: the ayat from the last position's to the end of its surah
    /// (or of `<ref>`), the offset into the first, and the reciter.
    struct ResumePoint {
        var ayat: [AyahRef]
        var offsetSamples: Int
        var offsetMs: Int64
        var reciter: String
        var why: String
    }

    static func resumePoint(_ invocation: Invocation, _ context: Context) throws -> ResumePoint {
        let scope = invocation.arguments.isEmpty ? nil : ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments))
        var surah = try invocation.surah("--surah")
        if surah == nil, let scope, Set(scope.map(\.surah)).count == 1 { surah = scope[0].surah }
        let reciter = invocation.value("--reciter")
        let path = context.settings.journalFile
        guard FileManager.default.fileExists(atPath: path) else {
            throw TartilError(.notFound, "nothing to resume: there is no journal at \(path) yet (play something first)")
        }
        let journal: Journal
        do {
            journal = try Journal(path: path, readOnly: true)
        } catch {
            throw TartilError(error.code == .notAJournal && context.settings.journalIsExplicit ? .usage : .failure, error.message)
        }
        defer { journal.close() }
        let inScope = Set(scope ?? [])
        let positions = try Self.journalCall { () throws(JournalError) in try journal.latestPositions(reciter: reciter, surah: surah) }
            .filter { event in scope == nil || (try? AyahRef(event.surah ?? 0, event.ayah ?? 0)).map(inScope.contains) == true }
        guard let last = positions.first, let surahNumber = last.surah, let ayahNumber = last.ayah, let who = last.reciter else {
            let filters = [reciter.map { "of \($0)" }, surah.map { "in surah \($0)" }].compactMap { $0 }.joined(separator: " ")
            throw TartilError(.notFound, "nothing to resume: the journal has no position\(filters.isEmpty ? "" : " " + filters)")
        }
        var start = try AyahRef(surahNumber, ayahNumber)
        var offset = Int(last.offsetSamples ?? 0)
        var offsetMs = last.offsetMs ?? 0
        let when = Formatting.timestamp(milliseconds: last.timeMs)
        var why = "\(last.reason?.rawValue ?? "position") \(when)"
        if last.reason == .end {
            // That ayah was heard to its end: go on with the next one (the next surah after a whole one).
            guard let next = start.next else { throw TartilError(.notFound, "nothing to resume: the last position is the end of 114:6") }
            if scope != nil && !inScope.contains(next) {
                throw TartilError(.notFound, "nothing to resume: \(start) was played to the end of what you named")
            }
            start = next
            offset = 0
            offsetMs = 0
            why = "after \(last.surah!):\(last.ayah!), played to its end \(when)"
        }
        let ayat: [AyahRef]
        if let scope {
            ayat = Array(scope.drop { $0 != start })  // the order written (a playlist), from the resume point
        } else {
            let surahInfo = try Catalog.surah(start.surah)
            ayat = try (start.ayah...surahInfo.ayahCount).map { ayah throws(TartilError) in try AyahRef(start.surah, ayah) }
        }
        return ResumePoint(ayat: ayat, offsetSamples: offset, offsetMs: offsetMs, reciter: who, why: why)
    }

    /// Runs a journal call, turning its error into tartil's.
    static func journalCall<T>(_ body: () throws(JournalError) -> T) throws(TartilError) -> T {
        do {
            return try body()
        } catch {
            throw TartilError(.failure, error.message)
        }
    }

    /// Blocks until `player` ends. Ctrl-C stops it (`stopOnInterrupt`) or only stops the waiting, and throws
    /// `.interrupted` either way. With `progress`, the scrubber line is redrawn on standard error.
    static func waitForEnd(of player: Player, stopOnInterrupt: Bool, progress: Console? = nil) throws {
        var width = progress.flatMap { _ in RawTerminal.columns(of: 2) } ?? 80
        while !player.waitUntilEnded(timeout: 0.25) {
            if Interrupt.isPending {
                if stopOnInterrupt {
                    player.stop(reason: .quit)
                    player.waitUntilEnded()
                }
                progress?.writeError("\n")
                throw TartilError(.interrupted, stopOnInterrupt ? "playback stopped" : "stopped waiting; playback goes on")
            }
            if let progress {
                width = RawTerminal.columns(of: 2) ?? width  // cheap, and no handler needed without keys
                progress.writeError("\r\u{1B}[K" + liveLine(player.status, width: width))
            }
        }
        progress?.writeError("\r\u{1B}[K")
    }

    /// Turns the way playback ended into the exit code: skipped ayat and device failures are failures.
    static func checkEnd(of player: Player) throws {
        let status = player.status
        if status.state == .failed {
            throw TartilError(.failure, status.endMessage ?? "playback failed")
        }
        if status.state == .stopped && Interrupt.isPending { throw TartilError(.interrupted, "playback stopped") }
        if let message = PlaybackMachine.skippedMessage(status.skipped.map { ($0.key, $0.value) }) {
            throw TartilError(.failure, message)
        }
    }
}
