import Testing

@testable import TartilCore

/// What the journal gets from the machine: exactly what was heard and what the listener asked, and only that.
@Suite struct PlaybackMachinePositionTests {
    typealias Record = PlaybackMachine.Record

    static func ayah(_ number: Int) -> AyahRef { AyahRef(unchecked: 112, number) }

    /// 112:1-4 without the basmala: items 0-3 (1000, 1100, 1200, 1300 frames at 100 Hz).
    static func plain(repeatEach: RepeatCount = .times(1), stopOnSkip: Bool = false) -> PlaybackMachine {
        PlaybackMachineTests.machine(options: .init(basmala: .off, repeatEach: repeatEach), stopOnSkip: stopOnSkip)
    }

    // MARK: - The first ayah start waits for sound

    @Test func theFirstAyahStartIsRecordedOnlyOnceSoundIsHeard() throws {
        var engine = Engine(PlaybackMachineTests.machine())
        engine.start()
        engine.allReady()
        #expect(engine.opens == [PlanPosition(index: 0)])
        engine.send(.heard(unplayed: 0))
        engine.send(.wrote(frames: 0, unplayed: 0))
        #expect(engine.records.isEmpty, "opened, but nothing written yet")
        engine.write(1)
        #expect(engine.records.isEmpty, "written, but still in the device's buffer")
        engine.send(.heard(unplayed: 0))
        #expect(engine.records == [Record(ayah: Self.ayah(1), offsetSamples: 0, rate: 100, reason: .ayahStart)])
        engine.playToEnd()
        #expect(engine.records.filter { $0.reason == .ayahStart }.map(\.ayah.ayah) == [1, 2, 3, 4])
    }

    /// Offline and uncached (every file fails), no sound device, `render` stopping at its first missing file:
    /// nothing was heard, so nothing is recorded.
    @Test func aPlayThatFailsBeforeAnySoundRecordsNothing() throws {
        var offline = Engine(PlaybackMachineTests.machine())
        offline.start()
        for file in [AyahRef(unchecked: 1, 1)] + (1...4).map(Self.ayah) { offline.send(.fileFailed(file, reason: "no network")) }
        #expect(offline.ended?.0 == .failed)
        #expect(offline.records.isEmpty)

        var noDevice = Engine(PlaybackMachineTests.machine())
        noDevice.start()
        noDevice.allReady()
        noDevice.send(.outputFailed("cannot open the ALSA device"))
        #expect(noDevice.ended?.0 == .failed)
        #expect(noDevice.records.isEmpty)

        var render = Engine(PlaybackMachineTests.machine(stopOnSkip: true))
        render.start()
        render.send(.fileFailed(AyahRef(unchecked: 1, 1), reason: "HTTP 404"))
        #expect(render.ended?.0 == .failed)
        #expect(render.records.isEmpty)

        // Once sound was written, a failure records where the listener stopped hearing.
        var heard = Engine(PlaybackMachineTests.machine())
        heard.capacity = 0
        heard.start()
        heard.allReady()
        heard.write(900)
        heard.send(.outputFailed("the device vanished"))
        #expect(heard.records.last == Record(ayah: Self.ayah(1), offsetSamples: 100, rate: 100, reason: .stop))
    }

    /// A start inside an ayah (a resume point, `--from`) records no ayah start for it: its place is the journal's
    /// already, or the listener's choice. The next ayah's start is recorded as it is reached.
    @Test func aStartInsideAnAyahRecordsNoStartForIt() {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start(at: PlanPosition(index: 1, offset: 500))
        engine.allReady()
        engine.write(100)
        #expect(engine.records.isEmpty)
        engine.write(600)
        #expect(engine.records == [Record(ayah: Self.ayah(3), offsetSamples: 0, rate: 100, reason: .ayahStart)])
    }

    // MARK: - A paused move records itself once

