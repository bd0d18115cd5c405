import TartilSession
import Glibc
import Synchronization
import TartilCore

/// `tartil prefetch REF… --reciter ID`: puts ayat in the verified cache for offline listening.
enum PrefetchCommand {
    static let prefetch = CommandSpec(
        path: ["prefetch"],
        overview: "Download ayat into the verified cache for offline listening.",
        discussion: """
            Everything playing the ayat needs is fetched: with ayah 1 of a surah other than 1 and 9, the basmala's \
            file (1:1), so that a prefetched surah plays offline (the counts are of files). For a reciter of one \
            file per surah, the files are its surah table's parts (each ayah, and the surah's own basmala): byte \
            ranges of the surah's file, each checked alone. A surah whose missing parts are half its file or more \
            is fetched whole in one request, checked against the whole file's size and SHA-256, then cut into its \
            parts; the others are fetched with a range request each. A surah no table \
            covers is learned first from the reciter's published timings (a surah that cannot be is an error, \
            and nothing of it is kept). Each file is hashed as it arrives and reaches its final name only after its size and SHA-256 match the \
            reciter's table (an unpinned ayah must decode as MPEG audio; its hash is then recorded and checked on \
            every later read). An unpinned file must be one whole MPEG audio stream (no bytes appended, no other \
            format), and is verified only when two of the reciter's mirrors serve the same whole file (its full \
            SHA-256; the second copy is fetched into memory): when they disagree a third mirror decides (the \
            majority's copy is kept). A file only one mirror could serve is kept marked single-source and compared \
            again by the next prefetch, after the other files; so is a surah a surah-file reciter learned from one \
            mirror (before the files: its whole file is fetched from the other mirrors, not the one it came from, \
            and once one serves the file learned its parts are cross-checked; another file is not taken: 'tartil \
            cache choose' or 'tartil table relearn' takes it; while none serves it, nothing changes, and it says why). \
            One the mirrors disagree on with no majority is \
            disputed: nothing is kept at its name, it does not play, its copies are kept aside and 'tartil cache \
            choose' picks one; it counts as failed. An https mirror's redirect to http is refused. \
            Failing mirrors are retried with backoff and passed over for the next; a mirror whose HTTPS certificate \
            does not verify is given up for the whole run at once (trust its CA with SSL_CERT_DIR, or --ca-bundle with the system's CAs). Ctrl-C stops \
            at once and the next run resumes where this one stopped. Exit 0 only when every requested file is \
            verified in the cache.
            With --format json or ndjson (the same: a stream), one JSON object per line for each file (event: \
            cached, failed; waiting: a file another tartil process has been downloading for 2 s), then a summary \
            object (event: summary; with cross_checked, single_source and disputed for unpinned files, learned_surahs (a surah-file reciter's surahs learned first: their parts count as \
            downloaded), learned_single_source (those of them only one mirror could serve), compared_surahs (surahs \
            learned from one mirror, compared again: surah, mark, problem), connections the downloads opened (not \
            learning's or comparing's whole-file requests), http2_transfers, and duration_ms, the time the prefetch took).
            """,
        arguments: [.init(name: "ref", help: "Ayat: 36, 1 36 67, juz 30, page 1-3, 1-114 (the whole Qur'an), …", repeating: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."),
            .init(names: ["-j", "--jobs"], valueName: "n", help: "Connections per server, 1-64 (default 8): over HTTP/1.1, the transfers at once; over HTTP/2, the most it may open (one usually carries all --streams)."),
            .init(names: ["--streams"], valueName: "n", help: "Requests in flight to a server over HTTP/2, all on one connection when the server allows that many, 1-256 (default \(DownloadLimits.defaultStreams))."),
            .init(names: ["--retries"], valueName: "n", help: "Retries per file across mirrors, 0-20 (default 5)."),
            .init(names: ["--max-size"], valueName: "size", help: "Afterwards, evict least-recently-used files until the cache fits (e.g. 500M, 2G; pinned and requested files stay, with the basmala they need) [env: TARTIL_CACHE_MAX_SIZE]."),
        ] + DownloadLimits.timeoutOptions + [OutputFormat.option(formats)],
        examples: [
            "tartil prefetch 1 36 67 --reciter alafasy-128",
            "tartil prefetch juz 30 --reciter ibrahim-alakhdar --jobs 16 --json",
        ],
        run: run)

    /// A prefetch prints a stream of events (not a listing), so no CSV.
    static let formats: [OutputFormat] = [.text, .json, .ndjson]

    static func run(_ invocation: Invocation, _ context: Context) throws {
        let json = try OutputFormat.chosen(invocation, context, allowed: formats) != .text
        let references = try ReferenceParser.parse(invocation.arguments)
        let attempts = 1 + (try invocation.integer("--retries", in: 0...20) ?? 5)
        let budget = try (invocation.value("--max-size") ?? context.settings.environment["TARTIL_CACHE_MAX_SIZE"]).map(parseSize)
        let request = Session.PrefetchRequest(
            ayat: ReferenceParser.uniqueAyat(of: references), reciter: invocation.value("--reciter"),
            limits: try downloadLimits(invocation, context), attempts: attempts, budget: budget)
        let console = context.console
        let showBar = console.errorIsTerminal && !json
        let clock = context.session.clock
        let started = clock.now
        let (reciter, outcome) = try context.session.prefetch(
            request, settings: context.settings, isCancelled: context.isCancelled,
            announce: { step in if !json { console.note(announcement(step)) } }
        ) { events, progress in
            var lines = ReportLines()
            for event in events { report(event, json: json, showBar: showBar, into: &lines) }
            let width = console.errorColumns() ?? 80  // cheap: a resized terminal gets lines and a bar that fit
            if showBar && !lines.error.isEmpty {
                // Above the bar (not after it), each line wrapped at words to the terminal's width.
                let wrapped = lines.error.split(separator: "\n").flatMap { TextWrap.keepingIndent(String($0), width: width) }
                lines.error = "\r\u{1B}[K" + wrapped.joined(separator: "\n") + "\n"
            }
            lines.write(to: console)
            if showBar {
                console.writeError("\r\u{1B}[K" + bar(progress, seconds: clock.now.seconds(since: started), width: width))
            }
        }
        if showBar { console.writeError("\r\u{1B}[K") }
        let progress = outcome.progress
        if let warning = disputeWarning(progress, reciter: reciter) { console.note(warning) }
        for compared in progress.comparedSurahs {
            guard var problem = compared.problem else { continue }
            if problem.hasPrefix("surah \(compared.surah): ") { problem.removeFirst("surah \(compared.surah): ".count) }
            console.note("surah \(compared.surah), learned from one mirror, compared again: \(problem)")
        }
        if json {
            console.json(.object(summary(progress, seconds: outcome.seconds, evicted: outcome.evicted)))
        } else {
            for failure in progress.failed { console.note("failed \(failure.ayah): \(failure.reason)") }
            console.paragraph(
                summaryLine(progress, seconds: outcome.seconds)
                    + (outcome.evicted == 0 ? "" : "; evicted \(outcome.evicted) least-recently-used files to fit --max-size"))
        }
        if outcome.interrupted { throw TartilError(.interrupted, interruptedMessage(notFetched: progress.cancelled)) }
        if !progress.failed.isEmpty {
            throw TartilError(.failure, "\(progress.failed.count) of \(Plural.count(progress.requested, "file")) could not be downloaded")
        }
    }

    /// The line said on standard error as a prefetch starts to learn surahs or to compare one again (whole files,
    /// before the other downloads, which the progress shows).
    static func announcement(_ step: Session.PrefetchStep) -> String {
        switch step {
        case .learning(let surahs):
            let one = surahs.count == 1
            return "learning \(one ? "surah" : "surahs") \(surahs.map(String.init).joined(separator: ", ")): \(one ? "its" : "their") published timings and whole \(one ? "file" : "files")…"
        case .comparing(let surah, let bytes):
            return "comparing surah \(surah), learned from one mirror, with the others: their copies of its whole file (\(Formatting.bytes(bytes)) each)…"
        }
    }

    /// Why a file is waited for, when another process holds its lock (`DownloadEvent.heldElsewhere`).
    static let heldElsewhereReason = "another tartil process is downloading it"

    /// The line that says so, for prefetch and for play.
    static func heldElsewhereLine(_ ayah: AyahRef) -> String {
        "waiting for \(ayah): \(heldElsewhereReason) (taken here when that process has it or ends; one stopped with "
            + "Ctrl-Z keeps it until it goes on)"
    }

    /// What Ctrl-C leaves: the files not fetched, or (stopped after the last one) that none is missing.
    static func interruptedMessage(notFetched: Int) -> String {
        notFetched == 0
            ? "prefetch stopped after every file was fetched or found cached"
            : "prefetch stopped; \(Plural.count(notFetched, "file")) not fetched (run it again to resume)"
    }

    /// Lines for standard output and standard error, written with one call each.
    struct ReportLines {
        var output = ""
        var error = ""

        func write(to console: Console) {
            if !output.isEmpty { console.writeOut(output) }
            if !error.isEmpty { console.writeError(error) }
        }
    }

    /// One line per finished file: JSON with --json, plain text when standard error is not a terminal.
    static func report(_ event: DownloadEvent, json: Bool, showBar: Bool, into lines: inout ReportLines) {
        switch event {
        case .cached(let ayah, let bytes, let already):
            if json {
                lines.output += JSONValue.object([("event", .string("cached")), ("surah", .int(ayah.surah)), ("ayah", .int(ayah.ayah)),
                                                  ("bytes", .int(bytes)), ("already_cached", .bool(already))]).rendered() + "\n"
            } else if !showBar {
                lines.error += "cached \(ayah) (\(Plural.count(bytes, "byte", number: Formatting.grouped(bytes))))\n"
            }
        case .failed(let ayah, let reason):
            if json {
                lines.output += JSONValue.object([("event", .string("failed")), ("surah", .int(ayah.surah)), ("ayah", .int(ayah.ayah)),
                                                  ("reason", .string(reason))]).rendered() + "\n"
            }
        case .retrying(let ayah, let mirror, let reason, let delay):
            if !json && !showBar {
                let tenths = Int((delay * 10).rounded())
                lines.error += "retrying \(ayah): \(mirror): \(reason)\(tenths > 0 ? " (again in \(tenths / 10).\(tenths % 10) s)" : "")\n"
            }
        case .mirrorAbandoned(let mirror, let reason):
            // Once per mirror, whatever the format: the failures that follow all come from this.
            lines.error += "\(mirror): given up for this run: \(reason)"
                + (reason.contains(text: "certificate") ? " (to trust its CA: put it in an SSL_CERT_DIR folder, or in a PEM file together with the system's CAs for --ca-bundle or SSL_CERT_FILE)" : "") + "\n"
        case .heldElsewhere(let ayah):
            // Once per wait, and only after a wait of a few seconds: at most one line per transfer the other
            // process has in flight.
            if json {
                lines.output += JSONValue.object([("event", .string("waiting")), ("surah", .int(ayah.surah)), ("ayah", .int(ayah.ayah)),
                                                  ("reason", .string(heldElsewhereReason))]).rendered() + "\n"
            } else {
                lines.error += heldElsewhereLine(ayah) + "\n"
            }
        case .started, .cancelled, .marked:
            break
        }
    }

    static func downloadLimits(_ invocation: Invocation, _ context: Context) throws(TartilError) -> DownloadLimits {
        var limits = try context.settings.downloadLimits(options: invocation)
        if let jobs = try invocation.integer("--jobs", in: 1...64) { limits.parallel = jobs }
        if let streams = try invocation.integer("--streams", in: 1...256) { limits.streams = streams }
        return limits
    }

    /// The largest size `--max-size` takes: 1024 TiB.
    static let maximumSize = 1 << 50

    /// `500M`, `2G`, `1.5G`, `800K` or plain bytes (a `B` or `iB` after the unit is allowed), from 1 byte to
    /// `maximumSize`.
    static func parseSize(_ text: String) throws(TartilError) -> Int {
        let units: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024 * 1024]
        var number = text.uppercased()
        if number.hasSuffix("B") { number.removeLast() }
        if number.hasSuffix("I") { number.removeLast() }
        var multiplier = 1.0
        if let last = number.last, let unit = units[last] {
            multiplier = unit
            number.removeLast()
        }
        let forms = "use bytes or a number with K, M, G or T (e.g. 500M, 2G), from 1 byte to 1024T"
        switch NumberText.decimalValue(number) {
        case .value(let value) where value * multiplier >= 1 && value * multiplier <= Double(maximumSize):
            return Int(value * multiplier)
        case .value, .tooLarge:
            throw .usage("'\(text)' is out of range: \(forms)")
        case .notANumber:
            throw .usage("'\(text)' is not a size: \(forms)")
        }
    }

