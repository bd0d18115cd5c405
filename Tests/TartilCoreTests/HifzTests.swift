import TestSupport
import Testing

@testable import TartilCore

/// The hifz journey's pure parts: days, the plan's fields, the measure of pages, the schedule (tables and a
/// seeded 400-day journey with missed days and mistakes), and what a hifz play counts as heard.
@Suite struct HifzTests {
    // MARK: - Days

    @Test(arguments: [
        ("1970-01-01", 0), ("1970-01-02", 1), ("2000-02-29", 11_016), ("2026-12-03", 20_790), ("2024-03-01", 19_783), ("9999-12-31", 2_932_896),
    ])
    func daysRead(_ text: String, _ number: Int) {
        #expect(HifzDay(text: text)?.number == number)
        #expect(HifzDay(number: number).description == text)
    }

    @Test(arguments: ["2026-02-29", "2026-13-01", "2026-00-10", "2026-1-1", "26-12-03", "2026/12/03", "", "1969-12-31", "2026-12-03 "])
    func notDays(_ text: String) { #expect(HifzDay(text: text) == nil) }

    @Test func everyDayReadsBackAsItself() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<2000 {
            let day = HifzDay(number: random.below(2_932_897))
            #expect(HifzDay(text: day.description) == day)
        }
    }

    @Test func theDayStartsAtTheDayStart() {
        // 2026-12-03 04:00 UTC, at UTC+3 (07:00 local).
        let time: Int64 = 1_796_270_400_000
        #expect(HifzDay(timeMs: time, offsetSeconds: 0, dayStartMinutes: 0).description == "2026-12-03")
        #expect(HifzDay(timeMs: time, offsetSeconds: 0, dayStartMinutes: 270).description == "2026-12-02")  // before 04:30
        #expect(HifzDay(timeMs: time, offsetSeconds: 3 * 3600, dayStartMinutes: 270).description == "2026-12-03")
        #expect(HifzDay(timeMs: time, offsetSeconds: -5 * 3600, dayStartMinutes: 0).description == "2026-12-02")
    }

    // MARK: - The plan

    @Test(arguments: [
        ("daily", "5", "5 ayat"), ("daily", "1 ayah", "1 ayah"), ("daily", "7 lines", "7 lines"), ("daily", "0.5pages", "0.5 pages"),
        ("daily", "1 page", "1 page"), ("sabqi", "1 juz", "1 juz"), ("sabqi", "10d", "10 days"), ("manzil", "30", "30 days"),
        ("revision-cap", "2.5x", "2.5x"), ("revision-cap", "10 pages", "10 pages"), ("pause-new-after", "off", "off"),
        ("pause-new-after", "0", "0 days"), ("weak-clean", "5", "5"), ("day-start", "4:30", "04:30"), ("direction", "fatiha", "al-fatiha"),
        ("direction", "67, 78-114", "67, 78-114"), ("memorised", "none", "none"), ("memorised", "juz 30", "juz 30"),
        ("sabaq-options", "repeat=3 stepped=window=3 pause=1x", "repeat=3 pause=1x stepped=window=3"), ("manzil-options", "none", "none"),
        ("sabqi-options", "stepped", "stepped"),
    ])
    func planFieldsRead(_ name: String, _ value: String, _ text: String) throws {
        var plan = HifzPlan()
        try plan.set(name, to: value)
        #expect(plan.text(of: name) == text)
        var again = HifzPlan()
        try again.set(name, to: text)
        #expect(again == plan)
    }

