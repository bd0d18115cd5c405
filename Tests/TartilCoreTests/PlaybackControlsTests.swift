import TestSupport
import Testing

@testable import TartilCore

/// The memorisation controls: how options lay a plan out, how they parse, and what the machine plays with loops,
/// stops, timers and options changed live — down to the frame.
@Suite struct PlaybackControlsTests {
    static func ayat(_ surah: Int, _ range: ClosedRange<Int>) -> [AyahRef] { range.map { AyahRef(unchecked: surah, $0) } }

    /// The plan's items, one word each: `b` basmala, `1`…`n` a recitation of that ayah (`1r` in a review), `p` a
    /// pause, `c` a cycle pause; groups separated by `|`.
    static func shape(_ plan: PlaybackPlan) -> String {
        var text = ""
        for (index, item) in plan.items.enumerated() {
            if index > 0 { text += plan.items[index - 1].group == item.group ? " " : " | " }
            switch item.kind {
            case .basmala: text += "b"
            case .ayah: text += "\(item.ayah.ayah)" + (item.reviewOf == nil ? "" : "r")
            case .pause: text += "p"
            case .cyclePause: text += "c"
            }
        }
        return text
    }

    // MARK: - Layout

    @Test(arguments: [
        (PlaybackOptions(basmala: .off), "1 | 2 | 3 | 4"),
        (PlaybackOptions(), "b 1 | 2 | 3 | 4"),
        (PlaybackOptions(basmala: .off, repeatEach: .times(2), pause: .seconds(1)), "1 p 1 p | 2 p 2 p | 3 p 3 p | 4 p 4 p"),
        (PlaybackOptions(basmala: .off, repeatEach: .forever), "1 | 2 | 3 | 4"),
        (PlaybackOptions(basmala: .off, stepped: Stepped()), "1 | 2 | 1r | 2r | 3 | 1r | 2r | 3r | 4 | 1r | 2r | 3r | 4r"),
        (PlaybackOptions(basmala: .off, stepped: Stepped(window: 2)), "1 | 2 | 1r | 2r | 3 | 2r | 3r | 4 | 3r | 4r"),
        (PlaybackOptions(basmala: .off, stepped: Stepped(window: 3)), "1 | 2 | 1r | 2r | 3 | 1r | 2r | 3r | 4 | 2r | 3r | 4r"),
        // --repeat applies to each new ayah; a review recites each ayah once, each followed by its pause.
        (PlaybackOptions(basmala: .off, repeatEach: .times(2), pause: .multiple(1), stepped: Stepped(window: 2)),
         "1 p 1 p | 2 p 2 p | 1r p | 2r p | 3 p 3 p | 2r p | 3r p | 4 p 4 p | 3r p | 4r p"),
        // The basmala comes before ayah 1 wherever a run of it starts: new, in a review, in each cycle.
        (PlaybackOptions(stepped: Stepped()), "b 1 | 2 | b 1r | 2r | 3 | b 1r | 2r | 3r | 4 | b 1r | 2r | 3r | 4r"),
        (PlaybackOptions(basmala: .off, repeatRange: .times(2), cyclePauseSeconds: 3), "1 | 2 | 3 | 4 c | 1 | 2 | 3 | 4"),
        (PlaybackOptions(repeatRange: .times(3)), "b 1 | 2 | 3 | 4 | b 1 | 2 | 3 | 4 | b 1 | 2 | 3 | 4"),
        (PlaybackOptions(basmala: .off, repeatRange: .forever, cyclePauseSeconds: 3), "1 | 2 | 3 | 4 c"),
    ])
    func optionsLayThePlanOut(options: PlaybackOptions, expected: String) throws {
        let plan = try PlaybackPlan(ayat: Self.ayat(112, 1...4), options: options)
        #expect(Self.shape(plan) == expected, "\(options.summary)")
        // The scrubber spans one cycle's part of a surah; every item's group is one ayah.
        for index in plan.items.indices {
            let span = plan.surahSpan(containing: index)
            #expect(plan.items[span].allSatisfy { $0.cycle == plan.items[index].cycle })
            #expect(Set(plan.items[plan.group(containing: index)].map(\.ayah)).count == 1)
        }
    }