    /// Paused, then moved (`seek`, `next`, `prev`, a new layout), then resumed: the move's record is the last
    /// word; resuming adds no ayah start at offset 0 of the ayah it landed in (which a resume after a crash would
    /// go back to, re-hearing up to one ayah).
    @Test(arguments: [
        PlaybackMachine.Command.seek(.time(seconds: 25)), .next, .previous, .seek(.ayah(AyahRef(unchecked: 112, 3))),
        .set(.repeatEach(.times(2))), .loop(LoopRequest(start: .time(seconds: 30), end: .time(seconds: 40))),
    ])
    func aPausedMoveThenResumeRecordsTheLandingOnce(move: PlaybackMachine.Command) throws {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(1500)  // 112:2 +500
        try engine.command(.pause)
        try engine.command(move)
        let landing = engine.machine.heard
        let recordsBeforeResume = engine.records
        try engine.command(.resume)
        #expect(engine.opens.last == landing)
        engine.write(50)
        #expect(engine.records == recordsBeforeResume, "resuming records nothing in the ayah the move landed in")
        if case .set = move {
            #expect(recordsBeforeResume.last?.reason == .pause, "a new layout keeps the listener where the pause was recorded")
        } else {
            #expect(recordsBeforeResume.last == engine.machine.record(at: landing, .seek))
        }
        // Playing on into the next ayah records its start, as ever.
        let group = engine.machine.plan.group(containing: landing.index)
        engine.write(engine.machine.timeline.samples(in: landing.index..<group.upperBound) - landing.offset - 50 + 1)
        #expect(engine.records.last?.reason == .ayahStart)
        #expect(engine.records.last?.ayah == engine.machine.plan.items[group.upperBound].ayah)
    }

    /// A seek while playing records where it landed, and that alone (no ayah start for the ayah it lands in).
    @Test func aSeekWhilePlayingRecordsTheLandingOnly() throws {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(500)
        let before = engine.records.count
        try engine.command(.seek(.time(seconds: 25)))  // 112:3 +400
        engine.write(100)
        #expect(Array(engine.records[before...]) == [Record(ayah: Self.ayah(3), offsetSamples: 400, rate: 100, reason: .seek)])
    }

    // MARK: - A pause in the sleep timer's fade

    /// Paused inside the timer's last 3 s: the pause is recorded where the fade began, and resume plays from
    /// there at full volume with the timer set so the fade plays again, then stops.
    @Test func aPauseInsideTheFadeGoesBackToWhereItBegan() throws {
        var engine = Engine(Self.plain(repeatEach: .forever))
        engine.capacity = 100
        engine.start()
        engine.allReady()
        try engine.command(.sleep(seconds: 25))  // 2500 frames of 112:1 (1000 frames) repeated; the fade is 300
        engine.write(2400)  // written to 2400, heard to 2300: 100 frames into the fade, which began at 2200
        try engine.command(.pause)
        let fadeStart = PlanPosition(index: 0, offset: 200)  // frame 2200: 200 into the third recitation
        #expect(engine.machine.heard == fadeStart)
        #expect(engine.records.last == Record(ayah: Self.ayah(1), offsetSamples: 200, rate: 100, reason: .pause))
        #expect(engine.machine.sleepSecondsLeft == 3)
        try engine.command(.resume)
        #expect(engine.opens.last == fadeStart)
        let fade = try #require(engine.machine.fade)
        #expect(fade.framesLeft == fade.fadeFrames && fade.gain(at: 0) == 1, "the fade starts again from full volume")
        let before = engine.output.reduce(0) { $0 + $1.frames }
        engine.playToEnd()
        #expect(engine.output.reduce(0) { $0 + $1.frames } - before == 300, "the whole fade once more")
        #expect(engine.ended?.0 == .stopped)
        #expect(engine.records.last == Record(ayah: Self.ayah(1), offsetSamples: 200, rate: 100, reason: .stop))
    }

    /// Paused before the fade is heard (the device holds some of it): the pause is where the listener is, and
    /// the timer gets back what the device held, since it was never heard.
    @Test func aPauseBeforeTheFadeIsHeardGivesTheTimerBackWhatWasDropped() throws {
        var engine = Engine(Self.plain(repeatEach: .forever))
        engine.capacity = 300
        engine.start()
        engine.allReady()
        try engine.command(.sleep(seconds: 25))
        engine.write(2400)  // heard to 2100: the fade (from 2200) is written but not heard
        try engine.command(.pause)
        #expect(engine.machine.heard == PlanPosition(index: 0, offset: 100))
        #expect(engine.machine.sleepSecondsLeft == 4)
        try engine.command(.resume)
        engine.playToEnd()
        #expect(engine.ended?.0 == .stopped)
        #expect(engine.records.last == Record(ayah: Self.ayah(1), offsetSamples: 200, rate: 100, reason: .stop))
    }

    // MARK: - A pause at an item's very end

