import Glibc
import TartilAudio
import TartilCache
import TartilCore
import TartilNet
import TartilSystem

/// The player's loader thread: reads each wanted file from the cache with its hash re-checked, hands the bytes
/// to the audio thread, and asks the downloader (at playback priority) for files that are not cached yet.
/// Owns its `Cache` (and so its index connection) and the `Downloader`, which it starts only when a file is
/// missing (playing from a full cache starts no download threads). For a surah-file reciter it also learns, on a
/// thread of its own and one at a time (`LearningOrder`), the surahs of the plan that no table covers yet, and
/// plays their parts once learned.
final class FileLoader {
    private let setup: PlayerSetup
    /// A surah-file reciter's parts and the table of pinned files: the setup's, with the surahs learned since.
    private var parts: PlayableParts?
    private var table: ReciterTable?
    /// Surahs to learn as they are wanted or next (`setup.learnable` less those learned), why each that could not
    /// be was not, and the one being learned.
    private var learnable: Set<Int>
    private var learnFailures: [Int: String] = [:]
    private var learning: Int?
    /// The player's clock: the cache's access times come from it.
    private let clock: any TartilClock
    private let mailbox: Monitor<Player.Mailbox>
    private var downloader: Downloader?
    private var cache: Cache?
    /// Files just read from the cache whose access time is set once they are in the mailbox (`Cache.touch`: the
    /// index is opened then, after the first file is handed over, not before it).
    private var untouched: [AyahRef] = []
    /// Files asked of the downloader (each once).
    private var requested: Set<AyahRef> = []
    private var seenVersion = -1
    /// For lengths not known yet (unpinned, never decoded): each file's size and, from a mirror, first bytes; a
    /// whole file of the reciter's to read what those do not show; and which were estimated already.
    private var sizes: [AyahRef: (bytes: Int, head: MPEGHead?)] = [:]
    private var reference: MPEGHead?
    private var estimated: Set<AyahRef> = []
    /// The plan's files in the order played (a run of parts is made of the ones after the first asked for).
    private lazy var planFiles: [AyahRef] = setup.plan.items.compactMap(\.file)

    init(setup: PlayerSetup, clock: any TartilClock, mailbox: Monitor<Player.Mailbox>) {
        self.setup = setup
        self.clock = clock
        self.mailbox = mailbox
        parts = setup.parts
        table = setup.table
        learnable = setup.learnable
    }

    func run() {
        do {
            cache = try Cache(directory: setup.cacheDirectory, clock: clock)
        } catch {
            mailbox.update { $0.files = [:] }
        }
        var lengthsAsked = false
        while true {
            let (wanted, events, heads, learned, ended) = mailbox.wait(
                until: { [seenVersion] in
                    $0.wantedVersion != seenVersion || !$0.downloadEvents.isEmpty || !$0.fileHeads.isEmpty || !$0.learned.isEmpty
                        || $0.audioEnded
                }
            ) { box in
                let taken = (box.wanted, box.downloadEvents, box.fileHeads, box.learned, box.audioEnded)
                box.downloadEvents.removeAll()
                box.fileHeads.removeAll()
                box.learned.removeAll()
                seenVersion = box.wantedVersion
                return taken
            }
            for (surah, result) in learned { took(surah, result) }
            if ended { break }
            for head in heads { sizes[head.ayah] = (head.bytes, MPEGHead.parse(head.first)) }
            if !heads.isEmpty { estimateLengths() }
            var failures: [AyahRef: String] = [:]
            var heldElsewhere: [AyahRef: Bool] = [:]  // held by another process now (true), or no longer (false)
            for event in events {
                switch event {
                case .failed(let ayah, let reason):
                    failures[ayah] = reason
                    heldElsewhere[ayah] = false
                case .heldElsewhere(let ayah): heldElsewhere[ayah] = true
                // Started here (the other process let go), stored, or given up: no longer waited for.
                case .started(let ayah, _), .cached(let ayah, _, _), .cancelled(let ayah): heldElsewhere[ayah] = false
                default: break
                }
            }
            if !heldElsewhere.isEmpty {
                mailbox.update { box in
                    let before = box.heldElsewhere
                    for (ayah, held) in heldElsewhere {
                        if held { box.heldElsewhere.insert(ayah) } else { box.heldElsewhere.remove(ayah) }
                    }
                    if box.heldElsewhere != before { box.filesVersion += 1 }
                }
            }
            load(wanted, failures: failures)
            startLearning(wanted)
            // Once the first sound is here (its download is never shared with length probes).
            let firstHere = wanted.first.map { first in mailbox.read { box in if case .ready? = box.files[first] { true } else { false } } } ?? false
            if !lengthsAsked && firstHere {
                lengthsAsked = true
                askLengths()
            }
        }
        downloader?.cancel()
        downloader?.shutdown()
        // A surah being learned stops at its next check of the end (`SurahLearning`), keeping nothing of it.
        if learning != nil { mailbox.wait(until: { !$0.learned.isEmpty }) { _ in } }
        mailbox.update { $0.loaderEnded = true }
    }

