import Glibc
import TartilAudio
import TartilCache
import TartilCore
import TartilJournal
import TartilNet
import TartilPlayer
import TartilSystem

/// The reciters, the verified cache and the downloads, for the commands that are not playback: `prefetch`,
/// `cache ls|du|verify|pin|unpin|import`, `table build`, `resolve`, `reciters`, `version`. Every result is a
/// plain value the front ends render; nothing here prints.
extension Session {
    // MARK: - Prefetch

    /// What `prefetch` asks for.
    public struct PrefetchRequest: Sendable {
        public var ayat: [AyahRef]
        /// The reciter as the user wrote it (nil: the default reciter).
        public var reciter: String?
        public var limits: DownloadLimits
        /// Tries per file, across mirrors.
        public var attempts: Int
        /// Evict least-recently-used files afterwards until the cache fits (the files asked for stay).
        public var budget: Int?

        public init(ayat: [AyahRef], reciter: String?, limits: DownloadLimits, attempts: Int, budget: Int?) {
            self.ayat = ayat
            self.reciter = reciter
            self.limits = limits
            self.attempts = attempts
            self.budget = budget
        }
    }

    /// What a prefetch does before its downloads, told as it starts it (`prefetch(announce:)`): a surah-file
    /// reciter's surahs learned (their published timings and whole files), or a surah learned from one mirror
    /// compared again (its whole file, `bytes`, from another).
    public enum PrefetchStep: Sendable, Hashable {
        case learning(surahs: [Int])
        case comparing(surah: Int, bytes: Int)
    }

    /// Puts the files playing `request.ayat` needs in the verified cache (`PlayFiles.needed`: the ayat, and the
    /// basmala's 1:1 before ayah 1 of a surah other than 1 and 9); `report` is called on this thread as files
    /// settle, and `announce` before a surah-file reciter's surahs are learned or compared again (whole files,
    /// fetched before the others).
    public func prefetch(
        _ request: PrefetchRequest, settings: Settings, isCancelled: @escaping @Sendable () -> Bool, announce: (PrefetchStep) -> Void = { _ in },
        report: Prefetch.Report
    ) throws(TartilError) -> (reciter: ReciterID, outcome: Prefetch.Outcome) {
        let library = try settings.library()
        let reciter = try library.reciter(try settings.reciterID(named: request.reciter, for: "prefetch"))
        var limits = try settings.trusting(request.limits)
        limits.caBundle = limits.caBundle ?? request.limits.caBundle
        let started = clock.now
        let (toLearn, unlearned) = try Self.learnSurahs(
            of: request.ayat, reciter: reciter, library: library, settings: settings, limits: limits, clock: clock, isCancelled: isCancelled,
            announce: announce)
        if let (surah, error) = unlearned.min(by: { $0.key < $1.key }) {
            throw TartilError(error.code, "surah \(surah) cannot be fetched: \(error.message)")
        }
        let (compared, comparedBytes, learnedSingleSource) = try compareLearnedAgain(
            request.ayat.map(\.surah), learnedNow: toLearn, reciter: reciter, library: library, settings: settings, limits: limits,
            isCancelled: isCancelled, announce: announce)
        let learningSeconds = clock.now.seconds(since: started)
        // The table rows of the surahs asked for, and Al-Fatiha's for the basmala (1:1).
        let (table, parts) = try library.playbackSource(for: reciter, surahs: [1] + request.ayat.map(\.surah))
        var files = PlayFiles.needed(for: request.ayat, files: reciter.files)
        if let parts {
            // A surah-file reciter's parts, as its surah table cuts them (a recording without a basmala has none).
            let covered = Set(parts.byteRanges.keys.map(\.surah))
            let uncovered = Set(request.ayat.map(\.surah)).subtracting(covered).sorted()
            guard uncovered.isEmpty else {
                throw TartilError.usage(
                    "\(uncovered.count == 1 ? "surah" : "surahs") \(uncovered.map(String.init).joined(separator: ", ")) \(uncovered.count == 1 ? "is" : "are") not in \(reciter.id)'s surah table, which has surahs \(covered.sorted().map(String.init).joined(separator: ", "))")
            }
            files = files.filter { parts.pinned.files[$0] != nil }
        }
        var order = Prefetch.Order(
            reciter: reciter, table: table, ayat: files, limits: limits,
            policy: DownloadPolicy(maxAttempts: request.attempts), cacheDirectory: try settings.checkedCacheDirectory(),
            validate: AudioValidation.validate, unpinnedLimit: AudioValidation.unpinnedLimit, budget: request.budget,
            byteRanges: parts?.byteRanges ?? [:], surahFiles: parts?.surahFiles ?? [:])
        order.learnedSurahs = parts?.learnedSurahs ?? []
        var outcome = try Prefetch.run(order, clock: clock, isCancelled: isCancelled, report: report)
        outcome.progress.comparedSurahs = compared
        outcome.progress.bytes += comparedBytes
        outcome.seconds += learningSeconds  // learning and comparing came first
        if !toLearn.isEmpty, let parts {
            // Learning fetched those surahs' files and cut their parts into the cache: the parts were downloaded
            // (by this run, before the run above found them cached), and the files' bytes came over the wire.
            let learned = Set(toLearn)
            let cutParts = files.filter { learned.contains($0.surah) }
            let moved = min(cutParts.count, outcome.progress.alreadyCached)
            outcome.progress.alreadyCached -= moved
            outcome.progress.downloaded += moved
            outcome.progress.bytes += toLearn.compactMap { parts.surahFiles[$0]?.bytes }.reduce(0, +)
            outcome.progress.learnedSurahs = toLearn  // in order (`unlearnedSurahs`)
            outcome.progress.learnedSingleSource = learnedSingleSource
            // Each part cut from a learned file is reported as a file downloaded, as the others are.
            report(cutParts.compactMap { part in parts.byteRanges[part].map { .cached(part, bytes: $0.count, alreadyCached: false) } }, outcome.progress)
        }
        return (reciter.id, outcome)
    }

