/// When playback stops by itself (`--stop-after`, `stop-after` and `sleep` live).
///
/// | text | stops |
/// |---|---|
/// | `20m`, `90s`, `1h30m`, `1:30:00`, `45` (minutes) | after that much listening (a sleep timer), the last 3 s faded out |
/// | `5 ayat`, `1 ayah` | at the end of the 5th ayah (group) from the one playing |
/// | `surah` | at the end of the surah playing |
/// | `juz` | at the end of the juz playing |
public enum StopAfter: Sendable, Hashable, Codable, CustomStringConvertible {
    case seconds(Double)
    case ayat(Int)
    case surah
    case juz

    /// The longest timer: 24 hours.
    public static let maximumSeconds = 86_400.0
    /// Seconds faded out before a timer stops.
    public static let fadeSeconds = 3.0
    public static let forms = "a time (20m, 90s, 1h30m, 1:30:00, or minutes: 45), a number of ayat (5 ayat), surah, or juz"
    // Times are read by DurationText, a bare number in minutes.

    /// Parses `text` for `what`; `off` gives nil.
    public static func parse(_ text: String, for what: String) throws(TartilError) -> StopAfter? {
        let words = text.trimmedWhitespace.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let first = words.first else { throw .usage("\(what) needs \(forms)") }
        let bad = TartilError.usage("\(what) takes \(forms), or off; not '\(text)'")
        if words.count == 2 {
            guard words[1] == "ayat" || words[1] == "ayah" || words[1] == "ayahs" else { throw bad }
            guard let count = NumberText.whole(first, in: 1...6236) else {
                throw .usage("\(what): the number of ayat goes from 1 to 6236, not '\(first)'")
            }
            return .ayat(count)
        }
        guard words.count == 1 else { throw bad }
        switch first {
        case "off", "none": return nil
        case "surah": return .surah
        case "juz": return .juz
        default: break
        }
        switch DurationText.seconds(first, bare: .minutes) {
        case .value(let seconds) where seconds > 0 && seconds <= maximumSeconds: return .seconds(seconds)
        case .value, .tooLarge: throw .usage("\(what): a timer goes from 1 s to 24 hours, not '\(text)'")
        case .notANumber: throw bad
        }
    }

    public var description: String {
        switch self {
        case .seconds(let seconds): Self.clock(seconds)
        case .ayat(let count): Plural.count(count, "ayah")
        case .surah: "the surah"
        case .juz: "the juz"
        }
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        var text = ""
        if hours > 0 { text += "\(hours)h" }
        if minutes > 0 { text += "\(minutes)m" }
        if secs > 0 || text.isEmpty { text += "\(secs)s" }
        return text
    }

    /// The gain of a frame `framesLeft` frames before a timer stops, over a fade of `fadeFrames`: 1 before the
    /// fade, then `(framesLeft / fadeFrames)²` (a quadratic fade, which the ear hears as an even fall), 0 at the
    /// stop.
    public static func fadeGain(framesLeft: Int, fadeFrames: Int) -> Float {
        guard framesLeft < fadeFrames, fadeFrames > 0 else { return 1 }
        guard framesLeft > 0 else { return 0 }
        let share = Float(framesLeft) / Float(fadeFrames)
        return share * share
    }
}

/// One end of an A-B loop (`loop A B`, `--loop A-B`): a time into the surah playing, or an ayah with an optional
/// offset into its recitation (`36:12+3.5`).
public enum LoopPoint: Sendable, Hashable, CustomStringConvertible {
    /// Seconds into the surah (its part of the plan, as the scrubber shows it).
    case time(seconds: Double)
    /// An ayah: its group's start (for A) or end (for B) without an offset; `offset` seconds into its recitation
    /// with one.
    case ayah(AyahRef, offset: Double?)

    public static let forms = "a time into the surah (1:05, 95.5s), an ayah (36:12, ayah 3:20), or an ayah and seconds into it (36:12+3.5)"

