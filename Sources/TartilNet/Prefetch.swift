import Synchronization
import TartilCache
import TartilCore
import TartilSystem

/// Puts ayat in the verified cache for offline listening: what `prefetch` and `cache verify --repair` run. The
/// files already verified in the cache are counted, the rest are fetched with one downloader a window of
/// requests at a time (so a whole Qur'an's 6236 requests never sit in its queue at once), and the caller sees
/// typed progress as it goes.
public enum Prefetch {
    /// What to fetch, and how.
    public struct Order: Sendable {
        public var reciter: Reciter
        public var table: ReciterTable?
        public var ayat: [AyahRef]
        public var limits: DownloadLimits
        public var policy: DownloadPolicy
        public var cacheDirectory: String
        /// Checks a file whose hash is not known (it must be MPEG audio), and counts its length.
        public var validate: AudioCheck
        public var unpinnedLimit: Int
        /// Afterwards, evict least-recently-used files until the cache fits in this many bytes (the files asked
        /// for stay, with what playing them needs, and what pinned ayat need).
        public var budget: Int?
        /// For a reciter of one file per surah, the byte range of its surah's file each part is (asked for with a
        /// range request).
        public var byteRanges: [AyahRef: ClosedRange<Int>]
        /// For a reciter of one file per surah, each surah's whole file: a surah whose missing parts are most of
        /// it is fetched whole, checked against this, and cut into its parts (`SurahFetch`).
        public var surahFiles: [Int: PinnedFile]
        /// The surahs whose parts were learned on first use (their mismatches say how to learn them again).
        public var learnedSurahs: Set<Int> = []

        public init(
            reciter: Reciter, table: ReciterTable?, ayat: [AyahRef], limits: DownloadLimits, policy: DownloadPolicy,
            cacheDirectory: String, validate: @escaping AudioCheck, unpinnedLimit: Int, budget: Int? = nil,
            byteRanges: [AyahRef: ClosedRange<Int>] = [:], surahFiles: [Int: PinnedFile] = [:]
        ) {
            self.byteRanges = byteRanges
            self.surahFiles = surahFiles
            self.reciter = reciter
            self.table = table
            self.ayat = ayat
            self.limits = limits
            self.policy = policy
            self.cacheDirectory = cacheDirectory
            self.validate = validate
            self.unpinnedLimit = unpinnedLimit
            self.budget = budget
        }
    }

    /// How a prefetch ended.
    public struct Outcome: Sendable {
        public var progress: PrefetchProgress
        /// Files evicted to fit the budget.
        public var evicted: Int
        public var seconds: Double
        /// True when it was cancelled (the rest can be fetched by running it again).
        public var interrupted: Bool
    }

    /// What the caller is told, on its own thread, at most a hundred times a second: the events since the last
    /// report (each file's start, retries, the cached and failed files) and the progress so far.
    public typealias Report = (_ events: [DownloadEvent], _ progress: PrefetchProgress) -> Void

