import TestSupport
import Testing

@testable import TartilCore

/// A stand-in for the audio thread: carries out the machine's actions with a device that holds up to
/// `capacity` frames, so tests can drive playback chunk by chunk.
struct Engine {
    var machine: PlaybackMachine
    var capacity = 300
    /// Frames the device holds and has not played.
    var unplayed = 0
    /// The open item and the frames left in it.
    var open: PlanPosition?
    var left = 0
    var draining = false
    var wanted: [AyahRef] = []
    var opens: [PlanPosition] = []
    var prepared: [Int] = []
    var records: [PlaybackMachine.Record] = []
    var notices: [PlaybackMachine.Notice] = []
    var ended: (PlaybackMachine.State, String?)?
    /// The last item whose source ended (written to its end).
    var lastEnded: Int?

    init(_ machine: PlaybackMachine) { self.machine = machine }

    mutating func run(_ actions: [PlaybackMachine.Action]) {
        for action in actions {
            switch action {
            case .want(let files): wanted = files
            case .open(let position):
                open = position
                left = machine.timeline.lengths[position.index].samples - position.offset
                opens.append(position)
            case .prepare(let index): prepared.append(index)
            case .discardOutput:
                // As the audio thread: the open item closes, and a seek during the last item's drain plays on.
                unplayed = 0
                open = nil
                draining = false
            case .drainOutput: draining = true
            case .record(let record): records.append(record)
            case .notify(let notice): notices.append(notice)
            case .end(let state, let message): ended = (state, message)
            case .setSpeed, .setVolume: break
            }
        }
    }

    mutating func start(at position: PlanPosition? = nil) { run(machine.start(at: position)) }
    /// The open item's file stops decoding here (the audio thread's `decoder.read` threw).
    mutating func decodeFails(_ reason: String) {
        open = nil
        send(.decodeFailed(reason: reason))
    }
    mutating func send(_ event: PlaybackMachine.EngineEvent) { run(machine.on(event)) }
    mutating func command(_ command: PlaybackMachine.Command) throws(TartilError) {
        run(machine.on(.heard(unplayed: unplayed)))
        run(try machine.on(command))
    }

    /// Every file of the plan is in memory (but those in `except`).
    mutating func allReady(except: Set<AyahRef> = []) {
        for file in Set(machine.plan.items.compactMap(\.file)).subtracting(except).sorted() { send(.fileReady(file)) }
    }

    /// What was written, in order: item, first frame, frames (adjacent pieces of one item joined).
    var output: [(index: Int, start: Int, frames: Int)] = []

    /// Writes `frames` (across items, as the audio thread does chunk by chunk, no further than the machine
    /// allows; the device plays as much as it must to make room), or drains when the machine asked for it.
    mutating func write(_ frames: Int) {
        var frames = frames
        while frames > 0 || (open != nil && left == 0) {
            if draining {
                draining = false
                unplayed = 0
                send(.drained)
                return
            }
            guard let item = open else { return }
            let count = min(frames, left, machine.allowance(frames))
            if count == 0 {
                lastEnded = open?.index
                open = nil
                send(.sourceEnded)
                continue
            }
            let start = machine.timeline.lengths[item.index].samples - left
            if let last = output.last, last.index == item.index, last.start + last.frames == start {
                output[output.count - 1].frames += count
            } else {
                output.append((item.index, start, count))
            }
            left -= count
            frames -= count
            unplayed = min(capacity, unplayed + count)
            send(.wrote(frames: count, unplayed: unplayed))
        }
    }

    /// Writes until playback ends or nothing more can happen (at most `limit` steps).
    mutating func playToEnd(limit: Int = 10_000) {
        for _ in 0..<limit where ended == nil && (open != nil || draining) {
            if draining {
                draining = false
                unplayed = 0
                send(.drained)
            } else {
                write(250)
            }
        }
    }

    var state: PlaybackMachine.State { machine.state }
    var buffered: Bool { notices.contains { if case .buffering = $0 { true } else { false } } }
}

@Suite struct PlaybackMachineTests {
    /// 112:1-4 with its basmala: items 0 (basmala 1:1, 800 frames), 1-4 (1000, 1100, 1200, 1300 frames), at 100 Hz
    /// so that 1 s is 100 frames.
    static func machine(pause: Double = 0, repeats: Int = 1, rates: [Int] = [100, 100, 100, 100, 100], stopOnSkip: Bool = false)
        -> PlaybackMachine
    {
        machine(options: .init(repeatEach: .times(repeats), pause: .seconds(pause)), rates: rates, stopOnSkip: stopOnSkip)
    }

