/// The memorisation schedule: a pure function of (plan, journal records, today).
///
/// It replays the journey day by day from its first day. Each day's session is laid out from what was known at
/// the start of that day, then that day's records are applied, so today's session stays the same all day however
/// much of it is heard (only a new plan changes it).
///
/// - **Memorised**: the plan's declared ayat, every ayah heard in full in a sabaq, and every ayah marked memorised
///   or weak. They are kept in the order they were learnt (the declared first, in the plan's order; then day by
///   day, each day's in the plan's order).
/// - **Sabaq** (the new lesson): the next ayat in the plan's order not yet memorised, `daily` of them (whole ayat;
///   a lesson of pages or lines ends at the ayah that reaches the amount, and has at least one). It pauses while
///   the manzil is more than `pauseNewAfterDays` days behind, and ends when everything is memorised.
/// - **Sabqi** (recent revision): what was learnt in the last `days` days (or the latest `juz` juz learnt), in the
///   order learnt; then the weak ayat that neither it nor today's manzil already has, in the plan's order.
/// - **Manzil**: a cycle of `cycleDays` days through the rest of what is memorised (the *pool*). Each day's portion
///   is the pool's ayat revised longest ago (ties in the order learnt; so, once round, the same order every
///   cycle), whole ayat up to at least the day's even share (the pool ÷ `cycleDays`) and at least everything that
///   has gone a whole cycle unrevised, but never past the cap (never less than the share; a first ayah larger than
///   the cap is still given):
///   what is not heard stays at the front, carried forward in order, and a missed day never piles up beyond the
///   cap. Kept to every day, every ayah of the pool comes round within `cycleDays` days: what is ahead of an ayah
///   just revised is at most the pool, and the shares take all of it within the cycle. An ayah counts as revised
///   on a day it is heard in full in any part (learning it counts). Declared ayat count as revised the day before
///   the journey.
/// - **Behind**: how many days past its cycle the ayah revised longest ago is (overdue: the pages gone longer than
///   a cycle unrevised).
/// - **Weak** ayat: from the day after the mark, in every day's revision, until revised cleanly on `weakClean`
///   days (revised in full in the sabqi or manzil, and not marked weak again that day).
public enum HifzSchedule {
    /// Today's session and where the journey stands, or nil before the plan's first day.
    public static func outlook(journey: HifzJourney, today: HifzDay) throws(TartilError) -> HifzOutlook? {
        guard let plan = journey.plan, let start = journey.start, start <= today else { return nil }
        var replay = try Replay(plan: plan, start: start)
        // Records change the state from the end of the day they apply on; a day's own records say what of its
        // session was heard.
        var applied: [Int: [HifzRecord]] = [:]
        var heardOn: [Int: [HifzRecord]] = [:]
        for record in journey.records where record.day <= today {
            applied[max(record.appliedDay.number, start.number), default: []].append(record)
            heardOn[max(record.day.number, start.number), default: []].append(record)
        }
        var streak = 0
        var longest = 0
        var complete = 0
        var day = start
        while true {
            let session = replay.session(on: day)
            let records = applied[day.number] ?? []
            let heard = Replay.heard(heardOn[day.number] ?? [])
            if day == today {
                let done = session.isDone(heard)
                let current = done ? streak + 1 : streak
                var after = replay
                after.apply(records, on: day, session: session)
                return HifzOutlook(
                    session: session, heard: heard, replay: replay, after: after, streak: current, longestStreak: max(longest, current),
                    daysComplete: complete + (done ? 1 : 0), days: today.number - start.number + 1, start: start)
            }
            if session.isDone(heard) {
                streak += 1
                complete += 1
                longest = max(longest, streak)
            } else if !session.isEmpty {
                streak = 0
            }
            replay.apply(records, on: day, session: session)
            day = day.adding(1)
        }
    }

    /// The state of the journey at the start of a day, and the step to the next.
    struct Replay {
        let plan: HifzPlan
        /// The plan's order: global number → its place (nil: not in the plan).
        let place: [Int?]
        let sequence: [Int]
        /// Global number → the day it was learnt (Int.min: declared in the plan); nil: not memorised.
        var learnt: [Int?]
        /// Memorised ayat in the order learnt.
        var order: [Int] = []
        /// Weak ayat and their clean revisions so far.
        var weak: [Int: Int] = [:]
        /// Global number → the day it was last revised (learnt, heard in a part); nil: never.
        var lastRevised: [Int?]
        /// Global number → its place in `order`.
        var orderIndex: [Int]
        /// Where the next unlearnt ayah of the plan's order may be (everything before it is memorised).
        var nextNew = 0

