import TartilCore
import TartilSession

/// `hifz plan|today|play|status|mark`: the memorisation journey. The plan and marks are journal events, and so
/// is what each day's session heard; the schedule is `HifzSchedule`'s, a pure function of them and today.
enum HifzCommands {
    static let group = CommandSpec(
        path: ["hifz"], overview: "The memorisation journey: a plan, today's lesson and revision, progress from what was heard.", run: nil)

    /// `--date`: the day to look at or play instead of today.
    static let dateOption = CommandSpec.Option(
        names: ["--date"], valueName: "yyyy-mm-dd", help: "That day instead of today (to look ahead, or to play a day missed).")

    /// The plan's fields as options (`--daily`, `--manzil`…).
    static let planFieldOptions: [CommandSpec.Option] = HifzPlan.fieldNames.map { name in
        CommandSpec.Option(names: ["--" + name], valueName: name.hasSuffix("options") ? "settings" : "value", help: capitalized(HifzPlan.fieldForms[name] ?? "") + ".")
    }

    static let plan = CommandSpec(
        path: ["hifz", "plan"],
        overview: "Set what is being memorised and how (or, with no option, show the plan).",
        discussion: """
            Each option changes one field of the plan in force (of the defaults with --reset, or when there is no \
            plan yet) and records the whole plan as a hifz-plan event in the journal: it syncs and merges like \
            positions, and the latest plan (by time, device id, event id) is the plan on every device. The journey \
            starts on the day of the first plan. Defaults: --direction an-nas, --daily 5 ayat, --sabqi 7 days, \
            --manzil 30 days, --revision-cap 2x, --pause-new-after 3 days, --weak-clean 3, --day-start 00:00, \
            --memorised none, --sabaq-options 'repeat=5 pause=1x', --sabqi-options repeat=2, --manzil-options none. \
            Pages and lines are of the Madinah mushaf (604 pages, 15 lines each); an ayah counts as its page's share \
            (a page of n ayat gives each 1/n). A bad value is a usage error (exit 64) and nothing is recorded. \
            Fields (json, csv): \(planFields.joined(separator: ", ")).
            """,
        options: planFieldOptions + [
            .init(names: ["--reset"], valueName: nil, help: "Start from the defaults, not from the plan in force."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil hifz plan --direction an-nas --daily 5 --memorised 112-114",
            "tartil hifz plan --daily 0.5pages --sabqi '1 juz' --manzil 20 --day-start 04:30",
            "tartil hifz plan --sabaq-options 'stepped=window=3 repeat=3 pause=1x'",
            "tartil hifz plan --json",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let journey = try context.session.hifzJourney(settings: context.settings)
            let changes = HifzPlan.fieldNames.compactMap { name in invocation.value("--" + name).map { (name, $0) } }
            var plan = invocation.flag("--reset") ? HifzPlan() : journey.plan ?? HifzPlan()
            for (name, value) in changes { try plan.set(name, to: value) }
            for problem in journey.problems { context.console.note("note: \(problem)") }
            let recorded: Bool
            if changes.isEmpty && !invocation.flag("--reset") {
                guard journey.plan != nil else {
                    throw TartilError(.usage, "there is no hifz plan yet: set one with options, e.g. tartil hifz plan --daily 5 --memorised 112-114")
                }
                recorded = false
            } else {
                _ = try context.session.setHifzPlan(plan, settings: context.settings)
                recorded = true
            }
            context.console.print(report: planObject(plan), as: format) {
                if recorded { context.console.note("recorded the plan") }
                for name in HifzPlan.fieldNames { context.console.line(Formatting.left(name, 16) + plan.text(of: name)) }
            }
        })

    static let planFields = HifzPlan.fieldNames.map { $0.replacingEvery("-", with: "_") }

    static func planObject(_ plan: HifzPlan) -> Fields {
        HifzPlan.fieldNames.map { ($0.replacingEvery("-", with: "_"), .string(plan.text(of: $0))) }
    }

    static let today = CommandSpec(
        path: ["hifz", "today"],
        overview: "Today's session: the new lesson (sabaq), recent revision (sabqi) and today's manzil portion.",
        discussion: """
            In the order 'hifz play' plays them, each with its ayat, its size in pages, the options it plays with, \
            and how many of its ayat were heard in full today. Today is local time, from the plan's --day-start. \
            The session stays the same all day however much of it is heard (a new plan changes it). The text says \
            when the new lesson is paused (revision too far behind) or the plan is complete. Fields (json: one \
            object, parts in 'parts'; csv, ndjson: one row per part): \(partFields.joined(separator: ", ")); json \
            adds lesson and behind_days.
            """,
        options: [dateOption, OutputFormat.option()],
        examples: ["tartil hifz today", "tartil hifz today --date 2026-12-04", "tartil hifz today --json"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let (journey, outlook) = try outlook(invocation, context)
            for problem in journey.problems { context.console.note("note: \(problem)") }
            let rows = outlook.session.parts.map { partObject($0, outlook) }
            switch format {
            case .json:
                context.console.json(.object([
                    ("day", .string(outlook.session.day.description)), ("journey_day", .int(outlook.days)),
                    ("lesson", .string(lessonWord(outlook.session.lesson))), ("behind_days", .double(rounded(outlook.cycle.behindDays))),
                    ("parts", .array(rows.map(JSONValue.object))),
                ]))
            case .text:
                context.console.line("hifz \(outlook.session.day) (day \(outlook.days) of the journey)")
                for part in outlook.session.parts {
                    let (heard, total) = outlook.progress(part)
                    wrapped(
                        context, indent: 8, Formatting.left(part.kind.rawValue, 8) + HifzAyatText.text(inOrder: part.ayat) + "  (" + Plural.count(part.ayat.count, "ayah") + ", "
                            + pagesText(HifzMeasure.weight(of: part.ayat)) + "; " + part.options.hifzText + ")  "
                            + (heard == total ? "done" : "\(heard)/\(total) heard"))
                }
                if let lesson = lessonNote(outlook) { wrapped(context, indent: 2, lesson) }
                if outlook.session.parts.isEmpty { context.console.line("nothing to recite today") }
            default:
                context.console.print(Listing(columns: partFields, rows: rows), as: format) {}
            }
        })

    static let partFields = ["day", "part", "ayat", "ayah_count", "pages", "options", "heard", "done"]

    static func partObject(_ part: HifzSession.Part, _ outlook: HifzOutlook) -> Fields {
        let (heard, total) = outlook.progress(part)
        return [
            ("day", .string(outlook.session.day.description)), ("part", .string(part.kind.rawValue)), ("ayat", .string(HifzAyatText.text(inOrder: part.ayat))),
            ("ayah_count", .int(total)), ("pages", .double(rounded(HifzMeasure.pages(HifzMeasure.weight(of: part.ayat))))),
            ("options", .string(part.options.hifzText)), ("heard", .int(heard)), ("done", .bool(heard == total)),
        ]
    }

    static let play = CommandSpec(
        path: ["hifz", "play"],
        overview: "Play today's session: what is left of it, part after part, each with its own options.",
        discussion: """
            One playback plan of the parts not yet heard in full today (all of them with --all; only some with \
            --part), so the scrubber, status, keys, MPRIS and the control socket work as for any play; 'set' is \
            refused (each part has its plan's options). It plays in this process. Progress is recorded as it is \
            heard: an ayah counts once every recitation the part asks of it (each repetition, review and cycle) \
            was heard from start to end; skipping with next, prev or seek counts none of what was skipped, and \
            what was heard before a stop counts as partial. The w key (and 'hifz mark weak' at the prompt) marks \
            the ayah being recited weak. Exit codes as for play.
            """,
        options: [
            .init(names: ["--part"], valueName: "parts", help: "Only these parts, comma-separated: sabaq, sabqi, manzil."),
            .init(names: ["--all"], valueName: nil, help: "Every part of the day, done or not."),
            dateOption,
        ] + ControlVerbs.planOptions.filter { ["--reciter", "--stop-after", "--speed", "--volume", "--connect-timeout", "--stall-timeout"].contains($0.names[0]) }
            + PlayCommands.outputOptions,
        examples: ["tartil hifz play", "tartil hifz play --part sabaq --reciter husary", "tartil hifz play --all --output silent"],
        run: { invocation, context in
            let (_, outlook) = try outlook(invocation, context)
            var wanted = Set(HifzPart.allCases)
            if let text = invocation.value("--part") {
                wanted = []
                let words = text.split(separator: ",").map { $0.trimmedWhitespace.lowercased() }.filter { !$0.isEmpty }
                guard !words.isEmpty else { throw TartilError(.usage, "--part takes parts, comma-separated: sabaq, sabqi, manzil") }
                for word in words {
                    guard let part = HifzPart(rawValue: word) else {
                        throw Suggestion.unknownValue(word, for: "--part", among: HifzPart.allCases.map(\.rawValue))
                    }
                    wanted.insert(part)
                }
            }
            let parts = outlook.session.parts.filter { part in
                wanted.contains(part.kind) && (invocation.flag("--all") || outlook.progress(part).heard < part.ayat.count)
            }
            guard !parts.isEmpty else {
                throw TartilError(
                    .usage,
                    outlook.session.parts.isEmpty
                        ? "there is nothing to recite on \(outlook.session.day)" + (lessonNote(outlook).map { ": \($0)" } ?? "")
                        : "\(outlook.session.day)'s \(wanted.count == 3 ? "session was" : "parts asked for were") heard in full already (--all plays them again)")
            }
            var request = PlayRequest(source: .hifz(HifzSession(day: outlook.session.day, parts: parts, lesson: outlook.session.lesson)))
            try request.take(invocation)
            for part in parts {
                context.console.note("\(part.kind.rawValue): \(HifzAyatText.text(inOrder: part.ayat)) (\(part.options.hifzText))")
            }
            let printsEvents = invocation.flag("--events")
            if printsEvents { context.events.set(true, session: context.session, console: context.console) }
            let started = try context.session.play(request, settings: context.settings)
            try PlayCommands.follow(started, remote: false, printsEvents: printsEvents, context)
        })

    static let status = CommandSpec(
        path: ["hifz", "status"],
        overview: "Where the journey stands: memorised, today's parts, streaks, weak ayat and what is overdue.",
        discussion: """
            Memorised: the plan's declared ayat, every ayah heard in full in a sabaq, and every ayah marked; in \
            ayat, pages (each ayah its page's share) and juz (each juz's share covered, added). A streak is days in a \
            row whose whole session was heard (today counts once it is). Overdue is \
            what has gone longer than a cycle unrevised, in pages; behind_days how many days past its cycle the \
            ayah revised longest ago is. Fields (json, ndjson, csv): \(statusFields.joined(separator: ", ")).
            """,
        options: [dateOption, OutputFormat.option()],
        examples: ["tartil hifz status", "tartil hifz status --format csv"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let (journey, outlook) = try outlook(invocation, context)
            for problem in journey.problems { context.console.note("note: \(problem)") }
            let fields = statusObject(outlook)
            context.console.print(report: fields, as: format) {
                let memorised = outlook.memorisedNow
                wrapped(
                    context, indent: 14, "memorised     \(Plural.count(memorised.count, "ayah")), \(pagesText(HifzMeasure.weight(of: memorised))), "
                        + "\(NumberText.format(rounded(HifzMeasure.juzShare(of: memorised)))) juz")
                let done = outlook.session.parts.filter { outlook.progress($0).heard == $0.ayat.count }.map(\.kind.rawValue)
                let left = outlook.session.parts.filter { outlook.progress($0).heard < $0.ayat.count }.map(\.kind.rawValue)
                wrapped(context, indent: 14, "today         \(outlook.session.day): done \(done.isEmpty ? "none" : done.joined(separator: ", ")); left \(left.isEmpty ? "none" : left.joined(separator: ", "))")
                wrapped(context, indent: 14, "streak        \(Plural.count(outlook.streak, "day")) (longest \(outlook.longestStreak)); \(outlook.daysComplete) of \(Plural.count(outlook.days, "day")) complete since \(outlook.start)")
                let weak = outlook.weak.map { "\(HifzAyatText.text([$0.global])) (\($0.clean)/\(outlook.weakClean))" }
                wrapped(context, indent: 14, "weak          " + (weak.isEmpty ? "none" : weak.joined(separator: ", ")))
                let cycle = outlook.cycle
                wrapped(
                    context, indent: 14, "manzil        cycle of \(Plural.count(cycle.days, "day")): \(pagesText(cycle.revisedWeight)) of \(pagesText(cycle.poolWeight)) revised in it; "
                        + (cycle.overdueWeight > 0 ? "overdue \(pagesText(cycle.overdueWeight)) (\(NumberText.format(rounded(cycle.behindDays))) days)" : "on time"))
                if let lesson = lessonNote(outlook) { wrapped(context, indent: 14, "new lesson    " + lesson) }
            }
        })

    static let statusFields = [
        "day", "journey_start", "journey_days", "memorised_ayat", "memorised_pages", "memorised_juz", "parts_done", "parts_left", "today_done",
        "streak_days", "longest_streak_days", "days_complete", "weak", "weak_count", "lesson", "behind_days", "overdue_pages",
        "cycle_days", "cycle_revised_pages", "cycle_pages",
    ]

    static func statusObject(_ outlook: HifzOutlook) -> Fields {
        let memorised = outlook.memorisedNow
        let done = outlook.session.parts.filter { outlook.progress($0).heard == $0.ayat.count }.map(\.kind.rawValue)
        let left = outlook.session.parts.filter { outlook.progress($0).heard < $0.ayat.count }.map(\.kind.rawValue)
        let cycle = outlook.cycle
        return [
            ("day", .string(outlook.session.day.description)), ("journey_start", .string(outlook.start.description)), ("journey_days", .int(outlook.days)),
            ("memorised_ayat", .int(memorised.count)), ("memorised_pages", .double(rounded(HifzMeasure.pages(HifzMeasure.weight(of: memorised))))),
            ("memorised_juz", .double(rounded(HifzMeasure.juzShare(of: memorised)))), ("parts_done", .string(done.joined(separator: ","))),
            ("parts_left", .string(left.joined(separator: ","))), ("today_done", .bool(left.isEmpty && !outlook.session.parts.isEmpty)),
            ("streak_days", .int(outlook.streak)), ("longest_streak_days", .int(outlook.longestStreak)), ("days_complete", .int(outlook.daysComplete)),
            ("weak", .string(HifzAyatText.text(outlook.weak.map(\.global)))), ("weak_count", .int(outlook.weak.count)),
            ("lesson", .string(lessonWord(outlook.session.lesson))), ("behind_days", .double(rounded(cycle.behindDays))),
            ("overdue_pages", .double(rounded(HifzMeasure.pages(cycle.overdueWeight)))),
            ("cycle_days", .int(cycle.days)), ("cycle_revised_pages", .double(rounded(HifzMeasure.pages(cycle.revisedWeight)))),
            ("cycle_pages", .double(rounded(HifzMeasure.pages(cycle.poolWeight)))),
        ]
    }

    static let mark = CommandSpec(
        path: ["hifz", "mark"],
        overview: "Mark ayat memorised, or weak (a mistake); with no reference, the ayah being recited.",
        discussion: """
            A mark is a journal event. Memorised ayat join the revision; a weak ayah also comes back in every day's \
            sabqi from the next day on, until it is revised cleanly on as many days as the plan's --weak-clean \
            (a day it is marked weak again does not count, and starts the count again). At the prompt and over \
            the control socket's player, 'hifz mark weak' with no reference marks the ayah playing; the w key does \
            the same.
            """,
        arguments: [
            .init(name: "memorised|weak", help: "The mark."),
            .init(name: "ref", help: "The ayat: 78:5, 78:1-10, 112-114 (default: the ayah playing).", repeating: true, optional: true),
        ],
        options: [OutputFormat.option()],
        examples: ["tartil hifz mark weak 78:17", "tartil hifz mark memorised 112-114"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let word = invocation.arguments[0].lowercased()
            guard let mark = HifzMark(rawValue: word == "memorized" ? "memorised" : word) else {
                throw Suggestion.unknownValue(invocation.arguments[0], for: "hifz mark", among: HifzMark.allCases.map(\.rawValue))
            }
            let refs = Array(invocation.arguments.dropFirst())
            let ayat = refs.isEmpty ? nil : ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(refs))
            let events = try context.session.markHifz(ayat, as: mark, settings: context.settings)
            let marked = events.compactMap { event in event.surah.flatMap { surah in event.ayah.flatMap { try? AyahRef(surah, $0).global } } }
            context.console.print(report: [("mark", .string(mark.rawValue)), ("ayat", .string(HifzAyatText.text(marked))), ("ayah_count", .int(marked.count))], as: format) {
                context.console.line("marked \(HifzAyatText.text(marked)) \(mark.rawValue)")
            }
        })

