import CCurl
import Glibc
import TartilCache
import TartilCore

/// The download thread's hands: it carries out the `DownloadScheduler`'s actions with libcurl easy handles in the
/// downloader's multi handle and the cache's writers, and feeds the scheduler what they report, with the time read
/// from the downloader's clock. Every decision (what starts, when, on which mirror, what is retried, taken back or
/// stopped as stalled) is the scheduler's; what is here is opening files, adding and removing handles, reading
/// libcurl's answers and hashing and walking unpinned copies. Lives on the download thread, like the handles it owns.
final class DownloadExecutor {
    typealias JobID = DownloadScheduler.JobID
    typealias LengthProbeID = DownloadScheduler.LengthProbeID
    typealias LengthAnswer = @Sendable (AyahRef, FileHead?) -> Void

    /// What a handle in the multi handle is for.
    private enum Running {
        case transfer(JobID)
        case probe(JobID)
        case lengthProbe(LengthProbeID)
    }

    private var scheduler: DownloadScheduler
    private let multi: UnsafeMutableRawPointer
    private let cache: Cache
    private let limits: DownloadLimits
    private let clock: any TartilClock
    private let events: @Sendable (DownloadEvent) -> Void
    /// Counts bytes as they arrive (for progress displays).
    private let counter: (Int) -> Void
    /// Hands a copy to the committer: the job, its request, the copy, the mirror it came from and its mark.
    private let commit: (JobID, DownloadRequest, CacheWriter, Int, SourceMark?) -> Void
    /// Hands a run's carried part to the committer: the job, the part's own request, its copy and the mirror.
    private let commitCarried: (JobID, DownloadRequest, CacheWriter, Int) -> Void
    /// Records what a mirror of a reciter answered to a part's range request.
    private let heardRange: (ReciterID, PartRequests.RangeSupport) -> Void
    private let statistics: ((inout DownloadStatistics) -> Void) -> Void

    private var requests: [JobID: DownloadRequest] = [:]
    /// Each run's request (`DownloadRequest.carried`) and what became of its carried parts, until each is settled
    /// (which may be after the job ends: a part's commit answers later).
    private var runs: [JobID: (request: DownloadRequest, parts: CarriedParts)] = [:]
    private var lengthRequests: [LengthProbeID: (request: HeadRequest, answer: LengthAnswer)] = [:]
    private var running: [UnsafeMutableRawPointer: Running] = [:]
    private var transfers: [JobID: Transfer] = [:]
    private var probes: [JobID: Probe] = [:]
    private var lengthProbes: [LengthProbeID: Probe] = [:]
    /// Each job's copy in hand: a finished transfer's file, until it is committed or let go.
    private var copies: [JobID: CacheWriter] = [:]
    /// The whole files the cross-check probes of each job received, by mirror, until the job ends (kept aside when
    /// the mirrors disagree); and the copy in hand's bytes, read back for hashing.
    private var probeBodies: [JobID: [Int: [UInt8]]] = [:]
    private var copyBytes: [JobID: [UInt8]] = [:]
    private var submitted = 0
    private var lengthProbesSubmitted = 0
    /// Transfers added to the multi handle so far.
    private var opened = 0
    /// The scheduler's `mostInFlight` as last put in the statistics.
    private var mostInFlight = 0

    init(
        multi: UnsafeMutableRawPointer, cache: Cache, limits: DownloadLimits, policy: DownloadPolicy,
        clock: any TartilClock,
        events: @escaping @Sendable (DownloadEvent) -> Void, counter: @escaping (Int) -> Void,
        commit: @escaping (JobID, DownloadRequest, CacheWriter, Int, SourceMark?) -> Void,
        commitCarried: @escaping (JobID, DownloadRequest, CacheWriter, Int) -> Void,
        heardRange: @escaping (ReciterID, PartRequests.RangeSupport) -> Void,
        statistics: @escaping ((inout DownloadStatistics) -> Void) -> Void
    ) {
        var random = SystemRandomNumberGenerator()
        scheduler = DownloadScheduler(
            limits: limits, policy: policy, httpsMayMultiplex: NetworkLibrary.supportsHTTP2, seed: random.next())
        self.multi = multi
        self.cache = cache
        self.limits = limits
        self.clock = clock
        self.events = events
        self.counter = counter
        self.commit = commit
        self.commitCarried = commitCarried
        self.heardRange = heardRange
        self.statistics = statistics
    }