    public static func parse(_ text: String) throws(TartilError) -> LoopPoint {
        let trimmed = text.trimmedWhitespace
        if let plus = trimmed.lastIndex(of: "+"), plus != trimmed.startIndex {
            let ayahText = String(trimmed[..<plus])
            let offsetText = trimmed[trimmed.index(after: plus)...]
            guard case .value(let offset) = DurationText.seconds(offsetText), offset <= 3600 else {
                throw .usage("'\(trimmed)': the offset after + is a time into the ayah, from 0 to 1 h (36:12+3.5, 36:12+500ms)")
            }
            guard case .ayah(let ayah) = try SeekTarget.parse(ayahText.contains(":") && !ayahText.lowercased().hasPrefix("ayah") ? "ayah " + ayahText : ayahText) else {
                throw .usage("'\(trimmed)': before + comes an ayah (36:12+3.5)")
            }
            return .ayah(ayah, offset: offset)
        }
        switch try SeekTarget.parse(trimmed) {
        case .time(let seconds): return .time(seconds: seconds)
        case .ayah(let ayah): return .ayah(ayah, offset: nil)
        case .offset, .fraction: throw .usage("'\(trimmed)' is not a loop point: use \(forms)")
        }
    }

    public var description: String {
        switch self {
        case .time(let seconds): "\(NumberText.format((seconds * 1000).rounded() / 1000))s"
        case .ayah(let ayah, let offset): offset.map { "\(ayah)+\(NumberText.format($0))" } ?? "ayah \(ayah)"
        }
    }
}

/// An A-B loop as asked: its ends and how many passes (nil: until `loop off`).
public struct LoopRequest: Sendable, Hashable, CustomStringConvertible {
    public var start: LoopPoint
    public var end: LoopPoint
    public var passes: Int?

    public init(start: LoopPoint, end: LoopPoint, passes: Int? = nil) {
        self.start = start
        self.end = end
        self.passes = passes
    }

    /// Whether an end is a time into the surah (which depends on the lengths of its ayat).
    public var hasTimes: Bool {
        [start, end].contains { if case .time = $0 { true } else { false } }
    }

    /// `A B [N|inf]` (the prompt's words) or `A-B` (`--loop`), also `A-B N`.
    public static func parse(_ given: [String]) throws(TartilError) -> LoopRequest {
        // Each hyphen is tried as the split, so the text is bounded: no loop point is longer than `36:12+3599.999`.
        let length = given.reduce(0) { $0 + $1.utf8.count }
        guard length <= 120 else { throw .usage("a loop takes A B [N|inf] or A-B, at most 120 characters, not \(length)") }
        var words: [String] = []
        for word in given.flatMap({ $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }) {
            // `ayah 36:12` is one point.
            if let last = words.last, last.lowercased() == "ayah" { words[words.count - 1] += " " + word } else { words.append(word) }
        }
        var passes: Int?
        if words.count == 3 || (words.count == 2 && words[0].contains("-") && !words[1].contains(":")) {
            passes = try RepeatCount.parse(words.removeLast(), for: "the loop's count").count
        }
        if words.count == 1 {
            // A-B: split at the hyphen whose two sides both read as loop points.
            let text = words[0]
            for hyphen in text.indices where text[hyphen] == "-" && hyphen != text.startIndex {
                let (a, b) = (String(text[..<hyphen]), String(text[text.index(after: hyphen)...]))
                guard let start = try? LoopPoint.parse(a), var end = try? LoopPoint.parse(b) else { continue }
                // 36:12-14 is 36:12 to 36:14, as in references.
                if case .ayah(let first, nil) = start, let ayah = NumberText.whole(b, in: 1...286), let last = try? AyahRef(first.surah, ayah) {
                    end = .ayah(last, offset: nil)
                }
                return LoopRequest(start: start, end: end, passes: passes)
            }
            throw .usage("'\(text)' is not a loop: write A-B or 'A B [N|inf]', where A and B are \(LoopPoint.forms)" + Suggestion.hint(for: text, among: ["off"]))
        }
        guard words.count == 2 else {
            throw .usage("a loop takes A B [N|inf], where A and B are \(LoopPoint.forms)")
        }
        return LoopRequest(start: try LoopPoint.parse(words[0]), end: try LoopPoint.parse(words[1]), passes: passes)
    }

    public var description: String { "\(start)-\(end)" + (passes.map { " ×\($0)" } ?? "") }
}
