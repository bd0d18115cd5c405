import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TartilAudio
import TartilCache
import TartilCore
import TartilNet
import TartilPlayer

/// `tartil prefetch REF… --reciter ID`: puts ayat in the verified cache for offline listening.
enum PrefetchCommand {
    static let prefetch = CommandSpec(
        path: ["prefetch"],
        overview: "Download ayat into the verified cache for offline listening.",
        discussion: """
            Each file is hashed as it arrives and reaches its final name only after its size and SHA-256 match the \
            reciter's table (an unpinned ayah must decode as MPEG audio; its hash is then recorded and checked on \
            every later read). A new unpinned file is cross-checked against the reciter's next mirror (same size, \
            same last 16 KiB, by one ranged request): a copy two mirrors agree on wins; a file only one mirror could \
            serve is marked single-source, one the mirrors disagree on is kept marked disputed, with a warning. \
            Failing mirrors are retried with backoff and passed over for the next; a mirror whose HTTPS certificate \
            does not verify is given up for the whole run at once (trust its CA with SSL_CERT_DIR, or --ca-bundle with the system's CAs). Ctrl-C stops \
            at once and the next run resumes where this one stopped. Exit 0 only when every requested ayah is \
            verified in the cache.
            With --format json or ndjson (the same: a stream), one JSON object per line for each file (event: \
            cached, failed), then a summary object (event: summary; with cross_checked, single_source and disputed \
            for unpinned files, connections opened, http2_transfers, and duration_ms, the time the prefetch took).
            """,
        arguments: [.init(name: "ref", help: "Ayat: 36, 1 36 67, juz 30, page 1-3, 1-114 (the whole Qur'an), …", repeating: true)],
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."),
            .init(names: ["-j", "--jobs"], valueName: "n", help: "Connections per server, 1-64 (default 8): over HTTP/1.1, the transfers at once; over HTTP/2, the most it may open (one usually carries all --streams)."),
            .init(names: ["--streams"], valueName: "n", help: "Requests in flight to a server over HTTP/2, all on one connection when the server allows that many, 1-256 (default \(DownloadLimits.defaultStreams))."),
            .init(names: ["--retries"], valueName: "n", help: "Retries per file across mirrors, 0-20 (default 5)."),
            .init(names: ["--connect-timeout"], valueName: "time", help: "Give up connecting after this long, 1 s to 5 min (10, 2.5s, 1m; default 10 s)."),
            .init(names: ["--stall-timeout"], valueName: "time", help: "Abandon a transfer that stays under 512 bytes/s this long (over HTTP/2: a server whose requests together do), 1 s to 10 min (default 15 s)."),
            .init(names: ["--max-size"], valueName: "size", help: "Afterwards, evict least-recently-used files until the cache fits (e.g. 500M, 2G; pinned and requested files stay) [env: TARTIL_CACHE_MAX_SIZE]."),
            OutputFormat.option(formats),
        ],
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
        let reciterID = try context.reciterID(invocation)
        let limits = try downloadLimits(invocation, context)
        let policy = DownloadPolicy(maxAttempts: 1 + (try invocation.integer("--retries", in: 0...20) ?? 5))
        let budget = try (invocation.value("--max-size") ?? context.settings.environment["TARTIL_CACHE_MAX_SIZE"]).map(parseSize)
        let library = try context.library()
        let reciter = try library.reciter(reciterID)
        let table = try library.table(for: reciter)
        let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
        let ayat = ReferenceParser.uniqueAyat(of: references)
        let console = context.console
        let startTime = Date()

        var progress = PrefetchProgress(requested: ayat.count)
        var requests: [DownloadRequest] = []
        // The downloader starts on the first file missing, so its connection opens (a few round trips to a far
        // mirror) while the rest of the list is checked against the cache.
        var started: Started?
        defer {
            // An error before `fetch` took over (a link in the cache, say) stops the downloader that had begun.
            if let started, !started.handedOver {
                started.downloader.cancel()
                started.downloader.shutdown()
            }
        }
        for ayah in ayat {
            let expectation = try cache.expectation(reciter: reciterID, ayah: ayah, pinned: table?.files[ayah], unpinnedLimit: AudioValidation.unpinnedLimit)
            if try cache.containsVerified(reciter: reciterID, ayah: ayah, expectation: expectation) {
                progress.alreadyCached += 1
                continue
            }
            let request = DownloadRequest(reciter: reciterID, ayah: ayah, mirrors: reciter.mirrors, expectation: expectation, priority: .prefetch)
            requests.append(request)
            if started == nil {
                started = try Started(cache: cache, limits: limits, policy: policy)
                started!.downloader.submit([request])
            }
        }

