import TartilCore
import TartilPlayer

/// `tartil resolve REF… --reciter ID`: what a reference means for a reciter, ayah by ayah.
enum ResolveCommand {
    static let resolve = CommandSpec(
        path: ["resolve"],
        overview: "Show the ayat references stand for, with each file's URLs, size, SHA-256 and duration.",
        discussion: """
            Ayat are listed in the order given, each once. Size, hash and duration come from the reciter's table; \
            an ayah the table does not cover is marked unpinned (its duration is unknown until it is downloaded).
            """,
        arguments: [.init(name: "ref", help: "Ayat: 36, yasin, 36:1-12, 2:255, 2:284-3:5, 78-114, juz 30, hizb 5, page 1-3, #262.", repeating: true)],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter (`tartil reciters` lists them) [env: TARTIL_RECITER].")],
        examples: [
            "tartil resolve 36:1-5 --reciter ibrahim-alakhdar",
            "tartil resolve juz 30 --reciter alafasy-128 --json",
        ],
        run: { invocation, context in
            let references = try ReferenceParser.parse(invocation.arguments)
            let reciter = try context.reciterID(invocation)
            let resolution = try context.library().resolve(references, reciter: reciter)
            if context.settings.json {
                context.console.json(json(resolution))
            } else {
                for line in text(resolution) { context.console.line(line) }
            }
        })

    static func json(_ resolution: Resolution) -> JSONValue {
        let reciter = resolution.reciter
        let ayat: [JSONValue] = resolution.ayat.map { item in
            var members: [(String, JSONValue)] = [
                ("surah", .int(item.ayah.surah)),
                ("ayah", .int(item.ayah.ayah)),
                ("global", .int(item.ayah.global)),
                ("pinned", .bool(item.pinned != nil)),
            ]
            if let pinned = item.pinned {
                members += [
                    ("bytes", .int(pinned.bytes)),
                    ("sha256", .string(pinned.sha256)),
                    ("samples", .int(pinned.samples)),
                    ("sample_rate", .int(pinned.sampleRate)),
                    ("duration_ms", .int(Int((pinned.seconds * 1000).rounded()))),
                ]
            }
            members.append(("urls", .array(item.urls.map(JSONValue.string))))
            return .object(members)
        }
        return .object([
            ("reciter", .string(reciter.id.rawValue)),
            ("reciter_name", .string(reciter.name)),
            ("ayat", .array(ayat)),
            ("total", .object([
                ("ayat", .int(resolution.ayat.count)),
                ("pinned", .int(resolution.ayat.count - resolution.unpinnedCount)),
                ("unpinned", .int(resolution.unpinnedCount)),
                ("bytes", .int(resolution.pinnedBytes)),
                ("duration_ms", .int(Int((resolution.pinnedSeconds * 1000).rounded()))),
                ("complete", .bool(resolution.unpinnedCount == 0)),
            ])),
        ])
    }

    static func text(_ resolution: Resolution) -> [String] {
        let reciter = resolution.reciter
        var lines = ["\(reciter.id) — \(reciter.name) (\(reciter.style)\(reciter.bitrateKbps.map { ", \($0) kbps" } ?? ""))"]
        for item in resolution.ayat {
            let head = Formatting.left("\(item.ayah)", 8) + Formatting.left("#\(item.ayah.global)", 6)
            if let pinned = item.pinned {
                lines.append(
                    "\(head)  \(Formatting.right(Formatting.duration(seconds: pinned.seconds), 10))  "
                        + "\(Formatting.grouped(pinned.bytes)) bytes  \(Formatting.grouped(pinned.samples)) samples @ \(pinned.sampleRate) Hz")
                lines.append("        sha256 \(pinned.sha256)")
            } else {
                lines.append("\(head)  unpinned (size, hash and duration are checked and recorded on first download)")
            }
            for url in item.urls { lines.append("        \(url)") }
        }
        let count = resolution.ayat.count
        let pinned = count - resolution.unpinnedCount
        var total = "\(count) ayat"
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
