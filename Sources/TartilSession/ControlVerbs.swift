import TartilCore

/// The syntax of the commands that act on the session's playback (the control verbs): the one place their words,
/// arguments, options and help are defined. The command line uses them (adding options of its own, such as
/// `--format`, `--output` and `--events`) and the control socket parses requests with them, taking nothing else:
/// no global options, no paths.
public enum ControlVerbs {
    public static let planOptions: [CommandSyntax.Option] = [
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
    ] + DownloadLimits.timeoutOptions

    public static let play = CommandSyntax(
        path: ["play"],
        overview: "Play ayat gaplessly, fetching each a few ayat ahead.",
        discussion: """
            Files come from the verified cache; the current ayah and the next three are downloaded at top priority \
            when they are not there, and playback shows "buffering" until they arrive. An ayah that fails on every \
            mirror is reported and skipped (a basmala is named as the basmala of its surah). A mirror that cannot \
            be reached (no connection within --connect-timeout) or stops sending (--stall-timeout) is not tried \
            again: the file fails over to the next mirror, and with none left is skipped; for 30 s after that, no \
            other file waits on that mirror either, so a play with its mirrors gone ends within a timeout or two \
            instead of retrying. A file whose bytes do not match its hash is asked once more of the same mirror, \
            then of the next. A reciter of one file per surah is played from its surah table: each ayah is the \
            byte range of the surah's file the table gives, fetched with a range request and checked alone, and \
            ayat one after another are the recording itself. Without a table, a surah of such a reciter is learned \
            on first use from its published timings (its whole file fetched first, cut and checked; README: \
            Reciters of one file per surah); one that cannot be learned is skipped, saying why. From the command line, play returns when playback ends (exit 0 when \
            every ayah played, 1 when one was skipped or a position could not be saved to the journal, 130 on \
            Ctrl-C). At the prompt or in a script it returns at once, and pause, seek, status and the rest control \
            it; a script that ends waits for playback to end.
            With --events, one JSON object per line for each change: state, ayah, position, buffering, error, speed, volume, end.
            Keys, on a terminal (not with --events or --json): \(PlayerKeys.bindings.map { "\($0.label) \($0.help)" }.joined(separator: ", ")). \
            A key that cannot be carried out says why on the live line (above it when too long for it); playback \
            goes on. The live line and the key help (?) follow the terminal's width.
            While it plays, tartil serves the control socket ($XDG_RUNTIME_DIR/tartil/control.sock; --socket): \
            pause, seek, status, watch and the rest from another terminal act on this player, and a play from \
            there replaces what it plays, on the same output. A play that names --output or --device plays in its \
            own process instead, never taking over another terminal's player.
            What a play does not name carries over from the last play of this prompt, script or player (one sent \
            from another terminal too): the reciter, the speed, the volume, the output, and a sleep timer still \
            running.
            It is also an MPRIS media player (media keys, desktop widgets, playerctl): stopped from there, it \
            stays, stopped, until Play (or space) starts it again from the start of the surah, or q, Ctrl-C or \
            tartil stop end it.
            """,
        arguments: [
            .init(name: "ref", help: "What to play: 36, yasin, 2:255, 2:255-257, juz 30, 112-114, … (optional with --resume)", repeating: true, optional: true)
        ],
        options: planOptions + [
            .init(names: ["--resume"], valueName: nil, help: "Continue from the last position in the journal (within <ref> when given)."),
        ],
        examples: [
            "tartil play 36 --reciter ibrahim-alakhdar",
            "tartil play 2:255-257 --repeat 3 --pause 2",
            "tartil play 78:1-11 --stepped window=3 --pause 1x",
            "tartil play 36 --loop 36:12+3.5-36:12+9",
            "tartil play 67 --repeat-range inf --stop-after 20m",
            "tartil play 67 --from 45% --output silent --events",
            "tartil play 36 --resume",
            "tartil play 67 --speed 1.25 --volume 80",
        ],
    )

