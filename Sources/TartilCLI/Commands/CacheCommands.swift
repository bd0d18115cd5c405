import TartilSession
import FoundationEssentials
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
            Unpinned files show what the cross-check found when they were downloaded: cross-checked (another \
            mirror agreed), single-source (only one mirror could serve it) or disputed (the mirrors disagreed). \
            Fields (json, ndjson, csv), one row per reciter: reciter, files, bytes, complete_surahs, partial_surahs \
            (surah, cached, total), cross_checked (how many), single_source and disputed (surah, ayah).
            """,
        options: [reciterOption, OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let summaries = try context.session.cacheSummaries(reciter: invocation.value("--reciter"), settings: context.settings)
            let directory = try context.session.cacheDirectory(context.settings)
            context.console.print(Listing(columns: summaryColumns, rows: summaries.map(fields)), as: format) {
                lsText(summaries, directory: directory, context.console)
            }
        })

    /// `cache ls` for people.
    static func lsText(_ summaries: [Session.CacheSummary], directory: String, _ console: Console) {
        if summaries.isEmpty { console.line("the cache at \(directory) is empty") }
        for summary in summaries {
            console.line("\(summary.reciter): \(Plural.count(summary.files, "file")), \(Formatting.bytes(summary.bytes))")
            let complete = summary.completeSurahs.map(String.init).joined(separator: ", ")
            console.line("  complete surahs: \(complete.isEmpty ? "none" : complete)")
            if !summary.partialSurahs.isEmpty {
                console.line("  partly cached: " + summary.partialSurahs.map { "\($0.surah) (\($0.cached)/\($0.total))" }.joined(separator: ", "))
            }
            if let marks = marksLine(summary) { console.line("  unpinned: " + marks) }
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
                for line in Formatting.table(rows, rightAligned: [1, 2]) { context.console.line(line) }
            }
        })

    static let verify = CommandSpec(
        path: ["cache", "verify"],
        overview: "Re-hash every cached file; remove bad ones (and download them again with --repair).",
        discussion: """
            Each file is checked against its reciter's table, or against the hash recorded when it was first \
            downloaded; files are hashed on all cores. A file that fails, or that nothing vouches for, or a symbolic \
            link at a cached file's name, is removed (a link: the link only). Unpinned files marked single-source or \
            disputed when they were downloaded are listed (a matching hash proves only that they did not change). \
            Exit 0 only when every file is good (after --repair, when every removed file came back verified). \
            --repair records the files it removes in <cache>/repairs-pending.tsv before removing them: a repair \
            killed midway is finished by the next --repair, and a plain verify meanwhile lists them as missing \
            (exit 1). Fields (json, ndjson, csv): checked, good, removed (reciter, surah, ayah, reason), \
            repaired, single_source, disputed and awaiting_repair (reciter, surah, ayah).
            """,
        options: [reciterOption, .init(names: ["--repair"], valueName: nil, help: "Download removed files again."), OutputFormat.option()],
        run: runVerify)

    static let pin = CommandSpec(
        path: ["cache", "pin"], overview: "Keep ayat in the cache: pinned files are never evicted.",
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
            decode as MPEG audio and then has its hash recorded) and copied in atomically. Files that fail are \
            reported and left out; exit 0 only when every file was imported.
            """,
        arguments: [.init(name: "dir", help: "A folder of SSSAAA.mp3 files.")],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter the files are from [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: runImport)

    // MARK: - Summaries

    static let summaryColumns = ["reciter", "files", "bytes", "complete_surahs", "partial_surahs", "cross_checked", "single_source", "disputed"]

    static func fields(_ summary: Session.CacheSummary) -> Fields {
        [
            ("reciter", .string(summary.reciter)), ("files", .int(summary.files)), ("bytes", .int(summary.bytes)),
            ("complete_surahs", .array(summary.completeSurahs.map(JSONValue.int))),
            ("partial_surahs", .array(summary.partialSurahs.map { .object([("surah", .int($0.surah)), ("cached", .int($0.cached)), ("total", .int($0.total))]) })),
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
            reciter: invocation.value("--reciter"), repair: repair, settings: context.settings, isCancelled: context.isCancelled
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
            ("disputed", .array(result.disputed.map(fileJSON))),
            ("awaiting_repair", .array(result.awaitingRepair.map(fileJSON))),
        ]
        console.print(report: fields, as: format) {
            for (file, reason) in bad { console.note("removed \(file.reciter)/\(file.ayah.fileStem).mp3: \(reason)") }
            for file in result.disputed {
                console.note("disputed \(file.reciter)/\(file.ayah.fileStem).mp3: its mirrors disagreed when it was downloaded (it matches its recorded hash, which only one mirror vouches for)")
            }
            for file in result.singleSource {
                console.note("single-source \(file.reciter)/\(file.ayah.fileStem).mp3: only one mirror could serve it when it was downloaded")
            }
            for failure in result.repairFailures { console.note("could not repair \(failure.ayah): \(failure.reason)") }
            for file in result.awaitingRepair {
                console.note("missing \(file.reciter)/\(file.ayah.fileStem).mp3: removed by a repair that did not finish; run 'tartil cache verify --repair' to download it again")
            }
            let singles = result.singleSource.count
            let disputes = result.disputed.count
            let markText = singles + disputes == 0 ? "" : "; unpinned: \(singles) single-source, \(disputes) disputed"
            console.line("\(Plural.count(result.checked, "file")) checked: \(result.checked - bad.count) good, \(bad.count) bad (removed)"
                + (repair ? ", \(result.repaired) downloaded again" : "") + markText)
        }
        if result.interrupted { throw TartilError(.interrupted, "verification stopped") }
        let unrepaired = repair ? result.awaitingRepair.count : bad.count + result.awaitingRepair.count
        if unrepaired > 0 { throw TartilError(.failure, "\(unrepaired) bad file(s) are not in the cache any more") }
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
