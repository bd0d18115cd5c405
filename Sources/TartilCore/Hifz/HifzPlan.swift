/// The three parts of a day of memorisation, in the order they are played.
public enum HifzPart: String, Sendable, Hashable, CaseIterable, Codable {
    /// The new lesson.
    case sabaq
    /// Revision of what was learnt recently.
    case sabqi
    /// Today's portion of the cycle through everything memorised before.
    case manzil
}

/// What is being memorised and how: the `hifz-plan` journal event. The latest plan event (by time, device id,
/// event id) is the plan; it applies to the whole journey, which starts on the day of the first plan event.
///
/// Every field has a text form, which `tartil hifz plan` takes as an option value and the journal event stores
/// (as a JSON object of these texts, `encoded`): one parser serves both.
public struct HifzPlan: Sendable, Hashable {
    /// The order ayat are memorised in.
    public enum Direction: Sendable, Hashable {
        /// From An-Nas backwards: surah 114, then 113, … 1, each surah's ayat in order (how most begin).
        case fromAnNas
        /// From Al-Fatiha forwards, in mushaf order.
        case fromAlFatiha
        /// These references' ayat, in the order written (`67, 78-114`, `juz 30, juz 29`).
        case references(String)
    }

    /// How much is new each day.
    public enum Amount: Sendable, Hashable {
        case ayat(Int)
        /// Lines of the Madinah mushaf (each 1/15 of a page; see `HifzMeasure`).
        case lines(Int)
        /// Pages, in hundredths (`0.5` pages is 50).
        case pages(hundredths: Int)
    }

    /// What counts as recent (sabqi).
    public enum Recent: Sendable, Hashable {
        /// What was learnt in the last N days.
        case days(Int)
        /// The latest N juz' worth learnt (`HifzMeasure.juz` each).
        case juz(Int)
    }

    /// The most revision a day asks for (the rest is carried forward, in order).
    public enum Cap: Sendable, Hashable {
        /// Pages, in hundredths.
        case pages(hundredths: Int)
        /// K times the day's even share of the cycle, in hundredths (`2x` is 200).
        case share(hundredths: Int)
    }

    public var direction: Direction = .fromAnNas
    public var daily: Amount = .ayat(5)
    public var recent: Recent = .days(7)
    /// Days for one pass of the manzil through everything memorised but the recent.
    public var cycleDays: Int = 30
    public var cap: Cap = .share(hundredths: 200)
    /// The new lesson pauses while the manzil is more than this many days behind; nil: never.
    public var pauseNewAfterDays: Int? = 3
    /// Clean hearings (days on which it was revised and not marked weak again) that clear a weak ayah.
    public var weakClean: Int = 3
    /// When the day starts, in minutes after local midnight.
    public var dayStartMinutes: Int = 0
    /// Ayat memorised before the plan (references text, as written; empty: none).
    public var memorised: String = ""
    /// The options each part plays with.
    public var sabaqOptions = PlaybackOptions(repeatEach: .times(5), pause: .multiple(1))
    public var sabqiOptions = PlaybackOptions(repeatEach: .times(2))
    public var manzilOptions = PlaybackOptions()

    public init() {}

    /// The options `part` plays with.
    public func options(for part: HifzPart) -> PlaybackOptions {
        switch part {
        case .sabaq: sabaqOptions
        case .sabqi: sabqiOptions
        case .manzil: manzilOptions
        }
    }

    /// The ayat in the order they are memorised, by global number.
    public func sequence() throws(TartilError) -> [Int] {
        switch direction {
        case .fromAlFatiha: return Array(1...Catalog.totalAyat)
        case .fromAnNas: return Catalog.surahs.reversed().flatMap { $0.firstGlobalAyah..<($0.firstGlobalAyah + $0.ayahCount) }
        case .references(let text): return try HifzAyatText.globals(text)
        }
    }

    // MARK: - Fields as text

    /// The fields, in order: the names `hifz plan` takes as options (`--daily`) and the encoded event's keys.
    public static let fieldNames = [
        "direction", "daily", "sabqi", "manzil", "revision-cap", "pause-new-after", "weak-clean", "day-start", "memorised",
        "sabaq-options", "sabqi-options", "manzil-options",
    ]

    /// What each field takes, for help and errors.
    public static let fieldForms: [String: String] = [
        "direction": "The order to learn in: an-nas (from An-Nas backwards), al-fatiha (forwards), or references in that order (67, 78-114)",
        "daily": "N ayat (1-286), N lines (1-300) or N pages (0.05-20): 5 ayat, 7 lines, 0.5 pages",
        "sabqi": "N days (1-365) or N juz (1-30): what was learnt in the last N days, or the latest N juz learnt",
        "manzil": "the cycle through everything memorised, in days (1-365): 30, 30 days",
        "revision-cap": "the most revision a day: N pages (0.5-604) or K times the day's share of the cycle (1x-10x)",
        "pause-new-after": "days (0-365) the manzil may be behind before the new lesson pauses, or off (never)",
        "weak-clean": "clean revisions (1-20) that clear an ayah marked weak",
        "day-start": "when the day starts, local time HH:MM (04:30: after Fajr)",
        "memorised": "references already memorised (78-114, 1), or none",
        "sabaq-options": PlaybackOptions.hifzForms,
        "sabqi-options": PlaybackOptions.hifzForms,
        "manzil-options": PlaybackOptions.hifzForms,
    ]

