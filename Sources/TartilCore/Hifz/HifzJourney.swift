/// A mark a listener gives an ayah (the `hifz-mark` event's note).
public enum HifzMark: String, Sendable, Hashable, CaseIterable {
    /// Memorised (learnt outside tartil, or learnt and not yet heard here): it joins the revision.
    case memorised
    /// A mistake: it comes back in every day's revision until heard cleanly `HifzPlan.weakClean` times.
    case weak
}

/// One fact of the journey, from the journal.
public struct HifzRecord: Sendable, Hashable {
    public enum What: Sendable, Hashable {
        /// Ayat heard in full, with every repetition their part asks, in a part of a day's session.
        case heard(HifzPart, [Int])
        /// Ayat marked.
        case mark(HifzMark, [Int])
    }

    /// The day it counts for: a session's own day (a session that runs past the start of the next day still
    /// counts for the day it was planned for); a mark's local day.
    public let day: HifzDay
    public let what: What
    /// The day it changes what comes after: its own day, or for a session of an earlier day heard later (a day
    /// made up with `--date`) the day it was heard, so that the session of the day it was heard on stays as it was.
    public let appliedDay: HifzDay

    public init(day: HifzDay, what: What, appliedDay: HifzDay? = nil) {
        self.day = day
        self.what = what
        self.appliedDay = max(day, appliedDay ?? day)
    }
}

/// What a `hifz-heard` event's note holds: `{"v":1,"day":"2026-12-03","part":"sabaq","heard":"78:1-5"}`.
public struct HifzHeardNote: Sendable, Hashable {
    public let day: HifzDay
    public let part: HifzPart
    /// Global numbers.
    public let ayat: [Int]

    public init(day: HifzDay, part: HifzPart, ayat: [Int]) {
        self.day = day
        self.part = part
        self.ayat = ayat
    }

    /// The notes for these ayat: one, or several when the references would not fit in a journal note.
    public static func notes(day: HifzDay, part: HifzPart, ayat: [Int]) -> [String] {
        let whole = HifzHeardNote(day: day, part: part, ayat: ayat).encoded
        guard whole.utf8.count > JournalLimits.noteBytes, ayat.count > 1 else { return [whole] }
        let sorted = ayat.sorted()
        let half = sorted.count / 2
        return notes(day: day, part: part, ayat: Array(sorted[..<half])) + notes(day: day, part: part, ayat: Array(sorted[half...]))
    }

    public var encoded: String {
        JSONValue.object([
            ("v", .int(1)), ("day", .string(day.description)), ("part", .string(part.rawValue)), ("heard", .string(HifzAyatText.text(ayat))),
        ]).rendered()
    }

    public init(encoded note: String) throws(TartilError) {
        let node: JSONNode
        do { node = try JSONNode.parse(Array(note.utf8)) } catch { throw TartilError(.failure, "a hifz-heard note that is not JSON (\(error))") }
        guard let members = node.object, members["v"]?.integer == 1, let dayText = members["day"]?.string, let day = HifzDay(text: dayText),
            let partText = members["part"]?.string, let part = HifzPart(rawValue: partText), let heard = members["heard"]?.string
        else { throw TartilError(.failure, "a hifz-heard note without a version 1, day, part and heard ayat") }
        self.day = day
        self.part = part
        do { ayat = try HifzAyatText.globals(heard) } catch { throw TartilError(.failure, "a hifz-heard note whose ayat do not read: \(error.message)") }
    }
}

/// The journey as the journal tells it: the plan in force, when the journey began, and every record.
public struct HifzJourney: Sendable {
    /// The latest plan (by time, device id, event id); nil before any.
    public let plan: HifzPlan?
    /// The event id of that plan.
    public let planEventID: String?
    /// The day of the first plan event.
    public let start: HifzDay?
    public let records: [HifzRecord]
    /// Events that could not be read (a newer tartil's, say), in words; they are left out.
    public let problems: [String]

    /// Reads the hifz events of `events` (others are ignored). `offsetSeconds` gives the local time's offset
    /// from UTC at a moment (the front end's time zone), for the days of marks and plans.
    public init(events: [JournalEvent], offsetSeconds: (Int64) -> Int) {
        var problems: [String] = []
        let plans = events.filter { $0.kind == .hifzPlan }.sorted { ($0.timeMs, $0.deviceID, $0.eventID) < ($1.timeMs, $1.deviceID, $1.eventID) }
        var plan: HifzPlan?
        var planEventID: String?
        for event in plans.reversed() {
            do {
                plan = try HifzPlan(encoded: event.note ?? "")
                planEventID = event.eventID
                break
            } catch {
                problems.append("the plan \(event.eventID.prefix(8)) is left out: \(error.message)")
            }
        }
        let dayStart = plan?.dayStartMinutes ?? 0
        func day(_ event: JournalEvent) -> HifzDay {
            HifzDay(timeMs: event.timeMs, offsetSeconds: offsetSeconds(event.timeMs), dayStartMinutes: dayStart)
        }
        start = plans.first.map(day)
        var records: [HifzRecord] = []
        for event in events {
            switch event.kind {
            case .hifzHeard:
                do {
                    let note = try HifzHeardNote(encoded: event.note ?? "")
                    records.append(HifzRecord(day: note.day, what: .heard(note.part, note.ayat), appliedDay: day(event)))
                } catch {
                    problems.append("the event \(event.eventID.prefix(8)) is left out: \(error.message)")
                }
            case .hifzMark:
                guard let surah = event.surah, let ayah = event.ayah, let ref = try? AyahRef(surah, ayah),
                    let mark = event.note.flatMap(HifzMark.init(rawValue:))
                else {
                    problems.append("the mark \(event.eventID.prefix(8)) is left out: it names no ayah or no mark this build knows")
                    continue
                }
                records.append(HifzRecord(day: day(event), what: .mark(mark, [ref.global])))
            default: continue
            }
        }
        self.plan = plan
        self.planEventID = planEventID
        self.records = records
        self.problems = problems
    }

    /// A journey from its parts (tests, simulations).
    public init(plan: HifzPlan?, start: HifzDay?, records: [HifzRecord]) {
        self.plan = plan
        self.planEventID = nil
        self.start = start
        self.records = records
        self.problems = []
    }
}