    /// Fetches what `order` asks that the cache does not hold verified yet.
    public static func run(
        _ order: Order, clock: any TartilClock = SystemClock.shared, isCancelled: @escaping @Sendable () -> Bool,
        report: Report
    ) throws(TartilError) -> Outcome {
        let started = clock.now
        let cache = try open(order.cacheDirectory, clock: clock)
        var progress = PrefetchProgress(requested: order.ayat.count)
        var requests: [DownloadRequest] = []
        // The downloader starts on the first file missing, so its connection opens (a few round trips to a far
        // mirror) while the rest of the list is checked against the cache.
        var downloader: Run?
        defer { downloader?.stopIfNotFinished() }
        // Unpinned files only one mirror vouched for so far are compared again, after every file missing.
        var rechecks: [DownloadRequest] = []
        // A surah-file reciter's missing parts, and the surahs fetched whole: the parts each stands for.
        var missingParts: [(AyahRef, FileExpectation)] = []
        var wholeFiles: [AyahRef: [AyahRef]] = [:]
        // A long prefetch gives back the code pages its start-up left resident (`MemoryMappings`): once here, with
        // SQLite's cache index open, and once more when the downloader has started (libcurl loaded, its first
        // transfer begun), before the blocks and transfers it holds at its peak. Whole Qur'an, peak RSS 29 → 22 MiB.
        let releasesPages = MemoryMappings.releasesStartupPages(files: order.ayat.count)
        if releasesPages { releaseStartupPages() }
        do throws(CacheError) {
            for ayah in order.ayat {
                let pinned = order.table?.files[ayah]
                if pinned == nil, let dispute = try cache.dispute(reciter: order.reciter.id, ayah: ayah) {
                    progress.apply(.marked(ayah, .disputed, detail: dispute.copies.map { "\($0.mirror): \($0.fingerprint)" }.joined(separator: "; ")))
                    progress.apply(.failed(ayah, reason: dispute.message))
                    continue
                }
                let expectation = try cache.expectation(
                    reciter: order.reciter.id, ayah: ayah, pinned: pinned,
                    pinnedSource: PlayableParts.rowSource(ofSurah: ayah.surah, reciter: order.reciter.id, learned: order.learnedSurahs.contains(ayah.surah)),
                    unpinnedLimit: order.unpinnedLimit)
                if try cache.containsVerified(reciter: order.reciter.id, ayah: ayah, expectation: expectation) {
                    if pinned == nil, order.reciter.mirrors.count > 1, try cache.mark(reciter: order.reciter.id, ayah: ayah) == .singleSource {
                        rechecks.append(DownloadRequest(
                            reciter: order.reciter.id, ayah: ayah, mirrors: order.reciter.mirrors,
                            expectation: .unknown(maxBytes: order.unpinnedLimit), priority: .prefetch, recheck: true))
                        continue
                    }
                    progress.alreadyCached += 1
                    continue
                }
                if !order.surahFiles.isEmpty {
                    missingParts.append((ayah, expectation))  // planned once all are known (`SurahFetch`)
                    continue
                }
                let request = DownloadRequest(
                    reciter: order.reciter.id, ayah: ayah, mirrors: order.reciter.mirrors, expectation: expectation, priority: .prefetch,
                    window: order.byteRanges[ayah])
                requests.append(request)
                if downloader == nil {
                    downloader = try Run(order: order)
                    downloader!.downloader.submit([request])
                    if releasesPages { releaseStartupPages() }
                }
            }
            if !missingParts.isEmpty {
                (requests, wholeFiles) = surahRequests(for: missingParts, order: order)
                downloader = try Run(order: order)
                downloader!.downloader.submit([requests[0]])
                if releasesPages { releaseStartupPages() }
            }
            if !rechecks.isEmpty {
                requests += rechecks
                if downloader == nil {
                    downloader = try Run(order: order)
                    downloader!.downloader.submit([requests[0]])
                    if releasesPages { releaseStartupPages() }
                }
            }
        } catch {
            throw TartilError(.failure, error.message)
        }
        if let downloader {
            let partBytes = order.byteRanges.mapValues(\.count)
            // Parts of one file asked for by range, more than one: the requests go up to the first such part until
            // its answer shows whether the mirrors honour ranges (the next part probes again while none has);
            // a server that ignores them then gets each surah's remaining parts as one run, its body cut into
            // them as it passes, instead of sending the file up to each part again for every part.
            var remaining = requests[...]
            var firstSubmitted = true
            while downloader.downloader.rangeSupport(of: order.reciter.id) == .unknown,
                let probe = PartRequests.probe(in: remaining.map(\.rangedPart)).map({ remaining.startIndex + $0 })
            {
                fetch(
                    Array(remaining[...probe]), with: downloader, firstSubmitted: firstSubmitted, finishing: false, wholeFiles: wholeFiles,
                    partBytes: partBytes, progress: &progress, clock: clock, isCancelled: isCancelled, report: report)
                remaining = remaining[(probe + 1)...]
                firstSubmitted = false
            }
            let rest = Array(remaining)
            let steps = PartRequests.regrouped(
                rest.map(\.rangedPart), support: downloader.downloader.rangeSupport(of: order.reciter.id), ranges: order.byteRanges)
            fetch(
                steps.map { $0.request(of: rest) }, with: downloader, firstSubmitted: firstSubmitted, wholeFiles: wholeFiles,
                partBytes: partBytes, progress: &progress, clock: clock, isCancelled: isCancelled, report: report)
        }
        var evicted = 0
        if let budget = order.budget {
            do {
                let kept = PlayFiles.kept(for: order.ayat, files: order.reciter.files).map { Cache.key(order.reciter.id.rawValue, $0) }
                evicted = try cache.evict(toFit: budget, protecting: Set(kept)).count
            } catch {
                throw TartilError(.failure, error.message)
            }
        }
        return Outcome(
            progress: progress, evicted: evicted, seconds: clock.now.seconds(since: started),
            interrupted: progress.cancelled > 0 || isCancelled())
    }

