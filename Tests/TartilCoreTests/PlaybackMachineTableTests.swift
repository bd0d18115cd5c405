import TestSupport
import Testing

@testable import TartilCore

/// Every command and every engine report in every state the machine can be in, and seeded random runs of them:
/// nothing crashes, an ended machine takes nothing, a refused command changes nothing, every record names an ayah
/// of the plan at an offset within it, the listener never goes back but by a move, and each state goes where the
/// table below says.
@Suite struct PlaybackMachineTableTests {
    typealias Machine = PlaybackMachine
    typealias Command = PlaybackMachine.Command
    typealias Event = PlaybackMachine.EngineEvent

    // MARK: - The states

    /// A machine in a state worth trying every input on, by the name the table uses.
    struct Place: Sendable {
        let name: String
        let build: @Sendable () throws -> Machine
    }

    static func ayah(_ number: Int) -> AyahRef { AyahRef(unchecked: 112, number) }
    static let basmala = AyahRef(unchecked: 1, 1)

    /// 112:1-4 with its basmala (items 0-4: 800, 1000, 1100, 1200, 1300 frames at 100 Hz), started, every file
    /// here, `frames` written to a device that holds `capacity`.
    static func playing(_ frames: Int, capacity: Int = 300, machine: Machine = PlaybackMachineTests.machine()) -> Engine {
        var engine = Engine(machine)
        engine.capacity = capacity
        engine.start()
        engine.allReady()
        engine.write(frames)
        return engine
    }

    /// 112:1-4 without the basmala, each ayah repeated for ever, with a 25 s sleep timer (its fade: the last 300
    /// frames), `frames` written to a device that holds 100.
    static func timed(_ frames: Int) throws -> Engine {
        var engine = Engine(PlaybackMachineTests.machine(options: .init(basmala: .off, repeatEach: .forever)))
        engine.capacity = 100
        engine.start()
        engine.allReady()
        try engine.command(.sleep(seconds: 25))
        engine.write(frames)
        return engine
    }

    static let wholeAyah2 = LoopRequest(start: .ayah(ayah(2), offset: nil), end: .ayah(ayah(2), offset: nil))

    static let places: [Place] = [
        Place(name: "new") { PlaybackMachineTests.machine() },
        Place(name: "read") {
            var engine = Engine(PlaybackMachineTests.machine())
            engine.start()  // the first file is being read from the cache
            return engine.machine
        },
        Place(name: "buff") {
            var engine = Engine(PlaybackMachineTests.machine())
            engine.start()
            engine.send(.fileDownloading(basmala))
            return engine.machine
        },
        Place(name: "play") { playing(1250).machine },  // 112:1 +150 heard, +450 written
        Place(name: "end1") {
            // The basmala written to its end and heard, its end not yet reported.
            var engine = playing(0, capacity: 0)
            engine.send(.wrote(frames: 800, unplayed: 0))
            return engine.machine
        },
        Place(name: "sil") { playing(800 + 1000 + 50, capacity: 0, machine: PlaybackMachineTests.machine(pause: 1)).machine },
        Place(name: "wait") {
            // After 112:2, waiting for 112:3's download.
            var engine = Engine(PlaybackMachineTests.machine())
            engine.capacity = 0
            engine.start()
            engine.allReady(except: [ayah(3)])
            engine.send(.fileDownloading(ayah(3)))
            engine.write(800 + 1000 + 1100)
            return engine.machine
        },
        Place(name: "loop") {
            var engine = playing(0)
            try engine.command(.loop(wholeAyah2))
            engine.write(500)
            return engine.machine
        },
        Place(name: "fade") { try timed(2400).machine },  // heard 2300, inside the fade (from 2200)
        Place(name: "bnd") {
            var engine = playing(0)
            try engine.command(.stopAfter(.ayat(2)))
            engine.write(1000)
            return engine.machine
        },
        Place(name: "drn") { playing(5400).machine },  // all written: the device plays out what it holds
        Place(name: "drnT") {
            // The timer ran out (the item ends there): the device plays out the fade.
            var engine = try timed(2500)
            engine.open = nil
            engine.send(.sourceEnded)
            return engine.machine
        },
        Place(name: "paus") {
            var engine = playing(1250)
            try engine.command(.pause)
            return engine.machine
        },
        Place(name: "pLop") {
            var engine = playing(0)
            try engine.command(.loop(wholeAyah2))
            engine.write(500)
            try engine.command(.pause)
            return engine.machine
        },
        Place(name: "pMrk") {
            var engine = playing(900, capacity: 0)
            try engine.command(.markLoop)
            engine.write(500)
            try engine.command(.pause)
            return engine.machine
        },
        Place(name: "pTim") {
            var engine = playing(1250)
            try engine.command(.sleep(seconds: 60))
            try engine.command(.pause)
            return engine.machine
        },
        Place(name: "stop") {
            var engine = playing(1250)
            try engine.command(.stop)
            return engine.machine
        },
        Place(name: "fin") {
            var engine = playing(0)
            engine.playToEnd()
            return engine.machine
        },
        Place(name: "fail") {
            var engine = Engine(PlaybackMachineTests.machine())
            engine.start()
            for file in [basmala] + (1...4).map(ayah) { engine.send(.fileFailed(file, reason: "HTTP 404")) }
            return engine.machine
        },
    ]