    /// Compares again with their mirrors the surahs of `surahs` that a surah-file reciter learned from one mirror
    /// only (`LearningOrder.toCompareAgain`; `SurahLearning.compareAgain`), as a prefetch compares an unpinned
    /// per-ayah file one mirror vouched for: once another mirror serves the file learned, its parts are marked
    /// cross-checked. `announce` is told of each before it starts. A surah the comparison does not settle keeps what
    /// it had, and says why; an interruption throws. Also returns which of `learnedNow` (learned by this run) are
    /// single-source.
    func compareLearnedAgain(
        _ surahs: [Int], learnedNow: [Int], reciter: Reciter, library: ReciterLibrary, settings: Settings, limits: DownloadLimits,
        isCancelled: @escaping @Sendable () -> Bool, announce: (PrefetchStep) -> Void
    ) throws(TartilError) -> (compared: [PrefetchProgress.ComparedSurah], bytes: Int, learnedSingleSource: [Int]) {
        guard reciter.files == .surah else { return ([], 0, []) }
        let directory = try settings.checkedCacheDirectory()
        guard let learned = SurahLearning.learnedTable(cacheDirectory: directory, reciter: reciter.id) else { return ([], 0, []) }
        let pinned = try library.pinnedSurahs(for: reciter)
        let cache = try openCache(settings)
        let partsOf = { (surah: Int) in
            (learned.file(surah: surah)).flatMap { try? SurahLearning.learnedParts(SurahLearning.partKeys(of: $0), reciter: reciter, cache: cache) } ?? []
        }
        let learnedSingleSource = learnedNow.filter { partsOf($0).contains { $0.mark == .singleSource } }
        // A surah with no other mirror listed is not among them: there is nothing to ask, and nothing is said, as
        // for a per-ayah file (a play says it is single-source).
        let due = LearningOrder.toCompareAgain(
            asked: surahs.filter { !pinned.contains($0) }, learnedNow: Set(learnedNow),
            urls: { surah in reciter.mirrors.map { $0.template.url(forSurah: surah) } }, parts: partsOf)
        var compared: [PrefetchProgress.ComparedSurah] = []
        var bytes = 0
        for surah in due {
            guard let file = learned.file(surah: surah) else { continue }
            announce(.comparing(surah: surah, bytes: file.bytes))
            do throws(TartilError) {
                let comparison = try SurahLearning.compareAgain(
                    surah, learned: file, reciter: reciter, cacheDirectory: directory, limits: limits, clock: clock, isCancelled: isCancelled)
                compared.append(.init(surah: surah, mark: comparison.mark, problem: comparison.problem))
                bytes += comparison.bytes
            } catch where error.code != .interrupted {
                compared.append(.init(surah: surah, mark: .singleSource, problem: error.message))
            }
        }
        return (compared, bytes, learnedSingleSource)
    }

    // MARK: - The cache

    /// One reciter's part of the cache (`cache ls`, `cache du`).
    public struct CacheSummary: Sendable {
        public let reciter: String
        public var files = 0
        public var bytes = 0
        /// Surahs that play offline: every file playing them needs is cached (`PlayFiles`: the basmala's 1:1
        /// included, unless the configured basmala is off).
        public var completeSurahs: [Int] = []
        /// Surahs with some of their own ayat cached that do not play offline: the files playing them needs that
        /// are cached, of how many, and whether the basmala's file (1:1, or the surah's own basmala part) is one of
        /// those missing.
        public var partialSurahs: [(surah: Int, cached: Int, total: Int, basmalaMissing: Bool)] = []
        /// A surah-file reciter's surahs with parts on disk but no rows in any table (its learned table was
        /// damaged or removed): played, they are learned again.
        public var unlearnedSurahs: [Int] = []
        /// Why the reciter's learned table did not read whole (nil: it did, or there is none).
        public var learnedTableProblem: String?
        /// How the reciter's recordings are cut into files (where its basmala is recited from).
        public var layout: FileLayout = .ayah
        /// Unpinned files by the cross-check's mark (disputed ones have no file, only copies kept aside).
        public var marks: [SourceMark: [AyahRef]] = [:]
        /// The disputed ayat, with their copies.
        public var disputes: [DisputedAyah] = []
    }