    /// True once a shutdown found nothing left to do.
    var hasEnded: Bool { scheduler.phase == .ended }

    /// Gives the scheduler `input` at the clock's time and carries out what it decides.
    func feed(_ input: DownloadScheduler.Input) {
        carryOut(scheduler.on(input, at: clock.now))
    }

    // MARK: - What the other threads sent

    func submit(_ newRequests: [DownloadRequest]) {
        guard !newRequests.isEmpty else { return }
        let jobs = newRequests.map { request -> DownloadScheduler.Job in
            let id = JobID(submitted)
            submitted += 1
            requests[id] = request
            if !request.carried.isEmpty { runs[id] = (request, CarriedParts(parts: request.carried.map(\.ayah))) }
            let sources = request.mirrors.map {
                DownloadScheduler.Source(
                    name: $0.name, server: TransferSlots.server(of: $0.template.url(for: request.ayah)))
            }
            return DownloadScheduler.Job(
                id: id, reciter: request.reciter, ayah: request.ayah, sources: sources,
                priority: request.priority.rawValue,
                crossChecked: !request.expectation.isKnown)
        }
        feed(.submit(jobs))
    }

    func submit(heads: [(HeadRequest, LengthAnswer)]) {
        guard !heads.isEmpty else { return }
        let probes = heads.map { request, answer -> DownloadScheduler.LengthProbe in
            let id = LengthProbeID(lengthProbesSubmitted)
            lengthProbesSubmitted += 1
            lengthRequests[id] = (request, answer)
            return DownloadScheduler.LengthProbe(
                id: id, servers: request.mirrors.map { TransferSlots.server(of: $0.template.url(for: request.ayah)) })
        }
        feed(.submitLengthProbes(probes))
    }

    /// The committer's answer for a job's copy.
    func committed(_ job: JobID, _ outcome: Result<Int, CacheError>) {
        switch outcome {
        case .success(let bytes):
            feed(.committed(job, .stored(bytes: bytes)))
        case .failure(let error) where error.code == .mismatch && requests[job]?.expectation.isKnown == true:
            feed(.committed(job, .mismatch(reason: error.message)))
        case .failure(let error):
            feed(
                .committed(
                    job,
                    .rejected(
                        reason: error.code == .mismatch ? error.message : "cannot store the file: \(error.message)")))
        }
    }

    /// The committer's answer for a run's carried part.
    func committed(_ job: JobID, carried part: AyahRef, _ outcome: Result<Int, CacheError>) {
        guard runs[job] != nil else { return }
        let commit: CarriedParts.Commit
        switch outcome {
        case .success(let bytes): commit = .stored(bytes: bytes)
        case .failure(let error): commit = .failed(reason: error.message)
        }
        carryOut(runs[job]!.parts.committed(part, commit), for: job)
    }

    /// Carries out what `CarriedParts` decided for a run; forgets the run once every part is settled.
    private func carryOut(_ actions: [CarriedParts.Action], for job: JobID) {
        guard let (request, parts) = runs[job] else { return }
        for action in actions {
            switch action {
            case .report(let event):
                events(event)
            case .fetchAlone(let ayat):
                submit(ayat.compactMap { ayah in request.carried.first { $0.ayah == ayah } }.map { request.alone($0) })
            }
        }
        if parts.ending != nil && !parts.states.values.contains(.committing) { runs[job] = nil }
    }

    // MARK: - libcurl

    /// Drives libcurl. When the multi handle is broken (out of memory, say), every transfer in it fails now, each
    /// with the reason, instead of waiting on a handle that does not move.
    func perform() {
        var running: Int32 = 0
        let performed = ccurl_multi_perform(multi, &running)
        guard performed != CURLM_OK else { return }
        feed(.received(uncountedBytes(of: transfers)))
        feed(.performFailed(reason: "curl_multi_perform failed: \(NetworkLibrary.multiReason(performed))"))
    }