    @Test func pausesAreSizedToTheirOwnRecitation() throws {
        let machine = PlaybackMachineTests.machine(options: .init(basmala: .off, pause: .multiple(0.5)))
        // 112:1-4 last 1000, 1100, 1200, 1300 frames: half of each.
        #expect(machine.timeline.lengths.map(\.samples) == [1000, 500, 1100, 550, 1200, 600, 1300, 650])
        let cycles = PlaybackMachineTests.machine(options: .init(basmala: .off, repeatRange: .times(2), cyclePauseSeconds: 2.5))
        #expect(cycles.timeline.lengths.map(\.samples) == [1000, 1100, 1200, 1300, 250, 1000, 1100, 1200, 1300])
    }

    @Test func aPlanTooLargeToLayOutIsAUsageErrorThatSuggestsInf() {
        let everything = (1...114).flatMap { surah in (1...((try? Catalog.surah(surah))?.ayahCount ?? 1)).map { AyahRef(unchecked: surah, $0) } }
        #expect(throws: TartilError.self) { try PlaybackPlan(ayat: everything, options: .init(repeatEach: .times(99), repeatRange: .times(2))) }
        do {
            _ = try PlaybackPlan(ayat: everything, options: .init(stepped: Stepped()))
            Issue.record("a stepped whole Qur'an has 19 million recitations")
        } catch {
            #expect(error.code == .usage && error.message.contains("inf") && error.message.contains("window"))
        }
        #expect((try? PlaybackPlan(ayat: everything, options: .init(repeatEach: .times(99))))?.items.count == 6236 * 99 + 112)
    }

    // MARK: - Parsing

    @Test func countsPausesAndStepsParse() throws {
        #expect(try RepeatCount.parse("3", for: "--repeat") == .times(3))
        #expect(try RepeatCount.parse("inf", for: "--repeat") == .forever)
        #expect(try RepeatCount.parse("∞", for: "--repeat") == .forever)
        for bad in ["0", "100", "-1", "1.5", "infinity!", "", "3x"] {
            #expect(throws: TartilError.self, "\(bad)") { try RepeatCount.parse(bad, for: "--repeat") }
        }
        #expect(try PauseLength.parse("2", for: "--pause") == .seconds(2))
        #expect(try PauseLength.parse("1.5s", for: "--pause") == .seconds(1.5))
        #expect(try PauseLength.parse("1x", for: "--pause") == .multiple(1))
        #expect(try PauseLength.parse("2.25x", for: "--pause") == .multiple(2.25))
        #expect(try PauseLength.parse("0.5×", for: "--pause") == .multiple(0.5))
        for bad in ["61", "11x", "x", "-1", "1xx", "s", "1e3"] {
            #expect(throws: TartilError.self, "\(bad)") { try PauseLength.parse(bad, for: "--pause") }
        }
        #expect(try Stepped.parse("", for: "--stepped") == Stepped())
        #expect(try Stepped.parse("window=3", for: "--stepped") == Stepped(window: 3))
        #expect(try Stepped.parse("off", for: "--stepped") == nil)
        for bad in ["window=1", "window=", "window=x", "wind=3", "3"] {
            #expect(throws: TartilError.self, "\(bad)") { try Stepped.parse(bad, for: "--stepped") }
        }
        #expect(try PlaybackOptions.Setting.parse(name: "repeat", value: "inf") == .repeatEach(.forever))
        #expect(try PlaybackOptions.Setting.parse(name: "pause", value: "1x") == .pause(.multiple(1)))
        #expect(try PlaybackOptions.Setting.parse(name: "cycle-pause", value: "5s") == .cyclePause(seconds: 5))
        #expect(throws: TartilError.self) { try PlaybackOptions.Setting.parse(name: "speed", value: "1") }
    }

    @Test(arguments: [
        ("20m", StopAfter.seconds(1200)), ("90s", .seconds(90)), ("1h30m", .seconds(5400)), ("1:30:00", .seconds(5400)),
        ("45", .seconds(2700)), ("2.5m", .seconds(150)), ("5 ayat", .ayat(5)), ("1 ayah", .ayat(1)), ("surah", .surah),
        ("juz", .juz), ("JUZ", .juz),
    ])
    func stopAfterParses(text: String, expected: StopAfter) throws {
        #expect(try StopAfter.parse(text, for: "--stop-after") == expected)
    }