    /// `ResidentPages.releaseStartupPages`, best effort: a process without `/proc` keeps its pages.
    private static func releaseStartupPages() { _ = try? ResidentPages.releaseStartupPages() }

    /// The requests for a surah-file reciter's missing parts (in order, with what each must be): a surah whose
    /// missing parts are most of its file is one request for the whole file (`SurahFetch`), the others one range
    /// request each. Also the parts each whole-file request stands for, by the ayah it is named by.
    private static func surahRequests(
        for missing: [(AyahRef, FileExpectation)], order: Order
    ) -> (requests: [DownloadRequest], wholeFiles: [AyahRef: [AyahRef]]) {
        let expectations = Dictionary(missing, uniquingKeysWith: { first, _ in first })
        let steps = SurahFetch.plan(missing: missing.map(\.0), ranges: order.byteRanges, fileBytes: order.surahFiles.mapValues(\.bytes))
        var requests: [DownloadRequest] = []
        var wholeFiles: [AyahRef: [AyahRef]] = [:]
        for step in steps {
            switch step {
            case .part(let part):
                requests.append(DownloadRequest(
                    reciter: order.reciter.id, ayah: part, mirrors: order.reciter.mirrors, expectation: expectations[part]!,
                    priority: .prefetch, window: order.byteRanges[part]))
            case .wholeFile(let surah, let parts):
                let cut = Cache.SurahFileCut(surah: surah, parts: parts.map {
                    Cache.SurahFilePart(ayah: $0, bytes: order.byteRanges[$0]!, expectation: expectations[$0]!)
                })
                requests.append(DownloadRequest(
                    reciter: order.reciter.id, ayah: parts[0], mirrors: order.reciter.mirrors,
                    expectation: .pinned(
                        order.surahFiles[surah]!,
                        source: PlayableParts.rowSource(ofSurah: surah, reciter: order.reciter.id, learned: order.learnedSurahs.contains(surah))),
                    priority: .prefetch, wholeFile: cut))
                wholeFiles[parts[0]] = parts
            }
        }
        return (requests, wholeFiles)
    }

    /// Fetches `requests` (files known not to be in the cache, as `cache verify --repair` has them).
    public static func fetch(
        _ requests: [DownloadRequest], order: Order, clock: any TartilClock = SystemClock.shared,
        isCancelled: @escaping @Sendable () -> Bool, report: Report
    ) throws(TartilError) -> PrefetchProgress {
        var progress = PrefetchProgress(requested: requests.count)
        guard !requests.isEmpty else { return progress }
        let run: Run
        do {
            run = try Run(order: order)
        } catch {
            throw TartilError(.failure, error.message)
        }
        fetch(requests, with: run, firstSubmitted: false, progress: &progress, clock: clock, isCancelled: isCancelled, report: report)
        return progress
    }

    private static func open(_ directory: String, clock: any TartilClock) throws(TartilError) -> Cache {
        do {
            let cache = try Cache(directory: directory, clock: clock)
            try cache.openIndex()  // before anything is downloaded
            return cache
        } catch {
            throw TartilError(error.code == .symbolicLink ? .usage : .failure, error.message)
        }
    }

    /// A downloader and the queue its events go to.
    final class Run: Sendable {
        let downloader: Downloader
        let queue = EventQueue()
        private let finished = Atomic<Bool>(false)

        init(order: Order) throws(CacheError) {
            let queue = self.queue
            downloader = try Downloader(
                cacheDirectory: order.cacheDirectory, limits: order.limits, policy: order.policy, validate: order.validate,
                events: { queue.push($0) })
        }

        /// Ends the downloader (after a failure before `fetch` took over: it is cancelled first).
        func stopIfNotFinished() {
            guard !finished.exchange(true, ordering: .relaxed) else { return }
            downloader.cancel()
            downloader.shutdown()
        }

