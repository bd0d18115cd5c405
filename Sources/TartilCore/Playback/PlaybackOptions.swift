/// How many times something is recited: a count, or until stopped (`inf`).
public enum RepeatCount: Sendable, Hashable, Codable, CustomStringConvertible {
    case times(Int)
    case forever

    /// The largest count (`inf` goes on for ever).
    public static let maximum = 99

    /// `1`…`99`, or `inf` (also `infinite`, `forever`, `∞`), for `what` (an option or command name).
    public static func parse(_ text: String, for what: String) throws(TartilError) -> RepeatCount {
        let word = text.trimmedWhitespace.lowercased()
        if ["inf", "infinite", "forever", "∞"].contains(word) { return .forever }
        guard let count = NumberText.whole(word, in: 1...maximum) else {
            throw .usage("\(what) takes a count from 1 to \(maximum) or inf, not '\(text)'")
        }
        return .times(count)
    }

    /// The count, or nil for `forever`.
    public var count: Int? {
        if case .times(let count) = self { return count }
        return nil
    }

    public var description: String { count.map(String.init) ?? "inf" }
}

/// The silence after each recitation (`--pause`): a number of seconds, or a multiple of that recitation's own
/// length (`1x` is as long as the ayah just heard).
public enum PauseLength: Sendable, Hashable, Codable, CustomStringConvertible {
    case seconds(Double)
    case multiple(Double)

    public static let maximumSeconds = 60.0
    public static let maximumMultiple = 10.0
    public static let forms = "a time from 0 to 60 s (2, 1.5s, 500ms, 0:30) or a multiple of the ayah's length from 0x to 10x (1x, 0.5x, 2.25x)"

    /// A time (`2`, `1.5s`, `500ms`, `0:30`: any form `DurationText` reads), `1x`, `0.5x`, `2.25x`, `off` (0).
    public static func parse(_ text: String, for what: String) throws(TartilError) -> PauseLength {
        let word = text.trimmedWhitespace.lowercased()
        if word == "off" || word == "none" { return .seconds(0) }
        if word.hasSuffix("x") || word.hasSuffix("×") {
            guard let multiple = NumberText.decimal(word.dropLast(), in: 0...maximumMultiple) else {
                throw .usage("\(what) takes \(forms), not '\(text)'")
            }
            return .multiple(multiple)
        }
        guard case .value(let seconds) = DurationText.seconds(word), seconds <= maximumSeconds else {
            throw .usage("\(what) takes \(forms), not '\(text)'")
        }
        return .seconds(seconds)
    }

    /// True when it adds no silence.
    public var isNone: Bool {
        switch self {
        case .seconds(let seconds): seconds == 0
        case .multiple(let multiple): multiple == 0
        }
    }

    /// Its length in frames at `rate`, after a recitation of `recitationFrames` frames: `round(seconds × rate)` or
    /// `round(K × recitationFrames)`.
    public func frames(afterRecitationOf recitationFrames: Int, rate: Int) -> Int {
        switch self {
        case .seconds(let seconds): Int((seconds * Double(rate)).rounded())
        case .multiple(let multiple): Int((multiple * Double(recitationFrames)).rounded())
        }
    }

    /// True when its length depends on the recitation's (a multiple).
    public var followsRecitation: Bool {
        if case .multiple = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .seconds(let seconds): "\(NumberText.format(seconds)) s"
        case .multiple(let multiple): "\(NumberText.format(multiple))×"
        }
    }
}

/// Stepped (cumulative) memorisation: each new ayah, then a review of the ayat learnt so far (the last `window`
/// of them with a window), ending on the new one. For ayat 1…4: 1 · 2 · 1 2 · 3 · 1 2 3 · 4 · 1 2 3 4; with
/// `window=2`: 1 · 2 · 1 2 · 3 · 2 3 · 4 · 3 4.
public struct Stepped: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How many ayat, the new one included, a review recites (nil: all learnt so far). At least 2.
    public var window: Int?

    public init(window: Int? = nil) { self.window = window }

    public static let maximumWindow = 286

    /// `on` (no window), `window=N` (2…286), or `off` (nil).
    public static func parse(_ text: String, for what: String) throws(TartilError) -> Stepped? {
        let word = text.trimmedWhitespace.lowercased()
        if word == "on" || word.isEmpty { return Stepped() }
        if word == "off" { return nil }
        if word.hasPrefix("window=") {
            guard let window = NumberText.whole(word.dropFirst(7), in: 2...maximumWindow) else {
                throw .usage("\(what): window takes a whole number from 2 to \(maximumWindow) (the ayat in each review), not '\(word.dropFirst(7))'")
            }
            return Stepped(window: window)
        }
        throw .usage("\(what) takes on, off or window=N (N from 2 to \(maximumWindow)), not '\(text)'" + Suggestion.hint(for: word, among: ["on", "off"]))
    }

    public var description: String { window.map { "window=\($0)" } ?? "on" }
}

/// How a plan is laid out from the requested ayat: the memorisation controls.
public struct PlaybackOptions: Sendable, Hashable, Codable {
    /// Whether the basmala is recited before ayah 1 of each surah (never before 1, whose first ayah is the
    /// basmala, nor before 9, which has none).
    public enum Basmala: String, Sendable, Hashable, Codable, CaseIterable {
        case auto, off
    }

    public var basmala: Basmala
    /// Times each ayah is recited in a row (`--repeat`). With `--stepped`, the new ayah of each step.
    public var repeatEach: RepeatCount
    /// Times the whole requested range is played (`--repeat-range`), in cycles.
    public var repeatRange: RepeatCount
    /// Silence after each recitation (`--pause`).
    public var pause: PauseLength
    /// Silence between two cycles of the range (`--cycle-pause`), in seconds.
    public var cyclePauseSeconds: Double
    /// Stepped (cumulative) memorisation (`--stepped`), or nil.
    public var stepped: Stepped?

