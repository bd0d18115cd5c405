import TestSupport
import Testing

@testable import TartilCore

/// Every input in every state a job (or a length probe) can be in, and seeded random runs of them, each action
/// carried out on a model of the download thread (`SchedulerWorld`): nothing is started after a cancel, never more
/// transfers in flight than the slots allow, a stale answer changes nothing, every job ends exactly once (cached,
/// failed or cancelled), a stalled transfer is retried on another mirror, and each state goes where the table below
/// says.
@Suite struct DownloadSchedulerTableTests {
    typealias World = SchedulerWorld
    typealias Scheduler = DownloadScheduler
    typealias JobID = Scheduler.JobID
    typealias LengthID = Scheduler.LengthProbeID

    static let one = JobID(1)
    static let lengthOne = LengthID(1)

    static func job(_ number: Int, _ sources: [Scheduler.Source] = [World.a, World.b], crossChecked: Bool = false)
        -> Scheduler.Job
    {
        World.job(number, sources, crossChecked: crossChecked)
    }

    // MARK: - The places

    /// What the table follows in a place: job 1, or length probe 1.
    enum Subject: Sendable {
        case job, length
    }

    /// A world in a state worth trying every input on, by the name the table uses.
    struct Place: Sendable {
        let name: String
        let subject: Subject
        let build: @Sendable () -> World

        init(_ name: String, _ subject: Subject = .job, build: @escaping @Sendable () -> World) {
            self.name = name
            self.subject = subject
            self.build = build
        }

        func code(_ world: World) -> String {
            switch subject {
            case .job: world.code(of: one)
            case .length: world.code(of: lengthOne)
            }
        }
    }

    /// Job 1 transferring on https://h (taken to multiplex, so it shares its connection), watched once for stalls.
    static func sharing() -> World {
        var world = World()
        world.submit([job(1, [World.h, World.i])])
        world.send(.tick)
        world.send(.progress(requestsSent: [one]))
        return world
    }

    /// Job 1 with its file in hand (cross-checked or not).
    static func finished(crossChecked: Bool) -> World {
        var world = World()
        world.submit([job(1, crossChecked: crossChecked)])
        world.send(.tick)
        world.end([one])
        world.finish(one, .complete(crossChecked ? World.print(0) : nil))
        return world
    }

    static let places: [Place] = [
        Place("new") { World() },
        Place("wait") {
            var world = World()
            world.submit([job(1)])
            return world
        },
        Place("later") {
            // Another process had the file: it looks again in 0.2 s.
            var world = World()
            world.submit([job(1)])
            world.answersStarts = false
            world.send(.tick)
            world.answersStarts = true
            world.answer([.init(job: one, outcome: .busy)])
            return world
        },
        Place("full") {
            // Jobs 0 and 2 hold http://a's two connections; job 1 is due there.
            var world = World()
            world.submit([job(0), job(2), job(1)])
            world.send(.tick)
            return world
        },
        Place("strt") {
            var world = World()
            world.submit([job(1)])
            world.answersStarts = false
            world.send(.tick)
            world.answersStarts = true
            return world
        },
        Place("xfer") {
            var world = World()
            world.submit([job(1)])
            world.send(.tick)
            return world
        },
        Place("share") { sharing() },
        Place("excs") {
            // Three on https://h, which then answered over HTTP/1.1: one more than its two connections.
            var world = World()
            world.submit([job(0, [World.h, World.i]), job(2, [World.h, World.i]), job(1, [World.h, World.i])])
            world.send(.tick)
            world.heard(World.h.server, multiplexes: false)
            return world
        },
        Place("fin") {
            var world = World()
            world.submit([job(1)])
            world.send(.tick)
            world.end([one])
            return world
        },
        Place("prob") { finished(crossChecked: true) },  // mirror 1 is asked for its fingerprint
        Place("comm") { finished(crossChecked: false) },
        Place("lenQ", .length) {
            // A download in flight leaves no room for a length probe.
            var world = World()
            world.submit([job(0)])
            world.submitLength([.init(id: lengthOne, servers: [World.a.server, World.b.server])])
            world.send(.tick)
            return world
        },
        Place("lenR", .length) {
            var world = World()
            world.submitLength([.init(id: lengthOne, servers: [World.a.server, World.b.server])])
            world.send(.tick)
            return world
        },
        Place("cncl") {
            var world = World()
            world.submit([job(1)])
            world.send(.tick)
            world.send(.cancel)
            return world
        },
        Place("cnclC") {
            var world = finished(crossChecked: false)
            world.send(.cancel)
            return world
        },
        Place("down") {
            var world = World()
            world.send(.shutdown)
            return world
        },
    ]