    public static let resume = CommandSyntax(
        path: ["resume"],
        overview: "Resume paused playback, or continue from the last position in the journal.",
        discussion: """
            At the prompt, with playback paused, resume continues it. Otherwise the journal's latest position wins \
            (of --reciter, of --surah when given) and playback goes on from that very sample to the end of its \
            surah; after a surah that was played to its end, the next surah follows. Takes the same options as play.
            """,
        options: [
            .init(names: ["--surah"], valueName: "n|name", help: "The last position in this surah: 1-114 or a name (yasin)."),
            .init(
                names: ["--reciter"], valueName: "id",
                help: "The last position of this reciter: an id or name of mirrors.json, or an id the journal remembers (default: the journal's latest position, whoever it was of)."),
        ] + planOptions.filter { $0.names != ["--from"] && $0.names != ["--reciter"] },
        examples: ["tartil resume", "tartil resume --surah 36", "tartil resume --reciter ibrahim-alakhdar"],
    )

    public static let seek = CommandSyntax(
        path: ["seek"],
        overview: "Move playback within the current surah, or to an ayah.",
        discussion: """
            Targets: a time into the surah (3:20, 1:02:03, 95, 95.5s, 2m, 1m30s), forwards or back (+30, -10, -1:00, \
            -500ms), a share of the surah (45%), or an ayah of what is playing (2:255, 36:1, ayah 3:20). M:SS reads as \
            a time, so for ayah 3:20 write 'ayah 3:20'. An ayah not downloaded yet is fetched first.
            """,
        arguments: [.init(name: "target", help: "3:20, +30, -10, 45%, 2:255, ayah 3:20", repeating: true)],
        examples: ["seek 3:20", "seek -10", "seek 45%", "seek 2:255"],
    )

    public static let speed = CommandSyntax(
        path: ["speed"],
        overview: "Set the playback speed, pitch preserved: 0.5-2 in steps of 0.05.",
        discussion: """
            Takes effect within a chunk, without a gap; positions, seeks and the journal stay in the recording's own \
            time. Without a value, prints the speed. Kept by the next play of this prompt or session. Keys: [ and ].
            """,
        arguments: [.init(name: "x", help: "0.5-2 in steps of 0.05 (1.25, 0.9)", optional: true)],
        examples: ["speed 1.25", "speed 1"],
    )

    public static let volume = CommandSyntax(
        path: ["volume"],
        overview: "Set the volume in percent (0-150), or change it by +N/-N.",
        discussion: """
            100 is the recording's own level. Above it, a limiter lowers the gain where a sample would pass full \
            scale, so nothing clips or wraps. +N and -N stop at 0 and 150. Without a value, prints the volume. Kept \
            by the next play of this prompt or session. Keys: 9 and 0.
            """,
        arguments: [.init(name: "level", help: "0-150, +5, -5", optional: true)],
        examples: ["volume 80", "volume +5", "volume -10"],
    )

    public static let status = CommandSyntax(
        path: ["status"],
        overview: "Show where playback is: state, ayah, time, and the surah's scrubber bar.",
        discussion: """
            Fields (json, ndjson, csv): state, reciter, surah, ayah, item, items, position_ms, position_samples, \
            duration_ms, duration_samples (the surah's part of the plan), sample_rate, estimated, speed, volume, \
            buffering (the file waited for; ayah 0 is a surah file's basmala), learning_surah (the surah a reciter \
            of one file per surah is learning as it plays), skipped (surah, ayah, kind, reason: kind basmala is the \
            basmala before that ayah 1, played from 1:1; kind ayah the ayah itself), options, cycle, loop, stop_after, \
            sleep_left_ms, buffering_held_elsewhere (true while the file waited for is being downloaded by another \
            tartil process, a prefetch say: it plays once that one has it). Times are recitation time whatever \
            the speed. While sound plays the position moves on continuously (from the player's last report of what \
            the output played), never backwards.
            With nothing playing, status prints stopped (json: state "stopped", the other fields null) and exits 3.
            """,
    )

    public static let wait = CommandSyntax(
        path: ["wait"],
        overview: "Wait until playback ends (Ctrl-C stops waiting).",
    )