    /// An unpinned ayah whose mirrors disagree with no majority: not played until `cache choose` picks a copy.
    public struct DisputedAyah: Sendable {
        public let reciter: String
        public let ayah: AyahRef
        /// What every command says of it (the mirrors, and the command that settles it).
        public let message: String
        /// Each mirror's copy, kept aside.
        public let copies: [(mirror: String, bytes: Int, sha256: String, path: String)]

        init(_ dispute: Cache.Dispute) {
            reciter = dispute.reciter
            ayah = dispute.ayah
            message = dispute.message
            copies = dispute.copies.map { ($0.mirror, $0.bytes, $0.sha256, $0.path) }
        }
    }

    /// Makes the copy of a disputed ayah that `mirror` served its file (`cache choose`): checked again (its hash
    /// and that it is one whole MPEG audio stream), marked `chosen`; the other copies are removed.
    public func chooseCopy(of ayah: AyahRef, mirror: String, reciter name: String?, settings: Settings) throws(TartilError)
        -> (reciter: ReciterID, mirror: String, bytes: Int, sha256: String)
    {
        let reciter = try settings.reciterID(named: name, for: "cache choose")
        let cache = try openCache(settings)
        do {
            let copy = try cache.choose(reciter: reciter, ayah: ayah, mirror: mirror, validate: AudioValidation.validate)
            return (reciter, copy.mirror, copy.bytes, copy.sha256)
        } catch where error.code == .notChoosable {
            throw TartilError.usage(error.message)
        } catch {
            throw TartilError(.failure, error.message)
        }
    }