    @Test func thePlacesAreWhatTheySay() {
        let expected = [
            "new": "-", "wait": "W", "later": "L", "full": "W", "strt": "S", "xfer": "T", "share": "H", "excs": "H",
            "fin": "E", "prob": "P", "comm": "C", "lenQ": "Q", "lenR": "R", "cncl": "X", "cnclC": "C", "down": "-",
        ]
        for place in Self.places {
            let world = place.build()
            #expect(place.code(world) == expected[place.name], "\(place.name)")
            #expect(world.problems.isEmpty, "\(place.name): \(world.problems)")
        }
        #expect(Self.places.first { $0.name == "down" }!.build().scheduler.phase == .ended)
        #expect(Self.places.first { $0.name == "cncl" }!.build().scheduler.phase == .cancelled)
    }

    // MARK: - The inputs

    /// The stage an input answers: given in any other, it must change nothing.
    enum Answers: Sendable {
        case starting, transferring, finishing, probing, committing, lengthRunning

        func holds(in world: World) -> Bool {
            let stage = world.scheduler.jobs[one]?.stage
            switch (self, stage) {
            case (.starting, .starting?), (.transferring, .transferring?), (.finishing, .finishing?),
                (.probing, .probing?),
                (.committing, .committing?):
                return true
            case (.lengthRunning, _):
                return world.scheduler.lengthRunning[lengthOne] != nil
            default:
                return false
            }
        }
    }

    /// An input by the name the table uses, about job 1 (or length probe 1).
    struct Input: Sendable, CustomStringConvertible {
        let name: String
        let answers: Answers?
        let apply: @Sendable (inout World) -> Void

        init(_ name: String, answers: Answers? = nil, _ apply: @escaping @Sendable (inout World) -> Void) {
            self.name = name
            self.answers = answers
            self.apply = apply
        }

        var description: String { name }
    }

    static let inputs: [Input] = [
        Input("submit") { $0.submit([job(9)]) },
        Input("lengths") { $0.submitLength([.init(id: LengthID(9), servers: [World.b.server])]) },
        Input("tick") { $0.send(.tick) },
        Input("later") { world in
            world.advance(60)
            world.send(.tick)
        },
        Input("opened", answers: .starting) { $0.answer([.init(job: one, outcome: .opened)]) },
        Input("cached", answers: .starting) { $0.answer([.init(job: one, outcome: .alreadyCached(bytes: 100))]) },
        Input("busy", answers: .starting) { $0.answer([.init(job: one, outcome: .busy)]) },
        Input("openFail", answers: .starting) {
            $0.answer([.init(job: one, outcome: .failed(.transient("disk full", retryAfter: nil)))])
        },
        Input("refused", answers: .starting) {
            $0.answer([.init(job: one, outcome: .refused(reason: "a symbolic link"))])
        },
        Input("heard1") { $0.heard(World.h.server, multiplexes: false) },
        Input("heard2") { $0.heard(World.h.server, multiplexes: true) },
        Input("received") { $0.send(.received([one: 4096])) },
        Input("ended", answers: .transferring) { $0.end([one]) },
        Input("complete", answers: .finishing) { $0.finish(one, .complete(World.print(0))) },
        Input("reset", answers: .finishing) {
            $0.finish(one, .failed(.transient("connection reset", retryAfter: nil)))
        },
        Input("404", answers: .finishing) { $0.finish(one, .failed(.mirrorUnusable("HTTP 404"))) },
        Input("agree", answers: .probing) { $0.probed(one, .fingerprint(World.print(0))) },
        Input("noAnswer", answers: .probing) { $0.probed(one, .unavailable("timed out")) },
        Input("stored", answers: .committing) { $0.committed(one, .stored(bytes: 100)) },
        Input("rejected", answers: .committing) { $0.committed(one, .rejected(reason: "hash mismatch")) },
        Input("mismatch", answers: .committing) { $0.committed(one, .mismatch(reason: "sha256 mismatch")) },
        Input("lenDone", answers: .lengthRunning) { $0.lengthEnded(lengthOne, answered: true) },
        Input("lenNone", answers: .lengthRunning) { $0.lengthEnded(lengthOne, answered: false) },
        Input("lenRefused", answers: .lengthRunning) { $0.lengthNotStarted(lengthOne) },
        Input("perfFail") { $0.performFailed() },
        Input("sent") { $0.send(.progress(requestsSent: Set($0.transfers.keys))) },
        Input("unsent") { $0.send(.progress(requestsSent: [])) },
        Input("stall") { world in
            world.advance(16)
            world.send(.progress(requestsSent: Set(world.transfers.keys)))
        },
        Input("cancel") { $0.send(.cancel) },
        Input("shutdown") { $0.send(.shutdown) },
    ]