        if let started {
            try fetch(requests, into: cache, limits: limits, policy: policy, progress: &progress, context: context, json: json,
                      started: startTime, firstSubmitted: started)
        }

        var evicted: [Cache.CachedFile] = []
        if let budget {
            evicted = try cache.evict(toFit: budget, protecting: Set(ayat.map { Cache.key(reciterID.rawValue, $0) }))
        }
        let seconds = Date().timeIntervalSince(startTime)
        if let warning = progress.disputeWarning(reciter: reciterID) { console.note(warning) }
        if json {
            console.json(.object(progress.summary(seconds: seconds, evicted: evicted.count)))
        } else {
            for (ayah, reason) in progress.failed { console.note("failed \(ayah): \(reason)") }
            console.line(progress.summaryLine(seconds: seconds) + (evicted.isEmpty ? "" : "; evicted \(evicted.count) least-recently-used files to fit --max-size"))
        }
        if progress.cancelled > 0 || Interrupt.isPending {
            throw TartilError(.interrupted, "prefetch stopped; \(Plural.count(progress.cancelled, "file")) not fetched (run it again to resume)")
        }
        if !progress.failed.isEmpty {
            throw TartilError(.failure, "\(progress.failed.count) of \(Plural.count(ayat.count, "ayah")) could not be downloaded")
        }
    }

    /// A downloader made as soon as `run` finds the first file to fetch and given that file (so its connection
    /// opens while the rest of the list is checked), and the queue its events go to; `fetch` takes it over.
    final class Started {
        let downloader: Downloader
        let queue = EventQueue()
        /// Set once `fetch` drives it (and shuts it down).
        var handedOver = false

        init(cache: Cache, limits: DownloadLimits, policy: DownloadPolicy) throws {
            let queue = self.queue
            downloader = try Downloader(
                cacheDirectory: cache.directory, limits: limits, policy: policy, validate: AudioValidation.validate,
                events: { queue.push($0) })
        }
    }

    /// Downloads `requests` with a progress bar on a terminal, event lines otherwise, until every one is
    /// settled (or Ctrl-C cancels the rest). `firstSubmitted`: a downloader already given `requests[0]`; without
    /// it, one is made here.
    static func fetch(
        _ requests: [DownloadRequest], into cache: Cache, limits: DownloadLimits, policy: DownloadPolicy,
        progress: inout PrefetchProgress, context: Context, json: Bool, started: Date, firstSubmitted: Started? = nil
    ) throws {
        let console = context.console
        let run = try firstSubmitted ?? Started(cache: cache, limits: limits, policy: policy)
        let (downloader, queue) = (run.downloader, run.queue)
        run.handedOver = true
        let alreadySubmitted = firstSubmitted == nil ? 0 : 1
        // Feed the downloader a window of requests at a time rather than all 6236 of a whole Qur'an: its queue,
        // and the memory behind it, stay small; settled files make room for more. The window holds twice what
        // may be in flight, so a settled file's slot is refilled at once.
        let window = max(64, limits.transfersInFlight * 2)
        var next = max(alreadySubmitted, min(window, requests.count))
        downloader.submit(Array(requests[alreadySubmitted..<next]))
        var outstanding = requests.count
        var cancelling = false
        let showBar = console.errorIsTerminal && !json
        var lastDrain = DispatchTime.now().uptimeNanoseconds
        while outstanding > 0 {
            queue.wait(seconds: 0.1)
            // At most a hundred drains a second: events that arrive meanwhile wait in the queue, so a whole Qur'an
            // costs a few hundred wake-ups of this thread instead of one per file.
            let since = DispatchTime.now().uptimeNanoseconds - lastDrain
            if since < 10_000_000 { usleep(UInt32((10_000_000 - since) / 1000)) }
            lastDrain = DispatchTime.now().uptimeNanoseconds
            if Interrupt.isPending && !cancelling {
                cancelling = true
                downloader.cancel()
                // Requests never handed to the downloader are cancelled too.
                outstanding -= requests.count - next
                progress.cancelled += requests.count - next
                next = requests.count
            }
            var settled = 0
            var lines = ReportLines()
            for event in queue.drain() {
                settled += progress.apply(event) ? 1 : 0
                report(event, json: json, showBar: showBar, into: &lines)
            }
            if showBar && !lines.error.isEmpty { lines.error = "\r\u{1B}[K" + lines.error }  // not after the bar
            lines.write(to: console)
            outstanding -= settled
            if settled > 0 && next < requests.count && !cancelling {
                let end = min(requests.count, next + settled)
                downloader.submit(Array(requests[next..<end]))
                next = end
            }
            if showBar {
                let width = RawTerminal.columns(of: 2) ?? 80  // cheap: a resized terminal gets a bar that fits
                console.writeError("\r\u{1B}[K" + progress.bar(bytes: downloader.totalBytesReceived, seconds: Date().timeIntervalSince(started), width: width))
            }
        }
        downloader.shutdown()
        if showBar { console.writeError("\r\u{1B}[K") }
        progress.bytes += downloader.totalBytesReceived
        progress.connections = downloader.statistics
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
                + (reason.contains("certificate") ? " (to trust its CA: put it in an SSL_CERT_DIR folder, or in a PEM file together with the system's CAs for --ca-bundle or SSL_CERT_FILE)" : "") + "\n"
        case .started, .cancelled, .marked:
            break
        }
    }

    static func downloadLimits(_ invocation: Invocation, _ context: Context) throws(TartilError) -> DownloadLimits {
        var limits = try context.settings.trusting(DownloadLimits())
        if let jobs = try invocation.integer("--jobs", in: 1...64) { limits.parallel = jobs }
        if let streams = try invocation.integer("--streams", in: 1...256) { limits.streams = streams }
        if let seconds = try invocation.duration("--connect-timeout", in: 1...300) { limits.connectTimeout = seconds }
        if let seconds = try invocation.duration("--stall-timeout", in: 1...600) { limits.stallSeconds = Int(seconds.rounded(.up)) }
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
}

