/// Every scheduling decision of the downloader, and nothing else: which file starts when and on which mirror, how
/// many transfers each server gets (HTTP/1.1 connections or HTTP/2 streams, `TransferSlots`), what happens to the
/// transfers an https server turned out not to multiplex, when a shared connection has stalled (`StallWatch`),
/// retries and failover (`DownloadPlan`, `MirrorHealth`), the cross-check of unpinned files (`CrossCheck`), the
/// length probes that go only where downloads leave room, and cancellation. The download thread (TartilNet's
/// `Downloader`) feeds it what libcurl, the cache and the committer report, and carries out the returned actions;
/// it has no threads, clock, sockets or files, so every case is tested directly.
///
/// ```swift
/// var scheduler = DownloadScheduler(limits: limits, policy: policy, httpsMayMultiplex: true, seed: 7)
/// var actions = scheduler.on(.submit([job]), at: clock.now)     // []: it waits for the next tick
/// actions = scheduler.on(.tick, at: clock.now)                   // [.start(job 0 on mirror 0)]
/// actions = scheduler.on(.started([.init(job: job.id, outcome: .opened)]), at: clock.now)
///                                                                // [.report(.started(1:1, mirror: "a"))]
/// actions = scheduler.on(.ended([job.id]), at: clock.now)        // its slot is free: the next due ones start
/// actions = scheduler.on(.finished(job.id, .complete(nil)), at: clock.now)   // [.commit(job 0, mirror 0)]
/// actions = scheduler.on(.committed(job.id, .stored(bytes: 9_120)), at: clock.now)
///                                                                // [.end(job 0, .cached(1:1, …))]
/// ```
///
/// Each job is in one `Stage`, whose case carries what that stage needs (its mirror, when it may start, whether its
/// transfer shares a connection), so a job cannot be both waiting and in flight. Four actions ask for an answer:
/// `.start` (answer `.started`, for all the starts of one list together, after carrying out the list), `.probe`
/// (answer `.probed`; at once with `.unavailable` when the probe cannot be sent), `.probeLength` (answer
/// `.lengthProbeEnded`, or at once `.lengthProbeNotStarted`) and `.commit` (answer `.committed`). A `.start`'s slot
/// is held from the action until its answer. An answer that comes after a `.cancel` ends its job cancelled (a copy
/// with the committer is kept).
///
/// Time comes in with every input (`at:`); randomness (the jitter of backoff) from a generator seeded at `init`,
/// so a run is reproducible from its seed and its inputs.
public struct DownloadScheduler: Sendable, Hashable {
    // MARK: - What goes in