    // MARK: - Learning surahs while playing

    /// Starts learning the surah `LearningOrder` names, when none is being learned.
    private func startLearning(_ wanted: [AyahRef]) {
        guard learning == nil, !learnable.isEmpty else { return }
        let from = wanted.first.flatMap { planFiles.firstIndex(of: $0) } ?? planFiles.endIndex
        guard let surah = LearningOrder.next(
            wanted: wanted, upcoming: Array(planFiles[from...]), needsLearning: { learnable.contains($0) && learnFailures[$0] == nil })
        else { return }
        learning = surah
        mailbox.update { box in
            box.learningSurah = surah
            box.filesVersion += 1
        }
        let (reciter, directory, limits, clock, mailbox) = (setup.reciter, setup.cacheDirectory, setup.limits, clock, mailbox)
        NativeThread.start(stackSize: 2 << 20) {
            NativeThread.lowerPriority(by: 10)  // the sound comes first
            let result: Result<SurahTable.File, TartilError>
            do throws(TartilError) {
                result = .success(try SurahLearning.learn(
                    surah, reciter: reciter, cacheDirectory: directory, limits: limits, clock: clock,
                    isCancelled: { mailbox.read { $0.audioEnded } }))
            } catch {
                result = .failure(error)
            }
            mailbox.update { $0.learned.append((surah, result)) }
        }
    }

    /// Takes what learning `surah` came to: its parts join the table (their exact lengths to the audio thread,
    /// for the scrubber), or its files fail with why.
    private func took(_ surah: Int, _ result: Result<SurahTable.File, TartilError>) {
        learning = nil
        var lengths: [AyahRef: Timeline.Length] = [:]
        switch result {
        case .success(let file):
            var added = SurahTable(reciter: setup.reciter.id, source: "", files: [file]).playableParts()
            added.learnedSurahs = [surah]
            parts = parts?.adding(added) ?? added
            table = parts?.pinned
            learnable.remove(surah)
            for (ayah, pinned) in added.pinned.files { lengths[ayah] = Timeline.Length(samples: pinned.samples, rate: pinned.sampleRate) }
        case .failure(let error):
            if error.code != .interrupted { learnFailures[surah] = error.message }
        }
        mailbox.update { box in
            box.learningSurah = nil
            box.knownLengths.merge(lengths) { _, new in new }
            box.filesVersion += 1
        }
    }

    /// Makes each wanted file ready (or downloading, or failed), and lets go of the bytes of files no longer
    /// wanted.
    private func load(_ wanted: [AyahRef], failures: [AyahRef: String]) {
        let settled = mailbox.update { box in
            let before = box.files.count
            box.files = box.files.filter { key, state in
                if case .failed = state { return true }
                return wanted.contains(key)
            }
            var changed = box.files.count != before
            for (ayah, reason) in failures {
                box.files[ayah] = .failed(reason)
                changed = true
            }
            if changed { box.filesVersion += 1 }
            var settled = Set<AyahRef>()
            for (key, state) in box.files {
                if case .downloading = state { continue }
                settled.insert(key)
            }
            return settled
        }
        var missing: [AyahRef: FileExpectation] = [:]
        for ayah in wanted where !settled.contains(ayah) {
            let state: Player.FileState
            switch find(ayah) {
            case .found(let found):
                state = found
            case .missing(let expectation):
                if !requested.contains(ayah) { missing[ayah] = expectation }
                state = .downloading
            }
            mailbox.update { box in
                if case .downloading? = box.files[ayah], case .downloading = state { return }
                box.files[ayah] = state
                box.filesVersion += 1
            }
            for read in untouched { cache?.touch(reciter: setup.reciter.id, ayah: read) }
            untouched.removeAll()
        }
        let headArrived = mailbox.read { box in
            switch wanted.first.flatMap({ box.files[$0] }) {
            case .ready?, .failed?: true
            case .downloading?, nil: false
            }
        }
        let order = FetchOrder.requests(wanted: wanted, missing: Set(missing.keys), headArrived: headArrived)
        guard !order.isEmpty else { return }
        do {
            let downloader = try startedDownloader()
            let steps = partSteps(order, downloader: downloader)
            try downloader.submit(steps.map { step throws(CacheError) in try request(step, missing: missing) })
            requested.formUnion(steps.flatMap(\.parts))
        } catch {
            mailbox.update { box in
                for ayah in order { box.files[ayah] = .failed(error.message) }
                box.filesVersion += 1
            }
        }
    }