        init(plan: HifzPlan, start: HifzDay) throws(TartilError) {
            self.plan = plan
            sequence = try plan.sequence()
            var place = [Int?](repeating: nil, count: Catalog.totalAyat + 1)
            for (index, global) in sequence.enumerated() { place[global] = index }
            self.place = place
            learnt = [Int?](repeating: nil, count: Catalog.totalAyat + 1)
            lastRevised = [Int?](repeating: nil, count: Catalog.totalAyat + 1)
            orderIndex = [Int](repeating: Int.max, count: Catalog.totalAyat + 1)
            let declared = try HifzAyatText.globals(plan.memorised)
            // The declared ayat, in the plan's order (those outside it after, in mushaf order).
            for global in declared.sorted(by: { (place[$0] ?? Int.max, $0) < (place[$1] ?? Int.max, $1) }) {
                learnt[global] = Int.min
                lastRevised[global] = start.number - 1
                orderIndex[global] = order.count
                order.append(global)
            }
        }

        /// Where the sabqi begins in `order` on `day`.
        func recentStart(on day: Int) -> Int {
            var index = order.count
            switch plan.recent {
            case .days(let days):
                while index > 0, let when = learnt[order[index - 1]], when != Int.min, when >= day - days { index -= 1 }
            case .juz(let juz):
                var weight = 0
                while index > 0, learnt[order[index - 1]] != Int.min {
                    weight += HifzMeasure.weights[order[index - 1]]
                    if weight > juz * HifzMeasure.juz { break }
                    index -= 1
                }
            }
            return index
        }

        /// The pool in the order the manzil takes it: revised longest ago first, ties in the order learnt.
        func queue(on day: Int) -> [Int] {
            // One whole number per ayah (the day, then the place learnt: under 2^13 of them), so the sort compares
            // integers.
            let keys = order[..<recentStart(on: day)].map { global in
                ((lastRevised[global] ?? -1_000_000) &+ 1_000_000) << 13 | orderIndex[global]
            }
            return keys.sorted().map { order[$0 & 0x1FFF] }
        }

        func cycleNumbers(on day: Int, pool: ArraySlice<Int>) -> HifzOutlook.Cycle {
            let poolWeight = HifzMeasure.weight(of: pool)
            let cycle = plan.cycleDays
            let recent = HifzMeasure.weight(of: pool.lazy.filter { day - (lastRevised[$0] ?? Int.min / 2) <= cycle })
            let overdue = HifzMeasure.weight(of: pool.lazy.filter { day - (lastRevised[$0] ?? Int.min / 2) > cycle })
            let oldest = pool.lazy.map { day - (lastRevised[$0] ?? day) }.max() ?? 0
            return HifzOutlook.Cycle(
                days: cycle, poolAyat: pool.count, poolWeight: poolWeight, revisedWeight: recent, overdueWeight: overdue,
                behindDays: Double(max(0, oldest - cycle)))
        }

