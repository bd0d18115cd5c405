import TartilCore
import TartilPlayer

/// `tartil resolve REF… --reciter ID`: what a reference means for a reciter, ayah by ayah.
enum ResolveCommand {
    static let resolve = CommandSpec(
        path: ["resolve"],
        overview: "Show the ayat references stand for, with each file's URLs, size, SHA-256 and duration.",
        discussion: """
            Ayat are listed in the order given, each once. Size, hash and duration come from the reciter's table; \
            an ayah the table does not cover is marked unpinned (its duration is unknown until it is downloaded). \
            Fields (json, ndjson, csv), one row per ayah: reciter, surah, ayah, global, pinned, bytes, sha256, \
            duration_samples, sample_rate, duration_ms (null when unpinned), urls.
            """,
        arguments: [.init(name: "ref", help: "Ayat: 36, yasin, 36:1-12, 2:255, 2:284-3:5, 78-114, juz 30, hizb 5, page 1-3, #262.", repeating: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter (`tartil reciters` lists them) [env: TARTIL_RECITER]."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil resolve 36:1-5 --reciter ibrahim-alakhdar",
            "tartil resolve juz 30 --reciter alafasy-128 --json",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let references = try ReferenceParser.parse(invocation.arguments)
            let reciter = try context.reciterID(invocation)
            let resolution = try context.library().resolve(references, reciter: reciter)
            context.console.print(listing(resolution), as: format) {
                for line in text(resolution) { context.console.line(line) }
            }
        })

    static let columns = [
        "reciter", "surah", "ayah", "global", "pinned", "bytes", "sha256", "duration_samples", "sample_rate", "duration_ms", "urls",
    ]

    /// One row per ayah; the pinned facts are null for an unpinned ayah.
    static func listing(_ resolution: Resolution) -> Listing {
        Listing(columns: columns, rows: resolution.ayat.map { item in
            let pinned = item.pinned
            return [
                ("reciter", .string(resolution.reciter.id.rawValue)),
                ("surah", .int(item.ayah.surah)),
                ("ayah", .int(item.ayah.ayah)),
                ("global", .int(item.ayah.global)),
                ("pinned", .bool(pinned != nil)),
                ("bytes", .int(pinned?.bytes)),
                ("sha256", .string(pinned?.sha256)),
                ("duration_samples", .int(pinned?.samples)),
                ("sample_rate", .int(pinned?.sampleRate)),
                ("duration_ms", .int(pinned.map { Int(($0.seconds * 1000).rounded()) })),
                ("urls", .array(item.urls.map(JSONValue.string))),
            ]
        })
    }

    static func text(_ resolution: Resolution) -> [String] {
        let reciter = resolution.reciter
        var lines = ["\(reciter.id) — \(reciter.name) (\(reciter.style)\(reciter.bitrateKbps.map { ", \($0) kbps" } ?? ""))"]
        for item in resolution.ayat {
            let head = Formatting.left("\(item.ayah)", 8) + Formatting.left("#\(item.ayah.global)", 6)
            if let pinned = item.pinned {
                lines.append(
                    "\(head)  \(Formatting.right(Formatting.duration(seconds: pinned.seconds), 10))  "
                        + "\(Plural.count(pinned.bytes, "byte", number: Formatting.grouped(pinned.bytes)))  "
                        + "\(Plural.count(pinned.samples, "sample", number: Formatting.grouped(pinned.samples))) @ \(pinned.sampleRate) Hz")
                lines.append("        sha256 \(pinned.sha256)")
            } else {
                lines.append("\(head)  unpinned (size, hash and duration are checked and recorded on first download)")
            }
            for url in item.urls { lines.append("        \(url)") }
        }
        let count = resolution.ayat.count
        let pinned = count - resolution.unpinnedCount
        var total = Plural.count(count, "ayah")
        if pinned > 0 {
            total += ", \(pinned == count ? "all" : String(pinned)) pinned: \(Formatting.duration(seconds: resolution.pinnedSeconds)), \(Formatting.bytes(resolution.pinnedBytes))"
        }
        if resolution.unpinnedCount > 0 {
            total += pinned > 0 ? "; \(resolution.unpinnedCount) unpinned (duration unknown)" : ", none pinned (duration unknown)"
        }
        lines.append(total)
        return lines
    }
}