    // MARK: - The table

    /// The subject's state after each input in each place, by the letters of `SchedulerWorld.code(of:)` (job:
    /// W waiting, L waiting for later, S start asked, T in flight, H in flight sharing a connection, E finished, P
    /// probing, C committing, K cached, F failed, X cancelled; length probe: Q queued, R running, A answered, N
    /// answered with nothing, D dropped), `=` for the same as before. Every cell is also checked against the
    /// invariants (`check`).
    static let table = """
        input      new  wait later full strt xfer share excs fin  prob comm lenQ lenR cncl cnclC down
        submit     =    =    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        lengths    =    =    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        tick       =    T    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        later      =    T    T     =    =    =    =     =    =    =    =    =    =    =    =     =
        opened     =    =    =     =    T    =    =     =    =    =    =    =    =    =    =     =
        cached     =    =    =     =    K    =    =     =    =    =    =    =    =    =    =     =
        busy       =    =    =     =    L    =    =     =    =    =    =    =    =    =    =     =
        openFail   =    =    =     =    T    =    =     =    =    =    =    =    =    =    =     =
        refused    =    =    =     =    F    =    =     =    =    =    =    =    =    =    =     =
        heard1     =    =    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        heard2     =    =    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        received   =    =    =     =    =    =    =     =    =    =    =    =    =    =    =     =
        ended      =    =    =     =    =    E    E     E    =    =    =    =    =    =    =     =
        complete   =    =    =     =    =    =    =     =    C    =    =    =    =    =    =     =
        reset      =    =    =     =    =    =    =     =    W    =    =    =    =    =    =     =
        404        =    =    =     =    =    =    =     =    W    =    =    =    =    =    =     =
        agree      =    =    =     =    =    =    =     =    =    C    =    =    =    =    =     =
        noAnswer   =    =    =     =    =    =    =     =    =    C    =    =    =    =    =     =
        stored     =    =    =     =    =    =    =     =    =    =    K    =    =    =    K     =
        rejected   =    =    =     =    =    =    =     =    =    =    W    =    =    =    X     =
        mismatch   =    =    =     =    =    =    =     =    =    =    W    =    =    =    X     =
        lenDone    =    =    =     =    =    =    =     =    =    =    =    =    A    =    =     =
        lenNone    =    =    =     =    =    =    =     =    =    =    =    =    Q    =    =     =
        lenRefused =    =    =     =    =    =    =     =    =    =    =    =    N    =    =     =
        perfFail   =    =    =     =    =    W    W     W    =    C    =    =    =    =    =     =
        sent       =    =    =     =    =    =    =     T    =    =    =    =    =    =    =     =
        unsent     =    =    =     =    =    =    =     W    =    =    =    =    =    =    =     =
        stall      =    =    W     =    =    =    W     T    =    =    =    =    =    =    =     =
        cancel     =    X    X     X    =    X    X     X    =    X    =    D    D    =    =     =
        shutdown   =    =    =     =    =    =    =     =    =    =    =    =    D    =    =     =
        """