    /// The text of field `name` (one of `fieldNames`).
    public func text(of name: String) -> String {
        switch name {
        case "direction":
            switch direction {
            case .fromAnNas: return "an-nas"
            case .fromAlFatiha: return "al-fatiha"
            case .references(let text): return text
            }
        case "daily":
            switch daily {
            case .ayat(let count): return Plural.count(count, "ayah")
            case .lines(let count): return Plural.count(count, "line")
            case .pages(let hundredths): return Self.hundredths(hundredths) + (hundredths == 100 ? " page" : " pages")
            }
        case "sabqi":
            switch recent {
            case .days(let days): return Plural.count(days, "day")
            case .juz(let juz): return "\(juz) juz"
            }
        case "manzil": return Plural.count(cycleDays, "day")
        case "revision-cap":
            switch cap {
            case .pages(let hundredths): return Self.hundredths(hundredths) + (hundredths == 100 ? " page" : " pages")
            case .share(let hundredths): return Self.hundredths(hundredths) + "x"
            }
        case "pause-new-after": return pauseNewAfterDays.map { Plural.count($0, "day") } ?? "off"
        case "weak-clean": return String(weakClean)
        case "day-start":
            let (hours, minutes) = (dayStartMinutes / 60, dayStartMinutes % 60)
            return (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
        case "memorised": return memorised.isEmpty ? "none" : memorised
        case "sabaq-options": return sabaqOptions.hifzText
        case "sabqi-options": return sabqiOptions.hifzText
        case "manzil-options": return manzilOptions.hifzText
        default: return ""
        }
    }

    /// Sets field `name` from its text; a usage error names the field and what it takes.
    public mutating func set(_ name: String, to value: String) throws(TartilError) {
        let word = value.trimmedWhitespace.lowercased()
        let (number, unit) = Self.split(word)
        func refused() -> TartilError { .usage("--\(name) takes \(Self.fieldForms[name] ?? "a value"), not '\(value)'") }
        switch name {
        case "direction":
            switch word {
            case "an-nas", "annas", "nas", "backwards", "114": direction = .fromAnNas
            case "al-fatiha", "fatiha", "forwards", "mushaf": direction = .fromAlFatiha
            default:
                let globals: [Int]
                do { globals = try HifzAyatText.globals(value) } catch { throw .usage("--direction: \(error.message)") }
                guard !globals.isEmpty else { throw refused() }
                direction = .references(value.trimmedWhitespace)
            }
        case "daily":
            switch unit {
            case "", "ayat", "ayah", "ayas", "a":
                guard let count = NumberText.whole(number, in: 1...286) else { throw refused() }
                daily = .ayat(count)
            case "lines", "line", "l":
                guard let count = NumberText.whole(number, in: 1...300) else { throw refused() }
                daily = .lines(count)
            case "pages", "page", "p":
                guard let pages = NumberText.decimal(number, in: 0.05...20) else { throw refused() }
                daily = .pages(hundredths: Int((pages * 100).rounded()))
            default: throw refused()
            }
        case "sabqi":
            switch unit {
            case "", "days", "day", "d":
                guard let days = NumberText.whole(number, in: 1...365) else { throw refused() }
                recent = .days(days)
            case "juz":
                guard let juz = NumberText.whole(number, in: 1...30) else { throw refused() }
                recent = .juz(juz)
            default: throw refused()
            }
        case "manzil":
            guard ["", "days", "day", "d"].contains(unit), let days = NumberText.whole(number, in: 1...365) else { throw refused() }
            cycleDays = days
        case "revision-cap":
            switch unit {
            case "x", "×":
                guard let times = NumberText.decimal(number, in: 1...10) else { throw refused() }
                cap = .share(hundredths: Int((times * 100).rounded()))
            case "", "pages", "page", "p":
                guard let pages = NumberText.decimal(number, in: 0.5...604) else { throw refused() }
                cap = .pages(hundredths: Int((pages * 100).rounded()))
            default: throw refused()
            }
        case "pause-new-after":
            if word == "off" || word == "never" {
                pauseNewAfterDays = nil
            } else {
                guard ["", "days", "day", "d"].contains(unit), let days = NumberText.whole(number, in: 0...365) else { throw refused() }
                pauseNewAfterDays = days
            }
        case "weak-clean":
            guard let count = NumberText.whole(word, in: 1...20) else { throw refused() }
            weakClean = count
        case "day-start":
            let pieces = word.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count == 2, pieces[1].count == 2, let hours = NumberText.whole(pieces[0], in: 0...23),
                let minutes = NumberText.whole(pieces[1], in: 0...59)
            else { throw refused() }
            dayStartMinutes = hours * 60 + minutes
        case "memorised":
            do { _ = try HifzAyatText.globals(value) } catch { throw .usage("--memorised: \(error.message)") }
            memorised = word == "none" ? "" : value.trimmedWhitespace
        case "sabaq-options": sabaqOptions = try PlaybackOptions.hifz(value, for: "--" + name)
        case "sabqi-options": sabqiOptions = try PlaybackOptions.hifz(value, for: "--" + name)
        case "manzil-options": manzilOptions = try PlaybackOptions.hifz(value, for: "--" + name)
        default: throw Suggestion.unknownValue(name, for: "hifz plan", among: Self.fieldNames)
        }
    }

    // MARK: - The journal event

    /// The plan as the `hifz-plan` event's note: `{"v":1,"direction":"an-nas",…}`, every field's text.
    public var encoded: String {
        JSONValue.object([("v", .int(1))] + Self.fieldNames.map { ($0, .string(text(of: $0))) }).rendered()
    }

    /// The plan an event's note holds. A field left out keeps its default (an older plan); a version or field this
    /// build does not know, or a value that does not read, is an error naming it.
    public init(encoded note: String) throws(TartilError) {
        let node: JSONNode
        do { node = try JSONNode.parse(Array(note.utf8)) } catch { throw TartilError(.failure, "a hifz plan that is not JSON (\(error))") }
        guard let members = node.object else { throw TartilError(.failure, "a hifz plan that is not a JSON object") }
        guard members["v"]?.integer == 1 else { throw TartilError(.failure, "a hifz plan of a version this build does not know (a newer tartil's)") }
        self.init()
        for name in Self.fieldNames {
            guard let member = members[name] else { continue }
            guard let text = member.string else { throw TartilError(.failure, "a hifz plan whose \(name) is not text") }
            do { try set(name, to: text) } catch { throw TartilError(.failure, "a hifz plan whose \(error.message)") }
        }
        if let unknown = members.keys.sorted().first(where: { $0 != "v" && !Self.fieldNames.contains($0) }) {
            throw TartilError(.failure, "a hifz plan with the field '\(unknown.prefix(40))', which this build does not know (a newer tartil's)")
        }
    }

    /// `1`, `0.5`, `1.25` from hundredths.
    static func hundredths(_ value: Int) -> String {
        let whole = value / 100, rest = value % 100
        if rest == 0 { return String(whole) }
        return "\(whole)." + (rest % 10 == 0 ? String(rest / 10) : (rest < 10 ? "0" : "") + String(rest))
    }

    /// `5 ayat` → (`5`, `ayat`); `0.5pages` → (`0.5`, `pages`); `2x` → (`2`, `x`).
    static func split(_ word: String) -> (Substring, String) {
        let digits = word.prefix { $0.isNumber || $0 == "." }
        return (digits, word.dropFirst(digits.count).trimmedWhitespace)
    }
}

extension PlaybackOptions {
    /// What a hifz part's options take.
    public static let hifzForms =
        "settings as 'set' names them, NAME=VALUE separated by spaces: repeat=N (1-99), repeat-range=N (1-99), pause=TIME|Kx, cycle-pause=TIME, stepped (or stepped=window=N), basmala=auto|off; none for plain"