        func finish() {
            guard !finished.exchange(true, ordering: .relaxed) else { return }
            downloader.shutdown()
        }
    }

    /// Downloads `requests` until every one is settled (or cancelling settles the rest), reporting as it goes.
    /// `firstSubmitted`: the downloader was already given `requests[0]`. `finishing`: the downloader is ended
    /// afterwards (not when another `fetch` follows on it).
    /// `wholeFiles`: the parts each request for a surah's whole file stands for (by the ayah it is named by), whose
    /// events are reported for each part; `partBytes`: each part's size.
    private static func fetch(
        _ requests: [DownloadRequest], with run: Run, firstSubmitted: Bool, finishing: Bool = true, wholeFiles: [AyahRef: [AyahRef]] = [:],
        partBytes: [AyahRef: Int] = [:], progress: inout PrefetchProgress,
        clock: any TartilClock, isCancelled: @Sendable () -> Bool, report: Report
    ) {
        let (downloader, queue) = (run.downloader, run.queue)
        let alreadySubmitted = firstSubmitted ? 1 : 0
        // A window of requests at a time: the downloader's queue, and the memory behind it, stay small; settled
        // files make room for more. The window holds twice what may be in flight, so a settled file's slot is
        // refilled at once.
        let window = max(64, downloader.limits.transfersInFlight * 2)
        // Counted by files: a run settles each part it carries on its own.
        var outstanding = requests.reduce(0) { $0 + 1 + $1.carried.count }
        if isCancelled() && !firstSubmitted {
            // Cancelled before this group began (between a probe and the rest): none of it is handed over.
            progress.cancelled += requests.reduce(0) { $0 + ($1.wholeFile?.parts.count ?? 1 + $1.carried.count) }
            outstanding = 0
        }
        var next = outstanding == 0 ? requests.count : max(alreadySubmitted, min(window, requests.count))
        downloader.submit(Array(requests[min(alreadySubmitted, next)..<next]))
        var cancelling = false
        var lastDrain = clock.now
        while outstanding > 0 {
            queue.wait(seconds: 0.1)
            // At most a hundred drains a second: events that arrive meanwhile wait in the queue, so a whole Qur'an
            // costs a few hundred wake-ups of this thread instead of one per file.
            let since = clock.now.seconds(since: lastDrain)
            if since < 0.01 { clock.sleep(seconds: 0.01 - since) }
            lastDrain = clock.now
            if isCancelled() && !cancelling {
                cancelling = true
                downloader.cancel()
                // Requests never handed to the downloader are cancelled too.
                outstanding -= requests[next...].reduce(0) { $0 + 1 + $1.carried.count }
                progress.cancelled += requests[next...].reduce(0) { $0 + ($1.wholeFile?.parts.count ?? 1 + $1.carried.count) }
                next = requests.count
            }
            let drained = queue.drain()
            let settled = drained.filter(\.settlesRequest).count
            let events = wholeFiles.isEmpty ? drained : drained.flatMap { event in
                event.ayah.flatMap { wholeFiles[$0] }.map { event.spread(over: $0, bytes: partBytes) } ?? [event]
            }
            for event in events { progress.apply(event) }
            progress.bytes = downloader.totalBytesReceived
            report(events, progress)
            outstanding -= settled
            if settled > 0 && next < requests.count && !cancelling {
                let end = min(requests.count, next + settled)
                downloader.submit(Array(requests[next..<end]))
                next = end
            }
        }
        if finishing { run.finish() }
        progress.bytes = downloader.totalBytesReceived
        progress.connections = downloader.statistics
    }
}

/// Events from the download thread, waited for on the caller's thread.
final class EventQueue: Sendable {
    private let events = Monitor<[DownloadEvent]>([])

    /// Wakes the reader only for the first event of a batch: while it is busy reporting, later events wait in the
    /// list for its next `drain`, instead of costing a wake-up each.
    func push(_ event: DownloadEvent) {
        events.update(wakeIf: { $0.count == 1 }) { $0.append(event) }
    }

    func wait(seconds: Double) { events.wait(until: { !$0.isEmpty }, timeout: seconds) { _, _ in } }

    func drain() -> [DownloadEvent] { events.update { list in defer { list.removeAll() }; return list } }
}
