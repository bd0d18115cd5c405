import CCurl
import Synchronization
import TartilCache
import TartilCore
import TartilSystem

/// Downloads ayah files into the cache on one thread that owns a libcurl multi handle and every easy handle.
/// Other threads `submit` requests and `cancel`; the inbox is a mutex-guarded queue and `ccurl_multi_wakeup`
/// wakes the thread. Decisions (which file starts when and on which mirror, how many transfers each server gets,
/// stalls, retries, when to give up) come from the pure `DownloadScheduler`, which the thread feeds with what
/// libcurl and the cache report and the time of its `clock`; bytes go through the cache's writer, hashed as they
/// arrive, and reach their final name only verified.
///
/// Finished transfers are committed (hash check, one syncfs or fdatasync, rename, one directory fsync and one
/// index transaction per batch) by a committer thread, so the download thread never waits on the disk.
///
/// `@unchecked Sendable`: the only state other threads touch is `inbox` and `commits` (each a `Mutex`), the
/// byte counter (`Atomic`) and the multi handle through `ccurl_multi_wakeup`, which libcurl allows from any
/// thread.
public final class Downloader: @unchecked Sendable {
    private struct Inbox {
        var requests: [DownloadRequest] = []
        var heads: [(HeadRequest, @Sendable (AyahRef, FileHead?) -> Void)] = []
        var committed: [CommitResult] = []
        var cancel = false
        var shutdown = false
    }

    /// A finished transfer handed to a committer. `@unchecked Sendable`: the writer moves to the committer whole;
    /// the download thread does not touch it again. (It shares only its folder and lock file with the download
    /// thread's later writers, which are made for that: `CacheFolder`, `LockFile`.)
    private struct Handover: @unchecked Sendable {
        let job: DownloadScheduler.JobID
        let request: DownloadRequest
        let writer: CacheWriter
        /// The mirror the copy came from.
        let mirror: Int
        /// The cross-check's mark (unpinned files).
        let mark: SourceMark?
        /// A part a run carries (`DownloadRequest.carried`; `request` is then the part's own): its answer goes to
        /// the run's bookkeeping, not the scheduler.
        var carried = false
    }

    /// A committer's answer.
    private struct CommitResult: Sendable {
        let job: DownloadScheduler.JobID
        let outcome: Result<Int, CacheError>
        /// The carried part it is about (nil: the job's own file).
        var carried: AyahRef? = nil
    }

    private struct CommitQueue {
        var pending: [Handover] = []
        var stopping = false
    }

    private let commits = Mutex(CommitQueue())
    private let commitSignal = Semaphore()
    private let committerCount = 1
    private let committersDone = Semaphore()

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let bytesReceived = Atomic<Int>(0)
    /// What each reciter's mirrors last answered to a part's range request this run.
    private let rangeAnswers = Mutex<[ReciterID: PartRequests.RangeSupport]>([:])
    private let connectionStatistics = Mutex(DownloadStatistics())
    private let cacheDirectory: String
    /// The limits it runs under.
    public let limits: DownloadLimits
    private let policy: DownloadPolicy
    private let validate: AudioCheck
    private let events: @Sendable (DownloadEvent) -> Void
    /// Where the download thread reads the time (retry delays, stalls, mirror demotion).
    private let clock: any TartilClock
    private let finished = Semaphore()
    /// Each thread's start (its own cache opened, or why not), reported to `init`.
    private let threadStarted = Semaphore()
    private let startupFailure = Mutex<CacheError?>(nil)
    /// Opens a thread's own cache instance (a test replaces it to make a thread fail to start).
    private let openCache: @Sendable (String) throws(CacheError) -> Cache

    /// Starts the download thread and the committer, and returns once both have opened the cache; when either
    /// cannot, both are stopped and its error is thrown. `validate` checks a file whose hash is not known (it
    /// must decode as MPEG audio); `events` is called on the download thread. The thread reads the time from
    /// `clock` only.
    public convenience init(
        cacheDirectory: String, limits: DownloadLimits = DownloadLimits(), policy: DownloadPolicy = DownloadPolicy(),
        clock: any TartilClock = SystemClock.shared, validate: @escaping AudioCheck,
        events: @escaping @Sendable (DownloadEvent) -> Void
    ) throws(CacheError) {
        try self.init(
            cacheDirectory: cacheDirectory, limits: limits, policy: policy, clock: clock, validate: validate, events: events,
            openCache: { directory throws(CacheError) in
                let cache = try Cache(directory: directory)
                try cache.openIndex()  // a download thread commits: its index must open before anything is fetched
                return cache
            })
    }