    /// 112:1-4 laid out with `options`, lengths as above.
    static func machine(options: PlaybackOptions, rates: [Int] = [100, 100, 100, 100, 100], stopOnSkip: Bool = false) -> PlaybackMachine {
        let plan = try! PlaybackPlan(ayat: (1...4).map { AyahRef(unchecked: 112, $0) }, options: options)
        let sizes: [AyahRef: Timeline.Length] = [
            AyahRef(unchecked: 1, 1): .init(samples: 800, rate: rates[0]), AyahRef(unchecked: 112, 1): .init(samples: 1000, rate: rates[1]),
            AyahRef(unchecked: 112, 2): .init(samples: 1100, rate: rates[2]), AyahRef(unchecked: 112, 3): .init(samples: 1200, rate: rates[3]),
            AyahRef(unchecked: 112, 4): .init(samples: 1300, rate: rates[4]),
        ]
        return PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { sizes[$0] }, stopOnSkip: stopOnSkip)
    }

    // MARK: - Lengths learned without decoding

    /// Remembered lengths are exact from the start; size estimates replace guesses and stay marked; a measured
    /// length is never replaced by an estimate; the pause after an ayah follows its length.
    @Test func rememberedAndEstimatedLengths() {
        let plan = try! PlaybackPlan(ayat: (1...3).map { AyahRef(unchecked: 112, $0) }, options: .init(pause: .multiple(1)))
        let remembered = [AyahRef(unchecked: 112, 1): Timeline.Length(samples: 1000, rate: 100)]
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan, table: nil, remembered: remembered))
        let index = { (ayah: Int) in plan.items.firstIndex { $0.file == AyahRef(unchecked: 112, ayah) }! }
        #expect(machine.timeline.lengths[index(1)] == Timeline.Length(samples: 1000, rate: 100))
        #expect(machine.timeline.lengths[index(2)] == Timeline.Length(samples: 1000, rate: 100, isEstimated: true))  // the mean
        _ = machine.on(.lengthsEstimated([AyahRef(unchecked: 112, 1): .init(samples: 5, rate: 100), AyahRef(unchecked: 112, 2): .init(samples: 2000, rate: 100)]))
        #expect(machine.timeline.lengths[index(1)] == Timeline.Length(samples: 1000, rate: 100))
        #expect(machine.timeline.lengths[index(2)] == Timeline.Length(samples: 2000, rate: 100, isEstimated: true))
        #expect(machine.timeline.lengths[index(2) + 1] == Timeline.Length(samples: 2000, rate: 100, isEstimated: true))  // its 1x pause
        #expect(machine.timeline.isEstimated(in: 0..<plan.items.count))
        _ = machine.on(.fileReady(AyahRef(unchecked: 112, 2), samples: 1990, rate: 100))
        _ = machine.on(.fileReady(AyahRef(unchecked: 112, 3), samples: 700, rate: 100))
        _ = machine.on(.lengthsEstimated([AyahRef(unchecked: 112, 2): .init(samples: 2000, rate: 100)]))
        #expect(machine.timeline.lengths[index(2)] == Timeline.Length(samples: 1990, rate: 100))
        #expect(!machine.timeline.isEstimated(in: index(1)..<plan.items.count))
    }

    /// Lengths known before the files are here (a surah learned while playing: its table's rows) are exact from
    /// then on: they replace guesses and estimates (and the pauses that follow from them), never a measured length
    /// nor the open item's, and a later estimate does not replace them.
    @Test func knownLengthsAreExact() {
        let plan = try! PlaybackPlan(ayat: (1...3).map { AyahRef(unchecked: 112, $0) }, options: .init(basmala: .off, pause: .multiple(1)))
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { _ in nil })
        let index = { (ayah: Int) in plan.items.firstIndex { $0.file == AyahRef(unchecked: 112, ayah) }! }
        _ = machine.start(at: nil)
        _ = machine.on(.fileReady(AyahRef(unchecked: 112, 1), samples: 1000, rate: 100))  // open: measured as it ends
        _ = machine.on(.lengthsEstimated([AyahRef(unchecked: 112, 2): .init(samples: 2000, rate: 100)]))
        _ = machine.on(.lengthsKnown([
            AyahRef(unchecked: 112, 1): .init(samples: 10, rate: 100), AyahRef(unchecked: 112, 2): .init(samples: 2100, rate: 100),
            AyahRef(unchecked: 112, 3): .init(samples: 2200, rate: 100),
        ]))
        #expect(machine.timeline.lengths[index(1)] == Timeline.Length(samples: 1000, rate: 100))
        #expect(machine.timeline.lengths[index(2)] == Timeline.Length(samples: 2100, rate: 100))
        #expect(machine.timeline.lengths[index(2) + 1] == Timeline.Length(samples: 2100, rate: 100))  // its 1x pause
        #expect(machine.timeline.lengths[index(3)] == Timeline.Length(samples: 2200, rate: 100))
        _ = machine.on(.lengthsEstimated([AyahRef(unchecked: 112, 3): .init(samples: 5, rate: 100)]))
        #expect(machine.timeline.lengths[index(3)] == Timeline.Length(samples: 2200, rate: 100))
        #expect(!machine.timeline.isEstimated(in: index(2)..<plan.items.count))
    }

    /// A start or loop asked for in times, in a surah learned while playing (its lengths estimated until then),
    /// is placed again once its lengths are known: `--from 0:38` means the recording's 0:38, not the estimate's.
    /// Ayat of 5, 8, 12, 7, 9 and 15 s (the estimate: 10 s each); a time past the real end ends playback with the
    /// usage error's message; a surah that is not learned keeps its first placement.
    @Test(arguments: [
        // (start, loop, learned, where it is once known: (ayah, offset in samples at 100 Hz) or the failure)
        (SeekTarget.time(seconds: 38), nil, true, "114:5+600"),
        (.fraction(0.5), nil, true, "114:4+300"),  // 28 s of 56
        (.time(seconds: 38), nil, false, "114:4+800"),  // not learned: stays where the estimate put it
        (.time(seconds: 58), nil, true, "failed: 0:58 is past the end of surah 114, which lasts 0:56"),
        (.time(seconds: 65), nil, true, "failed: 1:05 is past the end of surah 114, which lasts 0:56"),  // past the estimate too
        (nil, LoopRequest(start: .time(seconds: 30), end: .time(seconds: 35)), true, "114:4+500 loop 114:4+500-114:5+300"),
        (nil, LoopRequest(start: .time(seconds: 38), end: .time(seconds: 39)), true, "114:5+600 loop 114:5+600-114:5+700"),
        (nil, LoopRequest(start: .time(seconds: 57), end: .time(seconds: 59)), true, "failed: 0:57 is past the end of what is playing of surah 114, which lasts 0:56"),
        (.time(seconds: 10), LoopRequest(start: .ayah(AyahRef(unchecked: 114, 2), offset: nil), end: .time(seconds: 20)), true, "114:2+0 loop 114:2+0-114:3+700"),
    ] as [(SeekTarget?, LoopRequest?, Bool, String)])
    func timesPlacedOnEstimatesArePlacedAgainWhenKnown(start: SeekTarget?, loop: LoopRequest?, learned: Bool, expected: String) throws {
        let ayat = (1...6).map { AyahRef(unchecked: 114, $0) }
        let plan = try PlaybackPlan(ayat: ayat, options: .init(basmala: .off))
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { _ in nil })
        if learned { machine.surahsToLearn = [114] }
        _ = machine.on(.lengthsEstimated(Dictionary(uniqueKeysWithValues: ayat.map { ($0, Timeline.Length(samples: 1000, rate: 100, isEstimated: true)) })))
        _ = machine.start(at: try start.map { try machine.startPosition(for: $0) })
        if let loop { _ = try machine.on(.loop(loop)) }
        let seconds = [5, 8, 12, 7, 9, 15]
        let actions = machine.on(.lengthsKnown(Dictionary(uniqueKeysWithValues: zip(ayat, seconds.map { Timeline.Length(samples: $0 * 100, rate: 100) }))))
        let text = { (position: PlanPosition) in "\(plan.items[position.index].ayah)+\(position.offset)" }
        if case .ended(.failed(let message, let isUsage), _) = machine.phase {
            #expect("failed: " + message == expected)
            #expect(actions.contains(.end(.failed, message: message)))
            #expect(isUsage && machine.endIsUsage, "a time past the end is bad input (exit 64), as it is before the lengths are known")
            return
        }
        var result = text(machine.heard)
        if let on = machine.loop {
            result += " loop \(text(on.start))-\(plan.items[on.endIndex].ayah)+\(on.endOffset ?? machine.timeline.lengths[on.endIndex].samples)"
        }
        #expect(result == expected)
    }

    /// Playback that writes a file (`writesFile`) never becomes endless from a command (a script's or another
    /// terminal's): `set repeat inf`, `set repeat-range inf`, a loop without a count and a timer cancelled under
    /// them are refused, and nothing changes; with a timer (or for the range, any stop-after) they are taken; and
    /// playback to a device takes them all.
    @Test(arguments: [
        // (what is done first, the command, whether it writes a file, refused)
        ([], PlaybackMachine.Command.set(.repeatEach(.forever)), true, true),
        ([], .set(.repeatRange(.forever)), true, true),
        ([], .loop(LoopRequest(start: .time(seconds: 1), end: .time(seconds: 2))), true, true),
        ([], .loop(LoopRequest(start: .time(seconds: 1), end: .time(seconds: 2), passes: 3)), true, false),
        ([.sleep(seconds: 600)], .set(.repeatEach(.forever)), true, false),
        ([.stopAfter(.surah)], .set(.repeatRange(.forever)), true, false),
        ([.stopAfter(.surah)], .set(.repeatEach(.forever)), true, true),
        ([.sleep(seconds: 600), .set(.repeatEach(.forever))], .sleep(seconds: nil), true, true),
        ([.sleep(seconds: 600), .set(.repeatEach(.forever))], .stopAfter(nil), true, true),
        ([.sleep(seconds: 600), .loop(LoopRequest(start: .time(seconds: 1), end: .time(seconds: 2)))], .sleep(seconds: nil), true, true),
        ([], .set(.repeatEach(.forever)), false, false),
        ([], .loop(LoopRequest(start: .time(seconds: 1), end: .time(seconds: 2))), false, false),
    ] as [([PlaybackMachine.Command], PlaybackMachine.Command, Bool, Bool)])
    func playbackThatWritesAFileNeverBecomesEndless(first: [PlaybackMachine.Command], command: PlaybackMachine.Command, file: Bool, refused: Bool) throws {
        let plan = try PlaybackPlan(ayat: (1...4).map { AyahRef(unchecked: 112, $0) }, options: .init(basmala: .off))
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { _ in Timeline.Length(samples: 500, rate: 100) })
        _ = machine.start(at: nil)
        for setup in first { _ = try machine.on(setup) }
        if file { machine.writesFile = "--output wav:out.wav" }
        let before = machine
        do {
            _ = try machine.on(command)
            #expect(!refused, "\(command) was taken")
        } catch {
            #expect(refused, "\(command): \(error.message)")
            #expect(error.code == .usage && error.message.hasPrefix("--output wav:out.wav writes a file, which must end: "), "\(error.message)")
            #expect(machine.plan == before.plan && machine.loop == before.loop && machine.sleepSecondsLeft == before.sleepSecondsLeft
                && machine.stopAfter == before.stopAfter && machine.heard == before.heard, "a refused command changes nothing")
        }
    }

    /// A start placed again inside an ayah once its surah is learned (`--from 0:38`: 6 s into 114:5) is where the
    /// listener starts: the journal gets no "ayah-start" of 114:5 at 0 s, and a stop records where they are.
    @Test func aStartPlacedAgainIsNotRecordedAsTheAyahsStart() throws {
        let ayat = (1...6).map { AyahRef(unchecked: 114, $0) }
        let plan = try PlaybackPlan(ayat: ayat, options: .init(basmala: .off))
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { _ in nil })
        machine.surahsToLearn = [114]
        _ = machine.on(.lengthsEstimated(Dictionary(uniqueKeysWithValues: ayat.map { ($0, Timeline.Length(samples: 1000, rate: 100, isEstimated: true)) })))
        let start = try machine.startPosition(for: .time(seconds: 38))
        var engine = Engine(machine)
        engine.capacity = 100
        engine.start(at: start)
        engine.send(.lengthsKnown(Dictionary(uniqueKeysWithValues: zip(ayat, [5, 8, 12, 7, 9, 15].map { Timeline.Length(samples: $0 * 100, rate: 100) }))))
        engine.allReady()
        engine.write(200)  // 114:5 from 6 s to 8 s; the device holds up to 3 s, so about 1 s of it is heard
        try engine.command(.stop)
        #expect(!engine.records.contains { $0.reason == .ayahStart && $0.ayah == AyahRef(unchecked: 114, 5) }, "\(engine.records)")
        let stop = try #require(engine.records.last)
        #expect(stop.ayah == AyahRef(unchecked: 114, 5) && stop.offsetSamples >= 600, "\(engine.records)")
    }

    /// A loop whose A is inside an ayah (0:20, 2 s into 112:2) records, at each jump back, that place as the
    /// ayah entered, not the ayah's start the listener did not hear again; an ayah entered by playing on still
    /// records its start.
    @Test func aLoopBackInsideAnAyahRecordsWhereItLands() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        try engine.command(.loop(LoopRequest(start: .time(seconds: 20), end: .time(seconds: 30), passes: 3)))
        engine.playToEnd()
        let entries = engine.records.filter { $0.reason == .ayahStart }
        let into112v2 = entries.filter { $0.ayah == AyahRef(unchecked: 112, 2) }
        #expect(into112v2.count == 2 && into112v2.allSatisfy { $0.offsetSamples == 200 }, "\(entries)")
        #expect(entries.filter { $0.ayah == AyahRef(unchecked: 112, 3) }.allSatisfy { $0.offsetSamples == 0 }, "\(entries)")
        #expect(entries.contains { $0.ayah == AyahRef(unchecked: 112, 4) && $0.offsetSamples == 0 }, "\(entries)")
    }

    /// A new layout (`set repeat 2`) keeps what was learned: measured lengths stay exact and size estimates stay
    /// (still marked as estimates) instead of falling back to the mean guess.
    @Test func estimatesSurviveANewLayout() throws {
        let plan = try PlaybackPlan(ayat: (1...3).map { AyahRef(unchecked: 112, $0) }, options: .init(basmala: .off))
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan) { _ in nil })
        _ = machine.start(at: nil)
        _ = machine.on(.fileReady(AyahRef(unchecked: 112, 1), samples: 1000, rate: 100))
        _ = machine.on(.lengthsEstimated([AyahRef(unchecked: 112, 2): .init(samples: 2500, rate: 100)]))
        _ = try machine.on(.set(.repeatEach(.times(2))))
        let lengths = { (ayah: Int) in
            machine.plan.items.indices.filter { machine.plan.items[$0].file == AyahRef(unchecked: 112, ayah) && machine.plan.items[$0].kind == .ayah }
                .map { machine.timeline.lengths[$0] }
        }
        #expect(lengths(1) == Array(repeating: Timeline.Length(samples: 1000, rate: 100), count: 2))
        #expect(lengths(2) == Array(repeating: Timeline.Length(samples: 2500, rate: 100, isEstimated: true), count: 2))
        #expect(lengths(3).allSatisfy { $0.isEstimated && $0.samples != 2500 })  // the mean guess
    }

    // MARK: - Starting and buffering

    @Test func startingWithCachedFilesNeverSaysBuffering() {
        var engine = Engine(Self.machine())
        engine.start()
        #expect(engine.state == .playing)
        #expect(engine.wanted == [AyahRef(unchecked: 1, 1), AyahRef(unchecked: 112, 1), AyahRef(unchecked: 112, 2), AyahRef(unchecked: 112, 3)])
        #expect(engine.opens.isEmpty, "nothing opens before its bytes are here")
        engine.allReady()
        #expect(engine.opens == [PlanPosition(index: 0)])
        #expect(!engine.buffered)
        #expect(engine.records.isEmpty, "the first ayah start is recorded once sound is heard, not at the open")
        engine.write(100)
        #expect(engine.records.isEmpty, "written, but still in the device's buffer")
        engine.send(.heard(unplayed: 0))
        #expect(engine.records == [PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 1), offsetSamples: 0, rate: 100, reason: .ayahStart)])
    }

    /// The files wanted are the one being written and those of the next three items with a file, each once: a
    /// repeated ayah is not fetched twice, and what follows it is.
    @Test func theFilesWantedAreTheNextFourFileItemsWithoutRepeats() {
        var engine = Engine(Self.machine(options: .init(basmala: .off, repeatEach: .times(3), pause: .seconds(0.5))))
        engine.start()
        #expect(engine.wanted == [AyahRef(unchecked: 112, 1), AyahRef(unchecked: 112, 2)])  // 112:1 three times, then 112:2
        engine.allReady()
        engine.write(3 * 1000 + 3 * 50 + 100)  // into the first 112:2
        engine.write(0)
        #expect(engine.wanted == [AyahRef(unchecked: 112, 2), AyahRef(unchecked: 112, 3)])
    }

    @Test func bufferingOnlyWhileTheWantedFileDownloads() {
        var engine = Engine(Self.machine())
        engine.start()
        engine.send(.fileDownloading(AyahRef(unchecked: 1, 1)))
        #expect(engine.state == .buffering)
        #expect(engine.notices.contains(.buffering(AyahRef(unchecked: 1, 1))))
        engine.send(.fileReady(AyahRef(unchecked: 1, 1)))
        #expect(engine.state == .playing)
        #expect(engine.opens == [PlanPosition(index: 0)])
    }

    /// The state notices a script sees: `playing` only once sound is written (so the first one is the time to
    /// first sound), never a `playing` then `buffering` flicker at the start, after a resume or after a seek.
    @Test func playingIsToldOnlyOnceSoundIsWritten() throws {
        func states(_ notices: [PlaybackMachine.Notice]) -> [String] {
            notices.compactMap { notice -> String? in
                switch notice {
                case .state(let state): state.rawValue
                case .buffering(let ayah): "buffering \(ayah)"
                default: nil
                }
            }
        }
        let basmala = AyahRef(unchecked: 1, 1)
        // The first file downloads: buffering is the first thing said, then playing when it opens.
        var engine = Engine(Self.machine())
        engine.start()
        #expect(states(engine.notices).isEmpty, "nothing is said before the first file is known")
        engine.send(.fileDownloading(basmala))
        engine.send(.fileDownloading(AyahRef(unchecked: 112, 1)))
        #expect(states(engine.notices) == ["buffering 1:1", "buffering"])
        engine.send(.fileReady(basmala))
        #expect(states(engine.notices) == ["buffering 1:1", "buffering", "playing"])
        // A seek while buffering to another file still downloading: buffering for it, no playing between.
        engine = Engine(Self.machine())
        engine.start()
        engine.send(.fileDownloading(basmala))
        engine.send(.fileDownloading(AyahRef(unchecked: 112, 2)))
        try engine.command(.seek(.ayah(AyahRef(unchecked: 112, 2))))
        #expect(states(engine.notices) == ["buffering 1:1", "buffering", "buffering 112:2"])
        // A cached start says playing once, when the file opens; resume says it again only when sound is written.
        engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        #expect(states(engine.notices) == ["playing"])
        engine.write(1250)
        try engine.command(.pause)
        try engine.command(.resume)
        #expect(states(engine.notices) == ["playing", "paused", "playing"])
    }

    @Test func aStartInsideAPauseTakesTheNextFilesFormat() throws {
        var engine = Engine(Self.machine(pause: 2))
        // Items: basmala (8 s), 112:1 (10 s), pause (2 s), 112:2…: 19.5 s is 1.5 s into the pause after 112:1.
        engine.start(at: try engine.machine.target(of: .time(seconds: 19.5)))
        #expect(engine.machine.heard == PlanPosition(index: 2, offset: 150))
        engine.allReady()
        #expect(engine.prepared.first == 3, "112:2's file is opened ahead to give the silence a format")
        #expect(engine.opens == [PlanPosition(index: 2, offset: 150)])
    }

    // MARK: - Pause, resume, next, prev

    @Test func aPauseIsExactlyWhereResumeStarts() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.write(1250)  // the device holds 300
        try engine.command(.pause)
        let expected = PlanPosition(index: 1, offset: 150)  // 1250 − 300 = 950: 150 into 112:1 (after the basmala's 800)
        #expect(engine.machine.heard == expected)
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 1), offsetSamples: 150, rate: 100, reason: .pause))
        #expect(engine.state == .paused)
        try engine.command(.resume)
        #expect(engine.opens.last == expected)
    }

    @Test func nextWhilePausedMovesThePauseAndResumePlaysFromThere() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.write(1250)
        try engine.command(.pause)
        try engine.command(.next)
        #expect(engine.machine.heard == PlanPosition(index: 2))
        #expect(engine.records.last?.ayah == AyahRef(unchecked: 112, 2))
        #expect(engine.records.last?.reason == .seek)
        try engine.command(.resume)
        #expect(engine.opens.last == PlanPosition(index: 2))
    }

    @Test func seekThenNextWhilePausedGoesToTheAyahAfterTheSeek() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        try engine.command(.pause)
        try engine.command(.seek(.time(seconds: 30)))  // 3000 frames: 112:3 (starts at 2900)
        #expect(engine.machine.heard == PlanPosition(index: 3, offset: 100))
        try engine.command(.next)
        #expect(engine.machine.heard == PlanPosition(index: 4))
        try engine.command(.resume)
        #expect(engine.opens.last == PlanPosition(index: 4))
    }

    @Test(arguments: [
        (0.5, 0, 0),  // in 112:1's group (its basmala), the first: its start
        (12.0, 1, 0),  // 12 s into 112:1's group (basmala and ayah) → restart it
        (18.5, 2, 0),  // 0.5 s into 112:2 (starts at 18 s) → 112:1's group
        (21.0, 2, 2),  // 3 s into 112:2 → restart 112:2
    ] as [(Double, Int, Int)])
    func previousRestartsOrGoesBack(at seconds: Double, heardIndex: Int, target: Int) throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        try engine.command(.pause)
        try engine.command(.seek(.time(seconds: seconds)))
        #expect(engine.machine.heard.index == heardIndex)
        try engine.command(.previous)
        #expect(engine.machine.heard == PlanPosition(index: target))
    }

    @Test func nextFromTheLastAyahIsRefused() throws {
        var engine = Engine(Self.machine(repeats: 2))
        engine.start()
        engine.allReady()
        #expect(engine.machine.hasNext)
        try engine.command(.seek(.ayah(AyahRef(unchecked: 112, 4))))
        #expect(!engine.machine.hasNext, "the last ayah's first recitation: its second is not a next ayah")
        #expect(engine.machine.heard.index + 1 < engine.machine.plan.items.count)
        #expect(throws: TartilError.usage("112:4 is the last ayah of what is playing (112:1-4)")) { try engine.command(.next) }
        #expect(engine.state == .playing)
    }

    // MARK: - Seeks

    @Test(arguments: [
        (SeekTarget.time(seconds: 0), PlanPosition(index: 0)),
        (.time(seconds: 8), PlanPosition(index: 1)),
        (.time(seconds: 8.004), PlanPosition(index: 1, offset: 0)),  // round(800.4)
        (.time(seconds: 8.005), PlanPosition(index: 1, offset: 1)),  // round(800.5) = 801
        (.fraction(0.5), PlanPosition(index: 2, offset: 900)),  // 2700 of 5400
        (.ayah(AyahRef(unchecked: 112, 3)), PlanPosition(index: 3)),
        (.offset(seconds: 5), PlanPosition(index: 1, offset: 0)),  // from 3 s
        (.offset(seconds: -10), PlanPosition(index: 0)),
    ])
    func seekTargetsLandOnTheRoundedSample(target: SeekTarget, expected: PlanPosition) throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        try engine.command(.pause)
        try engine.command(.seek(.time(seconds: 3)))
        try engine.command(.seek(target))
        #expect(engine.machine.heard == expected)
    }

    @Test(arguments: [
        (SeekTarget.time(seconds: 54), "0:54 is past the end of surah 112, which lasts 0:54"),
        (.time(seconds: 99 * 60), "1:39:00 is past the end of surah 112, which lasts 0:54"),
        (.time(seconds: 112 * 60 + 3), "1:52:03 is past the end of surah 112, which lasts 0:54; for ayah 112:3 write 'ayah 112:3'"),
        (.offset(seconds: 60), "+1:00 goes past the end of what is playing (0:54 are left)"),
        (.fraction(1), "100% is the end of what is playing: nothing is left to play there"),
        (.ayah(AyahRef(unchecked: 2, 255)), "2:255 is not in what is playing (112:1-4)"),
    ])
    func seeksPastTheEndAreRefusedAndChangeNothing(target: SeekTarget, message: String) throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        let before = engine.machine.heard
        let records = engine.records.count
        #expect(throws: TartilError.usage(message)) { try engine.command(.seek(target)) }
        #expect(engine.machine.heard == before)
        #expect(engine.records.count == records)
        #expect(engine.state == .playing)
    }

    @Test func aSeekWhilePlayingDropsTheDevicesSoundAndOpensThere() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.write(250)
        try engine.command(.seek(.time(seconds: 20)))
        #expect(engine.unplayed == 0)
        #expect(engine.opens.last == PlanPosition(index: 2, offset: 200))
        #expect(!engine.buffered, "a seek to cached files never says buffering")
    }

    /// A seek opened an item whose bytes the loader had let go just before (the engine learns it at the open):
    /// the item waits for them again instead of staying "open" with nothing to play (a hang found under load).
    @Test func anOpenWhoseBytesWereLetGoWaitsForThemAgain() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        try engine.command(.seek(.ayah(AyahRef(unchecked: 112, 3))))
        #expect(engine.opens.last == PlanPosition(index: 3))
        engine.open = nil
        engine.wanted = []
        engine.send(.openedFileGone(AyahRef(unchecked: 112, 3)))
        #expect(!engine.machine.isOpen)
        #expect(engine.wanted.first == AyahRef(unchecked: 112, 3), "asked for again")
        engine.send(.fileReady(AyahRef(unchecked: 112, 3)))
        #expect(engine.opens.last == PlanPosition(index: 3) && engine.opens.count == 3)
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
    }

    // MARK: - Ending

    @Test func playingToTheEndFinishesAndRecordsTheEnd() {
        var engine = Engine(Self.machine(pause: 1))
        engine.start()
        engine.allReady()
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 4), offsetSamples: 0, rate: 100, reason: .end))
        #expect(engine.records.filter { $0.reason == .ayahStart }.map(\.ayah.ayah) == [1, 2, 3, 4])
    }

    @Test func skippedAyatAreNamedAsRangesAndCapped() {
        func ayah(_ surah: Int, _ number: Int) -> AyahRef { AyahRef(unchecked: surah, number) }
        #expect(PlaybackMachine.skippedMessage([]) == nil)
        #expect(PlaybackMachine.skippedMessage([(ayah(112, 2), "HTTP 404")]) == "1 ayah could not be played: 112:2 (HTTP 404)")
        #expect(
            PlaybackMachine.skippedMessage((48...110).map { (ayah(18, $0), "mirror 1: HTTP 404") })
                == "63 ayat could not be played: 18:48-110 (mirror 1: HTTP 404)")
        // Runs break on a gap, a new surah or another reason; they are named in order, whatever order they came in.
        #expect(
            PlaybackMachine.skippedMessage([(ayah(2, 5), "x"), (ayah(1, 7), "x"), (ayah(2, 1), "x"), (ayah(2, 2), "y"), (ayah(2, 3), "y")])
                == "5 ayat could not be played: 1:7 (x); 2:1 (x); 2:2-3 (y); 2:5 (x)")
        let scattered = (1...20).map { (ayah(2, $0 * 2), "HTTP 500") }
        #expect(
            PlaybackMachine.skippedMessage(scattered)
                == "20 ayat could not be played: " + (1...8).map { "2:\($0 * 2) (HTTP 500)" }.joined(separator: "; ") + "; and 12 more")
    }

    @Test func aPlayThatFailsIsNeverRecordedAsFinished() {
        var engine = Engine(Self.machine(pause: 0.5, repeats: 2))
        engine.start()
        for file in [AyahRef(unchecked: 1, 1)] + (1...4).map({ AyahRef(unchecked: 112, $0) }) {
            engine.send(.fileFailed(file, reason: "HTTP 404"))
        }
        #expect(engine.ended?.0 == .failed)
        // The basmala is named as the basmala, not as 112:1 (whose own failure follows).
        #expect(engine.ended?.1 == "the basmala (1:1) of surah 112 could not be played: HTTP 404; 4 ayat could not be played: 112:1-4 (HTTP 404)")
        #expect(engine.records.isEmpty, "nothing was heard: nothing is recorded (not even a stop)")
    }

    @Test func aSkippedLastAyahEndsFailedWhereListeningStopped() {
        var engine = Engine(Self.machine())
        engine.start()
        for file in [AyahRef(unchecked: 1, 1)] + (1...3).map({ AyahRef(unchecked: 112, $0) }) { engine.send(.fileReady(file)) }
        engine.send(.fileFailed(AyahRef(unchecked: 112, 4), reason: "HTTP 404"))
        engine.playToEnd()
        #expect(engine.ended?.0 == .failed)
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 3), offsetSamples: 1200, rate: 100, reason: .stop))
    }

    @Test func aSkippedMiddleAyahIsReportedAndTheRestFinishes() {
        var engine = Engine(Self.machine())
        engine.start()
        engine.send(.fileFailed(AyahRef(unchecked: 112, 2), reason: "HTTP 404"))
        engine.allReady(except: [AyahRef(unchecked: 112, 2)])
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(engine.machine.skipped.map(\.ayah) == [AyahRef(unchecked: 112, 2)])
        #expect(engine.notices.contains(.skipped(AyahRef(unchecked: 112, 2), reason: "HTTP 404")))
    }

    @Test func renderStopsAtTheFirstFileThatCannotBeHad() {
        var engine = Engine(Self.machine(stopOnSkip: true))
        engine.start()
        engine.send(.fileFailed(AyahRef(unchecked: 1, 1), reason: "HTTP 404"))
        #expect(engine.ended?.0 == .failed)
        #expect(engine.ended?.1 == "the basmala (1:1) of surah 112 cannot be played: HTTP 404")
    }

    /// A basmala that cannot be had is skipped as the basmala (its own notice and list), the surah plays on, and
    /// the message at the end names it as the basmala of its surah, never as the surah's first ayah.
    @Test func aFailedBasmalaIsNamedAsTheBasmala() {
        var engine = Engine(Self.machine())
        engine.start()
        engine.send(.fileFailed(AyahRef(unchecked: 1, 1), reason: "mirror 1: cannot connect"))
        engine.allReady(except: [AyahRef(unchecked: 1, 1)])
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(engine.machine.skipped.isEmpty)
        #expect(engine.machine.skippedBasmala.map(\.ayah) == [AyahRef(unchecked: 112, 1)])
        #expect(engine.notices.contains(.skippedBasmala(AyahRef(unchecked: 112, 1), reason: "mirror 1: cannot connect")))
        #expect(!engine.notices.contains(where: { if case .skipped = $0 { true } else { false } }))
        #expect(
            PlaybackMachine.skippedMessage(engine.machine.skipped, basmala: engine.machine.skippedBasmala)
                == "the basmala (1:1) of surah 112 could not be played: mirror 1: cannot connect")
        #expect(
            PlaybackMachine.skippedMessage([], basmala: [(AyahRef(unchecked: 67, 1), "x"), (AyahRef(unchecked: 36, 1), "x"), (AyahRef(unchecked: 2, 1), "y")])
                == "the basmala (1:1) of surah 2 could not be played: y; the basmala (1:1) of surahs 36, 67 could not be played: x")
    }

    @Test func stopRecordsWhereTheListenerWas() throws {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.write(1500)  // 300 held: 1200 heard = 112:1 +400
        try engine.command(.stop)
        #expect(engine.ended?.0 == .stopped)
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 1), offsetSamples: 400, rate: 100, reason: .stop))
        #expect(try engine.machine.on(.pause).isEmpty, "an ended machine takes no more commands")
    }

    @Test func aDeviceFailureEndsPlaybackFailed() {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.write(250)
        engine.send(.outputFailed("the device vanished"))
        #expect(engine.ended?.0 == .failed)
        #expect(engine.machine.endMessage == "the device vanished")
        #expect(!engine.machine.endIsUsage)
    }

    // MARK: - Time

    @Test func pausesAreRoundedSecondsAtTheRecitationsRate() {
        #expect(PlaybackMachine.silence(seconds: 0.3333, rate: 22050) == 7349)
        #expect(PlaybackMachine.silence(seconds: 2, rate: 44100) == 88200)
        let machine = Self.machine(pause: 0.3333, rates: [100, 22050, 100, 100, 100])
        #expect(machine.timeline.lengths[2].samples == 7349)
        #expect(machine.timeline.lengths[2].rate == 22050)
    }

    @Test func aPlanThatMixesRatesHasTheRightLengthAndSeeks() throws {
        // The basmala at 100 Hz (8 s), 112:1 at 200 Hz (1000 frames: 5 s), the rest at 100 Hz.
        var engine = Engine(Self.machine(rates: [100, 200, 100, 100, 100]))
        #expect(engine.machine.timeline.seconds(in: 0..<5) == 8 + 5 + 11 + 12 + 13)
        engine.start()
        engine.allReady()
        try engine.command(.seek(.time(seconds: 10)))
        #expect(engine.machine.heard == PlanPosition(index: 1, offset: 400))  // 2 s into 112:1 at 200 Hz
        try engine.command(.seek(.time(seconds: 14)))
        #expect(engine.machine.heard == PlanPosition(index: 2, offset: 100))  // 1 s into 112:2
    }

    @Test func aFileLongerThanItsTableTakesItsDecodedLength() {
        var engine = Engine(Self.machine())
        engine.start()
        engine.allReady()
        engine.left += 40  // the basmala decodes to 840 frames
        while engine.opens.count < 2 { engine.write(250) }
        #expect(engine.machine.timeline.lengths[0].samples == 840)
        #expect(engine.machine.timeline.start(of: 1) == 840)
    }
}

