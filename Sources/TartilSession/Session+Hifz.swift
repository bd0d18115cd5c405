import TartilCore
import TartilJournal
import TartilSystem

/// The hifz journey: the plan, marks and what each day's session heard are journal events; the schedule is
/// `HifzSchedule`'s, from them and today.
extension Session {
    /// The kinds of event the journey is made of.
    static let hifzKinds: Set<JournalEvent.Kind> = [.hifzPlan, .hifzMark, .hifzHeard]

    /// The journey as the journal tells it (empty when there is no journal yet).
    public func hifzJourney(settings: Settings) throws(TartilError) -> HifzJourney {
        let events = try reading(settings) { journal throws(TartilError) -> [JournalEvent] in
            guard let journal else { return [] }
            var filter = JournalHistoryFilter()
            filter.kinds = Self.hifzKinds
            let chosen = filter
            return try Self.call { () throws(JournalError) in try journal.history(chosen) }
        }
        return HifzJourney(events: events, offsetSeconds: LocalTime.offsetSeconds(atMilliseconds:))
    }

    /// Today as the journey counts it: the local date now, less the plan's start of day.
    public func hifzToday(plan: HifzPlan?) -> HifzDay {
        let now = clock.wallMilliseconds
        return HifzDay(timeMs: now, offsetSeconds: LocalTime.offsetSeconds(atMilliseconds: now), dayStartMinutes: plan?.dayStartMinutes ?? 0)
    }

    /// The journey and where it stands on `day` (today when nil); the outlook is nil before the journey's first
    /// day, and the journey's plan nil before any plan.
    public func hifzOutlook(on day: HifzDay?, settings: Settings) throws(TartilError) -> (HifzJourney, HifzOutlook?) {
        let journey = try hifzJourney(settings: settings)
        let today = day ?? hifzToday(plan: journey.plan)
        return (journey, try HifzSchedule.outlook(journey: journey, today: today))
    }

    /// Records `plan` as the plan from now on (a `hifz-plan` event).
    public func setHifzPlan(_ plan: HifzPlan, settings: Settings) throws(TartilError) -> JournalEvent {
        _ = try plan.sequence()
        _ = try HifzAyatText.globals(plan.memorised)
        let note = plan.encoded
        guard note.utf8.count <= JournalLimits.noteBytes else {
            throw .usage("the plan takes \(note.utf8.count) bytes, more than a journal note's \(JournalLimits.noteBytes): write --direction and --memorised with fewer references (ranges: 78-114)")
        }
        if let problem = JournalNote.problem(note) { throw .usage("hifz plan: \(problem)") }
        return try withJournal(settings) { journal throws(JournalError) in try journal.append(EventDraft(kind: .hifzPlan, note: note)) }
    }

    /// Marks `ayat` (`hifz-mark` events, in one transaction); nil: the ayah playing (the one recited, in a
    /// stepped review too).
    public func markHifz(_ given: [AyahRef]?, as mark: HifzMark, settings given_: Settings?) throws(TartilError) -> [JournalEvent] {
        guard let settings = given_ ?? playSettings else { throw .usage("hifz mark needs an ayah (78:5) when nothing is playing") }
        var ayat = given ?? []
        if given == nil {
            guard let item = status()?.item else { throw .usage("hifz mark needs an ayah (78:5) when nothing is playing") }
            ayat = [item.ayah]
        }
        guard !ayat.isEmpty else { throw .usage("hifz mark needs the ayat to mark") }
        guard ayat.count <= 6236 else { throw .usage("hifz mark takes at most 6236 ayat") }
        let drafts = ayat.map { EventDraft(kind: .hifzMark, surah: $0.surah, ayah: $0.ayah, note: mark.rawValue) }
        return try withJournal(settings) { journal throws(JournalError) in try journal.append(contentsOf: drafts) }
    }
}