        /// The session of `day`, from the state at its start.
        func session(on day: HifzDay) -> HifzSession {
            let recent = recentStart(on: day.number)
            let pool = order[..<recent]
            let cycle = cycleNumbers(on: day.number, pool: pool)
            // Manzil: the ayat revised longest ago, the day's share and all that has gone a cycle unrevised, within
            // the cap.
            let queue = queue(on: day.number)
            let share = (cycle.poolWeight + plan.cycleDays - 1) / plan.cycleDays
            let due = max(share, HifzMeasure.weight(of: queue.lazy.filter { day.number - (lastRevised[$0] ?? Int.min / 2) >= plan.cycleDays }))
            let cap = Self.cap(plan, poolWeight: cycle.poolWeight)
            var manzil: [Int] = []
            var taken = 0
            for global in queue where taken < due {
                let weight = HifzMeasure.weights[global]
                if !manzil.isEmpty && taken + weight > cap && taken >= share { break }
                manzil.append(global)
                taken += weight
            }
            // Sabqi: the recent, then weak ayat not already in today's revision.
            var sabqi = Array(order[recent...])
            var inRevision = [Bool](repeating: false, count: Catalog.totalAyat + 1)
            for global in sabqi { inRevision[global] = true }
            for global in manzil { inRevision[global] = true }
            sabqi += weak.keys.filter { !inRevision[$0] }.sorted { (place[$0] ?? Int.max, $0) < (place[$1] ?? Int.max, $1) }
            // Sabaq: the next unlearnt ayat, unless revision is far behind.
            var sabaq: [Int] = []
            var lesson = HifzSession.Lesson.new
            if order.count >= Catalog.totalAyat || !sequence[nextNew...].contains(where: { learnt[$0] == nil }) {
                lesson = .complete
            } else if let limit = plan.pauseNewAfterDays, cycle.behindDays > Double(limit) {
                lesson = .paused(behindDays: cycle.behindDays)
            } else {
                let amount: Int
                switch plan.daily {
                case .ayat(let count): amount = count
                case .lines(let lines): amount = lines * HifzMeasure.line
                case .pages(let hundredths): amount = hundredths * HifzMeasure.page / 100
                }
                var weight = 0
                for global in sequence[nextNew...] where learnt[global] == nil {
                    if case .ayat = plan.daily {
                        if sabaq.count >= amount { break }
                    } else {
                        let next = HifzMeasure.weights[global]
                        if !sabaq.isEmpty && (weight >= amount || weight + next - amount > amount - weight) { break }
                        weight += next
                    }
                    sabaq.append(global)
                }
            }
            var parts: [HifzSession.Part] = []
            for (kind, ayat) in [(HifzPart.sabaq, sabaq), (.sabqi, sabqi), (.manzil, manzil)] where !ayat.isEmpty {
                parts.append(HifzSession.Part(kind: kind, ayat: ayat, options: plan.options(for: kind)))
            }
            return HifzSession(day: day, parts: parts, lesson: lesson)
        }

        /// The most manzil a day asks for, in millionths of a page.
        /// Never less than the day's even share: a cap below it could never keep the cycle.
        static func cap(_ plan: HifzPlan, poolWeight: Int) -> Int {
            let share = (poolWeight + plan.cycleDays - 1) / plan.cycleDays
            switch plan.cap {
            case .pages(let hundredths): return max(hundredths * HifzMeasure.page / 100, share, 1)
            case .share(let hundredths): return max(share * hundredths / 100, share, 1)
            }
        }

        /// Ayat heard in full on a day, by part.
        static func heard(_ records: [HifzRecord]) -> [HifzPart: Set<Int>] {
            var heard: [HifzPart: Set<Int>] = [:]
            for record in records {
                if case .heard(let part, let ayat) = record.what { heard[part, default: []].formUnion(ayat) }
            }
            return heard
        }

        /// Applies a day's records, in an order of their own (so any order of the journal's events gives the same).
        mutating func apply(_ records: [HifzRecord], on day: HifzDay, session: HifzSession) {
            let recent = recentStart(on: day.number)
            var inPool = [Bool](repeating: false, count: Catalog.totalAyat + 1)
            for global in order[..<recent] { inPool[global] = true }
            var learntToday: Set<Int> = []
            var revisedToday: Set<Int> = []
            var markedWeak: Set<Int> = []
            for record in records {
                switch record.what {
                case .heard(let part, let ayat):
                    for global in ayat {
                        if part == .sabaq && learnt[global] == nil { learntToday.insert(global) }
                        if learnt[global] != nil && (part != .sabaq || inPool[global]) { revisedToday.insert(global) }
                    }
                case .mark(let mark, let ayat):
                    for global in ayat {
                        if mark == .memorised && learnt[global] == nil { learntToday.insert(global) }
                        if mark == .weak { markedWeak.insert(global) }
                    }
                }
            }
            for global in revisedToday { lastRevised[global] = day.number }
            for global in revisedToday where weak[global] != nil && !markedWeak.contains(global) {
                let clean = weak[global]! + 1
                weak[global] = clean >= plan.weakClean ? nil : clean
            }
            // A mistake in an ayah not memorised (yet) is the lesson's business, not revision's.
            for global in markedWeak where learnt[global] != nil || learntToday.contains(global) { weak[global] = 0 }
            for global in learntToday.sorted(by: { (place[$0] ?? Int.max, $0) < (place[$1] ?? Int.max, $1) }) {
                learnt[global] = day.number
                lastRevised[global] = day.number
                orderIndex[global] = order.count
                order.append(global)
            }
            while nextNew < sequence.count && learnt[sequence[nextNew]] != nil { nextNew += 1 }
        }
    }
}

