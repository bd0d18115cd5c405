import TestSupport
import Testing

@testable import TartilCore

/// A stand-in for the download thread around a `DownloadScheduler`: it carries out the scheduler's actions on a
/// model of what is in flight (transfers, probes, copies in hand, commits, length probes), answers what must be
/// answered at once as the real executor does, and records every action that does not fit the model (a transfer
/// stopped that is not running, a copy committed that is not in hand, a job that ends twice, a start after a
/// cancel, more transfers to a server than it may have…) in `problems`.
struct SchedulerWorld {
    typealias Scheduler = DownloadScheduler
    typealias JobID = Scheduler.JobID
    typealias LengthID = Scheduler.LengthProbeID

    /// Two connections per server, four HTTP/2 streams (so eight transfers in all), a stall at under 512 bytes/s
    /// for 15 s.
    static let limits = DownloadLimits(parallel: 2, streams: 4, stallSeconds: 15, stallBytesPerSecond: 512)
    static let policy = DownloadPolicy()

    static let a = Scheduler.Source(name: "a", server: "http://a")
    static let b = Scheduler.Source(name: "b", server: "http://b")
    static let h = Scheduler.Source(name: "h", server: "https://h")
    static let i = Scheduler.Source(name: "i", server: "https://i")

    static func job(
        _ number: Int, _ sources: [Scheduler.Source] = [a, b], reciter: String = "r1", priority: Int = 1,
        crossChecked: Bool = false
    ) -> Scheduler.Job {
        Scheduler.Job(
            id: JobID(number), reciter: try! ReciterID(reciter), ayah: AyahRef(unchecked: 2, 1 + number),
            sources: sources,
            priority: priority, crossChecked: crossChecked)
    }

    /// The fingerprint of a copy: `variant` 0 is the right file.
    static func print(_ variant: Int) -> FileFingerprint {
        FileFingerprint(bytes: 10_000 + variant, sha256: String(repeating: "\(variant % 10)", count: 64))
    }

    var scheduler = Scheduler(limits: limits, policy: policy, httpsMayMultiplex: true, seed: 42)
    var now = ClockInstant(nanoseconds: 1_000_000_000_000)

    /// How starts, probes and length probes are answered at once: every start opened and every probe sent
    /// (nil), or drawn from this generator.
    var random: SeededRandom?
    /// False to leave starts unanswered (a job caught between its `.start` and the answer).
    var answersStarts = true

    // The model of what the scheduler has under way.
    var submitted: [JobID: Scheduler.Job] = [:]
    var pendingStarts: [JobID: Scheduler.Start] = [:]
    var transfers: [JobID: (mirror: Int, server: String, sharing: Bool)] = [:] {
        didSet { requestsSent.formIntersection(transfers.keys) }
    }
    /// Transfers whose request libcurl has sent (once sent, a request stays sent: a random run only adds to it).
    var requestsSent: Set<JobID> = []
    var finishing: [JobID: Int] = [:]
    var probes: [JobID: Int] = [:]
    var copies: Set<JobID> = []
    var committing: [JobID: Int] = [:]
    var lengthSubmitted: [LengthID: Scheduler.LengthProbe] = [:]
    var lengthRunning: [LengthID: Int] = [:]
    /// How each length probe was resolved: answered (here), none (`.answerNoLength`), dropped (cancelled).
    var lengthResolved: [LengthID: String] = [:]
    var ended: [JobID: DownloadEvent] = [:]
    var endCount: [JobID: Int] = [:]
    /// What each server's last answer was (true: HTTP/2).
    var lastHeard: [String: Bool] = [:]

    // What the stall property needs: the mirrors' health as the world saw it, and each file's unusable mirrors.
    var health: [ReciterID: MirrorHealth] = [:]
    var unusable: [JobID: Set<Int>] = [:]
    /// Jobs stopped as stalled: the mirror, and whether another mirror is there to take the retry.
    var stalled: [JobID: (mirror: Int, expectOther: Bool)] = [:]
    var stallsRetriedElsewhere = 0
    /// Files reported held by another process (`.heldElsewhere`), in order.
    var heldElsewhere: [AyahRef] = []

    var problems: [String] = []
    /// Every action carried out, in order (a test clears it to see one input's).
    var trace: [Scheduler.Action] = []

    init(random: SeededRandom? = nil) { self.random = random }

    var seconds: Double { Double(now.nanoseconds) / 1e9 }

    mutating func advance(_ seconds: Double) { now = now.adding(seconds: seconds) }

    // MARK: - Sending inputs