    /// Each place is in the state its name says.
    @Test func thePlacesAreWhatTheySay() throws {
        let expected: [String: Machine.State] = [
            "new": .playing, "read": .playing, "buff": .buffering, "play": .playing, "end1": .playing, "sil": .playing,
            "wait": .buffering, "loop": .playing, "fade": .playing, "bnd": .playing, "drn": .playing, "drnT": .playing,
            "paus": .paused, "pLop": .paused, "pMrk": .paused, "pTim": .paused, "stop": .stopped, "fin": .finished, "fail": .failed,
        ]
        for place in Self.places {
            let machine = try place.build()
            #expect(machine.state == expected[place.name], "\(place.name)")
            if ["play", "end1", "sil", "loop", "fade", "bnd"].contains(place.name) { #expect(machine.isOpen, "\(place.name)") }
            switch place.name {
            case "drn": #expect(machine.phase.step == .draining(.end))
            case "drnT": #expect(machine.phase.step == .draining(.sleepTimer))
            case "read": #expect(machine.phase.step == .waiting(for: Self.basmala, downloading: false))
            case "end1": #expect(machine.heard == PlanPosition(index: 0, offset: 800))
            case "pLop": #expect(machine.loop != nil)
            case "pMrk": #expect(machine.loopMark != nil)
            case "pTim", "fade": #expect(machine.sleepSecondsLeft != nil)
            case "bnd": #expect(machine.stopBoundary == 3)
            default: break
            }
        }
    }

    // MARK: - The inputs

    /// A command or an engine report, by the name the table uses; the report's file is the one at the head.
    enum Input: Sendable, CustomStringConvertible {
        case command(String, Command)
        case event(String, @Sendable (Machine) -> Event)

        var description: String {
            switch self {
            case .command(let name, _), .event(let name, _): name
            }
        }

        /// True for the inputs that move the listener on purpose (where going back is allowed).
        var isMove: Bool {
            guard case .command(_, let command) = self else { return false }
            switch command {
            case .seek, .previous, .loop, .markLoop, .set: return true
            default: return false
            }
        }
    }

    /// The file of the item at the head (or of the next item, for a pause).
    static func headFile(_ machine: Machine) -> AyahRef {
        let items = machine.plan.items
        let index = min(machine.head.index, items.count - 1)
        return items[index].file ?? items[min(index + 1, items.count - 1)].file ?? basmala
    }

    static let inputs: [Input] = [
        .command("pause", .pause), .command("resume", .resume), .command("toggle", .toggle), .command("stop", .stop),
        .command("quit", .quit), .command("next", .next), .command("prev", .previous),
        .command("seekT5", .seek(.time(seconds: 5))), .command("seekT999", .seek(.time(seconds: 999))),
        .command("seek+3", .seek(.offset(seconds: 3))), .command("seek-100", .seek(.offset(seconds: -100))),
        .command("seek50%", .seek(.fraction(0.5))), .command("seek100%", .seek(.fraction(1))),
        .command("seekA3", .seek(.ayah(ayah(3)))), .command("seek2:255", .seek(.ayah(AyahRef(unchecked: 2, 255)))),
        .command("setRep2", .set(.repeatEach(.times(2)))), .command("setSame", .set(.repeatRange(.times(1)))),
        .command("loop", .loop(wholeAyah2)),
        .command("loopBack", .loop(LoopRequest(start: .ayah(ayah(3), offset: nil), end: .ayah(ayah(2), offset: nil)))),
        .command("loopOff", .loop(nil)), .command("markLoop", .markLoop),
        .command("after20s", .stopAfter(.seconds(20))), .command("after1", .stopAfter(.ayat(1))),
        .command("afterSura", .stopAfter(.surah)), .command("afterOff", .stopAfter(nil)),
        .command("sleep10", .sleep(seconds: 10)), .command("sleepOff", .sleep(seconds: nil)),
        .command("speed1.5", .setSpeed(1.5)), .command("speed10", .setSpeed(10)), .command("vol50", .setVolume(.to(50))),
        .event("ready") { .fileReady(headFile($0)) },
        .event("measured") { _ in .fileReady(ayah(4), samples: 1250, rate: 100) },
        .event("estimated") { _ in .lengthsEstimated([ayah(4): .init(samples: 1400, rate: 100)]) },
        .event("known") { _ in .lengthsKnown([ayah(4): .init(samples: 1350, rate: 100)]) },
        .event("downloading") { .fileDownloading(headFile($0)) },
        .event("fileFailed") { .fileFailed(headFile($0), reason: "HTTP 404") },
        .event("dropped") { .fileDropped(headFile($0)) },
        .event("gone") { .openedFileGone(headFile($0)) },
        .event("wrote100") { _ in .wrote(frames: 100, unplayed: 50) },
        .event("wrote0") { _ in .wrote(frames: 0, unplayed: 0) },
        .event("heard0") { _ in .heard(unplayed: 0) },
        .event("heard10k") { _ in .heard(unplayed: 10_000) },
        .event("srcEnded") { _ in .sourceEnded },
        .event("openFailed") { _ in .openFailed(reason: "does not decode") },
        .event("decodeFailed") { _ in .decodeFailed(reason: "stopped decoding") },
        .event("drained") { _ in .drained },
        .event("outFailed") { _ in .outputFailed("the device vanished") },
    ]

    // MARK: - The table

    /// The state after each input in each place: `=` the same state, `P` playing, `B` buffering, `Z` paused, `S`
    /// stopped, `F` finished, `X` failed. Every cell is also checked against the invariants (`check`).
    static let table = """
        input        new  read buff play end1 sil  wait loop fade bnd  drn  drnT paus pLop pMrk pTim stop fin  fail
        pause        Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    =    =    =    =    =    =    =
        resume       =    =    =    =    =    =    =    =    =    =    =    =    P    P    P    P    =    =    =
        toggle       Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    Z    P    P    P    P    =    =    =
        stop         S    S    S    S    S    S    S    S    S    S    S    S    S    S    S    S    =    =    =
        quit         S    S    S    S    S    S    S    S    S    S    S    S    S    S    S    S    =    =    =
        next         P    P    P    P    P    P    =    P    P    P    =    P    =    =    =    =    =    =    =
        prev         P    P    B    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        seekT5       P    P    B    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        seekT999     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        seek+3       P    P    B    P    P    P    =    P    P    P    =    P    =    =    =    =    =    =    =
        seek-100     P    P    B    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        seek50%      P    P    P    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        seek100%     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        seekA3       P    P    P    P    P    P    =    P    P    P    P    P    =    =    =    =    =    =    =
        seek2:255    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        setRep2      P    P    B    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        setSame      =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        loop         P    P    P    P    P    P    P    P    P    P    P    P    =    =    =    =    =    =    =
        loopBack     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        loopOff      =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        markLoop     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        after20s     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        after1       =    =    =    =    =    =    P    =    =    =    =    =    =    =    =    =    =    =    =
        afterSura    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        afterOff     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        sleep10      =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        sleepOff     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        speed1.5     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        speed10      =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        vol50        =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        ready        P    P    P    =    =    =    P    =    =    =    =    =    =    =    =    =    =    =    =
        measured     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        estimated    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        known        =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        downloading  B    B    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        fileFailed   P    P    P    =    =    =    P    =    =    =    =    =    =    =    =    =    =    =    =
        dropped      P    P    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        gone         =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        wrote100     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        wrote0       =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        heard0       =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        heard10k     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        srcEnded     =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        openFailed   =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        decodeFailed =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =    =
        drained      =    =    =    =    =    =    =    =    =    =    F    S    =    =    =    =    =    =    =
        outFailed    X    X    X    X    X    X    X    X    X    X    X    X    X    X    X    X    =    =    =
        """

    static func parsedTable() -> (columns: [String], rows: [String: [String]]) { ExpectationTable.parse(table) }

    @Test func theTableCoversEveryPlaceAndInput() {
        let (columns, rows) = Self.parsedTable()
        #expect(columns == Self.places.map(\.name))
        #expect(Set(rows.keys) == Set(Self.inputs.map(\.description)))
        #expect(rows.values.allSatisfy { $0.count == columns.count })
        #expect(Self.places.count * Self.inputs.count == 893)
    }

    /// Every input in every place: 19 places × 47 inputs.
    @Test(arguments: places.map(\.name)) func everyInputInEveryPlace(place name: String) throws {
        let place = try #require(Self.places.first { $0.name == name })
        let (columns, rows) = Self.parsedTable()
        let column = try #require(columns.firstIndex(of: name))
        for input in Self.inputs {
            var machine = try place.build()
            let before = machine
            let outcome = Self.apply(input, to: &machine)
            let cell = "\(name) × \(input)"
            Self.check(before: before, after: machine, input: input, outcome: outcome, cell)
            guard let code = rows[input.description]?[column] else { continue }
            let expected: Machine.State? = switch code {
            case "=": before.state
            case "P": .playing
            case "B": .buffering
            case "Z": .paused
            case "S": .stopped
            case "F": .finished
            case "X": .failed
            default: nil
            }
            #expect(machine.state == expected, "\(cell): the table says \(code)")
        }
    }

    // MARK: - The invariants

    /// What an input did: its actions, or the refusal.
    enum Outcome {
        case actions([Machine.Action])
        case refused(TartilError)

        var actions: [Machine.Action] {
            if case .actions(let actions) = self { return actions }
            return []
        }
    }

    static func apply(_ input: Input, to machine: inout Machine) -> Outcome {
        switch input {
        case .command(_, let command):
            do {
                return .actions(try machine.on(command))
            } catch {
                return .refused(error)
            }
        case .event(_, let event):
            return .actions(machine.on(event(machine)))
        }
    }

    /// Everything the machine holds, for "nothing changed".
    struct Snapshot: Equatable {
        let phase: Machine.Phase
        let looping: Machine.LoopSetting
        let boundary: Machine.Boundary?
        let sleepTimer: Machine.SleepTimer?
        let files: [AyahRef: Machine.FileStatus]
        let wanted: [AyahRef]
        let told: Machine.Told
        let engineHasFormat: Bool
        let sizeEstimates: [AyahRef: Timeline.Length]
        let plan: PlaybackPlan
        let timeline: Timeline
        let skipped: [String]
        let speed: Double
        let volume: Int
        // What the status reads.
        let state: Machine.State
        let heard: PlanPosition
        let head: PlanPosition
        let loop: Machine.Loop?
        let loopMark: PlanPosition?
        let stopAfter: StopAfter?
        let sleepSecondsLeft: Double?
        let endMessage: String?
        let hasNext: Bool

        init(_ machine: Machine) {
            phase = machine.phase
            looping = machine.looping
            boundary = machine.boundary
            sleepTimer = machine.sleepTimer
            files = machine.files
            wanted = machine.wanted
            told = machine.told
            engineHasFormat = machine.engineHasFormat
            sizeEstimates = machine.sizeEstimates
            plan = machine.plan
            timeline = machine.timeline
            skipped = machine.skipped.map { "\($0.ayah) \($0.reason)" }
            speed = machine.speed
            volume = machine.volume
            state = machine.state
            heard = machine.heard
            head = machine.head
            loop = machine.loop
            loopMark = machine.loopMark
            stopAfter = machine.stopAfter
            sleepSecondsLeft = machine.sleepSecondsLeft
            endMessage = machine.endMessage
            hasNext = machine.hasNext
        }
    }

    /// What must hold after any input in any state.
    static func check(before: Machine, after: Machine, input: Input, outcome: Outcome, _ cell: String) {
        if before.state.isEnded {
            #expect(outcome.actions.isEmpty, "an ended machine does nothing: \(cell)")
            #expect(Snapshot(before) == Snapshot(after), "an ended machine changes nothing: \(cell)")
        }
        if case .refused(let error) = outcome {
            #expect(error.code == .usage, "\(cell)")
            #expect(Snapshot(before) == Snapshot(after), "a refused command changes nothing: \(cell)")
        }
        let actions = outcome.actions
        for case .record(let record) in actions { checkRecord(record, in: after, cell) }
        let records = actions.filter { if case .record = $0 { true } else { false } }
        // One place per input, but for a move that lands where nothing can play (its stop follows).
        let failedNow = after.state == .failed && !before.state.isEnded
        #expect(records.count <= (failedNow ? 2 : 1), "one input, one place at most: \(records) \(cell)")
        // Ends once, and says so.
        let ends = actions.filter { if case .end = $0 { true } else { false } }
        #expect(ends.count == (!before.state.isEnded && after.state.isEnded ? 1 : 0), "\(cell)")
        if after.state == .paused {
            #expect(!actions.contains { if case .open = $0 { true } else { false } }, "nothing opens while paused: \(cell)")
        }
        if after.isOpen { #expect(after.state == .playing, "\(cell)") }
        // The listener never goes back while playing, but by a move (a seek, prev, a loop), a loop's lap, or a
        // pause inside the sleep timer's fade (which goes back to where it began).
        let playingBefore = before.state == .playing || before.state == .buffering
        let playingAfter = after.state == .playing || after.state == .buffering || after.state == .paused
        if playingBefore && playingAfter && !input.isMove && after.plan == before.plan && after.heard < before.heard {
            let lapped = before.loop != nil || before.plan.options.repeatEach == .forever || before.plan.options.repeatRange == .forever
            let fadeReplay = after.state == .paused && before.sleepSecondsLeft != nil
            #expect(lapped || fadeReplay, "the listener went back from \(before.heard) to \(after.heard): \(cell)")
        }
        // Where the listener is lies in the plan.
        #expect(after.heard.index <= after.plan.items.count, "\(cell)")
    }

    /// A record names an ayah of the plan, at an offset within its recitation (an ayah start at 0; a seek inside
    /// it; a pause, stop or end at most at its end).
    static func checkRecord(_ record: Machine.Record, in machine: Machine, _ cell: String) {
        let plan = machine.plan
        #expect(plan.ayat.contains(record.ayah), "\(record) is not in the plan: \(cell)")
        let lengths = plan.items.indices.filter { plan.items[$0].kind == .ayah && plan.items[$0].ayah == record.ayah }
            .map { machine.timeline.lengths[$0] }
        let length = lengths.map(\.samples).max() ?? 0
        #expect(lengths.contains { $0.rate == record.rate } || record.offsetSamples == 0, "\(record): \(cell)")
        #expect(record.offsetSamples >= 0, "\(record): \(cell)")
        switch record.reason {
        case .ayahStart: #expect(record.offsetSamples == 0, "\(record): \(cell)")
        case .seek: #expect(record.offsetSamples < max(1, length), "\(record) is past its ayah's end (\(length)): \(cell)")
        case .pause, .stop, .quit, .end: #expect(record.offsetSamples <= length, "\(record) is past its ayah's end (\(length)): \(cell)")
        }
    }

    // MARK: - Seeded random runs

    /// Random runs of every command and report (from fixed seeds, over plans with pauses, repeats and rates
    /// drawn too), with a device that plays what it was given; the same invariants after each step, and each run
    /// ends cleanly once everything is here and nothing loops.
    @Test(arguments: [11, 12, 13, 14, 15, 16] as [UInt64])
    func randomRunsOfEveryInputKeepTheInvariants(seed: UInt64) throws {
        var random = SeededRandom(seed: 0x7AB1E_0000 + seed)
        for run in 0..<150 {
            try Self.randomRun(run, seed: seed, &random)
        }
    }

    static func randomRun(_ run: Int, seed: UInt64, _ random: inout SeededRandom) throws {
        let options = PlaybackOptions(
            basmala: random.below(2) == 0 ? .auto : .off, repeatEach: [.times(1), .times(2), .forever][random.below(3)],
            pause: [.seconds(0), .seconds(0.5), .multiple(0.5)][random.below(3)])
        let rates = (0..<5).map { _ in [100, 100, 200][random.below(3)] }
        var engine = Engine(PlaybackMachineTests.machine(options: options, rates: rates, stopOnSkip: random.below(8) == 0))
        engine.capacity = [0, 100, 300][random.below(3)]
        let files = [basmala] + (1...4).map(ayah)
        let commands = inputs.compactMap { input -> Input? in if case .command = input { input } else { nil } }
        var trail = "seed \(seed) run \(run) (\(options.summary), rates \(rates), capacity \(engine.capacity))"
        engine.start(at: random.below(3) == 0 ? PlanPosition(index: random.below(engine.machine.plan.items.count)) : nil)
        var ended = 0
        for step in 0..<300 {
            let before = engine.machine
            var input: Input
            var actions: [Machine.Action] = []
            var outcome: Outcome
            let recordsBefore = engine.records.count
            switch random.below(100) {
            case 0..<35:
                let frames = 1 + random.below(700)
                input = .event("write \(frames)") { _ in .heard(unplayed: 0) }
                engine.write(frames)
                outcome = .actions([])
            case 35..<55:
                let file = files[random.below(files.count)]
                let event: Event = switch random.below(21) {
                case 0: .fileFailed(file, reason: "gone")
                case 1, 2, 3: .fileDownloading(file)
                case 4: .fileDropped(file)
                case 5: .lengthsEstimated([file: .init(samples: 500 + random.below(1000), rate: 100)])
                case 6: .lengthsKnown([file: .init(samples: 500 + random.below(1000), rate: 100)])
                default: .fileReady(file)
                }
                input = .event("\(event)") { _ in event }
                engine.send(event)
                outcome = .actions([])
            case 55..<63:
                // What the audio thread reports of the open item without the device: it ends early, fails to open or
                // to decode, or its bytes were let go.
                let event: Event = [.sourceEnded, .openFailed(reason: "bad"), .decodeFailed(reason: "bad"), .openedFileGone(headFile(engine.machine))][random.below(4)]
                input = .event("\(event)") { _ in event }
                let (open, left, opens) = (engine.open, engine.left, engine.opens.count)
                engine.open = nil
                engine.send(event)
                if engine.machine.isOpen && engine.opens.count == opens { (engine.open, engine.left) = (open, left) }  // it did not close
                outcome = .actions([])
            case 63..<64:
                input = .event("outputFailed") { _ in .outputFailed("gone") }
                engine.send(.outputFailed("gone"))
                outcome = .actions([])
            default:
                input = commands[random.below(commands.count)]
                engine.send(.heard(unplayed: engine.unplayed))
                let heardNow = engine.machine
                outcome = apply(input, to: &engine.machine)
                actions = outcome.actions
                engine.run(actions)
                check(before: heardNow, after: engine.machine, input: input, outcome: outcome, "\(trail) step \(step) \(input)")
            }
            trail += " \(input)"
            for record in engine.records[recordsBefore...] { checkRecord(record, in: engine.machine, "\(trail.suffix(600))") }
            if before.state.isEnded {
                #expect(Snapshot(before) == Snapshot(engine.machine), "an ended machine changes nothing: \(trail.suffix(600))")
            }
            if engine.machine.state.isEnded && !before.state.isEnded { ended += 1 }
            #expect(engine.machine.state.isEnded == (engine.ended != nil), "\(trail.suffix(600))")
            if engine.machine.isOpen { #expect(engine.machine.state == .playing, "\(trail.suffix(600))") }
            if engine.ended != nil { break }
        }
        #expect(ended <= 1)
        // Whatever happened: with everything here and nothing looping, it plays to a clean end.
        guard engine.ended == nil else { return }
        try? engine.command(.loop(nil))
        try? engine.command(.set(.repeatEach(.times(1))))
        try? engine.command(.sleep(seconds: nil))
        if engine.state == .paused { try engine.command(.resume) }
        for file in files { engine.send(.fileReady(file)) }
        engine.playToEnd(limit: 100_000)
        #expect(engine.ended != nil, "it ends: \(trail.suffix(600))")
    }
}

extension PlaybackMachine.Phase {
    /// The engine's step while playing (nil otherwise), for the tests.
    var step: PlaybackMachine.Step? {
        if case .playing(_, let writing) = self { return writing.step }
        return nil
    }
}
