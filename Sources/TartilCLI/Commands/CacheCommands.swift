import TartilSession
import Glibc
import TartilCore
import TartilSystem

/// `tartil cache …`: what is in the verified cache, checking it, pins, and importing files.
enum CacheCommands {
    static let group = CommandSpec(path: ["cache"], overview: "Inspect, verify, pin and fill the verified audio cache.", run: nil)

    static let reciterOption = CommandSpec.Option(names: ["--reciter"], valueName: "id", help: "Only this reciter.")

    static let ls = CommandSpec(
        path: ["cache", "ls"], overview: "List cached files per reciter: files, bytes, complete surahs, cross-check marks.",
        discussion: """
            A surah is complete when it plays offline: every ayah of it is cached, and the basmala's file (1:1) \
            for a surah other than 1 and 9, unless the configured basmala is off. Partly cached surahs show the \
            files playing them needs that are cached, of how many (the basmala's 1:1 counts as one of them). \
            Unpinned files show what the cross-check found: cross-checked (two mirrors, a majority of those that \
            answered, served the same whole file), single-source (only one mirror could serve it so far; the next \
            prefetch compares it again), disputed (the mirrors disagree with no majority: not played, its copies \
            kept aside until 'cache choose' picks one) or chosen (picked with 'cache choose'). \
            Fields (json, ndjson, csv), one row per reciter: reciter, files, bytes, complete_surahs, partial_surahs \
            (surah, cached, total, basmala_missing), cross_checked (how many), single_source and disputed (surah, ayah).
            """,
        options: [reciterOption, OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let summaries = try context.session.cacheSummaries(reciter: invocation.value("--reciter"), settings: context.settings)
            let directory = try context.session.cacheDirectory(context.settings)
            context.console.print(Listing(columns: summaryColumns, rows: summaries.map(fields)), as: format) {
                lsText(summaries, directory: directory, reciter: invocation.value("--reciter"), context.console)
            }
        })

    /// `cache ls` for people.
    static func lsText(_ summaries: [Session.CacheSummary], directory: String, reciter: String?, _ console: Console) {
        if summaries.isEmpty { console.paragraph(reciter.map { "nothing of \($0) is in the cache at \(directory)" } ?? "the cache at \(directory) is empty") }
        for summary in summaries {
            // On a terminal each line wraps at words, under its own text.
            console.paragraph("\(summary.reciter): \(Plural.count(summary.files, "file")), \(Formatting.bytes(summary.bytes))")
            let complete = summary.completeSurahs.map(String.init).joined(separator: ", ")
            console.paragraph("  complete surahs: \(complete.isEmpty ? "none" : complete)")
            if !summary.partialSurahs.isEmpty {
                let basmala = summary.layout == .surah ? "its basmala" : "the basmala 1:1"
                console.paragraph("  partly cached: " + summary.partialSurahs.map { "\($0.surah) (\($0.cached)/\($0.total)\($0.basmalaMissing ? ", without \(basmala)" : ""))" }.joined(separator: ", "))
            }
            if !summary.unlearnedSurahs.isEmpty {
                console.paragraph("  not learned (parts on disk that no table cuts; played, a surah is learned again): " + summary.unlearnedSurahs.map(String.init).joined(separator: ", "))
            }
            if let problem = summary.learnedTableProblem {
                console.paragraph("  its learned table is damaged, read as far as it can be: \(problem.controlCharactersShown)")
            }
            if let marks = marksLine(summary) { console.paragraph((summary.layout == .surah ? "  learned from its mirrors: " : "  unpinned: ") + marks) }
            for dispute in summary.disputes { console.paragraph("  " + dispute.message) }
        }
    }