    /// Gives the scheduler `input` and carries out its actions (answering at once what the real executor answers at
    /// once); returns every action, those of the answers included.
    @discardableResult
    mutating func send(_ input: Scheduler.Input) -> [Scheduler.Action] {
        let phaseBefore = scheduler.phase
        let actions = scheduler.on(input, at: now)
        if phaseBefore == .ended, !actions.isEmpty {
            problems.append("an ended scheduler acted on \(input): \(actions)")
        }
        var all = actions
        carryOut(actions, into: &all)
        checkSlots(after: input)
        if phaseBefore != .ended, scheduler.phase == .ended {
            let busy =
                pendingStarts.count + transfers.count + finishing.count + probes.count + committing.count
                + lengthRunning.count
            if busy > 0 { problems.append("shut down with \(busy) things under way") }
            if submitted.keys.contains(where: { ended[$0] == nil }) {
                problems.append("shut down before every job ended")
            }
        }
        return all
    }

    mutating func submit(_ jobs: [Scheduler.Job]) {
        for job in jobs { submitted[job.id] = job }
        send(.submit(jobs))
    }

    mutating func submitLength(_ probes: [Scheduler.LengthProbe]) {
        for probe in probes { lengthSubmitted[probe.id] = probe }
        send(.submitLengthProbes(probes))
    }

    /// Answers starts (those the world left pending, or any job: a stale answer the scheduler must ignore).
    @discardableResult
    mutating func answer(_ results: [Scheduler.StartResult]) -> [Scheduler.Action] {
        for result in results {
            guard let start = pendingStarts.removeValue(forKey: result.job) else { continue }
            let job = submitted[start.job]!
            switch result.outcome {
            case .opened:
                transfers[start.job] = (start.mirror, job.sources[start.mirror].server, start.sharesConnection)
            case .failed(let failure):
                recordFailure(start.job, mirror: start.mirror, failure)
            case .alreadyCached, .busy, .refused:
                break
            }
        }
        return send(.started(results))
    }

    /// libcurl finished these transfers; the outcomes follow with `finish`.
    mutating func end(_ jobs: [JobID]) {
        for job in jobs {
            if let transfer = transfers.removeValue(forKey: job) { finishing[job] = transfer.mirror }
        }
        send(.ended(jobs))
    }

    mutating func finish(_ job: JobID, _ outcome: Scheduler.TransferOutcome) {
        if let mirror = finishing.removeValue(forKey: job) {
            copies.insert(job)
            if case .failed(let failure) = outcome { recordFailure(job, mirror: mirror, failure) }
        }
        send(.finished(job, outcome))
    }

    mutating func probed(_ job: JobID, _ observation: CrossCheck.Observation) {
        probes[job] = nil
        send(.probed(job, observation))
    }

    mutating func committed(_ job: JobID, _ outcome: Scheduler.CommitOutcome) {
        if let mirror = committing.removeValue(forKey: job) {
            switch outcome {
            case .stored:
                let source = submitted[job]!
                var mirrorHealth =
                    health[source.reciter] ?? MirrorHealth(mirrorCount: source.sources.count, policy: Self.policy)
                mirrorHealth.recordSuccess(mirror)
                health[source.reciter] = mirrorHealth
            case .rejected(let reason):
                recordFailure(job, mirror: mirror, .mirrorUnusable(reason))
            case .mismatch(let reason):
                recordFailure(job, mirror: mirror, .wrongBytes(reason))
            }
        }
        send(.committed(job, outcome))
    }

    mutating func lengthEnded(_ id: LengthID, answered: Bool) {
        if lengthRunning.removeValue(forKey: id) != nil, answered { resolve(id, "answered") }
        send(.lengthProbeEnded(id, answered: answered))
    }

    mutating func lengthNotStarted(_ id: LengthID) {
        lengthRunning[id] = nil
        send(.lengthProbeNotStarted(id))
    }

    mutating func heard(_ server: String, multiplexes: Bool) {
        lastHeard[server] = multiplexes
        send(.heard(server: server, multiplexes: multiplexes))
    }

    mutating func performFailed() {
        for (job, transfer) in transfers {
            recordFailure(job, mirror: transfer.mirror, .transient("multi", retryAfter: nil))
        }
        send(.performFailed(reason: "curl_multi_perform failed: out of memory"))
    }

    // MARK: - Carrying out actions