    /// A hifz part's options from `repeat=5 pause=1x stepped`: `set`'s settings, each NAME=VALUE, in order. A
    /// count of `inf` is refused: a part must end for the next to begin, and to count as done.
    public static func hifz(_ text: String, for what: String) throws(TartilError) -> PlaybackOptions {
        var options = PlaybackOptions()
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" })
        if words.count == 1 && (words[0].lowercased() == "none" || words[0].lowercased() == "plain") { return options }
        for word in words {
            let pieces = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let first = pieces.first, !first.isEmpty else {
                throw .usage("\(what): '\(word)' has no setting name; it takes \(hifzForms)")
            }
            let name = first.lowercased()
            let value = pieces.count > 1 ? pieces[1] : (name == "stepped" ? "on" : "")
            guard pieces.count > 1 || name == "stepped" else {
                throw .usage("\(what): '\(word)' has no value; it takes \(hifzForms)")
            }
            let setting: Setting
            do { setting = try Setting.parse(name: name, value: value) } catch { throw .usage("\(what): \(error.message)") }
            options = options.with(setting)
        }
        if options.repeatEach == .forever || options.repeatRange == .forever {
            throw .usage("\(what): a part must end for the next to begin, so inf is not allowed (use a count, 1-99)")
        }
        return options
    }

    /// These options as `hifz` reads them (`repeat=5 pause=1x`); `none` for the defaults.
    public var hifzText: String {
        let words = settings.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }
        return words.isEmpty ? "none" : words.joined(separator: " ")
    }
}