    // MARK: - Rendering progress

    /// The warning for files the reciter's mirrors disagree on, or nil when there are none.
    static func disputeWarning(_ progress: PrefetchProgress, reciter: ReciterID) -> String? {
        let disputed = progress.marked(.disputed)
        guard !disputed.isEmpty else { return nil }
        var text = "warning: the mirrors of \(reciter) are not byte-identical, as mirrors.json requires: they disagree on "
            + "\(Plural.count(disputed.count, "file")), not kept and not played (tartil cache verify lists their copies; tartil cache choose picks one):"
        for detail in progress.disputeDetails.sorted(by: { $0.ayah < $1.ayah }).prefix(10) { text += "\n  \(detail.ayah): \(detail.reason)" }
        if disputed.count > 10 { text += "\n  …" }
        return text
    }

    /// The progress bar for a terminal `width` columns wide: whole fields, the least important left out first
    /// when narrow (the mirror's problem, the rate, the bytes, the ETA, then the bar shrinks).
    static func bar(_ progress: PrefetchProgress, seconds: Double, width: Int = 80) -> String {
        let (requested, alreadyCached, failed, bytes) = (progress.requested, progress.alreadyCached, progress.failed, progress.bytes)
        let done = progress.done
        let rate = seconds > 0 ? Double(bytes) / seconds : 0
        let remainingFiles = requested - done
        let eta = done > alreadyCached && rate > 0 ? Double(bytes) / Double(done - alreadyCached) * Double(remainingFiles) / rate : 0
        // In the order shown; importance 0 is kept longest.
        var fields: [FieldLine.Field] = [
            ProgressBar.field(done: done, total: requested, importance: 2),
            .text("\(done)/\(Plural.count(requested, "file"))", importance: 0),
            .text(Formatting.bytes(bytes), importance: 4),
            .text("\(Formatting.bytes(Int(rate)))/s", importance: 5),
        ]
        if eta > 0 {
            let seconds = Int(eta.rounded(.up))
            fields.append(.text("ETA \(seconds / 60):\(Formatting.pad(seconds % 60, 2))", importance: 3))
        }
        if !failed.isEmpty { fields.append(.text("\(failed.count) failed", importance: 1)) }
        if let (mirror, problem) = progress.mirrorProblems.sorted(by: { $0.key < $1.key }).first {
            fields.append(.text("(\(mirror): \(problem))", importance: 6))
        }
        return FieldLine.render(fields, room: width - 1)
    }