    private mutating func carryOut(_ actions: [Scheduler.Action], into all: inout [Scheduler.Action]) {
        var started: [Scheduler.StartResult] = []
        for action in actions {
            trace.append(action)
            let running = scheduler.phase == .running
            switch action {
            case .start(let start):
                let job = start.job
                if !running { problems.append("\(job) started after a cancel") }
                expect(
                    isKnown(job) && transfers[job] == nil && pendingStarts[job] == nil && !copies.contains(job)
                        && probes[job] == nil && committing[job] == nil && finishing[job] == nil,
                    "start of \(job), which is busy or over")
                if let stall = stalled.removeValue(forKey: job), stall.expectOther {
                    if start.mirror == stall.mirror {
                        problems.append("\(job) stalled on mirror \(stall.mirror) and was retried there")
                    } else {
                        stallsRetriedElsewhere += 1
                    }
                }
                pendingStarts[job] = start
                if answersStarts { started.append(Scheduler.StartResult(job: job, outcome: drawStartOutcome())) }
            case .stopTransfer(let job, let closingConnection):
                guard let transfer = transfers.removeValue(forKey: job) else {
                    problems.append("stopTransfer(\(job)) with no transfer")
                    continue
                }
                if closingConnection {
                    // A stall: the failure is the scheduler's to record; the world records it too, and notes where
                    // the retry must go.
                    recordFailure(job, mirror: transfer.mirror, .transient("stalled", retryAfter: nil))
                    stalled[job] = (transfer.mirror, otherMirrorIsThere(for: job, besides: transfer.mirror))
                }
            case .stopSharing(let job):
                expect(transfers[job]?.sharing == true, "stopSharing(\(job)) of a transfer that does not share")
                transfers[job]?.sharing = false
            case .probe(let job, let mirror):
                if !running { problems.append("\(job) probed after a cancel") }
                expect(copies.contains(job) && probes[job] == nil, "probe of \(job) with no copy in hand")
                expect(mirror < (submitted[job]?.sources.count ?? 0), "probe of \(job) on mirror \(mirror)")
                if draw(10) {
                    // The real executor answers at once when the probe cannot be sent.
                    all += send(.probed(job, .unavailable("cannot be sent")))
                } else {
                    probes[job] = mirror
                }
            case .stopProbe(let job, _):
                expect(probes.removeValue(forKey: job) != nil, "stopProbe(\(job)) with no probe")
            case .commit(let job, let mirror, _):
                expect(copies.remove(job) != nil, "commit of \(job) with no copy in hand")
                committing[job] = mirror
            case .dropCopy(let job, _):
                expect(copies.remove(job) != nil, "dropCopy(\(job)) with no copy in hand")
            case .setAside(let job, let copy, let prints):
                expect(copies.remove(job) != nil, "setAside(\(job)) with no copy in hand")
                expect(prints[copy] != nil && prints.count >= 2, "setAside(\(job)) with \(prints.count) copies")
            case .discardPartial(let job):
                expect(isKnown(job), "discardPartial(\(job)) of a job that is over")
            case .report(let event):
                switch event {
                case .cached, .failed, .cancelled: problems.append("a job's end reported without ending it: \(event)")
                case .heldElsewhere(let ayah): heldElsewhere.append(ayah)
                case .started, .retrying, .marked, .mirrorAbandoned: break
                }
            case .end(let job, let event):
                endCount[job, default: 0] += 1
                expect(endCount[job] == 1, "\(job) ended \(endCount[job] ?? 0) times")
                expect(submitted[job] != nil, "\(job) ended but was never submitted")
                expect(
                    transfers[job] == nil && pendingStarts[job] == nil && probes[job] == nil && !copies.contains(job)
                        && committing[job] == nil && finishing[job] == nil,
                    "\(job) ended with something still under way")
                switch event {
                case .cached(let ayah, _, _), .failed(let ayah, _), .cancelled(let ayah):
                    expect(ayah == submitted[job]?.ayah, "\(job) ended with another file's event \(event)")
                default:
                    problems.append("\(job) ended with \(event)")
                }
                ended[job] = event
                stalled[job] = nil
            case .probeLength(let id, let mirror):
                if !running { problems.append("\(id) started after a cancel") }
                expect(
                    lengthSubmitted[id] != nil && lengthResolved[id] == nil && lengthRunning[id] == nil,
                    "probeLength(\(id)) again")
                expect(mirror < (lengthSubmitted[id]?.servers.count ?? 0), "probeLength(\(id)) on mirror \(mirror)")
                lengthRunning[id] = mirror
                if draw(10) {
                    // The real executor answers at once when libcurl refuses the probe.
                    lengthRunning[id] = nil
                    all += send(.lengthProbeNotStarted(id))
                }
            case .stopLengthProbe(let id, _):
                expect(lengthRunning.removeValue(forKey: id) != nil, "stopLengthProbe(\(id)) not running")
            case .answerNoLength(let id):
                expect(lengthRunning[id] == nil, "answerNoLength(\(id)) while it runs")
                resolve(id, "none")
            case .dropLengthProbe(let id):
                expect(lengthRunning[id] == nil, "dropLengthProbe(\(id)) while it runs")
                resolve(id, "dropped")
            }
        }
        if !started.isEmpty { all += answer(started) }
    }

    private mutating func drawStartOutcome() -> Scheduler.StartOutcome {
        guard random != nil else { return .opened }
        switch random!.below(100) {
        case 0..<5: return .alreadyCached(bytes: 10_000)
        case 5..<8: return .busy
        case 8..<12: return .failed(.transient("cannot open the partial file", retryAfter: nil))
        case 12..<14: return .refused(reason: "a symbolic link is in the way")
        default: return .opened
        }
    }