    /// A file being downloaded, named by the executor; ids must be new (they are never reused in a run).
    public struct JobID: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let rawValue: Int
        public init(_ rawValue: Int) { self.rawValue = rawValue }
        public static func < (left: JobID, right: JobID) -> Bool { left.rawValue < right.rawValue }
        public var description: String { "job \(rawValue)" }
    }

    /// A length probe (a file's size and first bytes, asked mirror by mirror), named by the executor.
    public struct LengthProbeID: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let rawValue: Int
        public init(_ rawValue: Int) { self.rawValue = rawValue }
        public static func < (left: LengthProbeID, right: LengthProbeID) -> Bool { left.rawValue < right.rawValue }
        public var description: String { "length probe \(rawValue)" }
    }

    /// One of a file's mirrors: its name (for reports) and the server its URL for this file names
    /// (`TransferSlots.server(of:)`).
    public struct Source: Sendable, Hashable {
        public let name: String
        public let server: String
        public init(name: String, server: String) {
            self.name = name
            self.server = server
        }
    }

    /// A file to download.
    public struct Job: Sendable, Hashable {
        public let id: JobID
        /// Whose mirrors these are: mirrors that keep failing are demoted for all of a reciter's files.
        public let reciter: ReciterID
        public let ayah: AyahRef
        /// The mirrors, in order of preference (at least one).
        public let sources: [Source]
        /// Lower goes first (the player's queue-ahead before bulk prefetch); equal priorities go in the order submitted.
        public let priority: Int
        /// True for a file whose hash is not known (an unpinned ayah): each downloaded copy is compared with the
        /// other mirrors (`CrossCheck`) before it is committed.
        public let crossChecked: Bool

        public init(id: JobID, reciter: ReciterID, ayah: AyahRef, sources: [Source], priority: Int, crossChecked: Bool)
        {
            self.id = id
            self.reciter = reciter
            self.ayah = ayah
            self.sources = sources
            self.priority = priority
            self.crossChecked = crossChecked
        }
    }

    /// A length probe to schedule: the server of each mirror it may ask, in order.
    public struct LengthProbe: Sendable, Hashable {
        public let id: LengthProbeID
        public let servers: [String]
        public init(id: LengthProbeID, servers: [String]) {
            self.id = id
            self.servers = servers
        }
    }

    /// How a `.start` went.
    public enum StartOutcome: Sendable, Hashable {
        /// The transfer is in libcurl's hands.
        case opened
        /// The file is already verified in the cache (a file whose hash is known): nothing to download.
        case alreadyCached(bytes: Int)
        /// Another process is downloading it: it is looked at again shortly.
        case busy
        /// This attempt failed before a byte was asked for (the partial file cannot be opened, say): it counts as a
        /// failure on its mirror.
        case failed(DownloadFailure)
        /// No attempt can go better (a symbolic link where the file goes; libcurl refused an option): the file
        /// fails at once with `reason`.
        case refused(reason: String)
    }

    /// The answer to one `.start`.
    public struct StartResult: Sendable, Hashable {
        public let job: JobID
        public let outcome: StartOutcome
        public init(job: JobID, outcome: StartOutcome) {
            self.job = job
            self.outcome = outcome
        }
    }

    /// What a transfer that libcurl finished (`.ended`) brought.
    public enum TransferOutcome: Sendable, Hashable {
        /// The file, or what may be all of it (a body cut short at the expected size: the hash decides). It is
        /// the copy in hand now. A cross-checked file gives its copy's fingerprint.
        case complete(FileFingerprint?)
        /// The attempt failed; its bytes are the copy in hand until the scheduler says what to keep.
        case failed(DownloadFailure)
    }

    /// What the committer made of a copy (`.commit`).
    public enum CommitOutcome: Sendable, Hashable {
        /// Verified and under its final name.
        case stored(bytes: Int)
        /// Not kept (the cache could not store it, or an unpinned file that is not audio): `reason` says which;
        /// the mirror cannot give this file.
        case rejected(reason: String)
        /// Not kept: its size or SHA-256 is not the table's (or the recorded) one. The same mirror is asked once
        /// more before the next (`DownloadFailure.wrongBytes`).
        case mismatch(reason: String)
    }

    /// What happened.
    public enum Input: Sendable, Hashable {
        /// Files to download. Each waits for the next `.tick` (or round of starts) to start.
        case submit([Job])
        /// Length probes, asked only while no download is due and never in the last free transfer.
        case submitLengthProbes([LengthProbe])
        /// Time has passed: what is due starts, most urgent first, while its server has room; then length probes.
        case tick
        /// The answers to the `.start`s of one list of actions, in their order.
        case started([StartResult])
        /// An answer from `server` came over HTTP/2 (`multiplexes`) or HTTP/1.x: learned at once (it may come in
        /// the middle of carrying out a list); a server that does not multiplex is settled at the next `.progress`.
        case heard(server: String, multiplexes: Bool)
        /// Bytes received by running transfers since they were last reported (the running total of what a
        /// server's shared connections moved, for `StallWatch`). Report a transfer's bytes before it `.ended`.
        case received([JobID: Int])
        /// libcurl finished these transfers (their handles are out of the multi handle): their slots are free and
        /// the next due ones start; each outcome follows with `.finished`.
        case ended([JobID])
        /// The outcome of a transfer that `.ended`.
        case finished(JobID, TransferOutcome)
        /// The cross-check probe of a job's copy in hand ended with what its mirror told.
        case probed(JobID, CrossCheck.Observation)
        /// The committer's answer to `.commit`.
        case committed(JobID, CommitOutcome)
        /// A length probe ended: `answered` when the executor gave its answer (then it is over), else the next
        /// mirror is asked.
        case lengthProbeEnded(LengthProbeID, answered: Bool)
        /// A `.probeLength` could not be sent (libcurl refused it): it is answered with nothing.
        case lengthProbeNotStarted(LengthProbeID)
        /// libcurl's multi handle failed (`reason`): every transfer in it failed, and every probe is unanswered.
        case performFailed(reason: String)
        /// The download thread's look at its connections, once a round: which running transfers have sent their
        /// request. Servers heard over HTTP/1.1 are settled (what they cannot carry and has not been sent is taken
        /// back), and shared connections that moved under the stall rate for the stall time are stopped.
        case progress(requestsSent: Set<JobID>)
        /// Stop every transfer and everything queued; final: whatever comes later ends cancelled.
        case cancel
        /// The owner wants to stop: once nothing is in flight (or everything was cancelled) the length probes
        /// still queued are dropped and the scheduler has ended; until then nothing happens.
        case shutdown
    }

    // MARK: - What comes out

    /// A transfer to start.
    public struct Start: Sendable, Hashable {
        public let job: JobID
        public let mirror: Int
        /// Whether it may share its connection with other requests (an https server that multiplexes or is not
        /// heard from yet): its stall is then its connection's, judged here, not by libcurl's low-speed limit.
        public let sharesConnection: Bool
        /// Whether to drive libcurl once at once (the first transfer to its server, or one with a connection of its
        /// own), so it connects before the rest of the round's files are opened.
        public let connectNow: Bool
    }

    /// What the executor must do, in order.
    public enum Action: Sendable, Hashable {
        /// Open the job's file and start its transfer (its slot is held); answer with `.started`.
        case start(Start)
        /// Take the job's transfer out of libcurl, keeping its partial file (closing its connection, when it
        /// stalled, so that the retries do not take a dead one).
        case stopTransfer(JobID, closingConnection: Bool)
        /// The job's transfer has a connection of its own after all (an https server answered over HTTP/1.1):
        /// libcurl judges its stalls from now on.
        case stopSharing(JobID)
        /// Ask `mirror` for the whole file whose copy is in hand (into memory, hashed: its fingerprint); answer
        /// with `.probed`.
        case probe(JobID, mirror: Int)
        /// Take the job's probe out of libcurl (its copy stays in hand).
        case stopProbe(JobID, closingConnection: Bool)
        /// Hand the copy in hand, which came from `mirror`, to the committer, with the cross-check's mark (nil
        /// for a pinned file); answer with `.committed`.
        case commit(JobID, mirror: Int, mark: SourceMark?)
        /// The mirrors disagree with no majority: keep the copy in hand (from mirror `copy`) and each probed
        /// mirror's file aside, by their fingerprints (`prints`, by mirror), none under the file's name, and record
        /// the dispute; then let the copy go (its partial bytes are not kept). The job ends failed right after.
        case setAside(JobID, copy: Int, prints: [Int: FileFingerprint])
        /// Let the copy in hand go, keeping its bytes for a resume or not.
        case dropCopy(JobID, keepPartial: Bool)
        /// The file is given up: remove whatever unverified bytes of it are left.
        case discardPartial(JobID)
        /// Tell the owner (`.started`, `.retrying`, `.marked`, `.mirrorAbandoned`).
        case report(DownloadEvent)
        /// The job is over: tell the owner `event` (`.cached`, `.failed` or `.cancelled`) and forget it. Comes
        /// exactly once for each job submitted.
        case end(JobID, DownloadEvent)
        /// Ask mirror `mirror` for the length probe's answer; answer with `.lengthProbeEnded`.
        case probeLength(LengthProbeID, mirror: Int)
        /// Take the length probe out of libcurl (it may be asked again of its next mirror).
        case stopLengthProbe(LengthProbeID, closingConnection: Bool)
        /// No mirror gave the length probe's answer: answer it with nothing and forget it.
        case answerNoLength(LengthProbeID)
        /// Forget the length probe without an answer (cancelled).
        case dropLengthProbe(LengthProbeID)
    }

    // MARK: - State

    /// Where a job is.
    enum Stage: Sendable, Hashable {
        /// Waiting to start on `mirror` once the clock reads `notBefore` (seconds); `takenBack`: its transfer was
        /// taken back before it was sent, so its next start is the same attempt, not announced again.
        case waiting(mirror: Int, notBefore: Double, takenBack: Bool)
        /// A `.start` is out; its slot is held until `.started`.
        case starting(mirror: Int, sharesConnection: Bool, announce: Bool)
        /// In flight on `mirror`.
        case transferring(mirror: Int, sharesConnection: Bool)
        /// libcurl finished it; its outcome is awaited (`.finished`).
        case finishing(mirror: Int)
        /// The copy from mirror `copy` is in hand while mirror `probe` is asked for its fingerprint.
        case probing(copy: Int, probe: Int)
        /// The copy from `mirror` is with the committer.
        case committing(mirror: Int)

        var isWaiting: Bool { if case .waiting = self { true } else { false } }
        var isStarting: Bool { if case .starting = self { true } else { false } }
        var isTransferring: Bool { if case .transferring = self { true } else { false } }
        var isProbing: Bool { if case .probing = self { true } else { false } }
    }

    /// A job and what has been decided for it.
    struct Entry: Sendable, Hashable {
        let job: Job
        /// Its place among the jobs submitted (ties between equal priorities).
        let order: Int
        var plan: DownloadPlan
        var crossCheck: CrossCheck?
        /// The mark its committed copy gets.
        var mark: SourceMark?
        var stage: Stage
        /// The wait under way for a file another process holds (its starts answered `.busy`); nil after any other
        /// answer.
        var heldElsewhere: HeldElsewhere?

        /// The server of `mirror`.
        func server(_ mirror: Int) -> String { job.sources[mirror].server }
    }

    /// Whether it takes work.
    public enum Phase: Sendable, Hashable {
        case running
        /// `.cancel` came: nothing new starts, whatever comes later ends cancelled.
        case cancelled
        /// `.shutdown` found nothing left to do: it takes no more inputs.
        case ended
    }

    /// A length probe waiting or running, and the mirror it is (to be) asked of.
    struct LengthTurn: Sendable, Hashable {
        let probe: LengthProbe
        let mirror: Int
        var server: String { probe.servers[mirror] }
    }

    public internal(set) var phase: Phase = .running
    var jobs: [JobID: Entry] = [:]
    /// The jobs in `jobs`, most urgent first (then in the order submitted).
    var urgency = UrgencyOrder()
    var slots: TransferSlots
    /// Nil when stalls are not judged (a zero stall rate or time, as libcurl takes it).
    var stallWatch: StallWatch?
    /// Bytes received so far by the transfers sharing connections to each server (for `StallWatch`).
    var sharedBytes: [String: Int] = [:]
    /// Servers whose answer came over HTTP/1.1 since the last `.progress` (https servers taken to multiplex).
    var heardSingle: Set<String> = []
    /// How each reciter's mirrors have been doing.
    var health: [ReciterID: MirrorHealth] = [:]
    var lengthQueue: [LengthTurn] = []
    var lengthRunning: [LengthProbeID: LengthTurn] = [:]
    var submitted = 0
    var random: SplitMix
    let limits: DownloadLimits
    let policy: DownloadPolicy
    /// The most transfers that were in flight at once (started, not only asked for).
    public internal(set) var mostInFlight = 0

    /// A scheduler for transfers under `limits` and `policy`; `httpsMayMultiplex` is false when libcurl cannot
    /// speak HTTP/2. `seed` seeds the backoff's jitter.
    public init(limits: DownloadLimits, policy: DownloadPolicy, httpsMayMultiplex: Bool, seed: UInt64) {
        self.limits = limits
        self.policy = policy
        slots = TransferSlots(
            connectionsPerServer: limits.parallel, streamsPerServer: limits.streams, total: limits.transfersInFlight,
            httpsMayMultiplex: httpsMayMultiplex)
        stallWatch =
            limits.stallSeconds > 0 && limits.stallBytesPerSecond > 0
            ? StallWatch(seconds: Double(limits.stallSeconds), bytesPerSecond: limits.stallBytesPerSecond) : nil
        random = SplitMix(seed: seed)
    }

    /// Takes one input at `now` and returns what to do, in order. After `.shutdown` has ended it, every input
    /// returns nothing.
    public mutating func on(_ input: Input, at now: ClockInstant) -> [Action] {
        guard phase != .ended else { return [] }
        var round = Round(now: Double(now.nanoseconds) / 1e9)
        switch input {
        case .submit(let jobs): submit(jobs, &round)
        case .submitLengthProbes(let probes): submitLengthProbes(probes, &round)
        case .tick:
            startDue(&round)
            startLengthProbes(&round)
        case .started(let results): started(results, &round)
        case .heard(let server, let multiplexes): heard(server, multiplexes: multiplexes)
        case .received(let bytes): received(bytes)
        case .ended(let ended): self.ended(ended, &round)
        case .finished(let id, let outcome): finished(id, outcome, &round)
        case .probed(let id, let observation): probed(id, observation, &round)
        case .committed(let id, let outcome): committed(id, outcome, &round)
        case .lengthProbeEnded(let id, let answered): lengthProbeEnded(id, answered: answered, &round)
        case .lengthProbeNotStarted(let id): lengthProbeNotStarted(id, &round)
        case .performFailed(let reason): performFailed(reason, &round)
        case .progress(let sent): progress(requestsSent: sent, &round)
        case .cancel: cancel(&round)
        case .shutdown: shutdown(&round)
        }
        return round.actions
    }

    /// One input's work: its time and the actions so far.
    struct Round {
        let now: Double
        var actions: [Action] = []
    }

    /// Seconds another process may hold a file's lock before the wait is reported (`DownloadEvent.heldElsewhere`).
    public static let heldElsewhereNotice = 2.0

    /// A wait for a file another process holds: since when (seconds), until it is reported; then reported.
    enum HeldElsewhere: Sendable, Hashable {
        case since(Double)
        case reported
    }

    // MARK: - What it reads

    /// Transfers in flight (or asked for and not yet answered).
    public var inFlight: Int { slots.count }

    /// Jobs not yet over.
    public var jobCount: Int { jobs.count }

    /// When the soonest waiting job that has room on its server may start (the download thread waits until then
    /// at most); nil when none can start before a transfer ends.
    public var wakeTime: ClockInstant? {
        guard phase != .ended, slots.hasRoom else { return nil }
        let soonest = jobs.values.compactMap { entry -> Double? in
            guard case .waiting(let mirror, let notBefore, _) = entry.stage, slots.hasRoom(for: entry.server(mirror))
            else { return nil }
            return notBefore
        }.min()
        return soonest.map { ClockInstant(nanoseconds: UInt64(max(0, $0) * 1e9)) }
    }

    /// The jobs in `stage`s matching `matches`, most urgent first (then in the order submitted).
    func ids(where matches: (Stage) -> Bool) -> [JobID] {
        urgency.ids.filter { matches(jobs[$0]!.stage) }
    }
}

/// The jitter's random numbers: SplitMix64, so that a scheduler is a value that a seed reproduces.
struct SplitMix: Sendable, Hashable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A number in [0, 1).
    mutating func nextUnit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}