    public static let watch = CommandSyntax(
        path: ["watch"],
        overview: "Print the player's events as JSON lines until playback ends.",
        discussion: """
            Watches the player of this prompt or script, or else the player another tartil serves on the control \
            socket. With --follow it goes on across playbacks, and waits for a player to start when none plays, \
            until Ctrl-C, SIGTERM or the reader of its output going away.
            """,
        options: [.init(names: ["--follow"], valueName: nil, help: "Go on across playbacks, waiting for a player to start (until Ctrl-C).")],
    )

    public static let set = CommandSyntax(
        path: ["set"],
        overview: "Change a memorisation option while playing (repeat, pause, stepped, ...).",
        discussion: """
            Takes the values the options of play take (set repeat 3, set repeat inf, set pause 1x, set repeat-range 2, \
            set cycle-pause 5, set stepped window=3, set stepped off, set basmala off). The plan is laid out again and \
            playback stays on the same ayah (the same repetition, where the new plan has it); an A-B loop is cleared. \
            Prints the status line at the prompt and when sent to another terminal's player (with --json, the status \
            object).
            """,
        arguments: [
            .init(name: "option", help: PlaybackOptions.Setting.names.joined(separator: ", ")),
            .init(name: "value", help: "as for play's option of that name"),
        ],
        examples: ["set repeat 3", "set pause 1.5x", "set stepped window=3", "set repeat-range inf"],
    )

    public static let loop = CommandSyntax(
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
    )

    public static let sleep = CommandSyntax(
        path: ["sleep"],
        overview: "A sleep timer: stop after this much listening, fading the last 3 seconds out (sleep off cancels).",
        discussion: """
            The time counts while sound plays (not while paused or buffering). Over its last 3 seconds the sound \
            fades out (its gain falls as the square of the time left), then playback stops and the position where \
            the fade began is saved, so resume replays what faded.
            """,
        arguments: [.init(name: "time|off", help: "20m, 1h30m, 90s, 1:30:00, 45 (a bare number is minutes), or off")],
        examples: ["sleep 20m", "sleep off"],
    )

    public static let stopAfter = CommandSyntax(
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
    )

    public static let pause = control(["pause"], "Pause playback (resume continues from the same sample).")
    public static let toggle = control(["toggle"], "Pause when playing, resume when paused.")
    public static let stop = control(["stop"], "Stop playback.")
    public static let next = control(["next"], "Skip to the next ayah.")
    public static let prev = control(
        ["prev"], "Go back to the previous ayah (or to the start of this one when more than 1.5 s into it).")

    /// A command that moves or ends playback: it returns once it took effect and its position is durable, and
    /// prints the status (the JSON object with `--json`; the status line at the prompt).
    private static func control(_ path: [String], _ overview: String) -> CommandSyntax {
        CommandSyntax(
            path: path, overview: overview,
            discussion: """
                Acts on the playback of this prompt or script, or else on the player another tartil serves on the \
                control socket (see tartil help play). Returns once it has taken effect and the position it moved \
                to is in the journal. With --json, prints the status object; at the prompt, and when sent to another \
                terminal's player, the status line.
                """)
    }

    public static let bookmark = CommandSyntax(
        path: ["bookmark"],
        overview: "Record a bookmark at an ayah (or, while playing, where playback is).",
        arguments: [.init(name: "ref", help: "One ayah: 36:12, yasin:12 (default: the position playing now)", optional: true)],
        options: [
            .init(names: ["--note"], valueName: "text", help: "Words to keep with it (at most 4096 bytes; no control characters or bidirectional overrides)."),
            .init(names: ["--reciter"], valueName: "id", help: "The reciter it is for (default: the one playing, or none)."),
        ],
        examples: ["tartil bookmark 2:255 --note 'Ayat al-Kursi'"]
    )

    /// Every control verb, as the control socket takes them.
    public static let all: [CommandSyntax] = [
        play, resume, pause, toggle, stop, next, prev, seek, set, loop, sleep, stopAfter, speed, volume, status, wait, watch, bookmark,
    ]

    /// The verbs' names, sorted (for messages).
    public static let names = all.map(\.name).sorted()

    /// The verb `name`, if it is one.
    public static func syntax(named name: String) -> CommandSyntax? { all.first { $0.name == name } }
}
