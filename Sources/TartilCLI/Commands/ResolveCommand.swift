import TartilSession
import TartilCore

/// `tartil resolve REF… --reciter ID`: what a reference means for a reciter, ayah by ayah.
enum ResolveCommand {
    static let resolve = CommandSpec(
        path: ["resolve"],
        overview: "Show the ayat references stand for, with each file's URLs, size, SHA-256 and duration.",
        discussion: """
            Ayat are listed in the order given, each once. Size, hash and duration come from the reciter's table; \
            an ayah the table does not cover is marked unpinned (its duration is unknown until it is downloaded). \
            With --lengths, unpinned ayat get durations too: exact for files decoded before (the cache remembers \
            them), else estimated from each file's size (a cached file's, or one ranged request per file for its \
            size and first 1 KiB) and shown with ~. Fields (json, ndjson, csv), one row per ayah: reciter, surah, \
            ayah, global, pinned, bytes, sha256, duration_samples, sample_rate, duration_ms (null when not known), \
            estimated (true for an estimate, null when not known), urls, byte_range (for a reciter of one file \
            per surah: first-last, the bytes of the surah's file at urls that are the ayah; null otherwise).
            """,
        arguments: [.init(name: "ref", help: "Ayat: 36, yasin, 36:1-12, 2:255, 2:284-3:5, 78-114, juz 30, hizb 5, page 1-3, #262.", repeating: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter (`tartil reciters` lists them) [env: TARTIL_RECITER]."),
            .init(names: ["--lengths"], valueName: nil, help: "Durations of unpinned ayat too: remembered, or estimated from sizes (asks the mirrors)."),
        ] + DownloadLimits.timeoutOptions + [OutputFormat.option()],
        examples: [
            "tartil resolve 36:1-5 --reciter ibrahim-alakhdar",
            "tartil resolve juz 30 --reciter alafasy-128 --json",
            "tartil resolve 36 --reciter alafasy-128 --lengths",
        ],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let references = try ReferenceParser.parse(invocation.arguments)
            let resolution = try context.session.resolve(
                references, reciter: invocation.value("--reciter"), lengths: invocation.flag("--lengths"), settings: context.settings,
                limits: invocation.flag("--lengths") ? try context.settings.downloadLimits(options: invocation) : nil, isCancelled: context.isCancelled)
            context.console.print(listing(resolution), as: format) {
                for line in text(resolution) { context.console.line(line) }
            }
        })

    static let columns = [
        "reciter", "surah", "ayah", "global", "pinned", "bytes", "sha256", "duration_samples", "sample_rate", "duration_ms", "estimated",
        "urls", "byte_range",
    ]

    /// One row per ayah; the pinned facts are null for an unpinned ayah (its duration too, unless learned).
    static func listing(_ resolution: Resolution) -> Listing {
        Listing(columns: columns, rows: resolution.ayat.map { item in
            let pinned = item.pinned
            let learned = pinned == nil ? resolution.lengths[item.ayah] : nil
            let samples = pinned?.samples ?? learned?.samples
            let rate = pinned?.sampleRate ?? learned?.rate
            return [
                ("reciter", .string(resolution.reciter.id.rawValue)),
                ("surah", .int(item.ayah.surah)),
                ("ayah", .int(item.ayah.ayah)),
                ("global", .int(item.ayah.global)),
                ("pinned", .bool(pinned != nil)),
                ("bytes", .int(pinned?.bytes)),
                ("sha256", .string(pinned?.sha256)),
                ("duration_samples", .int(samples)),
                ("sample_rate", .int(rate)),
                ("duration_ms", .int(pinned.map { Int(($0.seconds * 1000).rounded()) } ?? learned.map { Int(($0.seconds * 1000).rounded()) })),
                ("estimated", .bool(pinned != nil ? false : learned?.isEstimated)),
                ("urls", .array(item.urls.map(JSONValue.string))),
                ("byte_range", .string(item.byteRange.map { "\($0.lowerBound)-\($0.upperBound)" })),
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
            } else if let learned = resolution.lengths[item.ayah] {
                let duration = (learned.isEstimated ? "~" : "") + Formatting.duration(seconds: learned.seconds)
                lines.append(
                    "\(head)  \(Formatting.right(duration, 10))  unpinned, "
                        + (learned.isEstimated ? "estimated from its size" : "\(Formatting.grouped(learned.samples)) samples @ \(learned.rate) Hz, decoded before"))
            } else if reciter.files == .surah {
                lines.append(
                    "\(head)  "
                        + (reciter.timings != nil
                            ? "not learned yet (its surah's timings and file are fetched, cut and checked on first play or prefetch)"
                            : "not in the reciter's surah table: it cannot be played"))
            } else {
                lines.append("\(head)  unpinned (size, hash and duration are checked and recorded on first download)")
            }
            let range = item.byteRange.map { " (bytes \($0.lowerBound)-\($0.upperBound))" } ?? ""
            for url in item.urls { lines.append("        \(url)\(range)") }
        }
        let count = resolution.ayat.count
        let pinned = count - resolution.unpinnedCount
        var total = Plural.count(count, "ayah")
        if pinned > 0 {
            total += ", \(pinned == count ? "all" : String(pinned)) pinned: \(Formatting.duration(seconds: resolution.pinnedSeconds)), \(Formatting.bytes(resolution.pinnedBytes))"
        }
        let learned = resolution.unpinnedSeconds
        if resolution.unpinnedCount > 0 && learned.known > 0 {
            let duration = (learned.estimated > 0 ? "~" : "") + Formatting.duration(seconds: learned.seconds)
            let unknown = resolution.unpinnedCount - learned.known
            total += (pinned > 0 ? "; " : ", none pinned; ") + "\(resolution.unpinnedCount) unpinned: \(duration)"
                + (learned.estimated > 0 ? " (\(learned.estimated) estimated)" : "") + (unknown > 0 ? ", \(unknown) unknown" : "")
        } else if resolution.unpinnedCount > 0 {
            total += pinned > 0 ? "; \(resolution.unpinnedCount) unpinned (duration unknown)" : ", none pinned (duration unknown)"
        }
        lines.append(total)
        return lines
    }
}