    static func parsedTable() -> (columns: [String], rows: [String: [String]]) { ExpectationTable.parse(table) }

    @Test func theTableCoversEveryPlaceAndInput() {
        let (columns, rows) = Self.parsedTable()
        #expect(columns == Self.places.map(\.name))
        #expect(Set(rows.keys) == Set(Self.inputs.map(\.name)))
        #expect(rows.values.allSatisfy { $0.count == columns.count })
        #expect(Self.places.count * Self.inputs.count == 480)
    }

    /// Every input in every place: 16 places × 29 inputs.
    @Test(arguments: places.map(\.name)) func everyInputInEveryPlace(place name: String) throws {
        let place = try #require(Self.places.first { $0.name == name })
        let (columns, rows) = Self.parsedTable()
        let column = try #require(columns.firstIndex(of: name))
        for input in Self.inputs {
            var world = place.build()
            world.trace.removeAll()
            let before = world
            input.apply(&world)
            let cell = "\(name) × \(input)"
            Self.check(before: before, after: world, input: input, cell)
            let code = place.code(world)
            let expected = rows[input.name]?[column]
            #expect(
                (expected == "=" ? place.code(before) : expected) == code,
                "\(cell): the table says \(expected ?? "?"), it is \(code)")
        }
    }

    // MARK: - The invariants

    /// What must hold after any input in any place (besides what `SchedulerWorld` checks of every action).
    static func check(before: World, after: World, input: Input, _ cell: String) {
        #expect(after.problems.isEmpty, "\(cell): \(after.problems)")
        if let answers = input.answers, !answers.holds(in: before) {
            #expect(after.scheduler == before.scheduler, "a stale answer changes nothing: \(cell)")
            #expect(after.trace.isEmpty, "a stale answer does nothing: \(cell) \(after.trace)")
        }
        if before.scheduler.phase == .ended {
            #expect(after.trace.isEmpty, "an ended scheduler does nothing: \(cell)")
        }
        if before.scheduler.phase == .cancelled {
            #expect(
                after.scheduler.jobs.values.allSatisfy { !$0.stage.isWaiting && !$0.stage.isTransferring }, "\(cell)")
        }
    }

    // MARK: - What the actions say

    /// A file another process holds is looked at again every 0.2 s, in silence for the first 2 s (two runs that
    /// overlap briefly say nothing), then reported once (`.heldElsewhere`), however long the wait goes on; another
    /// file's wait is its own.
    @Test func aFileHeldByAnotherProcessIsReportedOnceAfterTwoSeconds() {
        var world = World()
        world.submit([World.job(1)])
        world.answersStarts = false
        var reportedAt: [Double] = []
        let started = world.seconds
        for _ in 0..<40 {  // 8 s of answers `busy`
            world.send(.tick)
            let before = world.heldElsewhere.count
            world.answer([.init(job: Self.one, outcome: .busy)])
            if world.heldElsewhere.count > before { reportedAt.append(world.seconds - started) }
            world.advance(0.2)
        }
        #expect(world.heldElsewhere == [World.job(1).ayah])
        #expect(reportedAt.count == 1 && reportedAt[0] >= DownloadScheduler.heldElsewhereNotice && reportedAt[0] < DownloadScheduler.heldElsewhereNotice + 0.5, "\(reportedAt)")
        // Let go of: the file starts, and nothing more is said of it.
        world.send(.tick)
        world.answer([.init(job: Self.one, outcome: .opened)])
        #expect(world.heldElsewhere.count == 1)
        // Its transfer fails, and the retry finds the file held again: a new wait, timed afresh (not said at its
        // first answer, as the first wait's start would have it), and said once it has lasted 2 s.
        world.end([Self.one])
        world.finish(Self.one, .failed(.transient("connection reset", retryAfter: nil)))
        var secondAt: [Double] = []
        var secondStart: Double?
        for _ in 0..<60 {
            world.send(.tick)
            guard world.pendingStarts[Self.one] != nil else {
                world.advance(0.2)
                continue
            }
            secondStart = secondStart ?? world.seconds
            let before = world.heldElsewhere.count
            world.answer([.init(job: Self.one, outcome: .busy)])
            if world.heldElsewhere.count > before { secondAt.append(world.seconds - secondStart!) }
            world.advance(0.2)
        }
        #expect(world.heldElsewhere == [World.job(1).ayah, World.job(1).ayah], "\(world.heldElsewhere)")
        #expect(secondAt.count == 1 && secondAt[0] >= DownloadScheduler.heldElsewhereNotice - 0.5, "\(secondAt)")
        #expect(world.problems.isEmpty, "\(world.problems)")
    }

    /// A stalled shared connection: its transfer is stopped, the connection closed, and the file retried at once
    /// on the next mirror.
    @Test func aStallClosesTheConnectionAndFailsOver() {
        var world = Self.sharing()
        world.advance(16)
        world.trace.removeAll()
        world.send(.progress(requestsSent: [Self.one]))
        let ayah = World.job(1).ayah
        #expect(
            world.trace == [
                .stopTransfer(Self.one, closingConnection: true),
                .report(
                    .retrying(
                        ayah, mirror: "h", reason: "stalled (the connection moved under 512 bytes/s for 15 s)", delay: 0
                    )),
            ])
        world.trace.removeAll()
        world.send(.tick)
        #expect(
            world.trace == [
                .start(.init(job: Self.one, mirror: 1, sharesConnection: true, connectNow: true)),
                .report(.started(ayah, mirror: "i")),
            ])
    }

    /// An https server that answered over HTTP/1.1 keeps what it can carry: the least urgent request not yet sent
    /// is taken back (and is not announced again when it starts once more), the others stop sharing.
    @Test func whatAnHTTP1ServerCannotCarryIsTakenBackLeastUrgentFirst() {
        var world = Self.places.first { $0.name == "excs" }!.build()
        world.trace.removeAll()
        world.send(.progress(requestsSent: [JobID(0)]))
        #expect(
            world.trace == [
                .stopTransfer(Self.one, closingConnection: false), .stopSharing(JobID(2)), .stopSharing(JobID(0)),
            ])
        world.end([JobID(0)])
        #expect(
            world.trace.suffix(1) == [
                .start(.init(job: Self.one, mirror: 0, sharesConnection: false, connectNow: true))
            ])
        #expect(world.problems.isEmpty, "\(world.problems)")
    }

    /// The player's file goes before prefetch that was submitted first.
    @Test func theMostUrgentGoesFirst() {
        var world = World()
        world.submit([World.job(0, [World.a]), World.job(1, [World.a]), World.job(2, [World.a], priority: 0)])
        world.send(.tick)
        let started = world.trace.compactMap { if case .start(let start) = $0 { start.job.rawValue } else { nil } }
        #expect(started == [2, 0])
    }

    /// Two other mirrors agree on another copy: the copy in hand goes and the file comes from one of them; the
    /// mark and the detail of what each mirror told come before the file is cached.
    @Test func theCrossCheckTakesTheFileFromTheMirrorsThatAgree() {
        var world = World()
        let job = World.job(1, [World.a, World.b, World.h], crossChecked: true)
        world.submit([job])
        world.send(.tick)
        world.end([Self.one])
        world.finish(Self.one, .complete(World.print(1)))
        world.probed(Self.one, .fingerprint(World.print(0)))
        world.trace.removeAll()
        world.probed(Self.one, .fingerprint(World.print(0)))
        #expect(
            world.trace == [
                .dropCopy(Self.one, keepPartial: false),
                .report(
                    .retrying(
                        job.ayah, mirror: "a",
                        reason: "mirrors disagree on this file; taking it from b, which another mirror agrees with",
                        delay: 0)),
            ])
        world.send(.tick)
        world.end([Self.one])
        world.trace.removeAll()
        world.finish(Self.one, .complete(World.print(0)))
        #expect(world.trace == [.commit(Self.one, mirror: 1, mark: .crossChecked)])
        world.trace.removeAll()
        world.committed(Self.one, .stored(bytes: 10_000))
        #expect(world.trace.count == 2)
        #expect(
            world.trace.first
                == .report(
                    .marked(
                        job.ayah, .crossChecked,
                        detail: "a: \(World.print(1)); b: \(World.print(0)); h: \(World.print(0))")))
        #expect(world.trace.last == .end(Self.one, .cached(job.ayah, bytes: 10_000, alreadyCached: false)))
        #expect(world.problems.isEmpty, "\(world.problems)")
    }

    /// Two mirrors that serve different whole files, with no third to decide: both copies are set aside, none is
    /// committed, and the file fails with the message that names the mirrors and the command that settles it.
    @Test func mirrorsThatDisagreeWithNoMajorityDisputeTheFile() {
        var world = World()
        let job = World.job(1, [World.a, World.b], crossChecked: true)
        world.submit([job])
        world.send(.tick)
        world.end([Self.one])
        world.finish(Self.one, .complete(World.print(1)))
        world.trace.removeAll()
        world.probed(Self.one, .fingerprint(World.print(0)))
        let message = CrossCheck.disputeMessage(
            job.ayah, reciter: job.reciter.rawValue, copies: [("a", World.print(1)), ("b", World.print(0))])
        #expect(
            world.trace == [
                .setAside(Self.one, copy: 0, prints: [0: World.print(1), 1: World.print(0)]),
                .report(.marked(job.ayah, .disputed, detail: "a: \(World.print(1)); b: \(World.print(0))")),
                .end(Self.one, .failed(job.ayah, reason: message)),
            ])
        #expect(world.problems.isEmpty, "\(world.problems)")
    }

    /// A file no mirror can give: its partial bytes go, and it fails naming each mirror's reason.
    @Test func aFileNoMirrorCanGiveFailsWithEachReason() {
        var world = World()
        world.submit([World.job(1, [World.a])])
        world.send(.tick)
        world.end([Self.one])
        world.trace.removeAll()
        world.finish(Self.one, .failed(.mirrorUnusable("HTTP 404")))
        #expect(
            world.trace == [
                .dropCopy(Self.one, keepPartial: false), .discardPartial(Self.one),
                .end(Self.one, .failed(World.job(1).ayah, reason: "mirror 1: HTTP 404")),
            ])
    }

    /// What was under way when the cancel came ends cancelled when its answer comes: a start that opened is
    /// stopped, a file that arrived is let go (its bytes kept for a resume), a copy with the committer is kept.
    @Test func whatWasUnderWayWhenCancelledEndsWhenItsAnswerComes() {
        var world = World()
        world.submit([Self.job(1), Self.job(2, [World.b]), Self.job(3, [World.h])])
        world.answersStarts = false
        world.send(.tick)
        world.answersStarts = true
        world.answer([.init(job: JobID(2), outcome: .opened), .init(job: JobID(3), outcome: .opened)])
        world.end([JobID(2), JobID(3)])
        world.finish(JobID(3), .complete(nil))  // job 3 is with the committer
        world.send(.cancel)
        #expect(world.code(of: Self.one) == "S" && world.code(of: JobID(2)) == "E" && world.code(of: JobID(3)) == "C")
        world.trace.removeAll()
        world.answer([.init(job: Self.one, outcome: .opened)])
        world.finish(JobID(2), .complete(nil))
        world.committed(JobID(3), .stored(bytes: 100))
        #expect(
            world.trace == [
                .stopTransfer(Self.one, closingConnection: false), .end(Self.one, .cancelled(World.job(1).ayah)),
                .dropCopy(JobID(2), keepPartial: true), .end(JobID(2), .cancelled(World.job(2).ayah)),
                .end(JobID(3), .cached(World.job(3).ayah, bytes: 100, alreadyCached: false)),
            ])
        world.send(.shutdown)
        #expect(world.scheduler.phase == .ended)
        #expect(world.problems.isEmpty, "\(world.problems)")
    }

    // MARK: - Seeded random runs

    /// The reciters of the random runs: two https mirrors, http and https, one http mirror, three mirrors.
    static let reciters: [(name: String, sources: [Scheduler.Source])] = [
        ("r1", [World.h, World.i]), ("r2", [World.a, World.h]), ("r3", [World.b]), ("r4", [World.a, World.b, World.i]),
    ]

    /// Random runs of every input (from fixed seeds): jobs and length probes submitted at any time, answers in any
    /// order, failures of every kind, servers heard over either protocol, stalls, a broken multi handle, cancels
    /// and shutdowns. After each step the world's checks hold; each run then drains (everything answered well)
    /// and shuts down, and every job has ended exactly once and every length probe been resolved exactly once.
    @Test(arguments: [21, 22, 23, 24, 25, 26] as [UInt64])
    func randomRunsKeepTheInvariants(seed: UInt64) {
        var random = SeededRandom(seed: 0xD0_5C4E_D000 + seed)
        var stallsRetriedElsewhere = 0
        var ends: [String: Int] = [:]
        for run in 0..<60 {
            let world = Self.randomRun(run, seed: seed, &random)
            stallsRetriedElsewhere += world.stallsRetriedElsewhere
            for event in world.ended.values {
                switch event {
                case .cached: ends["cached", default: 0] += 1
                case .failed: ends["failed", default: 0] += 1
                default: ends["cancelled", default: 0] += 1
                }
            }
        }
        // The runs went everywhere the properties are about.
        #expect(stallsRetriedElsewhere > 0)
        #expect(
            ends["cached", default: 0] > 0 && ends["failed", default: 0] > 0 && ends["cancelled", default: 0] > 0,
            "\(ends)")
    }

    static func randomRun(_ run: Int, seed: UInt64, _ random: inout SeededRandom) -> World {
        var world = World(random: SeededRandom(seed: random.next()))
        world.scheduler = Scheduler(
            limits: World.limits, policy: World.policy, httpsMayMultiplex: random.below(4) != 0, seed: random.next())
        /// Which copy each mirror serves of each file (0: the right one).
        var variants: [JobID: [Int]] = [:]
        var jobs = 0
        var lengths = 0
        var trail = "seed \(seed) run \(run):"
        func fingerprint(_ job: JobID, _ mirror: Int) -> FileFingerprint { World.print(variants[job]?[mirror] ?? 0) }

        for step in 0..<250 {
            var name: String
            switch random.below(100) {
            case 0..<8:
                let count = 1 + random.below(3)
                let new = (0..<count).map { _ -> Scheduler.Job in
                    let reciter = reciters[random.below(reciters.count)]
                    let id = JobID(jobs)
                    jobs += 1
                    variants[id] = reciter.sources.map { _ in random.below(6) == 0 ? 1 + random.below(2) : 0 }
                    return World.job(
                        id.rawValue, reciter.sources, reciter: reciter.name, priority: random.below(2),
                        crossChecked: random.below(3) == 0)
                }
                name = "submit \(new.map(\.id.rawValue))"
                world.submit(new)
            case 8..<11:
                let servers = [World.a, World.h, World.i].map(\.server)
                let probe = Scheduler.LengthProbe(
                    id: LengthID(lengths), servers: (0..<random.below(4)).map { _ in servers[random.below(3)] })
                lengths += 1
                name = "lengths \(probe.servers.count)"
                world.submitLength([probe])
            case 11..<25:
                name = "tick"
                world.send(.tick)
            case 25..<32:
                let seconds = Double(random.below(2000)) / 100
                name = "+\(seconds)s"
                world.advance(seconds)
            case 32..<48:
                let ending = world.transfers.keys.sorted().filter { _ in random.below(2) == 0 }
                name = "end \(ending.map(\.rawValue))"
                world.send(.received(Dictionary(uniqueKeysWithValues: ending.map { ($0, random.below(20_000)) })))
                world.end(ending)
                for job in ending {
                    let mirror = world.finishing[job] ?? 0
                    let outcome: Scheduler.TransferOutcome =
                        switch random.below(20) {
                        case 0, 1, 2: .failed(.transient("connection reset", retryAfter: nil))
                        case 3: .failed(.transient("HTTP 503", retryAfter: 5))
                        case 4, 5: .failed(.mirrorUnusable("HTTP 404"))
                        default: .complete(world.submitted[job]!.crossChecked ? fingerprint(job, mirror) : nil)
                        }
                    world.finish(job, outcome)
                }
            case 48..<55:
                guard
                    let (job, mirror) = world.probes.sorted(by: { $0.key < $1.key }).first(where: { _ in
                        random.below(2) == 0
                    })
                else { continue }
                name = "probed \(job.rawValue)"
                world.probed(
                    job, random.below(5) == 0 ? .unavailable("timed out") : .fingerprint(fingerprint(job, mirror)))
            case 55..<62:
                guard let job = world.committing.keys.sorted().first(where: { _ in random.below(2) == 0 }) else {
                    continue
                }
                name = "committed \(job.rawValue)"
                world.committed(
                    job,
                    random.below(10) == 0
                        ? .rejected(reason: "hash mismatch") : random.below(10) == 0 ? .mismatch(reason: "sha256 mismatch") : .stored(bytes: 10_000))
            case 62..<67:
                guard let id = world.lengthRunning.keys.sorted().first(where: { _ in random.below(2) == 0 }) else {
                    continue
                }
                name = "length \(id.rawValue) ended"
                world.lengthEnded(id, answered: random.below(2) == 0)
            case 67..<72:
                let servers = Set(world.transfers.values.map(\.server)).sorted() + [World.h.server]
                let server = servers[random.below(servers.count)]
                let multiplexes = server.hasPrefix("https://") && random.below(3) == 0  // never HTTP/2 over plain http
                name = "heard \(server) \(multiplexes ? 2 : 1)"
                world.heard(server, multiplexes: multiplexes)
            case 72..<78:
                name = "received"
                world.send(
                    .received(world.transfers.mapValues { _ in random.below(3) == 0 ? 0 : random.below(10_000) }))
            case 78..<92:
                world.requestsSent.formUnion(world.transfers.keys.filter { _ in random.below(3) != 0 })
                name = "progress \(world.requestsSent.count)/\(world.transfers.count)"
                world.send(.progress(requestsSent: world.requestsSent))
            case 92:
                name = "performFailed"
                world.performFailed()
            case 93:
                guard random.below(3) == 0 else { continue }
                name = "cancel"
                world.send(.cancel)
            case 94:
                name = "shutdown"
                world.send(.shutdown)
            default:
                name = "+0.1s tick"
                world.advance(0.1)
                world.send(.tick)
            }
            trail += " \(name)"
            if !world.problems.isEmpty {
                Issue.record("\(trail.suffix(800)) step \(step): \(world.problems)")
                return world
            }
            if world.scheduler.phase == .ended { return world }  // the download thread is gone: nothing more comes
        }

        // Everything is answered well from now on, until every job has ended; then the scheduler shuts down.
        world.random = nil
        for _ in 0..<400 where world.scheduler.jobCount > 0 || !world.lengthRunning.isEmpty {
            world.advance(1)
            world.send(.tick)
            let ending = world.transfers.keys.sorted()
            world.send(.received(Dictionary(uniqueKeysWithValues: ending.map { ($0, 20_000) })))
            world.end(ending)
            for job in ending {
                world.finish(
                    job,
                    .complete(world.submitted[job]!.crossChecked ? fingerprint(job, world.finishing[job] ?? 0) : nil))
            }
            for (job, mirror) in world.probes.sorted(by: { $0.key < $1.key }) {
                world.probed(job, .fingerprint(fingerprint(job, mirror)))
            }
            for job in world.committing.keys.sorted() { world.committed(job, .stored(bytes: 10_000)) }
            for id in world.lengthRunning.keys.sorted() { world.lengthEnded(id, answered: true) }
            world.send(.received(world.transfers.mapValues { _ in 20_000 }))
            world.send(.progress(requestsSent: Set(world.transfers.keys)))
        }
        world.send(.shutdown)
        #expect(world.scheduler.phase == .ended, "\(trail.suffix(800)): it shuts down once everything has ended")
        #expect(world.problems.isEmpty, "\(trail.suffix(800)) draining: \(world.problems)")
        for id in (0..<jobs).map(JobID.init) {
            #expect(world.endCount[id] == 1, "\(trail.suffix(800)): \(id) ended \(world.endCount[id] ?? 0) times")
        }
        for id in (0..<lengths).map(LengthID.init) {
            #expect(world.lengthResolved[id] != nil, "\(trail.suffix(800)): \(id) was never resolved")
        }
        return world
    }
}