/// Counts for the progress bar and the summary.
struct PrefetchProgress {
    let requested: Int
    var downloaded = 0
    var alreadyCached = 0
    var cancelled = 0
    var bytes = 0
    /// What the connections did (for the summary).
    var connections = DownloadStatistics()
    var failed: [(AyahRef, String)] = []
    /// Latest problem per mirror, for the progress bar.
    var mirrorProblems: [String: String] = [:]
    /// Unpinned files by the cross-check's mark, and what the mirrors told about disputed ones.
    var marks: [SourceMark: [AyahRef]] = [:]
    var disputeDetails: [(AyahRef, String)] = []

    init(requested: Int) { self.requested = requested }

    /// Applies an event; returns true when it settles a file.
    mutating func apply(_ event: DownloadEvent) -> Bool {
        switch event {
        case .cached(_, _, let already):
            if already { alreadyCached += 1 } else { downloaded += 1 }
            return true
        case .failed(let ayah, let reason):
            failed.append((ayah, reason))
            return true
        case .cancelled:
            cancelled += 1
            return true
        case .retrying(_, let mirror, let reason, _):
            mirrorProblems[mirror] = reason
            return false
        case .marked(let ayah, let mark, let detail):
            marks[mark, default: []].append(ayah)
            if mark == .disputed { disputeDetails.append((ayah, detail)) }
            return false
        case .started, .mirrorAbandoned:
            return false
        }
    }

    /// Ayat of unpinned files by the cross-check's mark, in the order they were committed.
    func marked(_ mark: SourceMark) -> [AyahRef] { (marks[mark] ?? []).sorted() }

