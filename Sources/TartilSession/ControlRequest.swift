import TartilCore

/// What a `play` or `resume` asks for, from whichever front end: the ayat (or the journal's last position), and
/// the options given. What is not given comes from the session (what its last play had: reciter, speed, volume,
/// output) or the configuration; `Session.play` checks everything before anything changes.
public struct PlayRequest: Sendable, Hashable {
    /// What to play.
    public enum Source: Sendable, Hashable {
        /// These ayat, in this order, each once.
        case ayat([AyahRef])
        /// From the journal's last position (of the reciter when one is named), within these ayat or this surah
        /// when given.
        case resume(scope: [AyahRef]?, surah: Int?)
        /// A day's hifz session: its parts in order, each with its own options (`tartil hifz play`).
        case hifz(HifzSession)
    }

    public var source: Source
    /// The reciter as the user wrote it (an id, a prefix, words of a name); nil: the session's, else the default.
    public var reciter: String?
    /// Changes to the default layout (`--repeat 3`, `--pause 1x`…), in the order given.
    public var layout: [PlaybackOptions.Setting] = []
    /// Where to begin (`--from`): a time or share of the first surah, or an ayah.
    public var start: SeekTarget?
    public var stopAfter: StopAfter?
    public var loop: LoopRequest?
    public var speed: Double?
    public var volume: Int?
    /// `--output` and `--device` as written; nil: the session's last, else TARTIL_OUTPUT/TARTIL_DEVICE, else the
    /// config file, else the sound card's default device.
    public var output: String?
    public var device: String?
    /// `--connect-timeout` and `--stall-timeout` (nil: the config file's, else the default).
    public var connectTimeout: Double?
    public var stallSeconds: Int?

    public init(source: Source) { self.source = source }

    /// The request `play …` or `resume …` makes (`invocation` of `ControlVerbs.play` or `.resume`, with or without
    /// the command line's own options).
    public init(_ invocation: Invocation) throws(TartilError) {
        let isResume = invocation.command.name == "resume" || invocation.flag("--resume")
        if isResume {
            if invocation.value("--from") != nil { throw .usage("--from and --resume cannot be used together") }
            let scope = invocation.arguments.isEmpty ? nil : ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments))
            source = .resume(scope: scope, surah: try invocation.surah("--surah"))
        } else {
            guard !invocation.arguments.isEmpty else { throw .usage("play needs <ref> (or --resume)") }
            source = .ayat(ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments)))
        }
        if let text = invocation.value("--basmala") {
            guard let basmala = PlaybackOptions.Basmala(rawValue: text) else {
                throw Suggestion.unknownValue(text, for: "--basmala", among: PlaybackOptions.Basmala.allCases.map(\.rawValue))
            }
            layout.append(.basmala(basmala))
        }
        if let text = invocation.value("--repeat") { layout.append(.repeatEach(try RepeatCount.parse(text, for: "--repeat"))) }
        if let text = invocation.value("--repeat-range") { layout.append(.repeatRange(try RepeatCount.parse(text, for: "--repeat-range"))) }
        if let text = invocation.value("--pause") { layout.append(.pause(try PauseLength.parse(text, for: "--pause"))) }
        if let text = invocation.value("--cycle-pause") {
            layout.append(.cyclePause(seconds: try PlaybackOptions.cyclePause(text, for: "--cycle-pause")))
        }
        if let text = invocation.value("--stepped") { layout.append(.stepped(try Stepped.parse(text, for: "--stepped"))) }
        loop = try invocation.value("--loop").map { text throws(TartilError) in try LoopRequest.parse([text]) }
        start = try invocation.value("--from").map(SeekTarget.parse)
        if case .offset? = start { throw .usage("--from takes a time, a share or an ayah, not a relative move") }
        try take(invocation)
    }

    /// Takes what any play names besides what to play and its layout, from the options `invocation` has of
    /// them: `--reciter`, `--stop-after`, `--speed`, `--volume`, `--output`, `--device` and the timeouts (`play`,
    /// `resume` and `hifz play` share them).
    public mutating func take(_ invocation: Invocation) throws(TartilError) {
        reciter = invocation.value("--reciter")
        stopAfter = try invocation.value("--stop-after").flatMap { text throws(TartilError) in try StopAfter.parse(text, for: "--stop-after") }
        speed = try invocation.value("--speed").map { text throws(TartilError) in try PlaybackSpeed.parse(text, for: "--speed") }
        if let text = invocation.value("--volume"), case .to(let level) = try PlaybackVolume.parse(text, relative: false, for: "--volume") {
            volume = level
        }
        output = invocation.value("--output")
        device = invocation.value("--device")
        let timeouts = try DownloadLimits().with(invocation)
        if invocation.value("--connect-timeout") != nil { connectTimeout = timeouts.connectTimeout }
        if invocation.value("--stall-timeout") != nil { stallSeconds = timeouts.stallSeconds }
    }

    /// True when the request names where the sound goes: it then plays in its own process, never replacing the
    /// player another terminal serves.
    public var namesOutput: Bool { output != nil || device != nil }
}

/// A bookmark asked for: at `ayah`, or (nil) where playback is.
public struct BookmarkRequest: Sendable, Hashable {
    public var ayah: AyahRef?
    public var note: String?
    /// The reciter as the user wrote it; nil: the one playing (for a bookmark where playback is), else none.
    public var reciter: String?

    public init(ayah: AyahRef? = nil, note: String? = nil, reciter: String? = nil) {
        self.ayah = ayah
        self.note = note
        self.reciter = reciter
    }