    /// Heard exactly to the end of item N, the listener is at the start of N+1: the pause, the status and the
    /// record say the next ayah, whether the engine had already reported the end of N or not.
    @Test(arguments: [true, false]) func aPauseAtAnItemsEndBelongsToTheNext(endReported: Bool) throws {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start()
        engine.allReady()
        if endReported {
            engine.write(1000)  // 112:1 to its end; the engine has reported it and opened 112:2
            #expect(engine.opens.last == PlanPosition(index: 1))
        } else {
            engine.send(.wrote(frames: 1000, unplayed: 0))  // the last chunk of 112:1, its end not reported yet
            engine.output.append((0, 0, 1000))
            engine.send(.heard(unplayed: 0))
            #expect(engine.machine.heard == PlanPosition(index: 0, offset: 1000), "the open item may have more frames")
        }
        try engine.command(.pause)
        #expect(engine.machine.heard == PlanPosition(index: 1))
        #expect(engine.records.last == Record(ayah: Self.ayah(2), offsetSamples: 0, rate: 100, reason: .pause))
        try engine.command(.resume)
        #expect(engine.opens.last == PlanPosition(index: 1))
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(Array(PlaybackControlsTests.pieces(engine)) == ["0@0+1000", "1@0+1100", "2@0+1200", "3@0+1300"])
    }

    @Test func aStopAtAnItemsEndRecordsTheNextAyah() throws {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(1000 + 1100)
        try engine.command(.stop)
        #expect(engine.records.last == Record(ayah: Self.ayah(3), offsetSamples: 0, rate: 100, reason: .stop))
        #expect(engine.machine.heard == PlanPosition(index: 2))
    }

    /// The very end of the plan has nothing after it: it stays the end of the last item.
    @Test func aPauseAtThePlansEndStaysThere() throws {
        var engine = Engine(Self.plain())
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(1000 + 1100 + 1200 + 1300)
        #expect(engine.draining)
        try engine.command(.pause)
        #expect(engine.machine.heard == PlanPosition(index: 3, offset: 1300))
        try engine.command(.resume)
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(engine.records.last?.reason == .end)
    }

    // MARK: - A file that stops decoding part of the way

    /// The decoder throws in the middle of 112:2: the ayah is skipped (listed with the reason, so `play` exits 1
    /// with the skipped message), and playback goes on with 112:3; a repetition of the same file is skipped too.
    @Test func aFileThatStopsDecodingIsSkippedAndPlaybackGoesOn() throws {
        var engine = Engine(Self.plain(repeatEach: .times(2)))  // 1 1 | 2 2 | 3 3 | 4 4
        engine.capacity = 0
        engine.start()
        engine.allReady()
        engine.write(2000 + 500)
        #expect(engine.opens.last == PlanPosition(index: 2))
        let reason = "112002.mp3 stopped decoding: mpg123_read: Failed to find valid MPEG data within limit on resync"
        engine.decodeFails(reason)
        #expect(engine.machine.skipped.map(\.ayah) == [Self.ayah(2)])
        #expect(engine.machine.skipped.first?.reason == reason)
        #expect(engine.notices.contains(.skipped(Self.ayah(2), reason: reason)))
        #expect(engine.opens.last == PlanPosition(index: 4), "on with 112:3, past the second 112:2")
        #expect(!engine.wanted.contains(Self.ayah(2)))
        engine.playToEnd()
        #expect(engine.ended?.0 == .finished)
        #expect(PlaybackMachine.skippedMessage(engine.machine.skipped) == "1 ayah could not be played: 112:2 (\(reason))")
        #expect(engine.records.filter { $0.reason == .ayahStart }.map(\.ayah.ayah) == [1, 2, 3, 4])

        // The last ayah: it ends failed, where listening stopped.
        var last = Engine(Self.plain())
        last.capacity = 0
        last.start()
        last.allReady()
        last.write(1000 + 1100 + 1200 + 200)
        last.decodeFails("112004.mp3 stopped decoding: x")
        last.playToEnd()
        #expect(last.ended?.0 == .failed)
        #expect(last.ended?.1 == "1 ayah could not be played: 112:4 (112004.mp3 stopped decoding: x)")
        #expect(last.records.last == Record(ayah: Self.ayah(4), offsetSamples: 200, rate: 100, reason: .stop))

        // `render` fails at it.
        var render = Engine(Self.plain(stopOnSkip: true))
        render.start()
        render.allReady()
        render.write(1200)
        render.decodeFails("112002.mp3 stopped decoding: x")
        #expect(render.ended?.0 == .failed)
        #expect(render.ended?.1 == "112:2 cannot be played: 112002.mp3 stopped decoding: x")
    }
}