    // MARK: - Shared

    /// The journey's outlook on `--date` or today; a usage error before any plan or before the journey began.
    static func outlook(_ invocation: Invocation, _ context: Context) throws -> (HifzJourney, HifzOutlook) {
        var day: HifzDay?
        if let text = invocation.value("--date") {
            guard let given = HifzDay(text: text) else { throw TartilError(.usage, "--date takes a date as yyyy-mm-dd (2026-12-03), not '\(text)'") }
            day = given
        }
        if let day, day.number > context.session.hifzToday(plan: nil).number + 366 {
            throw TartilError(.usage, "--date \(day) is more than a year ahead: look at most 366 days ahead")
        }
        let (journey, outlook) = try context.session.hifzOutlook(on: day, settings: context.settings)
        guard journey.plan != nil else {
            throw TartilError(.usage, "there is no hifz plan yet: set one first, e.g. tartil hifz plan --daily 5 --memorised 112-114")
        }
        guard let outlook else {
            throw TartilError(.usage, "the journey starts on \(journey.start.map(\.description) ?? "the plan's day"): --date must not come before it")
        }
        return (journey, outlook)
    }

    static func lessonWord(_ lesson: HifzSession.Lesson) -> String {
        switch lesson {
        case .new: "new"
        case .paused: "paused"
        case .complete: "complete"
        }
    }

    static func lessonNote(_ outlook: HifzOutlook) -> String? {
        switch outlook.session.lesson {
        case .new: nil
        case .paused(let behind):
            "no new lesson today: the manzil is \(NumberText.format(rounded(behind))) days behind (the plan pauses it past \(outlook.pauseNewAfterDays.map(String.init) ?? "-")); revise to catch up"
        case .complete: "every ayah of the plan is memorised: revision goes on"
        }
    }

    static func pagesText(_ weight: Int) -> String {
        let pages = rounded(HifzMeasure.pages(weight))
        return "\(NumberText.format(pages)) \(pages == 1 ? "page" : "pages")"
    }

    /// A line of a hifz listing: on a terminal, wrapped at words to its width with its later lines under its
    /// value; to a pipe or a file, one line.
    static func wrapped(_ context: Context, indent: Int, _ text: String) {
        guard let width = context.console.columns() else { return context.console.line(text) }
        for line in TextWrap.lines(text, width: width, hangingIndent: indent) { context.console.line(line) }
    }

    /// `text` with its first letter in capitals, for help and field texts, which are English (ASCII): done on
    /// the bytes, since the generic Unicode case mapping's first use cost every start of tartil 250,000
    /// instructions (the options' help is made with the command table).
    static func capitalized(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard let first = bytes.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else { return text }
        bytes[0] = first - 32
        return String(decoding: bytes, as: UTF8.self)
    }

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