    static let du = CommandSpec(
        path: ["cache", "du"], overview: "Show how much space the cache takes, per reciter.",
        discussion: "Fields (json, ndjson, csv), one row per reciter: reciter, files, bytes (the total is their sum).",
        options: [reciterOption, OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let summaries = try context.session.cacheSummaries(reciter: invocation.value("--reciter"), settings: context.settings)
            let listing = Listing(columns: ["reciter", "files", "bytes"], rows: summaries.map {
                [("reciter", .string($0.reciter)), ("files", .int($0.files)), ("bytes", .int($0.bytes))]
            })
            context.console.print(listing, as: format) {
                let total = summaries.reduce(0) { $0 + $1.bytes }
                var rows = summaries.map { [$0.reciter, Plural.count($0.files, "file"), Formatting.bytes($0.bytes)] }
                rows.append(["total", Plural.count(summaries.reduce(0) { $0 + $1.files }, "file"), Formatting.bytes(total)])
                let table = Formatting.table(rows, rightAligned: [1, 2])
                if let width = context.console.columns(), table.contains(where: { TerminalText.columns($0) > width }) {
                    // A terminal narrower than the table (a long reciter id): each reciter's id, its figures under it.
                    for row in rows {
                        for line in TextWrap.lines(row[0], width: width) { context.console.line(line) }
                        for line in TextWrap.lines("\(row[1]), \(row[2])", width: width, indent: 2) { context.console.line(line) }
                    }
                } else {
                    for line in table { context.console.line(line) }
                }
            }
        })

    static let verify = CommandSpec(
        path: ["cache", "verify"],
        overview: "Re-hash every cached file; remove bad ones (and download them again with --repair).",
        discussion: """
            Each file is checked against its reciter's table, or against the hash recorded when it was first \
            downloaded; files are hashed on all cores. A file that fails, or that nothing vouches for, or a symbolic \
            link at a cached file's name, is removed (a link: the link only). Unpinned files only one mirror vouches \
            for so far (single-source; a matching hash proves only that they did not change) and disputed ayat (not \
            played: choose a copy with 'cache choose') are listed. Exit 0 only when every file is good and no ayah \
            is disputed (after --repair, when every removed file came back verified). \
            --repair records the files it removes in <cache>/repairs-pending.tsv before removing them: a repair \
            killed midway is finished by the next --repair, and a plain verify meanwhile lists them as missing \
            (exit 1). Fields (json, ndjson, csv): checked, good, removed (reciter, surah, ayah, reason), repaired, \
            single_source (reciter, surah, ayah), disputed (reciter, surah, ayah, copies: mirror, bytes, sha256, \
            path) and awaiting_repair (reciter, surah, ayah).
            """,
        options: [reciterOption, .init(names: ["--repair"], valueName: nil, help: "Download removed files again.")] + DownloadLimits.timeoutOptions
            + [OutputFormat.option()],
        run: runVerify)

    static let choose = CommandSpec(
        path: ["cache", "choose"],
        overview: "Settle a disputed ayah: make the copy one mirror served its file.",
        discussion: """
            When the mirrors of an unpinned ayah serve different files and no majority of them agrees, the ayah is \
            disputed: it is not played, and each mirror's copy is kept aside (cache verify lists them with their \
            paths, so each can be listened to). This makes the copy that MIRROR served the ayah's file, checked \
            again (its SHA-256 as kept, one whole MPEG audio stream), marked chosen; the other copies are removed. \
            For a reciter of one file per surah whose mirrors disagree on a surah's file (so it cannot be learned), \
            give the surah: it is learned from that mirror's file alone (fetched, cut and checked as on first use), \
            and its learned table says chosen. \
            Fields (json, ndjson, csv): reciter, surah, ayah (null for a surah), mirror, bytes, sha256.
            """,
        arguments: [.init(name: "ref", help: "The disputed ayah (surah:ayah), or a surah of a reciter of one file per surah.")],
        options: [
            .init(names: ["--mirror"], valueName: "name", help: "The mirror whose copy to keep (its name in mirrors.json)."),
            .init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."), OutputFormat.option(),
        ],
        examples: ["tartil cache choose 36:5 --reciter alafasy --mirror everyayah", "tartil cache choose 114 --reciter ibrahim-alakhdar-gapless --mirror quranstatic"],
        run: runChoose)