    /// True with probability `percent` %, when drawing at random.
    private mutating func draw(_ percent: Int) -> Bool {
        guard random != nil else { return false }
        return random!.below(100) < percent
    }

    private mutating func resolve(_ id: LengthID, _ how: String) {
        expect(lengthSubmitted[id] != nil, "\(id) resolved but never submitted")
        expect(lengthResolved[id] == nil, "\(id) resolved twice (\(lengthResolved[id] ?? "") then \(how))")
        lengthResolved[id] = how
    }

    private func isKnown(_ job: JobID) -> Bool { submitted[job] != nil && ended[job] == nil }

    private mutating func expect(_ condition: Bool, _ problem: String) {
        if !condition { problems.append(problem) }
    }

    /// What the world knows of a failure: the reciter's mirror health (for demotion) and the mirrors a file cannot
    /// come from.
    mutating func recordFailure(_ job: JobID, mirror: Int, _ failure: DownloadFailure) {
        let source = submitted[job]!
        var mirrorHealth =
            health[source.reciter] ?? MirrorHealth(mirrorCount: source.sources.count, policy: Self.policy)
        mirrorHealth.recordFailure(mirror, failure, now: seconds)
        health[source.reciter] = mirrorHealth
        if case .mirrorUnusable = failure { unusable[job, default: []].insert(mirror) }
    }

    /// Whether `job` has a mirror other than `mirror` that may serve it and is not demoted.
    private func otherMirrorIsThere(for job: JobID, besides mirror: Int) -> Bool {
        let source = submitted[job]!
        let mirrorHealth = health[source.reciter]
        return source.sources.indices.contains { other in
            other != mirror && !(unusable[job]?.contains(other) ?? false)
                && !(mirrorHealth?.isDemoted(other, now: seconds) ?? false)
        }
    }

    // MARK: - Slots

    /// No more transfers than the slots allow: in all, to a plain http server (its connections), to an https
    /// server (its streams); and once a `.progress` has settled a server heard over HTTP/1.1, no more than its
    /// connections, unless every transfer left on it had sent its request.
    private mutating func checkSlots(after input: Scheduler.Input) {
        let inFlight =
            Array(pendingStarts.values.map { submitted[$0.job]!.sources[$0.mirror].server })
            + transfers.values.map(\.server)
        expect(inFlight.count <= Self.limits.transfersInFlight, "\(inFlight.count) transfers in flight")
        expect(
            inFlight.count == scheduler.inFlight,
            "the scheduler counts \(scheduler.inFlight) in flight, the world \(inFlight.count)")
        var perServer: [String: Int] = [:]
        for server in inFlight { perServer[server, default: 0] += 1 }
        for (server, count) in perServer {
            let most =
                server.hasPrefix("https://") ? max(Self.limits.streams, Self.limits.parallel) : Self.limits.parallel
            expect(count <= most, "\(count) transfers in flight to \(server)")
        }
        guard case .progress(let sent) = input else { return }
        for (server, multiplexes) in lastHeard where !multiplexes {
            let onServer = transfers.filter { $0.value.server == server }
            expect(
                onServer.count <= Self.limits.parallel || onServer.keys.allSatisfy(sent.contains),
                "\(onServer.count) transfers on \(server), which answered over HTTP/1.1, and some not sent")
        }
    }

    // MARK: - What the table shows

    /// The state of a job, by letter: W waiting (due), L waiting (later), S start asked, T in flight on a
    /// connection of its own, H in flight on a shared connection, E finished (outcome awaited), P probing, C
    /// committing; its end: K cached, F failed, X cancelled; `-` never submitted.
    func code(of job: JobID) -> String {
        if let event = ended[job] {
            switch event {
            case .cached: return "K"
            case .failed: return "F"
            default: return "X"
            }
        }
        guard let stage = scheduler.jobs[job]?.stage else { return "-" }
        switch stage {
        case .waiting(_, let notBefore, _): return notBefore <= seconds ? "W" : "L"
        case .starting: return "S"
        case .transferring(_, let shares): return shares ? "H" : "T"
        case .finishing: return "E"
        case .probing: return "P"
        case .committing: return "C"
        }
    }

    /// The state of a length probe: Q queued, R running; A answered, N answered with nothing, D dropped; `-` never
    /// submitted.
    func code(of probe: LengthID) -> String {
        switch lengthResolved[probe] {
        case "answered": return "A"
        case "none": return "N"
        case "dropped": return "D"
        default: break
        }
        if scheduler.lengthRunning[probe] != nil { return "R" }
        if scheduler.lengthQueue.contains(where: { $0.probe.id == probe }) { return "Q" }
        return "-"
    }
}