    public static let maximumCyclePause = 600.0

    public init(
        basmala: Basmala = .auto, repeatEach: RepeatCount = .times(1), repeatRange: RepeatCount = .times(1),
        pause: PauseLength = .seconds(0), cyclePauseSeconds: Double = 0, stepped: Stepped? = nil
    ) {
        self.basmala = basmala
        self.repeatEach = repeatEach
        self.repeatRange = repeatRange
        self.pause = pause
        self.cyclePauseSeconds = cyclePauseSeconds
        self.stepped = stepped
    }

    /// One option changed live (`set repeat 3` at the prompt).
    public enum Setting: Sendable, Hashable {
        case basmala(Basmala)
        case repeatEach(RepeatCount)
        case repeatRange(RepeatCount)
        case pause(PauseLength)
        case cyclePause(seconds: Double)
        case stepped(Stepped?)

        /// The names `set` takes, as the command-line options spell them.
        public static let names = ["basmala", "repeat", "repeat-range", "pause", "cycle-pause", "stepped"]

        /// `set NAME VALUE`: `repeat 3`, `repeat inf`, `repeat-range 2`, `pause 1x`, `cycle-pause 5`,
        /// `stepped window=3`, `basmala off`.
        public static func parse(name: String, value: String) throws(TartilError) -> Setting {
            switch name.lowercased() {
            case "basmala":
                guard let basmala = Basmala(rawValue: value.lowercased()) else {
                    throw Suggestion.unknownValue(value, for: "basmala", among: Basmala.allCases.map(\.rawValue))
                }
                return .basmala(basmala)
            case "repeat": return .repeatEach(try value.lowercased() == "off" ? .times(1) : RepeatCount.parse(value, for: "repeat"))
            case "repeat-range":
                return .repeatRange(try value.lowercased() == "off" ? .times(1) : RepeatCount.parse(value, for: "repeat-range"))
            case "pause": return .pause(try PauseLength.parse(value, for: "pause"))
            case "cycle-pause": return .cyclePause(seconds: try PlaybackOptions.cyclePause(value, for: "cycle-pause"))
            case "stepped": return .stepped(try Stepped.parse(value, for: "stepped"))
            default:
                throw Suggestion.unknownValue(name, for: "set", among: names)
            }
        }
    }

    /// These options with one changed.
    public func with(_ setting: Setting) -> PlaybackOptions {
        var options = self
        switch setting {
        case .basmala(let basmala): options.basmala = basmala
        case .repeatEach(let count): options.repeatEach = count
        case .repeatRange(let count): options.repeatRange = count
        case .pause(let pause): options.pause = pause
        case .cyclePause(let seconds): options.cyclePauseSeconds = seconds
        case .stepped(let stepped): options.stepped = stepped
        }
        return options
    }

    /// `--cycle-pause`: a time from 0 to 10 minutes (`5`, `5s`, `1:30`, `2m`), or `off`.
    public static func cyclePause(_ text: String, for what: String) throws(TartilError) -> Double {
        if text.trimmedWhitespace.lowercased() == "off" { return 0 }
        return try DurationText.parse(text, in: 0...maximumCyclePause, for: what)
    }

    /// The options that are not the defaults, as `set` names them, each with its value (nil: `--stepped` alone),
    /// in order: what `summary` and `hifzText` spell.
    public var settings: [(name: String, value: String?)] {
        var settings: [(name: String, value: String?)] = []
        if basmala != .auto { settings.append(("basmala", basmala.rawValue)) }
        if repeatEach != .times(1) { settings.append(("repeat", "\(repeatEach)")) }
        if repeatRange != .times(1) { settings.append(("repeat-range", "\(repeatRange)")) }
        switch pause {
        case .seconds(let seconds) where seconds > 0: settings.append(("pause", NumberText.format(seconds)))
        case .multiple(let multiple) where multiple > 0: settings.append(("pause", NumberText.format(multiple) + "x"))
        default: break
        }
        if cyclePauseSeconds > 0 { settings.append(("cycle-pause", NumberText.format(cyclePauseSeconds))) }
        if let stepped { settings.append(("stepped", stepped.window.map { "window=\($0)" })) }
        return settings
    }

    /// The options as the command line writes them (`--repeat 3 --pause 1x`), for status and messages; empty
    /// for the defaults.
    public var summary: String {
        settings.map { "--\($0.name)" + ($0.value.map { " " + $0 } ?? "") }.joined(with: " ")
    }
}

extension PlaybackOptions {
    /// Why playing with these options would never end, or nil when it ends: what writes a file (`render`,
    /// `--output wav:`) must end. `--repeat inf` and an endless loop (`endlessLoop`: how to give it a count, e.g.
    /// `'5s 7s 5'`; nil when there is none) need a timer (`--stop-after 20m`, `sleep`); `--repeat-range inf`
    /// needs any stop-after (a time, or the ayat, surah or juz).
    public func endlessReason(endlessLoop: String?, timer: Bool, stopAfter: Bool) -> String? {
        if !timer && repeatEach == .forever {
            return "--repeat inf goes on for ever; give a count, or add --stop-after with a time (20m)"
        }
        if !timer, let endlessLoop {
            return "the loop goes on for ever; give it a count (\(endlessLoop)), or add --stop-after with a time (20m)"
        }
        if !stopAfter && repeatRange == .forever {
            return "--repeat-range inf goes on for ever; give a count, or add --stop-after (20m, or 1 surah)"
        }
        return nil
    }
}