    static func runChoose(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let ayat = ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments))
        guard let mirror = invocation.value("--mirror") else {
            throw TartilError.usage("cache choose needs --mirror NAME: the mirror whose copy to keep (cache verify lists them)")
        }
        // A reciter of one file per surah: a surah (any of its ayat names it) is learned from that mirror's file.
        let surahs = Set(ayat.map(\.surah))
        if surahs.count == 1, let (reciter, file) = try context.session.chooseSurahFile(
            surahs.first!, mirror: mirror, reciter: invocation.value("--reciter"), settings: context.settings, isCancelled: context.isCancelled)
        {
            let fields: Fields = [
                ("reciter", .string(reciter.rawValue)), ("surah", .int(surahs.first!)), ("ayah", .int(nil)),
                ("mirror", .string(mirror)), ("bytes", .int(file.bytes)), ("sha256", .string(file.sha256)),
            ]
            context.console.print(report: fields, as: format) {
                context.console.line("surah \(surahs.first!) of \(reciter): learned from \(mirror)'s file (\(file.bytes) bytes, sha256 \(file.sha256.prefix(12))…), marked chosen")
            }
            return
        }
        guard ayat.count == 1 else {
            throw TartilError.usage("cache choose takes one ayah (surah:ayah), not \(Plural.count(ayat.count, "ayah")); for a reciter of one file per surah, one surah")
        }
        let chosen = try context.session.chooseCopy(of: ayat[0], mirror: mirror, reciter: invocation.value("--reciter"), settings: context.settings)
        let fields: Fields = [
            ("reciter", .string(chosen.reciter.rawValue)), ("surah", .int(ayat[0].surah)), ("ayah", .int(ayat[0].ayah)),
            ("mirror", .string(chosen.mirror)), ("bytes", .int(chosen.bytes)), ("sha256", .string(chosen.sha256)),
        ]
        context.console.print(report: fields, as: format) {
            context.console.line("\(ayat[0]) of \(chosen.reciter): kept the copy from \(chosen.mirror) (\(chosen.bytes) bytes, sha256 \(chosen.sha256.prefix(12))…), marked chosen")
        }
    }

    static let pin = CommandSpec(
        path: ["cache", "pin"], overview: "Keep ayat in the cache: pinned files are never evicted.",
        discussion: """
            Eviction (prefetch --max-size) also keeps every file playing a pinned ayah needs: the basmala's file \
            (1:1) stays while ayah 1 of any surah but 1 and 9 is pinned.
            """,
        arguments: [.init(name: "ref", help: "Ayat to pin.", repeating: true)],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: { invocation, context in try setPinned(true, invocation, context) })

    static let unpin = CommandSpec(
        path: ["cache", "unpin"], overview: "Let pinned ayat be evicted again.",
        arguments: [.init(name: "ref", help: "Ayat to unpin.", repeating: true)],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: { invocation, context in try setPinned(false, invocation, context) })

    static let importFiles = CommandSpec(
        path: ["cache", "import"],
        overview: "Put MP3 files you already have into the cache, verified like downloads.",
        discussion: """
            Every SSSAAA.mp3 in the folder is checked against the reciter's table (or, for an unpinned ayah, must \
            decode as MPEG audio and then has its hash recorded) and copied in atomically. Files that fail, and \
            entries that cannot be read (no permission, a symbolic link to nothing, a folder or a pipe at an \
            SSSAAA.mp3 name, a file larger than the ayah's), are reported as rejected with why, and the rest are \
            imported all the same; exit 0 only when every file was imported or already cached, else 1 once all are \
            done (130 when interrupted).
            """,
        arguments: [.init(name: "dir", help: "A folder of SSSAAA.mp3 files.")],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter the files are from [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: runImport)

    // MARK: - Summaries

    static let summaryColumns = [
        "reciter", "files", "bytes", "complete_surahs", "partial_surahs", "unlearned_surahs", "learned_table_problem", "cross_checked",
        "single_source", "disputed",
    ]

    static func fields(_ summary: Session.CacheSummary) -> Fields {
        [
            ("reciter", .string(summary.reciter)), ("files", .int(summary.files)), ("bytes", .int(summary.bytes)),
            ("complete_surahs", .array(summary.completeSurahs.map(JSONValue.int))),
            ("partial_surahs", .array(summary.partialSurahs.map {
                .object([("surah", .int($0.surah)), ("cached", .int($0.cached)), ("total", .int($0.total)), ("basmala_missing", .bool($0.basmalaMissing))])
            })),
            ("unlearned_surahs", .array(summary.unlearnedSurahs.map(JSONValue.int))),
            ("learned_table_problem", .string(summary.learnedTableProblem)),
            ("cross_checked", .int(summary.marks[.crossChecked]?.count ?? 0)),
            ("single_source", .array((summary.marks[.singleSource] ?? []).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ("disputed", .array((summary.marks[.disputed] ?? []).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
        ]
    }

    /// `3 cross-checked, 1 single-source (112:4), 1 disputed (112:1)`, or nil when no file has a mark.
    static func marksLine(_ summary: Session.CacheSummary) -> String? {
        let parts = SourceMark.allCases.compactMap { mark -> String? in
            guard let ayat = summary.marks[mark], !ayat.isEmpty else { return nil }
            let listed = mark == .crossChecked ? "" : " (" + ayat.prefix(10).map(\.description).joined(separator: ", ") + (ayat.count > 10 ? ", …" : "") + ")"
            return "\(ayat.count) \(mark.rawValue)" + listed
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    // MARK: - Verify

    static func runVerify(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let repair = invocation.flag("--repair")
        let console = context.console
        let result = try context.session.verifyCache(
            reciter: invocation.value("--reciter"), repair: repair, settings: context.settings,
            limits: repair ? try context.settings.downloadLimits(options: invocation) : nil, isCancelled: context.isCancelled
        ) { events, _ in
            var lines = PrefetchCommand.ReportLines()
            for event in events { PrefetchCommand.report(event, json: format != .text, showBar: false, into: &lines) }
            lines.write(to: console)
        }
        func fileJSON(_ file: Session.CachedAyah) -> JSONValue {
            .object([("reciter", .string(file.reciter)), ("surah", .int(file.ayah.surah)), ("ayah", .int(file.ayah.ayah))])
        }
        let bad = result.removed
        let fields: Fields = [
            ("checked", .int(result.checked)),
            ("good", .int(result.checked - bad.count)),
            ("removed", .array(bad.map { file, reason in
                .object([("reciter", .string(file.reciter)), ("surah", .int(file.ayah.surah)), ("ayah", .int(file.ayah.ayah)), ("reason", .string(reason))])
            })),
            ("repaired", .int(result.repaired)),
            ("single_source", .array(result.singleSource.map(fileJSON))),
            ("disputed", .array(result.disputed.map { dispute in
                .object([
                    ("reciter", .string(dispute.reciter)), ("surah", .int(dispute.ayah.surah)), ("ayah", .int(dispute.ayah.ayah)),
                    ("copies", .array(dispute.copies.map { .object([("mirror", .string($0.mirror)), ("bytes", .int($0.bytes)), ("sha256", .string($0.sha256)), ("path", .string($0.path))]) })),
                ])
            })),
            ("awaiting_repair", .array(result.awaitingRepair.map(fileJSON))),
            ("learned_table_problems", .array(result.learnedTableProblems.map { .object([("reciter", .string($0.reciter)), ("problem", .string($0.problem))]) })),
        ]
        console.print(report: fields, as: format) {
            for (file, reason) in bad { console.note("removed \(file.reciter)/\(file.ayah.fileStem).mp3: \(reason)") }
            for dispute in result.disputed {
                console.note("disputed \(dispute.reciter) " + dispute.message)
                for copy in dispute.copies { console.note("  the copy from \(copy.mirror): \(copy.path)") }
            }
            for file in result.singleSource {
                console.note("single-source \(file.reciter)/\(file.ayah.fileStem).mp3: only one mirror could serve it so far (the next prefetch compares it with another; a part of a surah learned from one mirror: `tartil table relearn \(file.ayah.surah) --reciter \(file.reciter)` asks every mirror again)")
            }
            for failure in result.repairFailures { console.note("could not repair \(failure.ayah): \(failure.reason)") }
            for (reciter, problem) in result.learnedTableProblems {
                console.note("\(reciter)'s learned table is damaged, read as far as it can be (a surah whose rows do not read is learned again when wanted): \(problem.controlCharactersShown)")
            }
            for file in result.awaitingRepair {
                console.note("missing \(file.reciter)/\(file.ayah.fileStem).mp3: removed by a repair that did not finish; run 'tartil cache verify --repair' to download it again")
            }
            let singles = result.singleSource.count
            let disputes = result.disputed.count
            let markText = singles + disputes == 0 ? "" : "; unpinned: \(singles) single-source, \(disputes) disputed"
            console.paragraph("\(Plural.count(result.checked, "file")) checked: \(result.checked - bad.count) good, \(bad.count) bad (removed)"
                + (repair ? ", \(result.repaired) downloaded again" : "") + markText)
        }
        if result.interrupted { throw TartilError(.interrupted, "verification stopped") }
        let unrepaired = repair ? result.awaitingRepair.count : bad.count + result.awaitingRepair.count
        if unrepaired > 0 {
            throw TartilError(
                .failure,
                "\(unrepaired) bad file(s) are not in the cache any more" + (repair ? "" : ": `tartil cache verify --repair` downloads them again"))
        }
        if !result.learnedTableProblems.isEmpty {
            throw TartilError(.failure, "the learned table of \(result.learnedTableProblems.map(\.reciter).joined(separator: ", ")) is damaged")
        }
        if !result.disputed.isEmpty {
            throw TartilError(.failure, "\(Plural.count(result.disputed.count, "ayah")) disputed (not played): choose a copy of each with tartil cache choose REF --reciter ID --mirror NAME")
        }
    }

    // MARK: - Pins

    static func setPinned(_ pinned: Bool, _ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let ayat = ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(invocation.arguments))
        let reciter = try context.session.setPinned(pinned, ayat: ayat, reciter: invocation.value("--reciter"), settings: context.settings)
        context.console.print(report: [("reciter", .string(reciter.rawValue)), (pinned ? "pinned" : "unpinned", .int(ayat.count))], as: format) {
            context.console.line("\(pinned ? "pinned" : "unpinned") \(Plural.count(ayat.count, "ayah")) of \(reciter)")
        }
    }

    // MARK: - Import

    static func runImport(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let report = try context.session.importFiles(
            from: invocation.arguments[0], reciter: invocation.value("--reciter"), settings: context.settings, isCancelled: context.isCancelled)
        if report.interrupted { throw TartilError(.interrupted, "import stopped after \(Plural.count(report.imported, "file"))") }
        let fields: Fields = [
            ("imported", .int(report.imported)), ("already_cached", .int(report.alreadyCached)),
            ("rejected", .array(report.rejected.map { .object([("file", .string($0.file)), ("reason", .string($0.reason))]) })),
        ]
        context.console.print(report: fields, as: format) {
            for (name, reason) in report.rejected { context.console.note("rejected \(name): \(reason)") }
            context.console.line("\(report.imported) imported, \(report.alreadyCached) already cached, \(report.rejected.count) rejected")
        }
        if !report.rejected.isEmpty {
            throw TartilError(.failure, "\(Plural.count(report.rejected.count, "file")) \(Plural.word(report.rejected.count, "was")) not imported")
        }
    }
}