    /// Takes what libcurl finished: probes are answered as they come; the transfers' slots go to the next due
    /// requests first, on the freed connections, and their outcomes (handing blocks and files to other threads,
    /// which may take this core) are settled after.
    func readMessages() {
        var remaining: Int32 = 0
        var ended: [(JobID, Transfer, CURLcode)] = []
        while let message = ccurl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let what = running[handle]
            else { continue }
            remove(handle)
            let result = message.pointee.data.result
            switch what {
            case .probe(let job):
                let probe = probes.removeValue(forKey: job)!
                let observation = (try? probe.observation(for: result)) ?? .unavailable("cannot hash the answer")
                if case .fingerprint = observation { probeBodies[job, default: [:]][probe.mirror] = probe.wholeFile }
                feed(.probed(job, observation))
            case .lengthProbe(let id):
                let probe = lengthProbes.removeValue(forKey: id)!
                var answered = false
                if let (bytes, first) = probe.head(for: result),
                    let (request, answer) = lengthRequests.removeValue(forKey: id)
                {
                    answer(request.ayah, FileHead(ayah: request.ayah, bytes: bytes, first: first))
                    answered = true
                }
                feed(.lengthProbeEnded(id, answered: answered))
            case .transfer(let job):
                ended.append((job, transfers.removeValue(forKey: job)!, result))
            }
        }
        guard !ended.isEmpty else { return }
        feed(.received(uncountedBytes(of: Dictionary(uniqueKeysWithValues: ended.map { ($0.0, $0.1) }))))
        let before = opened
        feed(.ended(ended.map(\.0)))
        if opened > before {
            var running: Int32 = 0
            _ = ccurl_multi_perform(multi, &running)
        }
        for (job, transfer, result) in ended { feed(.finished(job, outcome(of: transfer, job: job, result: result))) }
    }

    /// Tells the scheduler what the running transfers received and which have sent their request: it settles the
    /// servers heard over HTTP/1.1 and stops stalled connections.
    func watchConnections() {
        feed(.received(uncountedBytes(of: transfers)))
        feed(.progress(requestsSent: Set(transfers.filter { $0.value.requestSent }.keys)))
    }

    /// Sleeps until there is network activity, a start is due, or another thread wakes the thread. A job whose
    /// server is full waits for a transfer to end, which is network activity.
    func waitForActivity() {
        var timeout = 1000
        if let wake = scheduler.wakeTime {
            timeout = max(0, min(timeout, Int(wake.seconds(since: clock.now) * 1000)))
        }
        if ccurl_multi_poll(multi, Int32(timeout)) != CURLM_OK {
            usleep(useconds_t(min(timeout, 100) * 1000))  // poll cannot wait: wait here, briefly, instead of spinning
        }
    }

    /// What each transfer that shares its connection received since it was last asked (`StallWatch`).
    private func uncountedBytes(of transfers: [JobID: Transfer]) -> [JobID: Int] {
        transfers.filter { $0.value.sharesConnection }.mapValues { $0.takeUncounted() }
    }

    // MARK: - The scheduler's actions

    private func carryOut(_ actions: [DownloadScheduler.Action]) {
        var started: [DownloadScheduler.StartResult] = []
        for action in actions {
            switch action {
            case .start(let start):
                started.append(DownloadScheduler.StartResult(job: start.job, outcome: open(start)))
            case .stopTransfer(let job, let closingConnection):
                guard let transfer = transfers.removeValue(forKey: job) else { break }
                remove(transfer.handle, closingConnection: closingConnection)
                transfer.abandonCarried()
                transfer.writer.abandon(keepPartial: true)
            case .stopSharing(let job):
                transfers[job]?.stopSharing(limits)
            case .probe(let job, let mirror):
                startProbe(job, mirror: mirror)
            case .stopProbe(let job, let closingConnection):
                if let probe = probes.removeValue(forKey: job) {
                    remove(probe.handle, closingConnection: closingConnection)
                }
            case .commit(let job, let mirror, let mark):
                copyBytes[job] = nil
                commit(job, requests[job]!, copies.removeValue(forKey: job)!, mirror, mark)
            case .dropCopy(let job, let keepPartial):
                copies.removeValue(forKey: job)?.abandon(keepPartial: keepPartial)
                copyBytes[job] = nil
            case .setAside(let job, let copy, let prints):
                setAside(job, copy: copy, prints: prints)
            case .discardPartial(let job):
                if let request = requests[job], let writer = try? writer(for: request) {
                    writer.abandon(keepPartial: false)
                }
            case .report(let event):
                events(event)
            case .end(let job, let event):
                requests[job] = nil
                probeBodies[job] = nil
                copyBytes[job] = nil
                events(event)
                if runs[job] != nil { carryOut(runs[job]!.parts.ended(with: event), for: job) }
            case .probeLength(let id, let mirror):
                startLengthProbe(id, mirror: mirror)
            case .stopLengthProbe(let id, let closingConnection):
                if let probe = lengthProbes.removeValue(forKey: id) {
                    remove(probe.handle, closingConnection: closingConnection)
                }
            case .answerNoLength(let id):
                if let (request, answer) = lengthRequests.removeValue(forKey: id) { answer(request.ayah, nil) }
            case .dropLengthProbe(let id):
                lengthRequests[id] = nil
            }
        }
        guard !started.isEmpty else { return }
        feed(.started(started))
        if scheduler.mostInFlight > mostInFlight {
            let most = scheduler.mostInFlight
            mostInFlight = most
            statistics { $0.mostInFlight = most }
        }
    }

    /// Opens the file and starts the transfer, or says why not. An unpinned file is looked at once its writer
    /// holds the ayah's lock: another process may have stored it (or found it disputed) meanwhile, and then it is
    /// not downloaded again.
    private func open(_ start: DownloadScheduler.Start) -> DownloadScheduler.StartOutcome {
        let request = requests[start.job]!
        // A run cuts the carried parts not stored yet (reporting those another process stored), then its own.
        var cut: [Cache.SurahFilePart] = []
        if runs[start.job] != nil {
            let verified = request.carried.filter {
                (try? cache.containsVerified(reciter: request.reciter, ayah: $0.ayah, expectation: $0.expectation)) == true
            }
            let (ayat, actions) = runs[start.job]!.parts.attempt(verified: Set(verified.map(\.ayah)))
            carryOut(actions, for: start.job)
            cut = ayat.compactMap { ayah in request.carried.first { $0.ayah == ayah } }
        }
        if request.expectation.isKnown, request.wholeFile == nil, cut.isEmpty,
            (try? cache.containsVerified(reciter: request.reciter, ayah: request.ayah, expectation: request.expectation))
                == true
        {
            return .alreadyCached(bytes: request.expectation.bytes ?? 0)
        }
        let writer: CacheWriter
        do {
            writer = try self.writer(for: request)
        } catch  where error.code == .busy {
            return .busy
        } catch  where error.code == .symbolicLink {
            return .refused(reason: error.message)  // no retry or mirror changes that
        } catch {
            return .failed(.transient(error.message, retryAfter: nil))
        }
        if !request.expectation.isKnown {
            if let dispute = try? cache.dispute(reciter: request.reciter, ayah: request.ayah) {
                writer.abandon(keepPartial: false)
                return .refused(reason: dispute.message)
            }
            if let stored = try? cache.verifiedUnpinned(reciter: request.reciter, ayah: request.ayah),
                !request.recheck || stored.mark != .singleSource
            {
                writer.abandon(keepPartial: false)
                return .alreadyCached(bytes: stored.bytes)
            }
            // A copy compared with other mirrors is the bytes of one mirror: a part left by an earlier attempt
            // (perhaps from another mirror) is not continued.
            if writer.offset > 0, request.mirrors.count > 1 {
                do { try writer.restart() } catch {
                    writer.abandon(keepPartial: false)
                    return .failed(.transient(error.message, retryAfter: nil))
                }
            }
        }
        var carrying: Transfer.Carrying?
        if !cut.isEmpty {
            do { carrying = try self.carrying(cut, job: start.job, mirror: start.mirror, own: writer) } catch {
                writer.abandon(keepPartial: false)
                return .failed(.transient(error.message, retryAfter: nil))
            }
        }
        let url = request.mirrors[start.mirror].template.url(for: request.ayah)
        do {
            let server = TransferSlots.server(of: url)
            let transfer = try Transfer(
                url: url, mirror: start.mirror, writer: writer, limits: limits, window: request.window,
                sharesConnection: start.sharesConnection, carrying: carrying,
                counter: counter,
                heard: { [unowned self] multiplexes in
                    // Inside a perform, never inside the scheduler's own `on`: learning gives no actions.
                    _ = scheduler.on(.heard(server: server, multiplexes: multiplexes), at: clock.now)
                })
            try NetworkLibrary.check(ccurl_multi_add_handle(multi, transfer.handle), "curl_multi_add_handle")
            transfers[start.job] = transfer
            running[transfer.handle] = .transfer(start.job)
            opened += 1
            if start.connectNow {
                var running: Int32 = 0
                _ = ccurl_multi_perform(multi, &running)  // a failure shows again at the loop's own perform
            }
            return .opened
        } catch {
            // libcurl refused an option or the handle: no other attempt would go better, and none may run without
            // its options (the http/https restriction among them).
            writer.abandon(keepPartial: true)
            return .refused(reason: "libcurl: \(error.message)")
        }
    }

    /// How a run's transfer cuts its body: the parts `cut`, then its own window (continuing `own`'s partial
    /// file). Each carried part's writer is opened when the body reaches it (passed over when another process is
    /// writing it) and handed to the committer once whole.
    private func carrying(_ cut: [Cache.SurahFilePart], job: JobID, mirror: Int, own: CacheWriter) throws(CacheError) -> Transfer.Carrying {
        let request = requests[job]!
        let window = request.window!
        if own.offset >= window.count { try own.restart() }
        let stream = PartStream(windows: cut.map(\.bytes) + [window], keptOfLast: own.offset)
        let cache = self.cache
        return Transfer.Carrying(
            stream: stream,
            open: { index in
                guard let writer = try? cache.writer(reciter: request.reciter, ayah: cut[index].ayah, expectation: cut[index].expectation) else {
                    return nil
                }
                if writer.offset > 0 {
                    do { try writer.restart() } catch {
                        writer.abandon(keepPartial: false)
                        return nil
                    }
                }
                return writer
            },
            cut: { [unowned self] index, writer in
                runs[job]?.parts.handedOver(cut[index].ayah)
                commitCarried(job, request.alone(cut[index]), writer, mirror)
            })
    }

    /// The writer of a request's file: an ayah's (or part's), or a surah's whole file.
    private func writer(for request: DownloadRequest) throws(CacheError) -> CacheWriter {
        if let whole = request.wholeFile {
            return try cache.surahFileWriter(reciter: request.reciter, surah: whole.surah, expectation: request.expectation)
        }
        return try cache.writer(reciter: request.reciter, ayah: request.ayah, expectation: request.expectation)
    }

    /// A finished transfer's outcome. Its writer is the job's copy in hand from now on.
    private func outcome(of transfer: Transfer, job: JobID, result: CURLcode) -> DownloadScheduler.TransferOutcome {
        let connection = transfer.connectionInfo
        statistics {
            $0.transfers += 1
            $0.connections += connection.opened ? 1 : 0
            $0.http2Transfers += connection.http2 ? 1 : 0
        }
        let request = requests[job]!
        let writer = transfer.writer
        copies[job] = writer
        transfer.abandonCarried()
        if request.window != nil, transfer.status == 200 || transfer.status == 206 {
            heardRange(request.reciter, transfer.status == 200 ? .ignored : .honoured)
        }
        let failure = transfer.failure(for: result)
        // A body cut short, or a range past the end, may still be the whole file: let the hash decide.
        let maybeComplete =
            writer.offset > 0
            && (transfer.status == 416 || (failure != nil && request.expectation.bytes == writer.offset))
        if let failure, !maybeComplete { return .failed(failure) }
        writer.finishWriting()  // the last block is written while the file waits for its commit
        guard !request.expectation.isKnown else { return .complete(nil) }
        // An unpinned file: read back, walked frame by frame (it must be one whole MPEG audio stream before it is
        // compared or kept) and hashed whole for the cross-check.
        let bytes: [UInt8]
        do { bytes = try writer.contents() } catch {
            return .failed(.transient("cannot read the file back: \(error.message)", retryAfter: nil))
        }
        if let problem = MPEGStream.problem(in: bytes) {
            return .failed(.mirrorUnusable("not one whole MPEG audio stream: \(problem)"))
        }
        guard let sha256 = try? SHA256.hash(bytes) else {
            return .failed(.transient("cannot hash the file", retryAfter: nil))
        }
        writer.require(sha256: sha256)
        if request.mirrors.count > 1 { copyBytes[job] = bytes }
        return .complete(FileFingerprint(bytes: bytes.count, sha256: sha256))
    }

    /// The mirrors disagree: every copy is kept aside (the one in hand and the probes'), none at the file's name,
    /// while the copy's writer still holds the ayah's lock; then the copy goes.
    private func setAside(_ job: JobID, copy: Int, prints: [Int: FileFingerprint]) {
        let request = requests[job]!
        var copies: [(mirror: String, bytes: [UInt8])] = []
        for mirror in prints.keys.sorted() {
            let bytes = mirror == copy ? copyBytes[job] : probeBodies[job]?[mirror]
            if let bytes { copies.append((request.mirrors[mirror].name, bytes)) }
        }
        do {
            try cache.setAside(copies, reciter: request.reciter, ayah: request.ayah)
        } catch {
            events(.retrying(request.ayah, mirror: request.mirrors[copy].name, reason: "cannot keep the disputed copies aside: \(error.message)", delay: 0))
        }
        self.copies.removeValue(forKey: job)?.abandon(keepPartial: false)
        copyBytes[job] = nil
    }

    /// Asks `mirror` for the job's whole file (its fingerprint); one that cannot be asked has no answer.
    private func startProbe(_ job: JobID, mirror: Int) {
        let request = requests[job]!
        let url = request.mirrors[mirror].template.url(for: request.ayah)
        do {
            let probe = try Probe(url: url, mirror: mirror, maxBytes: request.expectation.maxBytes, limits: limits)
            try NetworkLibrary.check(ccurl_multi_add_handle(multi, probe.handle), "curl_multi_add_handle")
            probes[job] = probe
            running[probe.handle] = .probe(job)
        } catch {
            feed(.probed(job, .unavailable(error.message)))
        }
    }

    private func startLengthProbe(_ id: LengthProbeID, mirror: Int) {
        guard let (request, _) = lengthRequests[id],
            let probe = try? Probe(
                headOf: request.mirrors[mirror].template.url(for: request.ayah), mirror: mirror, limits: limits),
            ccurl_multi_add_handle(multi, probe.handle) == CURLM_OK
        else {
            feed(.lengthProbeNotStarted(id))
            return
        }
        lengthProbes[id] = probe
        running[probe.handle] = .lengthProbe(id)
    }

    /// Takes a handle out of the multi handle (closing its connection instead of returning it to the pool, when
    /// asked). Removing fails only for a handle that is not in it; the easy handle is cleaned up with its owner
    /// either way (curl_easy_cleanup also detaches it).
    private func remove(_ handle: UnsafeMutableRawPointer, closingConnection: Bool = false) {
        if closingConnection { _ = ccurl_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, 1) }
        running[handle] = nil
        _ = ccurl_multi_remove_handle(multi, handle)
    }
}

@available(*, unavailable) extension DownloadExecutor: Sendable {}