    /// For a surah of a reciter of one file per surah whose mirrors disagree on its file with no majority (so it
    /// cannot be learned): learns it from `mirror`'s file alone (`SurahLearning.learn(chosenMirror:)`: fetched,
    /// cut and checked as on first use, recorded as chosen). A per-ayah reciter returns nil (its ayat are chosen
    /// by `chooseCopy`); one that publishes no timings, a surah a table pins and an unknown mirror are usage
    /// errors.
    public func chooseSurahFile(
        _ surah: Int, mirror: String, reciter name: String?, settings: Settings, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> (reciter: ReciterID, file: PinnedFile)? {
        let library = try settings.library()
        let reciter = try library.reciter(try settings.reciterID(named: name, for: "cache choose"))
        guard reciter.files == .surah else { return nil }
        guard reciter.timings != nil else {
            throw .usage("\(reciter.id) publishes no ayah timings: its surahs are pinned by its table, never learned, so there is nothing to choose")
        }
        guard let index = reciter.mirrors.firstIndex(where: { $0.name == mirror }) else {
            throw .usage("\(reciter.id) has no mirror named '\(mirror)' (its mirrors: \(reciter.mirrors.map(\.name).joined(separator: ", ")))")
        }
        if try library.pinnedSurahs(for: reciter).contains(surah) {
            throw .usage("surah \(surah) of \(reciter.id) is pinned by \(library.tablePath(for: reciter) ?? "its table"): there is nothing to choose")
        }
        let file = try SurahLearning.learn(
            surah, reciter: reciter, cacheDirectory: try settings.checkedCacheDirectory(), limits: try settings.downloadLimits(), clock: clock,
            chosenMirror: index, isCancelled: isCancelled)
        return (reciter.id, Self.fileRow(file))
    }

    func openCache(_ settings: Settings) throws(TartilError) -> Cache {
        let directory = try settings.checkedCacheDirectory()
        return try Self.cacheCall { () throws(CacheError) in try Cache(directory: directory, clock: clock) }
    }

    static func cacheCall<T>(_ body: () throws(CacheError) -> T) throws(TartilError) -> T {
        do {
            return try body()
        } catch {
            throw TartilError(.failure, error.message)
        }
    }

    /// The cache's directory, for messages.
    public func cacheDirectory(_ settings: Settings) throws(TartilError) -> String { try settings.checkedCacheDirectory() }

    /// Each reciter's files, bytes and complete surahs (of `reciter` only, when given).
    /// The reciter a cache command's `--reciter` names, as its id: one with a folder in the cache (a reciter
    /// mirrors.json no longer lists included), else one of mirrors.json's, by id or name as `play` takes it. A
    /// usage error for anything else, so that a mistyped name is never reported as an empty cache.
    static func cacheReciter(_ given: String?, in cache: Cache, settings: Settings) throws(TartilError) -> String? {
        guard let given else { return nil }
        let folders = cache.reciterFolders()
        if folders.contains(given) { return given }
        let library: ReciterLibrary
        do { library = try settings.library() } catch {
            throw .usage("--reciter \(given): no such reciter in the cache (\(folders.isEmpty ? "it has none" : "it has \(folders.joined(separator: ", "))"))")
        }
        return try library.reciter(named: given).id.rawValue
    }

    public func cacheSummaries(reciter given: String?, settings: Settings) throws(TartilError) -> [CacheSummary] {
        let cache = try openCache(settings)
        let reciter = try Self.cacheReciter(given, in: cache, settings: settings)
        // Complete means it plays offline as `play` would lay it out: with the basmala unless it is off.
        let basmala = settings.configured("basmala").flatMap { PlaybackOptions.Basmala(rawValue: $0.lowercased()) } ?? .auto
        var summaries: [String: CacheSummary] = [:]
        var cached: [String: Set<AyahRef>] = [:]
        for file in try Self.cacheCall({ () throws(CacheError) in try cache.files(reciter: reciter) }) {
            summaries[file.reciter, default: CacheSummary(reciter: file.reciter)].files += 1
            summaries[file.reciter]!.bytes += file.bytes
            if let mark = file.mark { summaries[file.reciter]!.marks[mark, default: []].append(file.ayah) }
            cached[file.reciter, default: []].insert(file.ayah)
        }
        for dispute in try Self.cacheCall({ () throws(CacheError) in try cache.disputes(reciter: reciter) }) {
            summaries[dispute.reciter, default: CacheSummary(reciter: dispute.reciter)].marks[.disputed, default: []].append(dispute.ayah)
            summaries[dispute.reciter]!.disputes.append(DisputedAyah(dispute))
        }
        // A surah-file reciter's surahs need its own parts: each surah's basmala part where its recording has one.
        let library = try? settings.library()
        return summaries.keys.sorted().map { name in
            var summary = summaries[name]!
            let files = cached[name, default: []]
            let reciter = (try? ReciterID(name)).flatMap { id in try? library?.reciter(id) }
            let layout = reciter?.files ?? .ayah
            summary.layout = layout
            let parts = layout == .surah ? reciter.flatMap { try? library?.parts(for: $0) } : nil
            if layout == .surah, let id = try? ReciterID(name), let directory = try? settings.checkedCacheDirectory() {
                summary.learnedTableProblem = SurahLearning.learnedTableRead(cacheDirectory: directory, reciter: id).problem
            }
            for surah in Set(files.map(\.surah)).sorted() {
                // A surah no table (pinned or learned) has rows for cuts into parts no one knows: its parts do not
                // play until it is learned (again), whatever is on disk.
                if layout == .surah && parts?.surahFiles[surah] == nil {
                    summary.unlearnedSurahs.append(surah)
                    continue
                }
                var needed = PlayFiles.needed(forSurah: surah, basmala: basmala, files: layout)
                if let parts { needed = needed.filter { parts.pinned.files[$0] != nil } }
                let missing = needed.filter { !files.contains($0) }
                if missing.isEmpty {
                    summary.completeSurahs.append(surah)
                } else {
                    let basmalaFile = PlayFiles.basmala(ofSurah: surah, files: layout)
                    summary.partialSurahs.append((surah, needed.count - missing.count, needed.count, surah != 1 && missing.contains(basmalaFile)))
                }
            }
            return summary
        }
    }

    /// A cached file, as `cache verify` names it.
    public struct CachedAyah: Sendable, Hashable {
        public let reciter: String
        public let ayah: AyahRef
    }

    /// What `cache verify` found and did.
    public struct CacheVerification: Sendable {
        public var checked = 0
        /// Surah-file reciters whose learned table did not read whole, and why (what of it reads is used; the
        /// others' surahs are learned again when wanted).
        public var learnedTableProblems: [(reciter: String, problem: String)] = []
        /// Files that failed their check and were removed, with why.
        public var removed: [(file: CachedAyah, reason: String)] = []
        public var repaired = 0
        public var repairFailures: [PrefetchProgress.Failure] = []
        /// Good files only one mirror vouches for so far (single-source).
        public var singleSource: [CachedAyah] = []
        /// Ayat whose mirrors disagree with no majority: not played until `cache choose` picks a copy.
        public var disputed: [DisputedAyah] = []
        /// Files an earlier verification removed and did not download again (one without `repair`, or a repair
        /// that was killed): downloaded now with `repair`, listed (and still missing) without it.
        public var awaitingRepair: [CachedAyah] = []
        public var interrupted = false
    }

    /// Re-hashes every cached file (of `reciter`, when given) against its table or recorded hash, removes the bad
    /// ones and, with `repair`, downloads them again (`report` sees that download's progress); without it, they
    /// are noted for the next `repair`.
    /// `limits`: what the repair downloads under (nil: `settings.downloadLimits()`).
    public func verifyCache(
        reciter given: String?, repair: Bool, settings: Settings, limits: DownloadLimits? = nil, isCancelled: @escaping @Sendable () -> Bool,
        report: Prefetch.Report
    ) throws(TartilError) -> CacheVerification {
        let cache = try openCache(settings)
        let library = try? settings.library()
        let reciter = try Self.cacheReciter(given, in: cache, settings: settings)
        let files = try Self.cacheCall { () throws(CacheError) in try cache.files(reciter: reciter) }
        // What a repair that was killed removed and did not download again (`RepairList`).
        let allPending = cache.pendingRepairs()
        let present = Set(files.map { RepairList.Entry(reciter: $0.reciter, ayah: $0.ayah) })
        let pending = allPending.filter { (reciter == nil || $0.reciter == reciter) && !present.contains($0) }
        let otherPending = allPending.filter { reciter != nil && $0.reciter != reciter }
        var tables: [String: ReciterTable] = [:]
        var learned: [String: Set<Int>] = [:]
        for name in Set(files.map(\.reciter) + pending.map(\.reciter)) {
            if let library, let id = try? ReciterID(name), let reciter = try? library.reciter(id), let table = try library.table(for: reciter) {
                tables[name] = table
                if reciter.files == .surah { learned[name] = try library.parts(for: reciter)?.learnedSurahs }
            }
        }
        let problems = Cache.verify(files, tables: tables) { [learned] name, file in
            guard let surahs = learned[name], let id = try? ReciterID(name) else { return "table" }
            return PlayableParts.rowSource(ofSurah: file.surah, reciter: id, learned: surahs.contains(file.surah))
        }
        let badPaths = Set(problems.map(\.file.path))
        var result = CacheVerification(checked: files.count)
        if let directory = try? settings.checkedCacheDirectory() {
            for name in Set(files.map(\.reciter) + (reciter.map { [$0] } ?? cache.reciterFolders())).sorted() {
                guard let id = try? ReciterID(name), let problem = SurahLearning.learnedTableRead(cacheDirectory: directory, reciter: id).problem else {
                    continue
                }
                result.learnedTableProblems.append((name, problem))
            }
        }
        result.removed = problems.map { (CachedAyah(reciter: $0.file.reciter, ayah: $0.file.ayah), $0.reason) }
        result.singleSource = files.filter { $0.mark == .singleSource && !badPaths.contains($0.path) }.map { CachedAyah(reciter: $0.reciter, ayah: $0.ayah) }
        result.disputed = try Self.cacheCall { () throws(CacheError) in try cache.disputes(reciter: reciter) }.map(DisputedAyah.init)
        let toFetch = problems.map { RepairList.Entry(reciter: $0.file.reciter, ayah: $0.file.ayah) } + pending
        if repair && !toFetch.isEmpty {
            // Recorded before anything is removed: a repair killed from here on is finished by the next one.
            try Self.cacheCall { () throws(CacheError) in try cache.setPendingRepairs(otherPending + toFetch) }
        } else if !problems.isEmpty {
            // What a verification without --repair removes is fetched by the next `cache verify --repair`. Best
            // effort: on a full disk it still verifies and removes (and says so).
            try? cache.setPendingRepairs(otherPending + toFetch)
        }
        for problem in problems {
            let id = try ReciterID(problem.file.reciter)
            try Self.cacheCall { () throws(CacheError) in try cache.remove(reciter: id, ayah: problem.file.ayah) }
        }
        if !repair { result.awaitingRepair = pending.map { CachedAyah(reciter: $0.reciter, ayah: $0.ayah) } }
        if repair && !toFetch.isEmpty {
            guard let library else { throw TartilError(.failure, "cannot repair: mirrors.json could not be read") }
            let repairLimits: DownloadLimits
            if let limits { repairLimits = limits } else { repairLimits = try settings.downloadLimits() }
            for (name, group) in Dictionary(grouping: toFetch, by: \.reciter) {
                let reciter = try library.reciter(try ReciterID(name))
                // A surah-file reciter's parts are fetched as their byte ranges of the surah's file.
                let parts = try library.parts(for: reciter)
                if reciter.files == .surah && parts == nil {
                    // Nothing says which bytes of its surah files a part is: it is fetched again when its surah is
                    // learned (or its table installed).
                    result.repairFailures += group.map {
                        PrefetchProgress.Failure(ayah: $0.ayah, reason: "\(reciter.id) has no surah table: the part cannot be fetched again by itself")
                    }
                    continue
                }
                let requests = try group.map { file throws(TartilError) in
                    DownloadRequest(
                        reciter: reciter.id, ayah: file.ayah, mirrors: reciter.mirrors,
                        expectation: try Self.cacheCall { () throws(CacheError) in
                            try cache.expectation(
                                reciter: reciter.id, ayah: file.ayah, pinned: tables[name]?.files[file.ayah], unpinnedLimit: AudioValidation.unpinnedLimit)
                        },
                        priority: .prefetch, window: parts?.byteRanges[file.ayah])
                }
                let order = Prefetch.Order(
                    reciter: reciter, table: tables[name], ayat: group.map(\.ayah), limits: repairLimits, policy: DownloadPolicy(),
                    cacheDirectory: cache.directory, validate: AudioValidation.validate, unpinnedLimit: AudioValidation.unpinnedLimit)
                let progress = try Prefetch.fetch(requests, order: order, clock: clock, isCancelled: isCancelled, report: report)
                result.repaired += progress.downloaded
                result.repairFailures += progress.failed
            }
            // What is in the cache now is repaired; the rest stays on the list for the next repair.
            let now = Set(try Self.cacheCall { () throws(CacheError) in try cache.files(reciter: reciter) }.map { RepairList.Entry(reciter: $0.reciter, ayah: $0.ayah) })
            let left = toFetch.filter { !now.contains($0) }
            result.awaitingRepair = left.map { CachedAyah(reciter: $0.reciter, ayah: $0.ayah) }
            try Self.cacheCall { () throws(CacheError) in try cache.setPendingRepairs(otherPending + left) }
        }
        result.interrupted = isCancelled()
        return result
    }

    /// Pins or unpins `ayat` of the reciter named (pinned files are never evicted).
    public func setPinned(_ pinned: Bool, ayat: [AyahRef], reciter name: String?, settings: Settings) throws(TartilError) -> ReciterID {
        let reciter = try settings.reciterID(named: name, for: pinned ? "cache pin" : "cache unpin")
        let cache = try openCache(settings)
        try Self.cacheCall { () throws(CacheError) in try cache.setPinned(pinned, reciter: reciter, ayat: ayat) }
        return reciter
    }

    /// What `cache import` did.
    public typealias ImportReport = Cache.ImportReport

    /// Copies the `SSSAAA.mp3` files of `directory` into the cache as the reciter's, verified like downloads.
    public func importFiles(
        from directory: String, reciter name: String?, settings: Settings, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> ImportReport {
        let library = try settings.library()
        let reciter = try library.reciter(try settings.reciterID(named: name, for: "cache import"))
        let table = try library.table(for: reciter)
        guard FileSystem.isDirectory(directory) else {
            throw TartilError.usage("\(directory) is not a folder: give a folder of SSSAAA.mp3 files")
        }
        let names = try FileSystem.names(in: directory)
        guard names.contains(where: { AyahRef(fileName: $0) != nil }) else { throw TartilError.usage("\(directory) holds no SSSAAA.mp3 files") }
        let cache = try openCache(settings)
        return try Self.cacheCall { () throws(CacheError) in
            try cache.importFiles(
                from: directory, reciter: reciter.id, table: table, unpinnedLimit: AudioValidation.unpinnedLimit, validate: AudioValidation.validate,
                isCancelled: isCancelled)
        }
    }

    // MARK: - Tables

    /// What learning one surah again (`relearn`) came to.
    public struct Relearned: Sendable {
        public enum Outcome: String, Sendable {
            /// Its mirrors serve the file that was learned: nothing changed.
            case unchanged
            /// Its mirrors serve another file now: it was learned from that one (its new rows and parts replace
            /// the old).
            case changed
            /// Its mirrors serve the file that was learned, but its published timings changed: its ayat were cut
            /// again at the new times (their rows and parts replace the old).
            case retimed
            /// It had not been learned: it is now.
            case learned
            /// It could not be learned (`error` says why); what was learned before stays.
            case failed
        }
        public let surah: Int
        public let outcome: Outcome
        /// The surah's file now (nil when it failed and none was learned before), and before.
        public let file: PinnedFile?
        public let previous: PinnedFile?
        public let error: String?
    }

    /// Learns `references`' surahs of a surah-file reciter that publishes its timings again, from its mirrors, as on
    /// first use (cross-checked; `SurahLearning`): for a surah whose file its mirrors have replaced since it was
    /// learned (its parts then fail their learned hashes). A surah that cannot be learned keeps what was learned
    /// before. A per-ayah reciter, one without published timings, and a surah a table of the tables folder pins
    /// are usage errors, before anything is fetched.
    public func relearn(
        _ references: [Reference], reciter name: String?, settings: Settings, isCancelled: @escaping @Sendable () -> Bool,
        progress: @Sendable (Int) -> Void = { _ in }
    ) throws(TartilError) -> (reciter: ReciterID, surahs: [Relearned]) {
        let library = try settings.library()
        let reciter = try library.reciter(try settings.reciterID(named: name, for: "table relearn"))
        guard reciter.files == .surah else {
            throw .usage(
                "\(reciter.id) has one file per ayah: its files are checked against its table, or the hashes recorded when first downloaded; only a reciter of one file per surah learns its surahs")
        }
        guard reciter.timings != nil else {
            throw .usage("\(reciter.id) publishes no ayah timings (\"timings\" in mirrors.json): its surahs are not learned, and cannot be learned again")
        }
        let surahs = Array(Set(ReferenceParser.uniqueAyat(of: references).map(\.surah))).sorted()
        let pinned = try library.pinnedSurahs(for: reciter).intersection(surahs).sorted()
        if !pinned.isEmpty {
            throw .usage(
                "\(pinned.count == 1 ? "surah" : "surahs") \(pinned.map(String.init).joined(separator: ", ")) of \(reciter.id) \(pinned.count == 1 ? "is" : "are") pinned by \(library.tablePath(for: reciter) ?? "its table"), not learned: only surahs learned on first use are learned again")
        }
        let cacheDirectory = try settings.checkedCacheDirectory()
        let limits = try settings.downloadLimits()
        var results: [Relearned] = []
        for surah in surahs {
            progress(surah)
            let beforeFile = SurahLearning.learnedTable(cacheDirectory: cacheDirectory, reciter: reciter.id)?.file(surah: surah)
            let before = beforeFile.map(Self.fileRow)
            do throws(TartilError) {
                let learnedFile = try SurahLearning.learn(
                    surah, reciter: reciter, cacheDirectory: cacheDirectory, limits: limits, clock: clock, again: true, isCancelled: isCancelled)
                let learned = Self.fileRow(learnedFile)
                let outcome: Relearned.Outcome =
                    before == nil ? .learned : before != learned ? .changed : beforeFile != learnedFile ? .retimed : .unchanged
                results.append(Relearned(surah: surah, outcome: outcome, file: learned, previous: before, error: nil))
            } catch where error.code != .interrupted {
                results.append(Relearned(surah: surah, outcome: .failed, file: before, previous: before, error: error.message))
            }
        }
        return (reciter.id, results)
    }

    /// A surah table's file row as a pinned file (size, SHA-256, samples, rate).
    private static func fileRow(_ file: SurahTable.File) -> PinnedFile {
        PinnedFile(bytes: file.bytes, digest: file.digest, samples: file.samples, sampleRate: file.sampleRate)
    }

    /// What `table build` wrote.
    public struct TableBuild: Sendable {
        public let path: String
        public let table: ReciterTable
        public let skipped: [(file: String, reason: String)]
        public let completeSurahs: [Int]
    }

    /// Builds a reciter table from a folder of `SSSAAA.mp3` files (`directory`), or from the files of `fromCache`
    /// verified in the cache, and writes it atomically to `output` (default: the tables directory).
    public func buildTable(
        directory: String?, fromCache: String?, reciter name: String?, output: String?, source: String?, settings: Settings,
        isCancelled: @escaping @Sendable () -> Bool, progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void
    ) throws(TartilError) -> TableBuild {
        switch (directory, fromCache) {
        case (nil, nil): throw TartilError.usage("table build needs a folder of SSSAAA.mp3 files, or --from-cache <id>")
        case (let directory?, _?): throw TartilError.usage("table build takes a folder or --from-cache, not both ('\(directory)')")
        default: break
        }
        let cached: Reciter? = try fromCache.map { name throws(TartilError) in try settings.library().reciter(named: name) }
        if let cached, cached.files == .surah {
            throw TartilError.usage(
                "\(cached.id) is recorded as one file per surah: its table is a surah table, built from its surah files (tartil table build DIR --timings-format quranstatic|mp3quran), not from the cache")
        }
        // Any id: a table may be made for a reciter mirrors.json does not list yet.
        guard let name = name ?? cached?.id.rawValue ?? settings.defaultReciter else {
            throw TartilError.usage("table build needs --reciter <id>: the id the table is for")
        }
        let reciter = try ReciterID(name.lowercased())
        if let cached, cached.id != reciter {
            throw TartilError.usage("--reciter \(reciter) differs from --from-cache \(cached.id): a table from the cache is for its own reciter")
        }
        let path = output ?? Path.join(settings.tableOutputDirectory, "\(reciter).tsv")
        try Self.checkOutputPath(path, example: "\(reciter).tsv")
        let result: TableBuilder.Result
        if let cached {
            let library = try settings.library()
            result = try TableBuilder.build(
                fromCache: try openCache(settings), reciter: cached, table: try library.table(for: cached), source: source,
                isCancelled: isCancelled, progress: progress)
        } else {
            result = try TableBuilder.build(
                directory: directory!, reciter: reciter, source: source ?? directory!, isCancelled: isCancelled, progress: progress)
        }
        do {
            try AtomicFile.write(Array(result.table.rendered().utf8), to: path)
        } catch {
            throw TartilError(.io, "cannot write the table: \(error)")
        }
        return TableBuild(path: path, table: result.table, skipped: result.skipped.map { ($0.file, $0.reason) }, completeSurahs: result.completeSurahs)
    }

    /// What `table build --timings-format` wrote.
    public struct SurahTableBuild: Sendable {
        public let path: String
        public let table: SurahTable
        public let skipped: [(file: String, reason: String)]
        /// The most frames any ayah's byte range starts before the frame of its first sample.
        public let largestPreroll: Int
    }

    /// Builds a surah table (format 2) from a folder of `SSS.mp3` surah files and their timing files in
    /// `format` (in `timings`, by default `directory/timings` or `directory`), and writes it atomically to
    /// `output` (default: the tables directory).
    public func buildSurahTable(
        directory: String?, timings: String?, format name: String, reciter: String?, output: String?, source: String?, settings: Settings,
        isCancelled: @escaping @Sendable () -> Bool, progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void
    ) throws(TartilError) -> SurahTableBuild {
        guard let format = SurahTimings.Format(rawValue: name) else {
            throw TartilError.usage(
                "--timings-format takes \(SurahTimings.Format.allCases.map(\.rawValue).joined(separator: " or ")), not '\(name)'")
        }
        guard let directory else { throw TartilError.usage("table build --timings-format needs a folder of SSS.mp3 surah files") }
        guard let name = reciter ?? settings.defaultReciter else {
            throw TartilError.usage("table build needs --reciter <id>: the id the table is for")
        }
        let reciter = try ReciterID(name.lowercased())
        let path = output ?? Path.join(settings.tableOutputDirectory, "\(reciter).tsv")
        try Self.checkOutputPath(path, example: "\(reciter).tsv")
        let result = try SurahTableBuilder.build(
            directory: directory, timings: timings, format: format, reciter: reciter, source: source ?? directory, isCancelled: isCancelled,
            progress: progress)
        do {
            try AtomicFile.write(Array(result.table.rendered().utf8), to: path)
        } catch {
            throw TartilError(.io, "cannot write the table: \(error)")
        }
        return SurahTableBuild(
            path: path, table: result.table, skipped: result.skipped.map { ($0.file, $0.reason) }, largestPreroll: result.largestPreroll)
    }

    // MARK: - Reciters and references

    /// What a reference means for the reciter named, ayah by ayah; with `lengths`, unpinned ayat get durations
    /// too (remembered, or estimated from sizes the mirrors are asked for).
    /// `limits`: what the mirrors are asked under (nil: `settings.downloadLimits()`).
    public func resolve(
        _ references: [Reference], reciter name: String?, lengths: Bool, settings: Settings, limits: DownloadLimits? = nil,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Resolution {
        let reciter = try settings.reciterID(named: name, for: "resolve")
        var resolution = try settings.library().resolve(references, reciter: reciter)
        if lengths {
            let asked: DownloadLimits
            if let limits { asked = limits } else { asked = try settings.downloadLimits() }
            resolution.lengths = try UnpinnedLengths.find(
                resolution.ayat.filter { $0.pinned == nil }.map(\.ayah), reciter: resolution.reciter,
                cacheDirectory: try settings.checkedCacheDirectory(), network: true, limits: asked, isCancelled: isCancelled)
        }
        return resolution
    }

    /// The reciters of mirrors.json with their tables (and the tables' paths), for `reciters`.
    public func reciters(settings: Settings) throws(TartilError) -> (mirrorsFile: String, reciters: [(Reciter, ReciterTable?, String?)]) {
        let library = try settings.library()
        var entries: [(Reciter, ReciterTable?, String?)] = []
        for reciter in library.reciters {
            let table = try library.table(for: reciter)
            entries.append((reciter, table, table == nil ? nil : library.tablePath(for: reciter)))
        }
        return (library.mirrorsFile, entries)
    }

    // MARK: - Version

    /// The libraries tartil uses (name, version), and whether libcurl multiplexes over HTTP/2.
    public struct Libraries: Sendable {
        public let entries: [(String, String)]
        public let http2: Bool
        public let defaultCABundle: String?
    }

    public static func libraries() -> Libraries {
        Libraries(
            entries: [
                ("network", NetworkLibrary.versionDescription),
                ("audio", AudioLibrary.versionDescription),
                ("sqlite", "SQLite \(Journal.sqliteVersion)"),
                ("crypto", SHA256.libraryVersion),
            ],
            http2: NetworkLibrary.supportsHTTP2, defaultCABundle: NetworkLibrary.defaultCABundle)
    }
}