    init(
        cacheDirectory: String, limits: DownloadLimits, policy: DownloadPolicy, clock: any TartilClock = SystemClock.shared,
        validate: @escaping AudioCheck, events: @escaping @Sendable (DownloadEvent) -> Void,
        openCache: @escaping @Sendable (String) throws(CacheError) -> Cache
    ) throws(CacheError) {
        try NetworkLibrary.load()
        guard let multi = ccurl_multi_init() else { throw CacheError(.io, "curl_multi_init failed") }
        self.multi = multi
        self.cacheDirectory = cacheDirectory
        self.limits = limits
        self.policy = policy
        self.validate = validate
        self.events = events
        self.clock = clock
        self.openCache = openCache
        // Connections per server, and requests per HTTP/2 connection: all of a server's streams on one
        // connection, as curl --parallel does (measured against spreading them over --jobs connections: at RTT
        // 300 ms each extra connection costs two round trips of handshake before its streams send a byte). How
        // many transfers are in flight is tartil's decision (`TransferSlots`), so libcurl queues none behind a
        // busy connection once a server's protocol is known.
        try NetworkLibrary.check(
            ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.parallel), "curl_multi_setopt(CURLMOPT_MAX_HOST_CONNECTIONS)")
        try NetworkLibrary.check(
            ccurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, limits.streams), "curl_multi_setopt(CURLMOPT_MAX_CONCURRENT_STREAMS)")
        try NetworkLibrary.check(
            ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)), "curl_multi_setopt(CURLMOPT_PIPELINING)")
        _ = try openCache(cacheDirectory)  // a bad directory fails here, on the caller's thread
        NativeThread.start(stackSize: 1 << 20) { [self] in self.run() }
        for _ in 0..<committerCount {
            NativeThread.start(stackSize: 512 << 10) { [self] in self.commitLoop() }
        }
        for _ in 0..<(1 + committerCount) { threadStarted.wait() }
        if let failure = startupFailure.withLock({ $0 }) {
            cancel()
            shutdown()
            throw failure
        }
    }

    /// Opens a thread's cache and reports the outcome to `init`; nil when it failed.
    private func startThread() -> Cache? {
        defer { threadStarted.signal() }
        do throws(CacheError) {
            return try openCache(cacheDirectory)
        } catch {
            startupFailure.withLock { $0 = $0 ?? CacheError(error.code, "a download thread cannot open the cache: \(error.message)") }
            return nil
        }
    }

    // curl_multi_cleanup fails only for a handle that is not a multi handle; nothing is left to do then.
    deinit { _ = ccurl_multi_cleanup(multi) }

    /// Wakes the download thread. A failed wakeup (it can fail only when the wakeup pipe is gone) is made up
    /// for by the thread's poll timeout: it looks at its inbox at least once a second.
    private func wake() { _ = ccurl_multi_wakeup(multi) }

    /// Queues requests (higher priority first, then in the order given).
    public func submit(_ requests: [DownloadRequest]) {
        inbox.withLock { $0.requests.append(contentsOf: requests) }
        wake()
    }

    /// Queues length probes (`HeadRequest`), after every download: `answer` is called on the download thread once
    /// for each, with the file's size and first bytes from the first mirror that gives them, or nil when none
    /// does (a cancelled probe gets no call).
    public func submit(heads: [HeadRequest], answer: @escaping @Sendable (AyahRef, FileHead?) -> Void) {
        inbox.withLock { $0.heads.append(contentsOf: heads.map { ($0, answer) }) }
        wake()
    }

    /// Stops every transfer and queued request promptly; partial files stay for the next run to resume.
    /// Cancellation is final: whatever is submitted afterwards is reported cancelled at once, and a file whose
    /// commit fails afterwards is not tried again.
    public func cancel() {
        inbox.withLock { $0.cancel = true }
        wake()
    }

    /// Ends the thread once nothing is in flight (after `cancel`, at once) and waits for it.
    public func shutdown() {
        inbox.withLock { $0.shutdown = true }
        wake()
        finished.wait()
        commits.withLock { $0.stopping = true }
        for _ in 0..<committerCount { commitSignal.signal() }
        for _ in 0..<committerCount { committersDone.wait() }
    }

    // MARK: - Committer threads

    /// Takes finished transfers in batches and commits them with one directory fsync and one index transaction
    /// per batch; each committer has its own cache instance (index connection).
    private func commitLoop() {
        defer { committersDone.signal() }
        guard let cache = startThread() else { return }
        while true {
            commitSignal.wait()
            // Group commit without a timer: whatever finished while the last batch was being synced forms the
            // next batch, so batches grow exactly when downloads outpace the disk. (Waiting up to 20 or 50 ms to
            // gather 64 or 256 files was tried: no faster on a whole Qur'an here, and with prefetch's window of
            // requests a long wait starves the downloads.)
            let (batch, stopping) = commits.withLock { queue -> ([Handover], Bool) in
                let batch = Array(queue.pending.prefix(128))
                queue.pending.removeFirst(batch.count)
                return (batch, queue.stopping)
            }
            if batch.isEmpty {
                if stopping { return }
                continue
            }
            // A surah's whole file is cut into its parts, each committed as a file of its own.
            let (wholeFiles, files) = (batch.filter { $0.request.wholeFile != nil }, batch.filter { $0.request.wholeFile == nil })
            var results = wholeFiles.map { handover in
                let outcome: Result<Int, CacheError>
                do throws(CacheError) {
                    outcome = .success(try cache.commit(
                        surahFile: handover.writer, cut: handover.request.wholeFile!, reciter: handover.request.reciter,
                        source: handover.request.mirrors[handover.mirror].name))
                } catch {
                    outcome = .failure(error)
                }
                return CommitResult(job: handover.job, outcome: outcome)
            }
            let pending = files.map {
                Cache.PendingFile(
                    writer: $0.writer, reciter: $0.request.reciter, ayah: $0.request.ayah, mark: $0.mark,
                    source: $0.request.mirrors[$0.mirror].name)
            }
            let outcomes: [Result<Int, CacheError>]
            do {
                outcomes = try cache.commit(pending, validate: validate).map { $0.map(\.bytes) }
            } catch {
                outcomes = Array(repeating: .failure(error), count: pending.count)
            }
            results += zip(files, outcomes).map { CommitResult(job: $0.job, outcome: $1, carried: $0.carried ? $0.request.ayah : nil) }
            inbox.withLock { $0.committed.append(contentsOf: results) }
            wake()
        }
    }

    private func handOver(_ handover: Handover) {
        commits.withLock { $0.pending.append(handover) }
        commitSignal.signal()
    }

    /// What `reciter`'s mirrors last answered to a range request for a part of a surah's file this run: the
    /// range (`.honoured`), the whole file (`.ignored`), or nothing yet (`.unknown`). The answer is recorded
    /// before the event that settles its request is sent.
    public func rangeSupport(of reciter: ReciterID) -> PartRequests.RangeSupport {
        rangeAnswers.withLock { $0[reciter] ?? .unknown }
    }

    /// Bytes received so far, over all transfers (for progress displays).
    public var totalBytesReceived: Int { bytesReceived.load(ordering: .relaxed) }

    /// Connections opened and protocols used so far, over the finished transfers.
    public var statistics: DownloadStatistics { connectionStatistics.withLock { $0 } }

    // MARK: - The download thread

    /// The download thread's loop: what the other threads sent, then a round of the scheduler's inputs (what is
    /// due starts, libcurl moves, what it finished is settled, the connections are looked at), then a wait for
    /// network activity, a due start or a wake-up. Every decision is the `DownloadScheduler`'s; the
    /// `DownloadExecutor` carries them out.
    private func run() {
        // The thread's own cache instance (index connection), confined to this thread.
        guard let cache = startThread() else {
            finished.signal()
            return
        }
        let executor = DownloadExecutor(
            multi: multi, cache: cache, limits: limits, policy: policy, clock: clock, events: events,
            counter: { [self] count in bytesReceived.add(count, ordering: .relaxed) },
            commit: { [self] job, request, writer, mirror, mark in
                handOver(Handover(job: job, request: request, writer: writer, mirror: mirror, mark: mark))
            },
            commitCarried: { [self] job, request, writer, mirror in
                handOver(Handover(job: job, request: request, writer: writer, mirror: mirror, mark: nil, carried: true))
            },
            heardRange: { [self] reciter, support in rangeAnswers.withLock { $0[reciter] = support } },
            statistics: { [self] update in connectionStatistics.withLock { update(&$0) } })
        // A clock moved by hand (in tests) wakes the thread, which then looks at what is due by the new time.
        let waker = clock.addWaker { [weak self] in self?.wake() }
        while true {
            let mail = inbox.withLock { box -> Inbox in
                let copy = box
                box.requests.removeAll()
                box.heads.removeAll()
                box.committed.removeAll()
                return copy
            }
            // A cancel goes first: whatever came with it is cancelled too.
            if mail.cancel { executor.feed(.cancel) }
            executor.submit(mail.requests)
            executor.submit(heads: mail.heads)
            for result in mail.committed {
                if let part = result.carried {
                    executor.committed(result.job, carried: part, result.outcome)
                } else {
                    executor.committed(result.job, result.outcome)
                }
            }
            if mail.shutdown {
                executor.feed(.shutdown)
                if executor.hasEnded { break }
            }
            executor.feed(.tick)
            executor.perform()
            executor.readMessages()
            executor.watchConnections()
            executor.waitForActivity()
        }
        clock.removeWaker(waker)
        finished.signal()
    }
}