    /// The request `bookmark [REF] [--note TEXT] [--reciter ID]` makes; the note is checked here.
    public init(_ invocation: Invocation) throws(TartilError) {
        note = JournalNote.normalized(invocation.value("--note"))
        reciter = invocation.value("--reciter")
        if let note, note.utf8.count > JournalLimits.noteBytes {
            throw .usage("--note takes at most \(JournalLimits.noteBytes) bytes, not \(note.utf8.count)")
        }
        if let note, let problem = JournalNote.problem(note) {
            throw .usage("--note: \(problem)")
        }
        if let text = invocation.arguments.first {
            let references = try ReferenceParser.parse([text])
            guard references.count == 1, references[0].range.first == references[0].range.last else {
                throw .usage("bookmark takes one ayah (36:12), not '\(text)'")
            }
            ayah = references[0].range.first
        }
    }
}

/// A request to the session from any front end, typed: the command line builds it from what it parsed, and the
/// control socket from a request line parsed with the same syntax (`ControlVerbs`). No front end sends another
/// text to run.
public enum ControlRequest: Sendable, Hashable {
    case play(PlayRequest)
    /// `resume` alone: a paused player resumes; with no player, or with options, it plays from the journal's last
    /// position (`play`'s request).
    case resume(PlayRequest, plain: Bool)
    /// A command for the machine (`pause`, `seek 3:20`, `set repeat 3`…), under the verb's name for messages.
    case command(PlaybackMachine.Command, verb: String)
    /// `status`, or `speed`/`volume` without a value: where playback is.
    case status(verb: String)
    /// Until playback ends.
    case wait
    /// The player's events until playback ends (`follow`: across playbacks, waiting for one to start).
    case watch(follow: Bool)
    case bookmark(BookmarkRequest)

    /// The request `invocation` (of one of `ControlVerbs.all`, with or without a front end's own options) makes.
    public init(_ invocation: Invocation) throws(TartilError) {
        let verb = invocation.command.name
        let arguments = invocation.arguments
        switch verb {
        case "play":
            self = .play(try PlayRequest(invocation))
        case "resume":
            let own = ControlVerbs.resume.options.map(\.canonical)
            let plain = arguments.isEmpty && invocation.values.names.allSatisfy { !own.contains($0) }
            self = .resume(try PlayRequest(invocation), plain: plain)
        case "pause": self = .command(.pause, verb: verb)
        case "toggle": self = .command(.toggle, verb: verb)
        case "stop": self = .command(.stop, verb: verb)
        case "next": self = .command(.next, verb: verb)
        case "prev": self = .command(.previous, verb: verb)
        case "seek":
            self = .command(.seek(try SeekTarget.parse(arguments.joined(separator: " "))), verb: verb)
        case "speed":
            guard let text = arguments.first else {
                self = .status(verb: verb)
                return
            }
            self = .command(.setSpeed(try PlaybackSpeed.parse(text, for: "speed")), verb: verb)
        case "volume":
            guard let text = arguments.first else {
                self = .status(verb: verb)
                return
            }
            self = .command(.setVolume(try PlaybackVolume.parse(text, for: "volume")), verb: verb)
        case "set":
            self = .command(.set(try PlaybackOptions.Setting.parse(name: arguments[0], value: arguments[1])), verb: verb)
        case "loop":
            let off = arguments.count == 1 && arguments[0].lowercased() == "off"
            self = .command(.loop(off ? nil : try LoopRequest.parse(arguments)), verb: verb)
        case "sleep":
            let text = arguments[0]
            let stop: StopAfter?
            do {
                stop = try StopAfter.parse(text, for: "sleep")
            } catch {
                throw .usage("sleep takes \(DurationText.allowed(1...StopAfter.maximumSeconds, bare: .minutes)), or off; not '\(text)'")
            }
            switch stop {
            case .seconds(let time)?: self = .command(.sleep(seconds: time), verb: verb)
            case nil: self = .command(.sleep(seconds: nil), verb: verb)
            default: throw .usage("sleep takes a time (20m, 1h30m, 90s) or off; for ayat, a surah or a juz use stop-after")
            }
        case "stop-after":
            self = .command(.stopAfter(try StopAfter.parse(arguments.joined(separator: " "), for: "stop-after")), verb: verb)
        case "status": self = .status(verb: verb)
        case "wait": self = .wait
        case "watch": self = .watch(follow: invocation.flag("--follow"))
        case "bookmark": self = .bookmark(try BookmarkRequest(invocation))
        default:
            throw .usage("'\(verb.prefix(80))' is not a control command (the player takes: \(ControlVerbs.names.joined(separator: ", ")))")
        }
    }

    /// The request a line of words makes, as the control socket reads it: a control verb and its own arguments and
    /// options only (no global options, no paths, no `--output`).
    public static func parse(words: [String]) throws(TartilError) -> ControlRequest {
        guard let verb = words.first else { throw .usage("an empty request: send a control command (\(ControlVerbs.names.joined(separator: ", ")))") }
        guard let syntax = ControlVerbs.syntax(named: verb) else {
            throw .usage("'\(verb.prefix(80))' is not a control command (the player takes: \(ControlVerbs.names.joined(separator: ", ")))"
                + Suggestion.hint(for: verb, among: ControlVerbs.names))
        }
        let invocation: Invocation
        do {
            invocation = try syntax.parse(Array(words.dropFirst()))
        } catch {
            throw .usage(error.message)
        }
        if invocation.flag("--help") { throw .usage("help is not served on the control socket: run tartil help \(verb)") }
        return try ControlRequest(invocation)
    }

    /// True for requests that need the player where the sound plays: they go to the player serving the control
    /// socket when this process has none. A `play` naming its own output, and a bookmark at a named ayah, do not.
    public var needsPlayer: Bool {
        switch self {
        case .play(let request): !request.namesOutput
        case .resume(let request, _): !request.namesOutput
        case .bookmark(let request): request.ayah == nil
        default: true
        }
    }
}