    /// The requests for the files `order`: each alone, but a surah-file reciter's parts as `PartRequests` says
    /// from what its mirrors have answered to range requests (runs of the plan's next parts from a server that
    /// ignores them).
    private func partSteps(_ order: [AyahRef], downloader: Downloader) -> [PartRequests.Step] {
        guard let parts else { return order.map { .part($0) } }
        let from = planFiles.firstIndex(of: order[0]) ?? planFiles.endIndex
        return PartRequests.steps(
            order: order, upcoming: Array(planFiles[from...]), ranges: parts.byteRanges,
            support: downloader.rangeSupport(of: setup.reciter.id),
            taken: { self.requested.contains($0) || self.cache?.hasFile(reciter: self.setup.reciter.id, ayah: $0) == true })
    }

    /// The request for one step: a file with its expectation (`missing`'s, for the files wanted), a run with its
    /// carried parts before its last.
    private func request(_ step: PartRequests.Step, missing: [AyahRef: FileExpectation]) throws(CacheError) -> DownloadRequest {
        let ayat = step.parts
        var expectations: [FileExpectation] = []
        for ayah in ayat {
            if let known = missing[ayah] {
                expectations.append(known)
            } else {
                guard let cache else { throw CacheError(.io, "the cache at \(setup.cacheDirectory) cannot be opened") }
                expectations.append(try cache.expectation(
                    reciter: setup.reciter.id, ayah: ayah, pinned: table?.files[ayah], pinnedSource: parts?.rowSource(of: ayah) ?? "table",
                    unpinnedLimit: setup.unpinnedLimit))
            }
        }
        let ranges = parts?.byteRanges ?? [:]
        guard ayat.count > 1 else {
            return DownloadRequest(
                reciter: setup.reciter.id, ayah: ayat[0], mirrors: setup.reciter.mirrors, expectation: expectations[0], priority: .playback,
                window: ranges[ayat[0]])
        }
        return .run(
            of: zip(ayat, expectations).map { Cache.SurahFilePart(ayah: $0, bytes: ranges[$0]!, expectation: $1) }, reciter: setup.reciter.id,
            mirrors: setup.reciter.mirrors, priority: .playback)
    }

    // MARK: - Lengths not known yet

    /// The plan's files whose lengths are not known (unpinned, never decoded): the sizes of those in the cache,
    /// and a length probe (`HeadRequest`, at the lowest priority) for each of the others, in the plan's order.
    private func askLengths() {
        // A surah-file reciter's parts are all pinned; anything else of it is not played at all.
        guard let cache, setup.parts == nil else { return }
        var unpinned: [AyahRef] = []
        var seen: Set<AyahRef> = []
        for item in setup.plan.items {
            guard let file = item.file, seen.insert(file).inserted, setup.table?.files[file] == nil else { continue }
            unpinned.append(file)
        }
        guard !unpinned.isEmpty else { return }
        // Remembered lengths are in the timeline already (`Player.init`).
        guard let known = try? UnpinnedLengths.known(unpinned, reciter: setup.reciter.id, cache: cache) else { return }
        sizes.merge(known.sizes) { old, _ in old }
        let probes = known.missing.map { HeadRequest(reciter: setup.reciter.id, ayah: $0, mirrors: setup.reciter.mirrors) }
        estimateLengths()
        guard !probes.isEmpty, let downloader = try? startedDownloader() else { return }
        let mailbox = self.mailbox
        downloader.submit(heads: probes) { _, head in
            if let head { mailbox.update { $0.fileHeads.append(head) } }
        }
    }

