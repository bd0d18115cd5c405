import FoundationEssentials
import Glibc
import TartilCache
import TartilCore
import TartilPlayer

/// `tartil table build`: reciter tables from folders of MP3s.
enum TableCommands {
    static let group = CommandSpec(
        path: ["table"], overview: "Build reciter tables (sizes, SHA-256 hashes and exact sample counts).",
        run: nil)

    static let build = CommandSpec(
        path: ["table", "build"],
        overview: "Write a reciter table from a folder of SSSAAA.mp3 files.",
        discussion: """
            Every SSSAAA.mp3 in the folder is hashed (SHA-256) and decoded with mpg123 (gapless trimming on) to \
            count its PCM frames exactly; the rows are written in mushaf order, atomically. SSS000.mp3 basmala \
            files and other names are skipped and reported. If any file cannot be decoded, nothing is written.
            """,
        arguments: [.init(name: "dir", help: "The folder of MP3 files.")],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter id written in the table's header.", required: true),
            .init(
                names: ["-o", "--to"], valueName: "file", help: "Where to write (default: <tables dir>/<id>.tsv).",
                formerNames: ["--output"]),
            .init(names: ["--source"], valueName: "text", help: "Where the files came from, for the '# source:' header (default: the folder)."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil table build ~/mp3/alafasy --reciter alafasy-128",
            "tartil table build ../shared/real/audio/ibrahim-alakhdar --reciter ibrahim-alakhdar -o reciter-tables/ibrahim-alakhdar.tsv",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            // Any id: a table may be made for a reciter mirrors.json does not list yet.
            guard let name = invocation.value("--reciter") ?? context.settings.defaultReciter else {
                throw TartilError.usage("table build needs --reciter <id>: the id the table is for")
            }
            let reciter = try ReciterID(name.lowercased())
            let directory = invocation.arguments[0]
            let output = invocation.value("--to")
                ?? Path.join(context.settings.tableOutputDirectory, "\(reciter).tsv")
            let source = invocation.value("--source") ?? directory
            let console = context.console
            let showProgress = console.errorIsTerminal && format == .text
            let result = try TableBuilder.build(
                directory: directory, reciter: reciter, source: source,
                isCancelled: { Interrupt.isPending },
                progress: { done, total in
                    if showProgress { console.writeError("\r\u{1B}[Kdecoding and hashing \(done)/\(total)") }
                })
            if showProgress { console.writeError("\r\u{1B}[K") }
            do {
                try AtomicFile.write(Data(result.table.rendered().utf8), to: output)
            } catch {
                throw TartilError(.io, "cannot write the table: \(error)")
            }
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