    @Test(arguments: [
        ("daily", "0"), ("daily", "287"), ("daily", "5 juz"), ("daily", "21 pages"), ("daily", "-1"), ("sabqi", "0"), ("sabqi", "31 juz"),
        ("manzil", "0"), ("manzil", "366"), ("revision-cap", "0.5x"), ("revision-cap", "0.1"), ("pause-new-after", "soon"),
        ("weak-clean", "0"), ("day-start", "24:00"), ("day-start", "4:3"), ("direction", "2:300"), ("direction", ""),
        ("memorised", "115"), ("sabaq-options", "repeat=inf"), ("sabaq-options", "repeat-range=inf"), ("sabaq-options", "repeat"),
        ("sabaq-options", "speed=2"), ("sabaq-options", "="), ("manzil-options", "repeat=2 ="), ("sabqi-options", "=3"), ("nonsense", "1"),
    ])
    func badPlanFieldsAreUsageErrors(_ name: String, _ value: String) {
        var plan = HifzPlan()
        #expect(throws: TartilError.self) { try plan.set(name, to: value) }
        do { try plan.set(name, to: value) } catch { #expect(error.code == .usage) }
        #expect(plan == HifzPlan())  // nothing changed
    }

    @Test func plansRoundTripThroughTheirEvent() throws {
        var random = SeededRandom(seed: 11)
        let values: [String: [String]] = [
            "direction": ["an-nas", "al-fatiha", "juz 30, juz 29", "67"], "daily": ["3", "7 lines", "0.25 pages", "1 page"],
            "sabqi": ["7 days", "2 juz"], "manzil": ["1", "30", "365"], "revision-cap": ["1x", "3.25x", "20 pages"],
            "pause-new-after": ["off", "3"], "weak-clean": ["1", "20"], "day-start": ["00:00", "04:30", "23:59"],
            "memorised": ["none", "112-114, 1"], "sabaq-options": ["none", "repeat=5 pause=1x", "stepped repeat-range=2 cycle-pause=5"],
            "sabqi-options": ["repeat=2", "basmala=off"], "manzil-options": ["none", "pause=1.5"],
        ]
        for _ in 0..<200 {
            var plan = HifzPlan()
            for name in HifzPlan.fieldNames where random.below(2) == 0 {
                let choices = values[name]!
                try plan.set(name, to: choices[random.below(choices.count)])
            }
            #expect(try HifzPlan(encoded: plan.encoded) == plan)
        }
        #expect(throws: TartilError.self) { try HifzPlan(encoded: #"{"v":2}"#) }
        #expect(throws: TartilError.self) { try HifzPlan(encoded: #"{"v":1,"colour":"blue"}"#) }
        #expect(throws: TartilError.self) { try HifzPlan(encoded: #"{"v":1,"daily":5}"#) }
        #expect(try HifzPlan(encoded: #"{"v":1}"#) == HifzPlan())
    }

    @Test func directionsOrderTheAyat() throws {
        var plan = HifzPlan()
        #expect(try plan.sequence().prefix(7) == [6231, 6232, 6233, 6234, 6235, 6236, 6226])  // 114:1-6, then 113:1
        #expect(try plan.sequence().count == Catalog.totalAyat)
        try plan.set("direction", to: "al-fatiha")
        #expect(try plan.sequence() == Array(1...Catalog.totalAyat))
        try plan.set("direction", to: "112, 67:1-2")
        #expect(try plan.sequence() == [6222, 6223, 6224, 6225, try AyahRef(67, 1).global, try AyahRef(67, 2).global])
    }

    // MARK: - Pages

    @Test func pagesAddUp() {
        let total = HifzMeasure.weight(of: 1...Catalog.totalAyat)
        #expect(abs(total - 604 * HifzMeasure.page) < 604 * 20)  // within rounding of each ayah's share
        #expect(abs(HifzMeasure.juzShare(of: 1...Catalog.totalAyat) - 30) < 1e-9)
        #expect(HifzMeasure.weights[try! AyahRef(2, 282).global] == HifzMeasure.page)  // a page alone
        #expect(HifzMeasure.weights[1] == HifzMeasure.page / 7)  // Al-Fatiha's page
        let juz30 = Array(try! Catalog.juz(30)).map(\.global)
        #expect(abs(HifzMeasure.juzShare(of: juz30) - 1) < 1e-9)
    }

    @Test func ayatTextRoundTrips() throws {
        var random = SeededRandom(seed: 5)
        for _ in 0..<300 {
            let globals = Set((0..<random.below(40)).map { _ in 1 + random.below(Catalog.totalAyat) })
            let text = HifzAyatText.text(globals)
            #expect(Set(try HifzAyatText.globals(text)) == globals)
        }
        #expect(HifzAyatText.text([6226, 6227, 6222]) == "112:1, 113:1-2")
        #expect(HifzAyatText.text(inOrder: [6229, 6230, 6222]) == "113:4-5, 112:1")
        #expect(HifzAyatText.text(6222...6236) == "112-114")
    }

    // MARK: - The schedule, by example

    static let day1 = HifzDay(text: "2026-12-01")!

    static func plan(_ fields: [(String, String)]) -> HifzPlan {
        var plan = HifzPlan()
        for (name, value) in fields { try! plan.set(name, to: value) }
        return plan
    }

    static func outlook(_ plan: HifzPlan, _ records: [HifzRecord], on day: HifzDay) throws -> HifzOutlook {
        try #require(try HifzSchedule.outlook(journey: HifzJourney(plan: plan, start: day1, records: records), today: day))
    }

    static func heardAll(_ session: HifzSession) -> [HifzRecord] {
        session.parts.map { HifzRecord(day: session.day, what: .heard($0.kind, $0.ayat)) }
    }

    static func refs(_ text: String) -> [Int] { try! HifzAyatText.globals(text) }

    @Test func theFirstDaysOfAJourneyFromAnNas() throws {
        let plan = Self.plan([("daily", "3"), ("memorised", "114"), ("manzil", "2")])
        let first = try Self.outlook(plan, [], on: Self.day1)
        #expect(first.session.part(.sabaq)?.ayat == Self.refs("113:1-3"))
        #expect(first.session.part(.sabqi) == nil)  // nothing learnt yet but the declared
        #expect(first.session.part(.manzil)?.ayat == Self.refs("114:1-3"))  // half the cycle's pool
        #expect(first.session.part(.sabaq)?.options == plan.sabaqOptions)
        // Today's session stays the same once heard; it shows as done.
        let heard = Self.heardAll(first.session)
        let done = try Self.outlook(plan, heard, on: Self.day1)
        #expect(done.session == first.session)
        #expect(done.session.isDone(done.heard))
        #expect(done.streak == 1)
        // The next day: the next lesson, yesterday's as sabqi, the rest of the manzil.
        let second = try Self.outlook(plan, heard, on: Self.day1.adding(1))
        #expect(second.session.part(.sabaq)?.ayat == Self.refs("113:4-5, 112:1"))
        #expect(second.session.part(.sabqi)?.ayat == Self.refs("113:1-3"))
        #expect(second.session.part(.manzil)?.ayat == Self.refs("114:4-6"))
        #expect(second.memorised.count == 9)
        #expect(second.streak == 1)
    }

    @Test func aPartlyHeardLessonComesBackFromWhereItStopped() throws {
        let plan = Self.plan([("daily", "4"), ("direction", "al-fatiha")])
        let first = try Self.outlook(plan, [], on: Self.day1)
        #expect(first.session.part(.sabaq)?.ayat == [1, 2, 3, 4])
        let partial = [HifzRecord(day: Self.day1, what: .heard(.sabaq, [1, 2]))]
        let today = try Self.outlook(plan, partial, on: Self.day1)
        #expect(today.progress(today.session.part(.sabaq)!) == (2, 4))
        #expect(!today.session.isDone(today.heard))
        let next = try Self.outlook(plan, partial, on: Self.day1.adding(1))
        #expect(next.session.part(.sabaq)?.ayat == [3, 4, 5, 6])
        #expect(next.session.part(.sabqi)?.ayat == [1, 2])
        #expect(next.streak == 0)
    }

    @Test func pagesAndLinesEndOnWholeAyat() throws {
        let half = try Self.outlook(Self.plan([("daily", "0.5 pages"), ("direction", "al-fatiha")]), [], on: Self.day1)
        #expect(half.session.part(.sabaq)?.ayat == [1, 2, 3, 4])  // 4/7 of page 1 is nearest half a page
        let line = try Self.outlook(Self.plan([("daily", "1 line"), ("direction", "2:282-286")]), [], on: Self.day1)
        #expect(line.session.part(.sabaq)?.ayat.count == 1)  // at least one ayah, though 2:282 is a page
    }

    @Test func theLessonPausesWhileTheManzilIsFarBehindAndAMissedDayDoesNotPileUp() throws {
        let plan = Self.plan([("daily", "5"), ("memorised", "juz 30"), ("manzil", "10"), ("pause-new-after", "2"), ("revision-cap", "1.5x")])
        let first = try Self.outlook(plan, [], on: Self.day1)
        let portion = try #require(first.session.part(.manzil))
        let share = first.cycle.poolWeight / 10
        #expect(HifzMeasure.weight(of: portion.ayat) >= share)
        // Twelve days missed: the next day's manzil starts where the first day's did, capped at 1.5 shares, and
        // everything has gone more than a cycle unrevised: the new lesson pauses.
        let fourth = try Self.outlook(plan, [], on: Self.day1.adding(12))
        let carried = try #require(fourth.session.part(.manzil))
        #expect(carried.ayat.first == portion.ayat.first)
        #expect(HifzMeasure.weight(of: carried.ayat.dropLast()) < share * 3 / 2)
        #expect(fourth.cycle.behindDays > 2)
        #expect(fourth.session.part(.sabaq) == nil)
        guard case .paused = fourth.session.lesson else { Issue.record("the new lesson should pause"); return }
        // With the plan's pause off, the lesson goes on.
        var keepGoing = plan
        keepGoing.pauseNewAfterDays = nil
        #expect(try Self.outlook(keepGoing, [], on: Self.day1.adding(12)).session.part(.sabaq) != nil)
        #expect(try Self.outlook(plan, [], on: Self.day1.adding(9)).cycle.behindDays == 0)  // within the cycle: not overdue
    }

    @Test func aWeakAyahComesBackUntilRevisedCleanly() throws {
        let plan = Self.plan([("memorised", "78"), ("manzil", "30"), ("weak-clean", "2"), ("daily", "1")])
        let weak = try AyahRef(78, 30).global
        var records = [HifzRecord(day: Self.day1, what: .mark(.weak, [weak]))]
        #expect(try Self.outlook(plan, records, on: Self.day1).session.part(.sabqi)?.ayat.contains(weak) != true)  // from the next day
        for offset in 1...2 {
            let today = try Self.outlook(plan, records, on: Self.day1.adding(offset))
            #expect(today.session.part(.sabqi)?.ayat.contains(weak) == true)
            #expect(today.weak.map(\.global) == [weak])
            records += Self.heardAll(today.session)
        }
        let cleared = try Self.outlook(plan, records, on: Self.day1.adding(3))
        #expect(cleared.weak.isEmpty)
        #expect(cleared.session.part(.sabqi)?.ayat.contains(weak) != true)
        // A day it is marked weak again does not count, and starts the count again.
        records.append(HifzRecord(day: Self.day1.adding(3), what: .mark(.weak, [weak])))
        records += Self.heardAll(cleared.session)
        let again = try Self.outlook(plan, records, on: Self.day1.adding(4))
        #expect(again.weak.map(\.clean) == [0])
    }

    @Test func marksMemoriseAndEverythingMemorisedEndsTheLessons() throws {
        let plan = Self.plan([("direction", "112"), ("daily", "2")])
        let records = [HifzRecord(day: Self.day1, what: .mark(.memorised, Self.refs("112:1-3")))]
        let next = try Self.outlook(plan, records, on: Self.day1.adding(1))
        #expect(next.session.part(.sabaq)?.ayat == Self.refs("112:4"))
        let all = records + [HifzRecord(day: Self.day1.adding(1), what: .heard(.sabaq, Self.refs("112:4")))]
        #expect(try Self.outlook(plan, all, on: Self.day1.adding(2)).session.lesson == .complete)
    }

    @Test func aDayMadeUpLaterLeavesTodaysSessionAsItWas() throws {
        let plan = Self.plan([("daily", "3"), ("memorised", "114"), ("manzil", "2"), ("direction", "an-nas")])
        let today = Self.day1.adding(1)
        let before = try Self.outlook(plan, [], on: today)
        // Yesterday's session, heard today (`--date` yesterday): it counts for yesterday, and from tomorrow.
        let yesterday = try Self.outlook(plan, [], on: Self.day1).session
        let madeUp = yesterday.parts.map { HifzRecord(day: Self.day1, what: .heard($0.kind, $0.ayat), appliedDay: today) }
        let after = try Self.outlook(plan, madeUp, on: today)
        #expect(after.session == before.session)
        #expect(try Self.outlook(plan, madeUp, on: Self.day1).session.isDone(Self.outlook(plan, madeUp, on: Self.day1).heard))
        #expect(try Self.outlook(plan, madeUp, on: today.adding(1)).memorised.count == 9)
    }

    @Test func aWeakMarkOnAnAyahNotLearntLeavesItToTheLesson() throws {
        let plan = Self.plan([("daily", "3"), ("direction", "78")])
        let marked = [HifzRecord(day: Self.day1, what: .mark(.weak, Self.refs("78:2")))]
        let next = try Self.outlook(plan, marked, on: Self.day1.adding(1))
        #expect(next.session.part(.sabaq)?.ayat == Self.refs("78:1-3"))
        #expect(next.weak.isEmpty && next.memorised.isEmpty)
    }

    @Test func aCapBelowTheShareIsRaisedToIt() throws {
        let plan = Self.plan([("memorised", "juz 30"), ("manzil", "7"), ("revision-cap", "0.5")])
        let today = try Self.outlook(plan, [], on: Self.day1)
        #expect(HifzMeasure.weight(of: today.session.part(.manzil)!.ayat) >= today.cycle.poolWeight / 7)
    }

    @Test func behindCountsTheDaysPastTheCycle() throws {
        let plan = Self.plan([("memorised", "112-114"), ("manzil", "3")])
        #expect(try Self.outlook(plan, [], on: Self.day1.adding(2)).cycle.behindDays == 0)
        #expect(try Self.outlook(plan, [], on: Self.day1.adding(90)).cycle.behindDays == 88)
        #expect(try Self.outlook(plan, [], on: Self.day1.adding(90)).session.part(.sabaq) == nil)  // paused
    }

    @Test func partsNumberTheirGroupsOnFromEachOther() throws {
        let plan = try PlaybackPlan(parts: [
            .init(ayat: [try AyahRef(78, 1)], options: PlaybackOptions(repeatEach: .times(2))),
            .init(ayat: [try AyahRef(1, 1), try AyahRef(1, 2)], options: PlaybackOptions()),
        ])
        #expect(plan.items.map(\.group) == [1, 1, 1, 2, 3])  // basmala and two recitations of 78:1, then 1:1, 1:2
        #expect(plan.group(containing: 2) == 0..<3)
    }

    @Test func beforeTheJourneyThereIsNoOutlook() throws {
        let journey = HifzJourney(plan: HifzPlan(), start: Self.day1, records: [])
        #expect(try HifzSchedule.outlook(journey: journey, today: Self.day1.adding(-1)) == nil)
        #expect(try HifzSchedule.outlook(journey: HifzJourney(plan: nil, start: nil, records: []), today: Self.day1) == nil)
    }

    // MARK: - A 400-day journey

    /// How a simulated student keeps to the plan.
    struct Student {
        var missEvery: Int  // 0: never misses
        var partialEvery: Int
        var mistakeEvery: Int
    }

    /// Lives 400 days of a journey, step by step as the schedule does, and checks its properties each day. Returns
    /// the records (for the order and replay checks).
    static func journey(seed: UInt64, plan: HifzPlan, student: Student, days: Int = 400) throws -> [HifzRecord] {
        var random = SeededRandom(seed: seed)
        var replay = try HifzSchedule.Replay(plan: plan, start: day1)
        var records: [HifzRecord] = []
        var lastRevised: [Int: Int] = [:]
        let cycle = plan.cycleDays
        var missedSince: Int?
        for offset in 0..<days {
            let day = day1.adding(offset)
            let session = replay.session(on: day)
            let cycleNow = replay.cycleNumbers(on: day.number, pool: replay.order[..<replay.recentStart(on: day.number)])
            // The cap: never more than the cap, but for the ayah that reaches it.
            if let manzil = session.part(.manzil) {
                let cap = HifzSchedule.Replay.cap(plan, poolWeight: cycleNow.poolWeight)
                #expect(HifzMeasure.weight(of: manzil.ayat.dropLast()) < cap, "seed \(seed) day \(offset): manzil over the cap")
                // Revision never repeats an ayah between the parts.
                #expect(Set(manzil.ayat).isDisjoint(with: session.part(.sabqi)?.ayat ?? []), "seed \(seed) day \(offset)")
            }
            // Weak ayat are in the day's revision.
            let revision = Set((session.part(.sabqi)?.ayat ?? []) + (session.part(.manzil)?.ayat ?? []))
            for global in replay.weak.keys { #expect(revision.contains(global), "seed \(seed) day \(offset): weak \(global) not revised") }
            // The new lesson pauses exactly while revision is too far behind.
            if let limit = plan.pauseNewAfterDays, session.lesson != .complete {
                #expect((session.part(.sabaq) == nil) == (cycleNow.behindDays > Double(limit)), "seed \(seed) day \(offset)")
            }
            // What the student does.
            var today: [HifzRecord] = []
            if student.missEvery > 0 && random.below(student.missEvery) == 0 {
                missedSince = missedSince ?? offset
            } else {
                let partial = student.partialEvery > 0 && random.below(student.partialEvery) == 0
                for part in session.parts {
                    let ayat = partial ? Array(part.ayat.prefix(random.below(part.ayat.count + 1))) : part.ayat
                    if !ayat.isEmpty { today.append(HifzRecord(day: day, what: .heard(part.kind, ayat))) }
                    if part.kind != .sabaq { for global in ayat { lastRevised[global] = offset } }
                }
                if student.mistakeEvery > 0 && random.below(student.mistakeEvery) == 0, let part = session.parts.randomElement(using: &random) {
                    today.append(HifzRecord(day: day, what: .mark(.weak, [part.ayat[random.below(part.ayat.count)]])))
                }
                missedSince = nil
            }
            // A missed day is carried forward in order: the next day's manzil begins where this one's did.
            if today.isEmpty, let manzil = session.part(.manzil) {
                var peek = replay
                peek.apply([], on: day, session: session)
                if let next = peek.session(on: day.adding(1)).part(.manzil) {
                    #expect(next.ayat.first == manzil.ayat.first, "seed \(seed) day \(offset): a missed day's manzil was not carried forward")
                }
            }
            // Today's session does not change with what is heard of it.
            var after = replay
            after.apply(today, on: day, session: session)
            replay.apply(today, on: day, session: session)
            records += today
            // With no day missed, every ayah of the pool comes round within the cycle.
            if student.missEvery == 0 {
                let pool = replay.order[..<replay.recentStart(on: day.number + 1)]
                for global in pool {
                    let since = offset - (lastRevised[global] ?? (replay.learnt[global] == Int.min ? -1 : replay.learnt[global]! - day1.number))
                    #expect(since < cycle, "seed \(seed) day \(offset): \(global) not revised for \(since) days (cycle \(cycle))")
                    if since >= cycle { return records }
                }
            }
            _ = missedSince
        }
        return records
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func aJourneyKeptEveryDayRevisesEverythingWithinTheCycle(seed: UInt64) throws {
        let plans = [
            Self.plan([("daily", "5"), ("memorised", "juz 30"), ("manzil", "14")]),
            Self.plan([("daily", "0.5 pages"), ("direction", "al-fatiha"), ("manzil", "20"), ("sabqi", "1 juz")]),
            Self.plan([("daily", "7 lines"), ("memorised", "67-77"), ("manzil", "7"), ("revision-cap", "3x")]),
        ]
        _ = try Self.journey(seed: seed, plan: plans[Int(seed - 1)], student: Student(missEvery: 0, partialEvery: 0, mistakeEvery: 0))
    }

    @Test(arguments: [UInt64(11), 12, 13, 14])
    func aJourneyWithMissedDaysAndMistakesKeepsItsPromises(seed: UInt64) throws {
        let plan = Self.plan([("daily", "4"), ("memorised", "112-114"), ("manzil", "10"), ("weak-clean", "2"), ("pause-new-after", "2")])
        let records = try Self.journey(seed: seed, plan: plan, student: Student(missEvery: 4, partialEvery: 6, mistakeEvery: 5))
        // The journal's events come in any order (merged from several devices): the same outlook.
        var random = SeededRandom(seed: seed)
        var shuffled = records
        shuffled.shuffle(using: &random)
        let last = Self.day1.adding(399)
        let one = try Self.outlook(plan, records, on: last)
        let other = try Self.outlook(plan, shuffled, on: last)
        #expect(one.session == other.session)
        #expect(one.memorised == other.memorised)
        #expect(one.weak.map(\.global) == other.weak.map(\.global))
        #expect(one.streak == other.streak && one.daysComplete == other.daysComplete)
        #expect(one.memorised.count > 3 * 15)  // it got somewhere
    }

    // MARK: - What a hifz play hears

    static let reciter = try! ReciterID("fixture")

    static func listening() throws -> HifzListening {
        let ayat = try Array(AyahRange(AyahRef(112, 1), AyahRef(112, 2)))
        let plan = try PlaybackPlan(parts: [
            .init(ayat: ayat, options: PlaybackOptions(basmala: .off, repeatEach: .times(2))),
            .init(ayat: try Array(AyahRange(AyahRef(113, 1), AyahRef(113, 2))), options: PlaybackOptions(basmala: .off)),
        ])
        #expect(plan.items.count == 6)
        #expect(plan.parts.map(\.items) == [0..<4, 4..<6])
        return HifzListening(plan: plan, kinds: [.sabaq, .manzil], day: day1)
    }

    static func item(_ listening: HifzListening, _ index: Int) -> PlayerEvent { .item(index: index, listening.plan.items[index]) }

    static func seek(_ listening: HifzListening, _ index: Int, offset: Int = 0) -> PlayerEvent {
        .position(PlaybackPosition(reciter: reciter, ayah: listening.plan.items[index].ayah, offsetSamples: offset, sampleRate: 22050, reason: .seek))
    }

    static func run(_ events: (HifzListening) -> [PlayerEvent]) throws -> [HifzListening.Heard] {
        var listening = try listening()
        var heard: [HifzListening.Heard] = []
        for event in events(listening) { heard += listening.on(event) }
        heard += listening.finish()
        return heard
    }

    @Test func playedThroughEveryAyahIsHeard() throws {
        let heard = try Self.run { l in (0..<6).map { Self.item(l, $0) } + [.end(.finished, message: nil)] }
        #expect(heard == [.init(part: .sabaq, ayat: Self.refs("112:1-2")), .init(part: .manzil, ayat: Self.refs("113:1-2"))])
    }

    @Test func aPartIsReportedWhenPlayingLeavesIt() throws {
        var listening = try Self.listening()
        for index in 0..<5 { #expect(listening.on(Self.item(listening, index)).isEmpty) }
        // Counted once no seek follows the move to the next part (the ayah-start the player records).
        let start = PlaybackPosition(reciter: Self.reciter, ayah: try AyahRef(113, 1), offsetSamples: 0, sampleRate: 22050, reason: .ayahStart)
        #expect(listening.on(.position(start)) == [.init(part: .sabaq, ayat: Self.refs("112:1-2"))])
        #expect(listening.on(.end(.stopped, message: nil)).isEmpty)  // the manzil's first ayah was not heard to its end
    }

    @Test func skippedRepetitionsAreNotHeard() throws {
        // Item 1 (112:1, second time) skipped by `next`: 112:1 is not heard, 112:2 is.
        let heard = try Self.run { l in [Self.item(l, 0), Self.item(l, 1), Self.item(l, 2), Self.seek(l, 2)] + (3..<6).map { Self.item(l, $0) } + [.end(.finished, message: nil)] }
        #expect(heard.first == .init(part: .sabaq, ayat: Self.refs("112:2")))
    }

    @Test func aSeekIntoAnAyahDoesNotCountIt() throws {
        let heard = try Self.run { l in (0..<5).map { Self.item(l, $0) } + [Self.seek(l, 4, offset: 5000), Self.item(l, 5), .end(.finished, message: nil)] }
        #expect(heard.last == .init(part: .manzil, ayat: Self.refs("113:2")))
    }

    @Test func aSeekBackAndListeningAgainCounts() throws {
        let heard = try Self.run { l in
            [Self.item(l, 0), Self.item(l, 2), Self.seek(l, 2), Self.item(l, 0), Self.seek(l, 0)] + (1..<6).map { Self.item(l, $0) } + [.end(.finished, message: nil)]
        }
        #expect(heard.first == .init(part: .sabaq, ayat: Self.refs("112:1-2")))
    }

    @Test func anAyahWhoseFileFailedIsNotHeard() throws {
        let heard = try Self.run { l in
            (0..<5).map { Self.item(l, $0) } + [.error(message: "gone", ayah: try! AyahRef(113, 1)), Self.item(l, 5), .end(.finished, message: nil)]
        }
        #expect(heard.last == .init(part: .manzil, ayat: Self.refs("113:2")))
    }

    @Test func aStoppedPlayCountsWhatWasHeardBeforeIt() throws {
        let heard = try Self.run { l in (0..<3).map { Self.item(l, $0) } + [.end(.stopped, message: nil)] }
        #expect(heard == [.init(part: .sabaq, ayat: Self.refs("112:1"))])
    }

    @Test func setIsRefusedForAPlanOfParts() throws {
        let listening = try Self.listening()
        var machine = PlaybackMachine(plan: listening.plan, timeline: PlaybackMachine.timeline(for: listening.plan, table: nil), stopOnSkip: false)
        #expect(throws: TartilError.self) { _ = try machine.on(.set(.repeatEach(.times(3)))) }
    }
}