    /// Estimates the lengths of the files whose sizes are known, once a whole file of the reciter's has been read,
    /// and hands them to the audio thread.
    private func estimateLengths() {
        guard let reference else { return }
        let new = sizes.filter { !estimated.contains($0.key) }
        estimated.formUnion(new.keys)
        let lengths = UnpinnedLengths.estimates(new, reference: reference)
        guard !lengths.isEmpty else { return }
        mailbox.update { box in
            box.estimates.merge(lengths) { _, new in new }
            box.filesVersion += 1
        }
    }

    /// Takes a whole file of the reciter's (verified bytes) as the reference for estimates, once.
    private func noteReference(_ bytes: [UInt8]) {
        guard reference == nil else { return }
        let head = MPEGHead.parse(bytes, isWholeFile: true)
        guard head.frame != nil else { return }
        reference = head
        estimateLengths()
    }

    private func startedDownloader() throws(CacheError) -> Downloader {
        if let downloader { return downloader }
        let mailbox = self.mailbox
        let started = try Downloader(
            cacheDirectory: setup.cacheDirectory, limits: setup.limits, policy: setup.policy,
            validate: AudioValidation.validate, events: { event in mailbox.update { $0.downloadEvents.append(event) } })
        downloader = started
        return started
    }

    /// What the cache has of a wanted file.
    private enum Lookup {
        /// Ready (read and re-verified), or failed for good.
        case found(Player.FileState)
        /// Not in the cache (or removed as bad): it must be downloaded, and must match this.
        case missing(FileExpectation)
    }

    /// Looks a wanted file up in the cache.
    private func find(_ ayah: AyahRef) -> Lookup {
        guard let cache else { return .found(.failed("the cache at \(setup.cacheDirectory) cannot be opened")) }
        if let parts, parts.pinned.files[ayah] == nil {
            // A surah-file reciter plays only what its table cuts out of its files; a surah not learned yet is
            // waited for (`startLearning`).
            let covered = parts.surahFiles[ayah.surah] != nil
            if !covered, let reason = learnFailures[ayah.surah] { return .found(.failed("surah \(ayah.surah) could not be learned: \(reason)")) }
            if !covered, learnable.contains(ayah.surah) { return .found(.downloading) }
            return .found(.failed(
                covered && ayah.isBasmalaPart
                    ? "\(setup.reciter.id)'s recording of surah \(ayah.surah) has no basmala before ayah 1 (its table has no ayah 0 row)"
                    : "surah \(ayah.surah) is not in \(setup.reciter.id)'s surah table"))
        }
        do {
            // Mirrors that disagree with no majority: it is not played until `cache choose` picks a copy.
            if table?.files[ayah] == nil, let dispute = try cache.dispute(reciter: setup.reciter.id, ayah: ayah) {
                return .found(.failed(dispute.message))
            }
            let expectation = try cache.expectation(
                reciter: setup.reciter.id, ayah: ayah, pinned: table?.files[ayah], pinnedSource: parts?.rowSource(of: ayah) ?? "table",
                unpinnedLimit: setup.unpinnedLimit)
            if cache.hasFile(reciter: setup.reciter.id, ayah: ayah) {
                do {
                    let bytes = [UInt8](try cache.readVerified(reciter: setup.reciter.id, ayah: ayah, expectation: expectation, touching: false))
                    untouched.append(ayah)
                    noteReference(bytes)
                    guard table?.files[ayah] == nil else { return .found(.ready(bytes, measured: nil, window: parts?.windows[ayah])) }
                    // Counted once, when the file was checked or first played, and remembered in the index.
                    if let length = try? cache.rememberedLength(reciter: setup.reciter.id, ayah: ayah) {
                        return .found(.ready(bytes, measured: (length.samples, length.sampleRate)))
                    }
                    do {
                        let (format, frames) = try Mpg123Decoder().countSamples(bytes: bytes, name: "\(ayah.fileStem).mp3")
                        try? cache.rememberLengths(reciter: setup.reciter.id, [ayah: AudioLength(samples: frames, sampleRate: format.sampleRate)])
                        return .found(.ready(bytes, measured: (frames, format.sampleRate)))
                    } catch {
                        return .found(.failed("\(ayah.fileStem).mp3 does not decode: \(error)"))
                    }
                } catch where error.code == .mismatch || error.code == .unvouched {
                    requested.remove(ayah)  // removed as bad, or not vouched for: fetch it again
                }
            }
            return .missing(expectation)
        } catch {
            return .found(.failed(error.message))
        }
    }
}

@available(*, unavailable) extension FileLoader: Sendable {}