    @Test func stopAfterRefusesWhatIsNotAStop() throws {
        #expect(try StopAfter.parse("off", for: "sleep") == nil)
        for bad in ["", "0", "0m", "25h", "5 surahs", "m", "1h30", "5 ayat extra", "-5m", "0 ayat", "1:99", "hms"] {
            #expect(throws: TartilError.self, "\(bad)") { try StopAfter.parse(bad, for: "--stop-after") }
        }
    }

    @Test func loopRequestsParse() throws {
        let one = try LoopRequest.parse(["36:12+3.5-36:12+9"])
        #expect(one == LoopRequest(start: .ayah(AyahRef(unchecked: 36, 12), offset: 3.5), end: .ayah(AyahRef(unchecked: 36, 12), offset: 9)))
        #expect(try LoopRequest.parse(["1:05", "1:12", "5"]) == LoopRequest(start: .time(seconds: 65), end: .time(seconds: 72), passes: 5))
        #expect(try LoopRequest.parse(["1:05-1:12"]) == LoopRequest(start: .time(seconds: 65), end: .time(seconds: 72)))
        #expect(try LoopRequest.parse(["2:255", "2:256", "inf"]).passes == nil)
        #expect(try LoopRequest.parse(["ayah 36:12-14"]).end == .ayah(AyahRef(unchecked: 36, 14), offset: nil))
        #expect(try LoopRequest.parse(["ayah", "2:255", "ayah", "2:257", "2"]) == LoopRequest(
            start: .ayah(AyahRef(unchecked: 2, 255), offset: nil), end: .ayah(AyahRef(unchecked: 2, 257), offset: nil), passes: 2))
        #expect(try LoopRequest.parse(["36:12-36:14"]) == LoopRequest(start: .time(seconds: 2172), end: .time(seconds: 2174)))  // M:SS is a time, as for seek
        #expect(try LoopRequest.parse(["yasin:12+1", "yasin:12+2"]).start == .ayah(AyahRef(unchecked: 36, 12), offset: 1))
        for bad in [["1:05"], ["a", "b"], ["1:05", "1:10", "0"], ["1:05", "1:10", "3", "4"], ["+3", "+5"], ["36:12+x", "36:13"], ["45%", "50%"]] {
            #expect(throws: TartilError.self, "\(bad)") { try LoopRequest.parse(bad) }
        }
    }

    @Test func theFadeFallsAsTheSquareOfTheTimeLeft() {
        #expect(StopAfter.fadeGain(framesLeft: 400, fadeFrames: 300) == 1)
        #expect(StopAfter.fadeGain(framesLeft: 300, fadeFrames: 300) == 1)
        #expect(StopAfter.fadeGain(framesLeft: 150, fadeFrames: 300) == 0.25)
        #expect(StopAfter.fadeGain(framesLeft: 0, fadeFrames: 300) == 0)
        #expect(StopAfter.fadeGain(framesLeft: -5, fadeFrames: 300) == 0)
    }

    // MARK: - The machine

    /// Plays to the end (or `frames` at most) with every file here; the engine's output as items.
    static func play(_ machine: PlaybackMachine, frames: Int = 1_000_000, commands: [(atFrame: Int, PlaybackMachine.Command)] = []) throws -> Engine {
        var engine = Engine(machine)
        engine.start()
        engine.allReady()
        var written = 0
        var pending = commands
        while engine.ended == nil && written < frames && (engine.open != nil || engine.draining) {
            if let next = pending.first, written >= next.atFrame {
                pending.removeFirst()
                try engine.command(next.1)
                continue
            }
            let before = engine.output.reduce(0) { $0 + $1.frames }
            engine.write(min(250, frames - written, pending.first.map { $0.atFrame - written } ?? 250))
            written += engine.output.reduce(0) { $0 + $1.frames } - before
            if engine.draining && engine.open == nil {
                engine.draining = false
                engine.unplayed = 0
                engine.send(.drained)
            }
        }
        return engine
    }

    static func pieces(_ engine: Engine) -> [String] {
        engine.output.map { "\($0.index)@\($0.start)+\($0.frames)" }
    }

    @Test func anAyahRepeatedForEverLoopsItsRecitationNotItsBasmalaUntilNext() throws {
        let machine = PlaybackMachineTests.machine(options: .init(repeatEach: .forever))
        let engine = try Self.play(machine, frames: 800 + 3000 + 500, commands: [(3800, .next)])
        // basmala (800), 112:1 three times, then next: 112:2, which repeats in turn.
        #expect(Self.pieces(engine).prefix(4) == ["0@0+800", "1@0+1000", "1@0+1000", "1@0+1000"])
        #expect(engine.output.last?.index == 2)
        #expect(engine.ended == nil)
        // Its ayah start is recorded once, however many times it repeats.
        #expect(engine.records.filter { $0.reason == .ayahStart && $0.ayah == AyahRef(unchecked: 112, 1) }.count == 1)
    }

    @Test func aRangeRepeatedForEverGoesBackToItsStart() throws {
        let machine = PlaybackMachineTests.machine(options: .init(basmala: .off, repeatRange: .forever, cyclePauseSeconds: 1))
        let engine = try Self.play(machine, frames: 4600 + 100 + 1000)
        #expect(Self.pieces(engine) == ["0@0+1000", "1@0+1100", "2@0+1200", "3@0+1300", "4@0+100", "0@0+1000"])
    }

    @Test func anABLoopPlaysExactlyItsFramesThenGoesOnPastB() throws {
        var machine = PlaybackMachineTests.machine(options: .init(basmala: .off))
        // 112:2 from 2.5 s to 7.25 s (frames 250 to 725 at 100 Hz), three passes.
        _ = machine.start(at: nil)
        let request = LoopRequest(start: .ayah(AyahRef(unchecked: 112, 2), offset: 2.5), end: .ayah(AyahRef(unchecked: 112, 2), offset: 7.25), passes: 3)
        var engine = Engine(machine)
        engine.allReady()
        try engine.command(.loop(request))
        engine.playToEnd()
        #expect(Self.pieces(engine) == ["1@250+475", "1@250+475", "1@250+850", "2@0+1200", "3@0+1300"])
        #expect(engine.ended?.0 == .finished)
        #expect(engine.machine.loop == nil)
    }

    @Test func anABLoopAcrossAyatUntilLoopOff() throws {
        let machine = PlaybackMachineTests.machine(options: .init(basmala: .off))
        let request = LoopRequest(start: .ayah(AyahRef(unchecked: 112, 1), offset: 9), end: .ayah(AyahRef(unchecked: 112, 2), offset: nil))
        var engine = try Self.play(machine, frames: 2400, commands: [(0, .loop(request))])
        #expect(Self.pieces(engine) == ["0@900+100", "1@0+1100", "0@900+100", "1@0+1100"])
        try engine.command(.loop(nil))
        engine.playToEnd()
        #expect(engine.machine.loop == nil)
        #expect(engine.ended?.0 == .finished)
        #expect(engine.output.suffix(2).map(\.index) == [2, 3], "after loop off, playback goes on past B")
    }

    @Test func loopEndsOutsideThePlanOrBackwardsAreRefused() throws {
        var engine = Engine(PlaybackMachineTests.machine(options: .init(basmala: .off)))
        engine.start()
        engine.allReady()
        for bad in [
            LoopRequest(start: .ayah(AyahRef(unchecked: 112, 3), offset: nil), end: .ayah(AyahRef(unchecked: 112, 2), offset: nil)),
            LoopRequest(start: .ayah(AyahRef(unchecked: 113, 1), offset: nil), end: .ayah(AyahRef(unchecked: 113, 2), offset: nil)),
            LoopRequest(start: .ayah(AyahRef(unchecked: 112, 1), offset: 11), end: .ayah(AyahRef(unchecked: 112, 2), offset: nil)),
            LoopRequest(start: .time(seconds: 10), end: .time(seconds: 5)),
            LoopRequest(start: .time(seconds: 10), end: .time(seconds: 50)),
        ] {
            #expect(throws: TartilError.self, "\(bad)") { try engine.command(.loop(bad)) }
        }
        #expect(engine.machine.loop == nil)
    }

    @Test func theLKeyMarksAThenBThenClears() throws {
        var engine = Engine(PlaybackMachineTests.machine(options: .init(basmala: .off)))
        engine.capacity = 0  // what is written is heard at once
        engine.start()
        engine.allReady()
        engine.write(300)
        try engine.command(.markLoop)
        #expect(engine.machine.loopMark == PlanPosition(index: 0, offset: 300))
        engine.write(1000)
        try engine.command(.markLoop)
        #expect(engine.machine.loop == PlaybackMachine.Loop(start: PlanPosition(index: 0, offset: 300), endIndex: 1, endOffset: 300, passesLeft: nil))
        #expect(engine.machine.heard == PlanPosition(index: 0, offset: 300))
        try engine.command(.markLoop)
        #expect(engine.machine.loop == nil && engine.machine.loopMark == nil)
    }

    @Test func stopAfterAyatEndsAtTheEndOfTheLastAndRecordsItAsHeardToItsEnd() throws {
        let machine = PlaybackMachineTests.machine(options: .init(repeatEach: .times(2)))
        let engine = try Self.play(machine, commands: [(0, .stopAfter(.ayat(2)))])
        // basmala, 112:1 twice, 112:2 twice.
        #expect(Self.pieces(engine) == ["0@0+800", "1@0+1000", "2@0+1000", "3@0+1100", "4@0+1100"])
        #expect(engine.ended?.0 == .stopped)
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 2), offsetSamples: 1100, rate: 100, reason: .end))
    }

    @Test func stopAfterTheSurahOrJuzStopsAtItsEnd() throws {
        let ayat = Self.ayat(77, 49...50) + Self.ayat(78, 1...2)  // juz 29 ends with surah 77; juz 30 starts with 78
        let plan = try PlaybackPlan(ayat: ayat, options: .init(basmala: .off))
        let timeline = PlaybackMachine.timeline(for: plan) { _ in Timeline.Length(samples: 100, rate: 100) }
        for stop in [StopAfter.surah, .juz] {
            let engine = try Self.play(PlaybackMachine(plan: plan, timeline: timeline), commands: [(0, .stopAfter(stop))])
            #expect(Self.pieces(engine) == ["0@0+100", "1@0+100"], "\(stop)")
            #expect(engine.ended?.0 == .stopped)
        }
    }

    @Test func theSleepTimerStopsOnItsFrameFadesAndRecordsWhereTheFadeBegan() throws {
        let machine = PlaybackMachineTests.machine(options: .init(basmala: .off, repeatEach: .forever))
        var engine = Engine(machine)
        engine.start()
        engine.allReady()
        try engine.command(.stopAfter(.seconds(25)))
        var fades: [PlaybackMachine.Fade] = []
        for _ in 0..<100 where engine.ended == nil {
            if let fade = engine.machine.fade, fade.framesLeft <= fade.fadeFrames { fades.append(fade) }
            engine.write(100)
            if engine.draining && engine.open == nil {
                engine.draining = false
                engine.send(.drained)
            }
        }
        #expect(engine.output.reduce(0) { $0 + $1.frames } == 2500)
        #expect(engine.ended?.0 == .stopped)
        #expect(fades.first?.fadeFrames == 300)
        #expect(fades.first.map { $0.gain(at: $0.framesLeft - 150) } == 0.25)
        // 2500 frames of 112:1 (1000 frames) repeated: the fade began 300 frames before, at 200 into the third.
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 1), offsetSamples: 200, rate: 100, reason: .stop))
    }

    /// The timer ran out and its fade is playing out: a new timer (or `sleep off`) plays on from what is heard
    /// instead of stopping anyway.
    @Test(arguments: [25.0, nil] as [Double?]) func aNewTimerDuringTheLastFadePlaysOn(seconds: Double?) throws {
        var engine = Engine(PlaybackMachineTests.machine(options: .init(basmala: .off, repeatEach: .forever)))
        engine.capacity = 100
        engine.start()
        engine.allReady()
        try engine.command(.sleep(seconds: 25))
        engine.write(2500)
        engine.open = nil
        engine.send(.sourceEnded)  // the timer's last frame: the device plays out the fade
        #expect(engine.draining)
        try engine.command(.sleep(seconds: seconds))
        #expect(!engine.draining && engine.machine.isOpen)
        #expect(engine.opens.last == PlanPosition(index: 0, offset: 400), "on from what is heard")
        #expect(engine.machine.sleepSecondsLeft == seconds)
    }

    /// An ayah repeated for ever whose file cannot be had is skipped for the next ayah (not tried again and
    /// again until playback fails).
    @Test func anAyahRepeatedForEverThatCannotPlayMovesOnToTheNext() throws {
        var engine = Engine(PlaybackMachineTests.machine(options: .init(basmala: .off, repeatEach: .forever)))
        engine.start()
        engine.send(.fileFailed(AyahRef(unchecked: 112, 1), reason: "HTTP 404"))
        engine.allReady(except: [AyahRef(unchecked: 112, 1)])
        #expect(engine.ended == nil)
        #expect(engine.opens == [PlanPosition(index: 1)])
        #expect(engine.machine.skipped.map(\.ayah) == [AyahRef(unchecked: 112, 1)])
    }

    @Test func changingOptionsLiveKeepsTheListenerOnTheSameAyahAndSample() throws {
        var engine = Engine(PlaybackMachineTests.machine(options: .init()))
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(800 + 1000 + 400)  // 400 frames into 112:2
        try engine.command(.set(.repeatEach(.times(3))))
        #expect(engine.machine.plan.items[engine.machine.heard.index].ayah == AyahRef(unchecked: 112, 2))
        #expect(engine.machine.heard.offset == 400)
        #expect(engine.opens.last == engine.machine.heard)
        try engine.command(.set(.pause(.multiple(1))))
        #expect(engine.machine.heard.offset == 400)
        #expect(engine.machine.timeline.lengths[engine.machine.heard.index + 1].samples == 1100)
        try engine.command(.set(.stepped(Stepped(window: 2))))
        #expect(engine.machine.plan.items[engine.machine.heard.index].ayah == AyahRef(unchecked: 112, 2))
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
    }

    @Test func reviewsRecordTheAyahBeingMemorised() throws {
        let machine = PlaybackMachineTests.machine(options: .init(basmala: .off, stepped: Stepped()))
        let engine = try Self.play(machine)
        let starts = engine.records.filter { $0.reason == .ayahStart }.map(\.ayah.ayah)
        #expect(starts == [1, 2, 3, 4])
        #expect(engine.records.last == PlaybackMachine.Record(ayah: AyahRef(unchecked: 112, 4), offsetSamples: 0, rate: 100, reason: .end))
    }

    /// Any finite combination of options, played to its end with a small device: everything the plan lays out is
    /// written once, in order, frame for frame, and the state ends finished.
    @Test(arguments: 0..<4) func randomOptionsPlayTheirWholeTimeline(seedGroup: Int) throws {
        var random = SeededRandom(seed: UInt64(1200 + seedGroup))
        for _ in 0..<50 {
            var options = PlaybackOptions(basmala: random.below(2) == 0 ? .auto : .off)
            options.repeatEach = .times(1 + random.below(3))
            options.repeatRange = .times(1 + random.below(3))
            options.pause = random.below(2) == 0 ? .seconds(Double(random.below(30)) / 10) : .multiple(Double(random.below(12)) / 4)
            options.cyclePauseSeconds = Double(random.below(3))
            options.stepped = [nil, Stepped(), Stepped(window: 2 + random.below(3))][random.below(3)]
            let machine = PlaybackMachineTests.machine(options: options)
            var engine = Engine(machine)
            engine.capacity = random.below(600)
            engine.start()
            engine.allReady()
            engine.playToEnd(limit: 100_000)
            #expect(engine.ended?.0 == .finished, "\(options.summary)")
            let expected = machine.timeline.lengths.enumerated().filter { $0.element.samples > 0 }.map { "\($0.offset)@0+\($0.element.samples)" }
            #expect(Self.pieces(engine) == expected, "\(options.summary)")
            #expect(engine.records.allSatisfy { $0.ayah.surah == 112 })
        }
    }
}