/// A day's session: its parts in the order played (empty ones left out).
public struct HifzSession: Sendable, Hashable {
    public struct Part: Sendable, Hashable {
        public let kind: HifzPart
        /// Global numbers, in the order played.
        public let ayat: [Int]
        public let options: PlaybackOptions

        public init(kind: HifzPart, ayat: [Int], options: PlaybackOptions) {
            self.kind = kind
            self.ayat = ayat
            self.options = options
        }
    }

    /// What became of the new lesson.
    public enum Lesson: Sendable, Hashable {
        case new
        /// Paused: the manzil is this many days behind, more than the plan allows.
        case paused(behindDays: Double)
        /// Everything in the plan is memorised.
        case complete
    }

    public let day: HifzDay
    public let parts: [Part]
    public let lesson: Lesson

    public init(day: HifzDay, parts: [Part], lesson: Lesson) {
        self.day = day
        self.parts = parts
        self.lesson = lesson
    }

    public var isEmpty: Bool { parts.isEmpty }

    /// The part of this kind, if the session has one.
    public func part(_ kind: HifzPart) -> Part? { parts.first { $0.kind == kind } }

    /// Whether every part was heard in full (`heard`: ayat heard in full, by part).
    public func isDone(_ heard: [HifzPart: Set<Int>]) -> Bool {
        !parts.isEmpty && parts.allSatisfy { part in part.ayat.allSatisfy { heard[part.kind]?.contains($0) == true } }
    }
}

/// Today's session and where the journey stands.
public struct HifzOutlook: Sendable {
    /// The manzil cycle as it stands at the start of today.
    public struct Cycle: Sendable, Hashable {
        public let days: Int
        public let poolAyat: Int
        /// The pool, in millionths of a page.
        public let poolWeight: Int
        /// Of the pool, what was revised in the last cycle's days.
        public let revisedWeight: Int
        /// Of the pool, what has gone longer than a cycle unrevised.
        public let overdueWeight: Int
        /// Days past its cycle of the ayah revised longest ago (0: on time).
        public let behindDays: Double
    }

    public let session: HifzSession
    /// Ayat heard in full today, by part.
    public let heard: [HifzPart: Set<Int>]
    /// Memorised ayat, in the order learnt, at the start of today (today's sabaq not yet among them).
    public let memorised: [Int]
    /// Memorised, today's records included.
    public let memorisedNow: [Int]
    /// Weak ayat and their clean revisions so far (today's records included), in mushaf order.
    public let weak: [(global: Int, clean: Int)]
    public let cycle: Cycle
    /// Days in a row, up to today, whose whole session was heard (today counts once it is).
    public let streak: Int
    public let longestStreak: Int
    /// Days whose whole session was heard, of `days` since the journey began.
    public let daysComplete: Int
    public let days: Int
    public let start: HifzDay
    public let weakClean: Int
    /// The plan's `pauseNewAfterDays`.
    public let pauseNewAfterDays: Int?

    init(
        session: HifzSession, heard: [HifzPart: Set<Int>], replay: HifzSchedule.Replay, after: HifzSchedule.Replay, streak: Int,
        longestStreak: Int, daysComplete: Int, days: Int, start: HifzDay
    ) {
        self.session = session
        self.heard = heard
        memorised = replay.order
        memorisedNow = after.order
        weak = after.weak.map { ($0.key, $0.value) }.sorted { $0.global < $1.global }
        cycle = replay.cycleNumbers(on: session.day.number, pool: replay.order[..<replay.recentStart(on: session.day.number)])
        self.streak = streak
        self.longestStreak = longestStreak
        self.daysComplete = daysComplete
        self.days = days
        self.start = start
        weakClean = replay.plan.weakClean
        pauseNewAfterDays = replay.plan.pauseNewAfterDays
    }

    /// How much of `part` was heard in full today: ayat heard and ayat in all.
    public func progress(_ part: HifzSession.Part) -> (heard: Int, total: Int) {
        let heardHere = heard[part.kind] ?? []
        return (part.ayat.filter { heardHere.contains($0) }.count, part.ayat.count)
    }
}
