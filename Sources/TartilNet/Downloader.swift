import CCurl
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TartilCache
import TartilCore
import TartilSystem

/// Downloads ayah files into the cache on one thread that owns a libcurl multi handle and every easy handle.
/// Other threads `submit` requests and `cancel`; the inbox is a mutex-guarded queue and `ccurl_multi_wakeup`
/// wakes the thread. Decisions (which mirror, how long to wait, when to give up) come from `DownloadPlan`;
/// bytes go through the cache's writer, hashed as they arrive, and reach their final name only verified.
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

    /// A finished transfer handed to a committer. `@unchecked Sendable`: the job and the writer move to the
    /// committer whole; the download thread touches neither until the `CommitResult` comes back.
    private struct Handover: @unchecked Sendable {
        let job: Job
        let writer: CacheWriter
        let mirror: Int
        /// The cross-check's mark (unpinned files).
        let mark: SourceMark?
    }

    /// A committer's answer (same hand-over rule as `Handover`).
    private struct CommitResult: @unchecked Sendable {
        let job: Job
        let mirror: Int
        let outcome: Result<Int, CacheError>
    }

    private struct CommitQueue {
        var pending: [Handover] = []
        var stopping = false
    }

    private let commits = Mutex(CommitQueue())
    private let commitSignal = DispatchSemaphore(value: 0)
    private let committerCount = 1
    private let committersDone = DispatchSemaphore(value: 0)

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let bytesReceived = Atomic<Int>(0)
    private let connectionStatistics = Mutex(DownloadStatistics())
    private let cacheDirectory: String
    /// The limits it runs under.
    public let limits: DownloadLimits
    private let policy: DownloadPolicy
    private let validate: AudioCheck
    private let events: @Sendable (DownloadEvent) -> Void
    /// Where the download thread reads the time (retry delays, stalls, mirror demotion).
    private let clock: any TartilClock
    private let finished = DispatchSemaphore(value: 0)
    /// Each thread's start (its own cache opened, or why not), reported to `init`.
    private let threadStarted = DispatchSemaphore(value: 0)
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
            openCache: { directory throws(CacheError) in try Cache(directory: directory) })
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
            let files = batch.map {
                Cache.PendingFile(
                    writer: $0.writer, reciter: $0.job.request.reciter, ayah: $0.job.request.ayah, mark: $0.mark,
                    source: $0.job.request.mirrors[$0.mirror].name)
            }
            let outcomes: [Result<Int, CacheError>]
            do {
                outcomes = try cache.commit(files, validate: validate).map { $0.map(\.bytes) }
            } catch {
                outcomes = Array(repeating: .failure(error), count: batch.count)
            }
            let results = zip(batch, outcomes).map { CommitResult(job: $0.job, mirror: $0.mirror, outcome: $1) }
            inbox.withLock { $0.committed.append(contentsOf: results) }
            wake()
        }
    }

    private func handOver(_ handover: Handover) {
        commits.withLock { $0.pending.append(handover) }
        commitSignal.signal()
    }

    /// Bytes received so far, over all transfers (for progress displays).
    public var totalBytesReceived: Int { bytesReceived.load(ordering: .relaxed) }

    /// Connections opened and protocols used so far, over the finished transfers.
    public var statistics: DownloadStatistics { connectionStatistics.withLock { $0 } }

    // MARK: - The download thread

    /// A file being worked on.
    private final class Job {
        let request: DownloadRequest
        var plan: DownloadPlan
        var notBefore: Double = 0
        var mirror = 0
        /// The server of `mirror` (for `TransferSlots`).
        var server = ""
        let order: Int
        /// The cross-check, for a file whose hash is not known (an unpinned ayah downloaded for the first time).
        var crossCheck: CrossCheck?
        /// The mark the committed copy gets.
        var mark: SourceMark?
        /// Taken back before libcurl sent it (`settleSingle`): its next start is the same attempt, not announced again.
        var takenBack = false

        init(request: DownloadRequest, policy: DownloadPolicy, order: Int) {
            self.request = request
            self.plan = DownloadPlan(mirrorCount: request.mirrors.count, policy: policy)
            self.order = order
            if !request.expectation.isKnown { crossCheck = CrossCheck(mirrorCount: request.mirrors.count) }
        }
    }

    private func run() {
        // The thread's own cache instance (index connection), confined to this thread.
        guard let cache = startThread() else {
            finished.signal()
            return
        }
        var waiting: [Job] = []
        var active: [UnsafeMutableRawPointer: (Job, Transfer)] = [:]
        /// Cross-check probes running, each with the downloaded copy it is about (held, unnamed, meanwhile).
        var probes: [UnsafeMutableRawPointer: (Job, Probe, CacheWriter, Int)] = [:]
        var health: [String: MirrorHealth] = [:]
        /// Length probes waiting (with the mirror to ask next) and running.
        var headQueue: [(request: HeadRequest, answer: @Sendable (AyahRef, FileHead?) -> Void, mirror: Int)] = []
        var heads: [UnsafeMutableRawPointer: (request: HeadRequest, answer: @Sendable (AyahRef, FileHead?) -> Void, probe: Probe)] = [:]
        var slots = TransferSlots(
            connectionsPerServer: limits.parallel, streamsPerServer: limits.streams, total: limits.transfersInFlight,
            httpsMayMultiplex: NetworkLibrary.supportsHTTP2)
        /// Bytes received so far by the transfers sharing connections to each server (for `StallWatch`).
        var sharedBytes: [String: Int] = [:]
        /// Nil when stalls are not judged (a zero stall rate or time, as libcurl takes it).
        var stallWatch = limits.stallSeconds > 0 && limits.stallBytesPerSecond > 0
            ? StallWatch(seconds: Double(limits.stallSeconds), bytesPerSecond: limits.stallBytesPerSecond) : nil
        /// Servers whose answer came over HTTP/1.1 since the loop last looked (an https server taken to multiplex).
        var heardSingle: Set<String> = []
        var mostInFlight = 0
        var submitted = 0
        var committing = 0
        /// Set by the first `cancel()`, and never reset.
        var cancelled = false
        var random = SystemRandomNumberGenerator()
        // A clock moved by hand (in tests) wakes the thread, which then looks at what is due by the new time.
        let waker = clock.addWaker { [weak self] in self?.wake() }
        let counter: (Int) -> Void = { [self] count in self.bytesReceived.add(count, ordering: .relaxed) }

        /// Takes a finished or cancelled transfer out of the multi handle. It fails only for a handle that is not
        /// in it; the easy handle is cleaned up either way (curl_easy_cleanup also detaches it).
        func removeHandle(_ handle: UnsafeMutableRawPointer) { _ = ccurl_multi_remove_handle(multi, handle) }

        func now() -> Double { Double(clock.now.nanoseconds) / 1e9 }
        func mirrorHealth(_ job: Job) -> MirrorHealth {
            health[job.request.reciter.rawValue] ?? MirrorHealth(mirrorCount: job.request.mirrors.count, policy: policy)
        }

        /// Carries out a plan's action for `job`.
        func follow(_ action: DownloadPlan.Action, _ job: Job) {
            if cancelled {
                events(.cancelled(job.request.ayah))
                return
            }
            switch action {
            case .start(let mirror, let delay):
                job.mirror = mirror
                job.server = TransferSlots.server(of: job.request.mirrors[mirror].template.text)
                job.notBefore = now() + delay
                waiting.append(job)
            case .giveUp(let reason):
                // Nothing unverified stays behind for a file that cannot be had.
                if let writer = try? cache.writer(reciter: job.request.reciter, ayah: job.request.ayah, expectation: job.request.expectation) {
                    writer.abandon(keepPartial: false)
                }
                events(.failed(job.request.ayah, reason: reason))
            }
        }

        func fail(_ job: Job, _ failure: DownloadFailure, mirror: Int) {
            let reciter = job.request.reciter.rawValue
            var mirrorHealth = mirrorHealth(job)
            let wasAbandoned = mirrorHealth.abandonedReason(mirror) != nil
            mirrorHealth.recordFailure(mirror, failure, now: now())
            health[reciter] = mirrorHealth
            if !wasAbandoned, let reason = mirrorHealth.abandonedReason(mirror) {
                events(.mirrorAbandoned(mirror: job.request.mirrors[mirror].name, reason: reason))
            }
            let action = job.plan.failed(failure, on: mirror, health: mirrorHealth, now: now(), random: { Double.random(in: 0..<1, using: &random) })
            if case .start(_, let delay) = action, !cancelled {
                events(.retrying(job.request.ayah, mirror: job.request.mirrors[mirror].name, reason: failure.reason, delay: delay))
            }
            follow(action, job)
        }

        /// Starts an attempt, or settles the job without one (already cached, busy elsewhere, or its mirror
        /// given up since the attempt was planned).
        func start(_ job: Job) {
            let request = job.request
            let announce = !job.takenBack  // a taken-back attempt was announced when it first started
            job.takenBack = false
            if let reason = mirrorHealth(job).abandonedReason(job.mirror) {
                follow(job.plan.failed(.untrusted(reason), on: job.mirror, health: mirrorHealth(job), now: now(), random: { 0 }), job)
                return
            }
            if request.expectation.isKnown,
                (try? cache.containsVerified(reciter: request.reciter, ayah: request.ayah, expectation: request.expectation)) == true
            {
                events(.cached(request.ayah, bytes: request.expectation.bytes ?? 0, alreadyCached: true))
                return
            }
            let writer: CacheWriter
            do {
                writer = try cache.writer(
                    reciter: request.reciter, ayah: request.ayah, expectation: request.expectation,
                    keepingTail: job.crossCheck == nil || request.mirrors.count < 2 ? 0 : CrossCheck.tailBytes)
            } catch where error.code == .busy {
                job.notBefore = now() + 0.2  // another process has it; look again shortly
                waiting.append(job)
                return
            } catch where error.code == .symbolicLink {
                events(.failed(request.ayah, reason: error.message))  // no retry or mirror changes that
                return
            } catch {
                fail(job, .transient(error.message, retryAfter: nil), mirror: job.mirror)
                return
            }
            let url = request.mirrors[job.mirror].template.url(for: request.ayah)
            do {
                let server = TransferSlots.server(of: url)
                let transfer = try Transfer(
                    url: url, mirror: job.mirror, writer: writer, limits: limits, sharesConnection: slots.multiplexes(server),
                    counter: counter,
                    heard: { multiplexes in
                        slots.learned(server, multiplexes: multiplexes)
                        if !multiplexes { heardSingle.insert(server) }
                    })
                try NetworkLibrary.check(ccurl_multi_add_handle(multi, transfer.handle), "curl_multi_add_handle")
                active[transfer.handle] = (job, transfer)
                let firstToServer = !slots.isBusy(server)
                slots.started(server)
                // A server's first transfer starts connecting now, before the files of the others due in this
                // round are opened (each open costs a little; a round may start a hundred); over HTTP/1.1 every
                // transfer has a connection of its own to open or a request to send, and goes at once too.
                if firstToServer || !slots.multiplexes(server) {
                    var running: Int32 = 0
                    _ = ccurl_multi_perform(multi, &running)  // a failure shows again at the loop's own perform
                }
                if slots.count > mostInFlight {
                    mostInFlight = slots.count
                    connectionStatistics.withLock { $0.mostInFlight = mostInFlight }
                }
                if announce { events(.started(request.ayah, mirror: request.mirrors[job.mirror].name)) }
            } catch {
                // libcurl refused an option or the handle: no other attempt would go better, and none may run
                // without its options (the http/https restriction among them).
                writer.abandon(keepPartial: true)
                events(.failed(request.ayah, reason: "libcurl: \(error.message)"))
            }
        }

        /// Adds what a transfer sharing a connection received since last asked to its server's count (`StallWatch`).
        func countShared(_ transfer: Transfer) {
            if transfer.sharesConnection { sharedBytes[transfer.server, default: 0] += transfer.takeUncounted() }
        }

        /// Takes a transfer out (it ended, or is stopped): its slot and its connection are free again at once. A
        /// finished one is settled after the next transfers have been started (`settle`); a stopped one's writer
        /// is abandoned by the caller.
        func release(_ handle: UnsafeMutableRawPointer) -> (Job, Transfer)? {
            guard let (job, transfer) = active.removeValue(forKey: handle) else { return nil }
            countShared(transfer)
            slots.ended(transfer.server)
            removeHandle(handle)  // the easy handle stays valid until the transfer is gone
            return (job, transfer)
        }

        /// A released transfer's outcome: commit the file or decide the next attempt.
        func settle(_ job: Job, _ transfer: Transfer, _ result: CURLcode) {
            let connection = transfer.connectionInfo
            connectionStatistics.withLock {
                $0.transfers += 1
                $0.connections += connection.opened ? 1 : 0
                $0.http2Transfers += connection.http2 ? 1 : 0
            }
            let request = job.request
            let failure = transfer.failure(for: result)
            // A body cut short, or a range past the end, may still be the whole file: let the hash decide.
            let maybeComplete = transfer.writer.offset > 0
                && (transfer.status == 416 || (failure != nil && request.expectation.bytes == transfer.writer.offset))
            if failure == nil || maybeComplete {
                transfer.writer.finishWriting()  // the last block is written while the file waits for its commit
                if job.crossCheck != nil {
                    // With one mirror there is nothing to compare with (the check says single-source at once).
                    let tail = transfer.writer.tail()
                    transfer.writer.releaseTail()
                    guard let tailHash = request.mirrors.count < 2 ? "" : try? SHA256.hash(Data(tail)) else {
                        transfer.writer.abandon(keepPartial: true)
                        fail(job, .transient("cannot hash the file's tail", retryAfter: nil), mirror: transfer.mirror)
                        return
                    }
                    let fingerprint = FileFingerprint(bytes: transfer.writer.offset, tailSHA256: tailHash)
                    crossCheck(job.crossCheck!.downloaded(from: transfer.mirror, fingerprint), job, transfer.writer, transfer.mirror)
                    return
                }
                committing += 1
                handOver(Handover(job: job, writer: transfer.writer, mirror: transfer.mirror, mark: nil))
                return
            } else if case .mirrorUnusable = failure {
                transfer.writer.abandon(keepPartial: false)
            } else {
                transfer.writer.abandon(keepPartial: true)
            }
            fail(job, failure!, mirror: transfer.mirror)
        }

        /// `server` answered over HTTP/1.1 (an https server taken to multiplex): the transfers already sent each
        /// have a connection of their own, and libcurl judges their stalls from now on; of the rest, those over the
        /// server's limit (`TransferSlots`) are taken back, least urgent first, and wait their turn here, where a
        /// more urgent request can still go first.
        func settleSingle(_ server: String) {
            var excess = slots.excess(for: server)
            let onServer = active.filter { $0.value.1.server == server }
                .sorted { ($0.value.0.request.priority, $0.value.0.order) > ($1.value.0.request.priority, $1.value.0.order) }
            for (handle, (job, transfer)) in onServer {
                if transfer.requestSent || excess == 0 {
                    countShared(transfer)
                    transfer.stopSharing(limits)
                    continue
                }
                excess -= 1
                _ = release(handle)
                transfer.writer.abandon(keepPartial: true)
                job.notBefore = 0
                job.takenBack = true
                waiting.append(job)
            }
        }

        /// Stops everything on the shared connections to `server`, which have stalled (`StallWatch`), and closes
        /// them: a dead connection must not carry the retries. Each transfer is retried as its plan says; a probe
        /// counts as unanswered.
        func stopStalled(_ server: String) {
            let reason = "stalled (the connection moved under \(limits.stallBytesPerSecond) bytes/s for \(limits.stallSeconds) s)"
            // A connection closes once the last request on it has left, instead of going back to the pool.
            func closingItsConnection(_ handle: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
                _ = ccurl_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, 1)
                return handle
            }
            for (handle, (job, transfer)) in active where transfer.server == server && transfer.sharesConnection {
                _ = release(closingItsConnection(handle))
                transfer.writer.abandon(keepPartial: true)
                fail(job, .transient(reason, retryAfter: nil), mirror: transfer.mirror)
            }
            for (handle, (job, probe, writer, mirror)) in probes where probe.server == server {
                probes.removeValue(forKey: handle)
                removeHandle(closingItsConnection(handle))
                crossCheck(job.crossCheck!.probed(probe.mirror, .unavailable(reason)), job, writer, mirror)
            }
            for (handle, head) in heads where head.probe.server == server {
                heads.removeValue(forKey: handle)
                removeHandle(closingItsConnection(handle))
                askNextMirror(head.request, head.answer, after: head.probe.mirror)
            }
            stallWatch?.reset(server)
        }

        /// Carries out the cross-check's action for `job`, whose copy from `mirror` is in `writer`.
        func crossCheck(_ action: CrossCheck.Action, _ job: Job, _ writer: CacheWriter, _ mirror: Int) {
            let request = job.request
            switch action {
            case .keep(let mark):
                job.mark = mark
                committing += 1
                handOver(Handover(job: job, writer: writer, mirror: mirror, mark: mark))
            case .probe(let other):
                let url = request.mirrors[other].template.url(for: request.ayah)
                do {
                    let probe = try Probe(url: url, mirror: other, maxBytes: request.expectation.maxBytes, limits: limits)
                    try NetworkLibrary.check(ccurl_multi_add_handle(multi, probe.handle), "curl_multi_add_handle")
                    probes[probe.handle] = (job, probe, writer, mirror)
                } catch {
                    crossCheck(job.crossCheck!.probed(other, .unavailable(error.message)), job, writer, mirror)
                }
            case .download(let other):
                // Two other mirrors agree on another file: this copy goes, and the file comes from one of them.
                writer.abandon(keepPartial: false)
                events(.retrying(
                    request.ayah, mirror: request.mirrors[mirror].name,
                    reason: "mirrors disagree on this file; taking it from \(request.mirrors[other].name), which another mirror agrees with",
                    delay: 0))
                follow(job.plan.switchTo(other), job)
            }
        }

        /// A cross-check probe ended.
        func probed(_ handle: UnsafeMutableRawPointer, _ result: CURLcode) {
            guard let (job, probe, writer, mirror) = probes.removeValue(forKey: handle) else { return }
            removeHandle(handle)
            let observation = (try? probe.observation(for: result)) ?? .unavailable("cannot hash the answer")
            crossCheck(job.crossCheck!.probed(probe.mirror, observation), job, writer, mirror)
        }

        /// A committer finished a file.
        func committed(_ result: CommitResult) {
            committing -= 1
            let request = result.job.request
            switch result.outcome {
            case .success(let bytes):
                var mirrorHealth = mirrorHealth(result.job)
                mirrorHealth.recordSuccess(result.mirror)
                health[request.reciter.rawValue] = mirrorHealth
                if let mark = result.job.mark { events(.marked(request.ayah, mark, detail: markDetail(result.job))) }
                events(.cached(request.ayah, bytes: bytes, alreadyCached: false))
            case .failure(let error):
                fail(result.job, .mirrorUnusable(error.code == .mismatch ? error.message : "cannot store the file: \(error.message)"), mirror: result.mirror)
            }
        }

        /// What the mirrors told, for a disputed file: `m1: 13582 bytes, tail 3f1c…; m2: 13164 bytes, tail 9a0b…`.
        func markDetail(_ job: Job) -> String {
            guard let check = job.crossCheck else { return "" }
            return check.observations.keys.sorted().map { mirror in
                let name = job.request.mirrors[mirror].name
                switch check.observations[mirror]! {
                case .fingerprint(let print): return "\(name): \(print)"
                case .unavailable(let reason): return "\(name): no answer (\(reason))"
                }
            }.joined(separator: "; ")
        }

        /// Starts what is due, most urgent first, while its server has room; whether any started.
        @discardableResult
        func startDue() -> Bool {
            let current = now()
            let before = active.count
            waiting.sort { ($0.request.priority, $0.order) < ($1.request.priority, $1.order) }
            var index = 0
            while slots.hasRoom && index < waiting.count {
                if waiting[index].notBefore <= current && slots.hasRoom(for: waiting[index].server) {
                    start(waiting.remove(at: index))
                } else {
                    index += 1
                }
            }
            return active.count > before
        }

        /// A length probe got no answer from `mirror`: the next mirror is asked, or, after the last, nil is the answer.
        func askNextMirror(_ request: HeadRequest, _ answer: @escaping @Sendable (AyahRef, FileHead?) -> Void, after mirror: Int) {
            if mirror + 1 < request.mirrors.count {
                headQueue.append((request, answer, mirror + 1))
            } else {
                answer(request.ayah, nil)
            }
        }

        func cancelEverything() {
            for handle in heads.keys { removeHandle(handle) }
            heads.removeAll()
            headQueue.removeAll()
            for (handle, (job, _, writer, _)) in probes {
                removeHandle(handle)
                writer.abandon(keepPartial: true)
                events(.cancelled(job.request.ayah))
            }
            probes.removeAll()
            for handle in active.keys {
                guard let (job, transfer) = release(handle) else { continue }
                transfer.writer.abandon(keepPartial: true)
                events(.cancelled(job.request.ayah))
            }
            for job in waiting { events(.cancelled(job.request.ayah)) }
            waiting.removeAll()
        }

        while true {
            let mail = inbox.withLock { box -> Inbox in
                let copy = box
                box.requests.removeAll()
                box.heads.removeAll()
                box.committed.removeAll()
                return copy
            }
            let cancelNow = mail.cancel && !cancelled
            cancelled = cancelled || mail.cancel
            for request in mail.requests {
                let job = Job(request: request, policy: policy, order: submitted)
                submitted += 1
                follow(job.plan.begin(health: mirrorHealth(job), now: now()), job)
            }
            if !cancelled { headQueue += mail.heads.map { ($0.0, $0.1, 0) } }
            for result in mail.committed { committed(result) }
            if cancelNow { cancelEverything() }
            if mail.shutdown && active.isEmpty && probes.isEmpty && committing == 0 && (waiting.isEmpty || cancelled) {
                cancelEverything()
                break
            }

            startDue()
            let current = now()

            // Length probes last: only while no download is due, never in the last free slot (and at most half the rest).
            while !cancelled, !headQueue.isEmpty, heads.count < max(2, limits.parallel / 2), active.count + probes.count + heads.count < limits.parallel - 1,
                !waiting.contains(where: { $0.notBefore <= current })
            {
                let (request, answer, mirror) = headQueue.removeFirst()
                guard mirror < request.mirrors.count,
                    let probe = try? Probe(headOf: request.mirrors[mirror].template.url(for: request.ayah), mirror: mirror, limits: limits),
                    ccurl_multi_add_handle(multi, probe.handle) == CURLM_OK
                else {
                    answer(request.ayah, nil)
                    continue
                }
                heads[probe.handle] = (request, answer, probe)
            }

            var running: Int32 = 0
            let performed = ccurl_multi_perform(multi, &running)
            if performed != CURLM_OK {
                // The multi handle is broken (out of memory, say): every transfer in it fails now, each with the
                // reason, and is retried as its plan says, instead of waiting on a handle that does not move.
                let reason = "curl_multi_perform failed: \(NetworkLibrary.multiReason(performed))"
                for handle in active.keys {
                    guard let (job, transfer) = release(handle) else { continue }
                    transfer.writer.abandon(keepPartial: true)
                    fail(job, .transient(reason, retryAfter: nil), mirror: transfer.mirror)
                }
                for handle in Array(probes.keys) {
                    guard let (job, probe, writer, mirror) = probes.removeValue(forKey: handle) else { continue }
                    removeHandle(handle)
                    crossCheck(job.crossCheck!.probed(probe.mirror, .unavailable(reason)), job, writer, mirror)
                }
            }
            var remaining: Int32 = 0
            var ended: [(Job, Transfer, CURLcode)] = []
            while let message = ccurl_multi_info_read(multi, &remaining) {
                if message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle {
                    if probes[handle] != nil {
                        probed(handle, message.pointee.data.result)
                        continue
                    }
                    if let (request, answer, probe) = heads.removeValue(forKey: handle) {
                        removeHandle(handle)
                        if let (bytes, first) = probe.head(for: message.pointee.data.result) {
                            answer(request.ayah, FileHead(ayah: request.ayah, bytes: bytes, first: first))
                        } else {
                            askNextMirror(request, answer, after: probe.mirror)
                        }
                        continue
                    }
                    if let (job, transfer) = release(handle) { ended.append((job, transfer, message.pointee.data.result)) }
                }
            }
            if !ended.isEmpty {
                // The next requests go out on the freed connections first; committing what ended (handing blocks and
                // files to other threads, which may take this core) comes after. Retries start in a later round.
                if startDue() { _ = ccurl_multi_perform(multi, &running) }
                for (job, transfer, result) in ended { settle(job, transfer, result) }
            }

            for server in heardSingle { settleSingle(server) }
            heardSingle.removeAll()

            // Connections shared by many requests stall as a whole (`StallWatch`): a server is watched while a
            // request sent on them is in flight (connecting is --connect-timeout's business).
            if stallWatch != nil {
                var busy: Set<String> = []
                for (_, transfer) in active.values where transfer.sharesConnection {
                    countShared(transfer)
                    if transfer.requestSent { busy.insert(transfer.server) }
                }
                let observed = now()
                for server in busy.union(sharedBytes.keys)
                where stallWatch!.observe(server, bytes: sharedBytes[server, default: 0], busy: busy.contains(server), now: observed) {
                    stopStalled(server)
                }
            }

            // Sleep until there is network activity, a retry is due, or another thread wakes us. A job whose
            // server is full waits for a transfer to end, which is network activity.
            var timeout = 1000
            if slots.hasRoom, let soonest = waiting.filter({ slots.hasRoom(for: $0.server) }).map(\.notBefore).min() {
                timeout = max(0, min(timeout, Int((soonest - now()) * 1000)))
            }
            if ccurl_multi_poll(multi, Int32(timeout)) != CURLM_OK {
                usleep(useconds_t(min(timeout, 100) * 1000))  // poll cannot wait: wait here, briefly, instead of spinning
            }
        }
        clock.removeWaker(waker)
        finished.signal()
    }
}