    static func summaryLine(_ progress: PrefetchProgress, seconds: Double) -> String {
        let (requested, downloaded, alreadyCached, failed, bytes) = (progress.requested, progress.downloaded, progress.alreadyCached, progress.failed, progress.bytes)
        var marksText = ""
        let single = progress.marked(.singleSource).count
        let disputed = progress.marked(.disputed).count
        if single + disputed > 0 {
            marksText = "; unpinned: " + [single > 0 ? "\(single) single-source" : nil, disputed > 0 ? "\(disputed) disputed" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        }
        let learned = progress.learnedSurahs
        let learnedSingle = progress.learnedSingleSource
        let singleText = learnedSingle.isEmpty ? "" : "; single-source, only one mirror could serve it: \(learnedSingle.map(String.init).joined(separator: ", "))"
        let learnedText = learned.isEmpty ? "" : "; learned \(learned.count == 1 ? "surah" : "surahs") \(learned.map(String.init).joined(separator: ", ")) (timings and whole \(learned.count == 1 ? "file" : "files"), cut into \(learned.count == 1 ? "its" : "their") ayat\(singleText))"
        let compared = progress.comparedSurahs.map { "surah \($0.surah) \($0.mark == .crossChecked ? "now cross-checked" : "still single-source")" }
        let comparedText = compared.isEmpty ? "" : "; learned from one mirror, compared again: " + compared.joined(separator: ", ")
        return "\(requested) requested: \(downloaded) downloaded, \(alreadyCached) already cached, \(failed.count) failed"
            + " (\(Formatting.bytes(bytes)) in \(Formatting.duration(seconds: seconds)))" + marksText + learnedText + comparedText
    }

    static func summary(_ progress: PrefetchProgress, seconds: Double, evicted: Int) -> Fields {
        let (requested, downloaded, alreadyCached, failed, bytes, connections) = (progress.requested, progress.downloaded, progress.alreadyCached, progress.failed, progress.bytes, progress.connections)
        return [
            ("event", .string("summary")),
            ("requested", .int(requested)),
            ("downloaded", .int(downloaded)),
            ("already_cached", .int(alreadyCached)),
            ("failed", .array(failed.map { failure in
                .object([("surah", .int(failure.ayah.surah)), ("ayah", .int(failure.ayah.ayah)), ("reason", .string(failure.reason))])
            })),
            ("cancelled", .int(progress.cancelled)),
            ("cross_checked", .int(progress.marked(.crossChecked).count)),
            ("single_source", .array(progress.marked(.singleSource).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ("disputed", .array(progress.marked(.disputed).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ("bytes", .int(bytes)),
            ("learned_surahs", .array(progress.learnedSurahs.map { .int($0) })),
            ("learned_single_source", .array(progress.learnedSingleSource.map { .int($0) })),
            ("compared_surahs", .array(progress.comparedSurahs.map { compared in
                .object([("surah", .int(compared.surah)), ("mark", .string(compared.mark.rawValue)), ("problem", .string(compared.problem))])
            })),
            ("connections", .int(connections.connections)),
            ("http2_transfers", .int(connections.http2Transfers)),
            ("evicted", .int(evicted)),
            ("duration_ms", .int(Int((seconds * 1000).rounded()))),
        ]
    }

}