/// Thousands of seeded random runs of commands and engine reports, checked against what must always hold.
@Suite struct PlaybackMachinePropertyTests {
    @Test(arguments: [1, 2, 3, 4])
    func randomRunsKeepTheInvariants(seedGroup: UInt64) throws {
        var random = SeededRandom(seed: 0x5EED_0000 + seedGroup)
        for run in 0..<500 {
            try Self.check(run: run, seedGroup: seedGroup, random: &random)
        }
    }

    static func check(run: Int, seedGroup: UInt64, random: inout SeededRandom) throws {
        let pause = [0, 0.5, 2][Int.random(in: 0...2, using: &random)]
        let repeats = Int.random(in: 1...2, using: &random)
        let rates = (0..<5).map { _ in [100, 100, 200][Int.random(in: 0...2, using: &random)] }
        var engine = Engine(PlaybackMachineTests.machine(pause: pause, repeats: repeats, rates: rates))
        let plan = engine.machine.plan
        let files = Array(Set(plan.items.compactMap(\.file))).sorted()
        let startAt: PlanPosition? = Bool.random(using: &random)
            ? PlanPosition(index: Int.random(in: 0..<plan.items.count, using: &random), offset: 0) : nil
        engine.start(at: startAt)
        var where_ = "run \(run) of group \(seedGroup) (pause \(pause), repeats \(repeats), rates \(rates))"
        var expectedOpenAfterResume: PlanPosition?
        var failedFiles = Set<AyahRef>()
        var ends = 0

        for step in 0..<400 {
            where_ += "\n step \(step):"
            let before = engine.opens.count
            let endsBefore = engine.ended == nil ? 0 : 1
            let choice = Int.random(in: 0...99, using: &random)
            let wasPaused = engine.state == .paused
            switch choice {
            case 0..<40:
                if engine.draining {
                    where_ += " drained"
                    engine.write(0)
                } else {
                    let frames = Int.random(in: 1...600, using: &random)
                    where_ += " write \(frames)"
                    engine.write(frames)
                }
            case 40..<60:
                let file = files[Int.random(in: 0..<files.count, using: &random)]
                let kind = Int.random(in: 0...19, using: &random)
                if kind == 0 {
                    where_ += " failed \(file)"
                    failedFiles.insert(file)
                    expectedOpenAfterResume = nil
                    engine.send(.fileFailed(file, reason: "gone"))
                } else if kind < 4 {
                    where_ += " downloading \(file)"
                    engine.send(.fileDownloading(file))
                } else if !failedFiles.contains(file) {
                    where_ += " ready \(file)"
                    engine.send(.fileReady(file))
                }
            default:
                let commands: [PlaybackMachine.Command] = [
                    .pause, .resume, .toggle, .next, .previous, .seek(.time(seconds: Double.random(in: 0...70, using: &random))),
                    .seek(.offset(seconds: Double.random(in: -20...20, using: &random))),
                    .seek(.fraction(Double.random(in: 0...1, using: &random))),
                    .seek(.ayah(AyahRef(unchecked: 112, Int.random(in: 1...4, using: &random)))),
                    Int.random(in: 0...30, using: &random) == 0 ? .stop : .pause,
                ]
                let command = commands[Int.random(in: 0..<commands.count, using: &random)]
                where_ += " \(command)"
                engine.send(.heard(unplayed: engine.unplayed))
                let heardBefore = engine.machine.heard
                expectedOpenAfterResume = nil
                do {
                    engine.run(try engine.machine.on(command))
                } catch {
                    #expect(error.code == .usage, "\(where_)")
                    #expect(engine.machine.heard == heardBefore, "a refused command moves nothing: \(where_)")
                }
                if wasPaused && engine.state == .paused {
                    switch command {
                    case .next:
                        let group = plan.group(containing: min(heardBefore.index, plan.items.count - 1))
                        if group.upperBound < plan.items.count {
                            #expect(engine.machine.heard == PlanPosition(index: group.upperBound), "paused next: \(where_)")
                        }
                    case .seek(.ayah(let ayah)):
                        #expect(engine.machine.heard == PlanPosition(index: plan.firstItem(of: ayah)!), "paused seek: \(where_)")
                    default: break
                    }
                }
                if wasPaused && (command == .resume || command == .toggle) && engine.state != .paused && !engine.state.isEnded {
                    expectedOpenAfterResume = engine.machine.heard
                }
            }
            // Invariants.
            let machine = engine.machine
            #expect(machine.heard.index <= plan.items.count, "\(where_)")
            if machine.heard.index < plan.items.count {
                #expect(machine.heard.offset <= machine.timeline.lengths[machine.heard.index].samples, "\(where_)")
            }
            if machine.isOpen { #expect(machine.heard <= machine.head, "heard is never ahead of what was written: \(where_)") }
            if engine.state == .paused { #expect(engine.opens.count == before, "nothing opens while paused: \(where_)") }
            if let expected = expectedOpenAfterResume, engine.opens.count > before {
                let open = engine.opens[before]
                let atItsEnd = expected.offset >= machine.timeline.lengths[expected.index].samples
                let itsFileFailed = plan.items[expected.index].file.map(failedFiles.contains) ?? false
                #expect(open == expected || ((atItsEnd || itsFileFailed) && open.index > expected.index && open.offset == 0),
                    "resume starts exactly where the pause was: opened \(open), paused at \(expected); \(where_.suffix(400))")
                expectedOpenAfterResume = nil
            }
            for open in engine.opens[before...] {
                if let file = plan.items[open.index].file { #expect(!failedFiles.contains(file), "a failed file never opens: \(where_)") }
            }
            if engine.state == .finished {
                #expect(engine.lastEnded == plan.items.count - 1, "finished only after the last item was written to its end: \(where_)")
                #expect(engine.records.last?.reason == .end, "\(where_)")
            } else {
                #expect(!engine.records.contains { $0.reason == .end }, "no end record unless finished: \(where_)")
            }
            if engine.ended != nil { ends += 1 - endsBefore }
            #expect(engine.state.isEnded == (engine.ended != nil), "\(where_)")
            if engine.ended != nil { break }
            // The last 3,000 characters or more of the story for the messages: cut only once it has doubled, since
            // finding where the last 3,000 begin walks them, and doing that after every step was a fifth of this
            // suite's time.
            if where_.utf8.count > 6000 { where_ = String(where_.suffix(3000)) }
        }
        #expect(ends <= 1)
        // Whatever happened, a run with every file ready and nothing else to do plays to a clean end.
        if engine.ended == nil {
            if engine.state == .paused { try engine.command(.resume) }
            for file in files where !failedFiles.contains(file) { engine.send(.fileReady(file)) }
            engine.playToEnd()
            #expect(engine.ended != nil, "it ends: \(where_)")
            if failedFiles.isEmpty { #expect(engine.ended?.0 == .finished, "\(where_)") }
        }
    }
}
