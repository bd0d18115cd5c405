import TartilSession
import TartilCore

/// `tartil table build`: reciter tables from folders of MP3s.
enum TableCommands {
    static let group = CommandSpec(
        path: ["table"], overview: "Build reciter tables (sizes, SHA-256 hashes and exact sample counts).",
        run: nil)

    static let build = CommandSpec(
        path: ["table", "build"],
        overview: "Write a reciter table from a folder of SSSAAA.mp3 files (or of SSS.mp3 surah files with timings), or from the cache.",
        discussion: """
            Every SSSAAA.mp3 in the folder is hashed (SHA-256) and decoded with mpg123 (gapless trimming on) to \
            count its PCM frames exactly; the rows are written in mushaf order, atomically. SSS000.mp3 basmala \
            files and other names are skipped and reported. If any file cannot be decoded, nothing is written. \
            With --from-cache ID instead of a folder, the table is made from ID's files verified in the cache \
            (each hashed again and checked against the hash it was verified with; sample counts the cache \
            remembers are not decoded again), and its '# source:' line says they were trusted on first use, from \
            which mirrors, and how many were cross-checked: share it, or put it in a tables folder to pin them.

            With --timings-format quranstatic|mp3quran, the folder holds one SSS.mp3 per surah instead, with a \
            timing file per surah (SSS.json or S.json, in --timings DIR, by default the folder's timings/ or the \
            folder itself), and a surah table (format 2) is written: per file its size, SHA-256, samples and rate; \
            per ayah (and basmala) its samples, which cover the file with no gap (a pause between two ayat belongs \
            to the one before it), and the byte range that decodes it alone, with that range's SHA-256. Every \
            range is decoded and checked sample for sample against the whole file's decode.
            """,
        arguments: [.init(name: "dir", help: "The folder of MP3 files (or --from-cache).", optional: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter id written in the table's header (default with --from-cache: that reciter)."),
            .init(names: ["--from-cache"], valueName: "id", help: "Build from this reciter's files verified in the cache, not a folder."),
            .init(
                names: ["-o", "--to"], valueName: "file", help: "Where to write (default: <tables dir>/<id>.tsv).",
                formerNames: ["--output"]),
            .init(
                names: ["--timings-format"], valueName: "format",
                help: "The folder holds SSS.mp3 surah files with timing files in this format (quranstatic or mp3quran)."),
            .init(names: ["--timings"], valueName: "dir", help: "Where the timing files are (default: <dir>/timings, or <dir>)."),
            .init(names: ["--source"], valueName: "text", help: "Where the files came from, for the '# source:' header (default: the folder)."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil table build ~/mp3/alafasy --reciter alafasy-128",
            "tartil table build ../shared/real/audio/ibrahim-alakhdar --reciter ibrahim-alakhdar -o reciter-tables/ibrahim-alakhdar.tsv",
            "tartil table build --from-cache alafasy-128 -o alafasy-128.tsv",
            "tartil table build ~/mp3/husary-surahs --timings-format quranstatic --reciter husary-surah",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let console = context.console
            let showProgress = console.errorIsTerminal && format == .text
            if let timingsFormat = invocation.value("--timings-format") {
                if let cache = invocation.value("--from-cache") {
                    throw TartilError.usage("--timings-format builds from a folder of surah files, not --from-cache \(cache)")
                }
                try buildSurahTable(invocation, context, timingsFormat: timingsFormat, format: format, showProgress: showProgress)
                return
            }
            if let timings = invocation.value("--timings") {
                throw TartilError.usage("--timings \(timings) needs --timings-format quranstatic or mp3quran: the shape of the timing files")
            }
            let result = try context.session.buildTable(
                directory: invocation.arguments.first, fromCache: invocation.value("--from-cache"), reciter: invocation.value("--reciter"),
                output: invocation.value("--to"), source: invocation.value("--source"), settings: context.settings,
                isCancelled: context.isCancelled,
                progress: { done, total in
                    if showProgress { console.writeError("\r\u{1B}[Kdecoding and hashing \(done)/\(total)") }
                })
            if showProgress { console.writeError("\r\u{1B}[K") }
            let output = result.path
            let reciter = result.table.reciter
            let seconds = result.table.files.values.reduce(0) { $0 + $1.seconds }
            let bytes = result.table.files.values.reduce(0) { $0 + $1.bytes }
            let fields: Fields = [
                ("table", .string(output)),
                ("reciter", .string(reciter.rawValue)),
                ("ayat", .int(result.table.coverage)),
                ("complete_surahs", .array(result.completeSurahs.map(JSONValue.int))),
                ("bytes", .int(bytes)),
                ("duration_ms", .int(Int((seconds * 1000).rounded()))),
                ("skipped", .array(result.skipped.map { .object([("file", .string($0.file)), ("reason", .string($0.reason))]) })),
            ]
            context.console.print(report: fields, as: format) {
                let complete = result.completeSurahs
                context.console.line(
                    "wrote \(output): \(Plural.count(result.table.coverage, "ayah")), \(Formatting.bytes(bytes)), \(Formatting.duration(seconds: seconds))")
                context.console.line(
                    "complete surahs: \(complete.isEmpty ? "none" : complete.map(String.init).joined(separator: ", "))")
                for skipped in result.skipped { context.console.note("skipped \(skipped.file): \(skipped.reason)") }
            }
        })

    static let relearn = CommandSpec(
        path: ["table", "relearn"],
        overview: "Learn surahs of a reciter of one file per surah again from its mirrors (after they replaced its files).",
        discussion: """
            A reciter of one file per surah that publishes its timings learns each surah on first use: its timing \
            file and its whole file, cross-checked between mirrors, cut and checked sample for sample, and its rows \
            kept in <cache dir>/<id>/surah-table.tsv. Those rows pin the surah from then on, so if its mirrors \
            later replace the file (a new encoding), its ayat fail their hashes, and the message names this command. \
            relearn learns the surahs the references touch again, the same way: a surah whose mirrors serve the \
            file that was learned, cut at the same times, is unchanged; one whose file changed gets new rows and \
            parts; one whose file is the same but whose published timings changed is retimed (cut again at the new \
            times: new rows and parts); one that cannot be \
            learned (the mirrors disagree, a timing file is missing) keeps what was learned before, and the exit \
            code is 1. A surah pinned by a table in the tables folder, a per-ayah reciter, or one that publishes no \
            timings is a usage error (exit 64), before anything is fetched. Ctrl-C stops it (exit 130); the surah \
            being learned keeps what it had.
            """,
        arguments: [.init(name: "ref", help: "The surahs to learn again: 2, 112-114, juz 30, …", repeating: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter (default: the configured one)."),
            OutputFormat.option(),
        ],
        examples: ["tartil table relearn 2 --reciter ibrahim-alakhdar-gapless", "tartil table relearn 112-114 --reciter emad-al-mansary-gapless --json"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let console = context.console
            let showProgress = console.errorIsTerminal && format == .text
            let (reciter, surahs) = try context.session.relearn(
                try ReferenceParser.parse(invocation.arguments), reciter: invocation.value("--reciter"), settings: context.settings,
                isCancelled: context.isCancelled,
                progress: { surah in
                    if showProgress { console.writeError("\r\u{1B}[Klearning surah \(surah) again") }
                })
            if showProgress { console.writeError("\r\u{1B}[K") }
            let rows: [Fields] = surahs.map { result in
                [
                    ("reciter", .string(reciter.rawValue)), ("surah", .int(result.surah)), ("outcome", .string(result.outcome.rawValue)),
                    ("bytes", .int(result.file?.bytes)), ("sha256", .string(result.file?.sha256)),
                    ("previous_sha256", .string(result.previous?.sha256)), ("error", .string(result.error)),
                ]
            }
            console.print(Listing(columns: rows.first?.map(\.0) ?? [], rows: rows), as: format) {
                for result in surahs {
                    let file = result.file.map { "\(Formatting.grouped($0.bytes)) bytes, sha256 \($0.sha256.prefix(16))…" } ?? ""
                    switch result.outcome {
                    case .unchanged: console.line("surah \(result.surah): unchanged (its mirrors serve the file learned: \(file))")
                    case .changed:
                        console.line("surah \(result.surah): learned again: its file changed (sha256 \(result.previous!.sha256.prefix(16))… → \(file))")
                    case .retimed:
                        console.line("surah \(result.surah): cut again: its file is the one learned (\(file)), but its rows were not what its published timings give now (the timings changed, or the learned table was edited)")
                    case .learned: console.line("surah \(result.surah): learned (it had not been: \(file))")
                    case .failed:
                        console.line("surah \(result.surah): not learned\(result.previous == nil ? "" : " again"): \(result.error ?? "")\(result.previous == nil ? "" : " (what was learned before stays)")")
                    }
                }
            }
            let failed = surahs.filter { $0.outcome == .failed }.map(\.surah)
            if !failed.isEmpty {
                throw TartilError(.failure, "\(failed.count == 1 ? "surah" : "surahs") \(failed.map(String.init).joined(separator: ", ")) could not be learned again")
            }
        })

    /// `table build DIR --timings-format F`: a surah table, and its report.
    private static func buildSurahTable(
        _ invocation: Invocation, _ context: Context, timingsFormat: String, format: OutputFormat, showProgress: Bool
    ) throws(TartilError) {
        let console = context.console
        let result = try context.session.buildSurahTable(
            directory: invocation.arguments.first, timings: invocation.value("--timings"), format: timingsFormat,
            reciter: invocation.value("--reciter"), output: invocation.value("--to"), source: invocation.value("--source"), settings: context.settings,
            isCancelled: context.isCancelled,
            progress: { done, total in
                if showProgress { console.writeError("\r\u{1B}[Kdecoding, cutting and checking surah files \(done)/\(total)") }
            })
        if showProgress { console.writeError("\r\u{1B}[K") }
        let table = result.table
        let seconds = table.files.reduce(0.0) { $0 + Double($1.samples) / Double($1.sampleRate) }
        let bytes = table.files.reduce(0) { $0 + $1.bytes }
        let basmalas = table.files.filter { $0.basmala != nil }.count
        let fields: Fields = [
            ("table", .string(result.path)),
            ("reciter", .string(table.reciter.rawValue)),
            ("format", .int(SurahTable.formatVersion)),
            ("surahs", .array(table.files.map { .int($0.surah) })),
            ("ayat", .int(table.coverage)),
            ("basmalas", .int(basmalas)),
            ("bytes", .int(bytes)),
            ("duration_ms", .int(Int((seconds * 1000).rounded()))),
            ("largest_preroll_frames", .int(result.largestPreroll)),
            ("skipped", .array(result.skipped.map { .object([("file", .string($0.file)), ("reason", .string($0.reason))]) })),
        ]
        console.print(report: fields, as: format) {
            console.line(
                "wrote \(result.path): surah table, \(Plural.count(table.files.count, "surah")), \(Plural.count(table.coverage, "ayah")), "
                    + "\(Formatting.bytes(bytes)), \(Formatting.duration(seconds: seconds))")
            console.line(
                "surahs: \(table.files.map { String($0.surah) }.joined(separator: ", ")); every ayah's byte range checked sample for sample "
                    + "(at most \(Plural.count(result.largestPreroll, "frame")) decoded before one)")
            for skipped in result.skipped { console.note("skipped \(skipped.file): \(skipped.reason)") }
        }
    }
}