    /// The warning for files the reciter's mirrors disagree on, or nil when there are none.
    func disputeWarning(reciter: ReciterID) -> String? {
        let disputed = marked(.disputed)
        guard !disputed.isEmpty else { return nil }
        var text = "warning: the mirrors of \(reciter) are not byte-identical, as mirrors.json requires: they disagree on "
            + "\(Plural.count(disputed.count, "file")), kept and marked disputed (tartil cache verify lists them):"
        for (ayah, detail) in disputeDetails.sorted(by: { $0.0 < $1.0 }).prefix(10) { text += "\n  \(ayah): \(detail)" }
        if disputed.count > 10 { text += "\n  …" }
        return text
    }

    /// The progress bar for a terminal `width` columns wide, at most `width - 1` of them (it is redrawn in
    /// place): `[####----]  5/11 files  42.1 KiB  12.0 KiB/s  ETA 0:03  1 failed  (m1: HTTP 503)`. When narrow,
    /// whole fields are left out (the mirror's problem first, then the rate, the bytes, the ETA) and the bar
    /// shrinks; the files done are always shown.
    func bar(bytes: Int, seconds: Double, width: Int = 80) -> String {
        let done = downloaded + alreadyCached + failed.count
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
        if let (mirror, problem) = mirrorProblems.sorted(by: { $0.key < $1.key }).first {
            fields.append(.text("(\(mirror): \(problem))", importance: 6))
        }
        return FieldLine.render(fields, room: width - 1)
    }

    func summaryLine(seconds: Double) -> String {
        var marksText = ""
        let single = marked(.singleSource).count
        let disputed = marked(.disputed).count
        if single + disputed > 0 {
            marksText = "; unpinned: " + [single > 0 ? "\(single) single-source" : nil, disputed > 0 ? "\(disputed) disputed" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        }
        return "\(requested) requested: \(downloaded) downloaded, \(alreadyCached) already cached, \(failed.count) failed"
            + " (\(Formatting.bytes(bytes)) in \(Formatting.duration(seconds: seconds)))" + marksText
    }

    func summary(seconds: Double, evicted: Int) -> Fields {
        [
            ("event", .string("summary")),
            ("requested", .int(requested)),
            ("downloaded", .int(downloaded)),
            ("already_cached", .int(alreadyCached)),
            ("failed", .array(failed.map { ayah, reason in
                .object([("surah", .int(ayah.surah)), ("ayah", .int(ayah.ayah)), ("reason", .string(reason))])
            })),
            ("cancelled", .int(cancelled)),
            ("cross_checked", .int(marked(.crossChecked).count)),
            ("single_source", .array(marked(.singleSource).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ("disputed", .array(marked(.disputed).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ("bytes", .int(bytes)),
            ("connections", .int(connections.connections)),
            ("http2_transfers", .int(connections.http2Transfers)),
            ("evicted", .int(evicted)),
            ("duration_ms", .int(Int((seconds * 1000).rounded()))),
        ]
    }
}

/// Events from the download thread, waited for on the command's thread.
final class EventQueue: Sendable {
    private let events = Mutex<[DownloadEvent]>([])
    private let signal = DispatchSemaphore(value: 0)

    /// Wakes the reader only for the first event of a batch: while it is busy printing, later events wait in
    /// the list for its next `drain`, instead of costing a wake-up each.
    func push(_ event: DownloadEvent) {
        let wasEmpty = events.withLock { list in
            list.append(event)
            return list.count == 1
        }
        if wasEmpty { signal.signal() }
    }

    func wait(seconds: Double) { _ = signal.wait(timeout: .now() + seconds) }

    func drain() -> [DownloadEvent] { events.withLock { list in defer { list.removeAll() }; return list } }
}

extension Settings {
    /// `limits` with the CA certificates to trust (`checkedCABundle`, `checkedCADirectory`), for every command
    /// that downloads.
    func trusting(_ limits: DownloadLimits) throws(TartilError) -> DownloadLimits {
        var limits = limits
        limits.caBundle = try checkedCABundle()
        limits.caDirectory = try checkedCADirectory()
        return limits
    }
}
