import TartilSession
import TartilCore

/// `tartil table build`: reciter tables from folders of MP3s.
enum TableCommands {
    static let group = CommandSpec(
        path: ["table"], overview: "Build reciter tables (sizes, SHA-256 hashes and exact sample counts).",
        run: nil)

    static let build = CommandSpec(
        path: ["table", "build"],
        overview: "Write a reciter table from a folder of SSSAAA.mp3 files, or from the files verified in the cache.",
        discussion: """
            Every SSSAAA.mp3 in the folder is hashed (SHA-256) and decoded with mpg123 (gapless trimming on) to \
            count its PCM frames exactly; the rows are written in mushaf order, atomically. SSS000.mp3 basmala \
            files and other names are skipped and reported. If any file cannot be decoded, nothing is written. \
            With --from-cache ID instead of a folder, the table is made from ID's files verified in the cache \
            (each hashed again and checked against the hash it was verified with; sample counts the cache \
            remembers are not decoded again), and its '# source:' line says they were trusted on first use, from \
            which mirrors, and how many were cross-checked: share it, or put it in a tables folder to pin them.
            """,
        arguments: [.init(name: "dir", help: "The folder of MP3 files (or --from-cache).", optional: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter id written in the table's header (default with --from-cache: that reciter)."),
            .init(names: ["--from-cache"], valueName: "id", help: "Build from this reciter's files verified in the cache, not a folder."),
            .init(
                names: ["-o", "--to"], valueName: "file", help: "Where to write (default: <tables dir>/<id>.tsv).",
                formerNames: ["--output"]),
            .init(names: ["--source"], valueName: "text", help: "Where the files came from, for the '# source:' header (default: the folder)."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil table build ~/mp3/alafasy --reciter alafasy-128",
            "tartil table build ../shared/real/audio/ibrahim-alakhdar --reciter ibrahim-alakhdar -o reciter-tables/ibrahim-alakhdar.tsv",
            "tartil table build --from-cache alafasy-128 -o alafasy-128.tsv",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let console = context.console
            let showProgress = console.errorIsTerminal && format == .text
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
}
