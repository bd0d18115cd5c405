import Foundation
import Synchronization
import TartilCore
import TartilSession
import TartilSystem
import TestSupport
import Testing

/// The session in-process, on a manual clock: where the listener is after so much listening, what the journal
/// holds, what carries over between plays, and that no mix of requests from many threads breaks it.
@Suite(.serialized) struct SessionPlaybackTests {
    /// Surah 1's fixture ayat are 22050 Hz mono: one format, played gaplessly (112's ayat are 44100 Hz).
    static let rate = 22050

    /// `a` and `b` within one sample: a position read between two of the audio thread's snapshots is the last
    /// snapshot moved on by the clock (⌊Δt × rate⌋), which may be a sample short of ⌊t × rate⌋.
    static func close(_ a: Int?, _ b: Int) -> Bool { a.map { abs($0 - b) <= 1 } ?? false }

    @Test func thePositionIsWhereTheListenerIsBetweenTheAudioThreadsChunks() throws {
        let place = try SessionPlace()
        try place.play(["1:1-4"])
        place.settle()
        // The silent output has its 200 ms buffer full; nothing has been heard yet.
        #expect(place.session.status()?.positionSamples == 0)
        for step in 1...20 {
            place.listen(0.1)
            let status = try #require(place.session.status())
            // The frames the output has played: 0.1 s at a time, whatever the chunks, across 1:1's end (1.49 s).
            #expect(Self.close(status.positionSamples, step * Self.rate / 10), "after \(step) × 100 ms: \(status.positionSamples)")
        }
        #expect(place.session.status()?.item?.ayah == (try AyahRef(1, 2)))
        // Read between two snapshots, the position moves on with the clock (no chunk written in between).
        let before = try #require(place.session.status())
        place.clock.advance(by: 0.01)
        let moved = try #require(place.session.status())
        #expect(moved.positionSamples >= before.positionSamples, "never back")
        #expect(moved.positionSamples - before.positionSamples <= Self.rate / 100 + 1, "never ahead of the clock")
    }

    @Test func theBasmalaMovesTheScrubberToo() throws {
        // Before, the status changed only at item boundaries: the basmala showed 0:00 until 112:1 began.
        let place = try SessionPlace()
        try place.play(["112"])
        place.settle()
        place.listen(1.0)
        let status = try #require(place.session.status())
        #expect(status.item?.kind == .basmala)
        #expect(Self.close(status.positionSamples, Self.rate))
    }

    @Test func pauseFreezesAndResumeGoesOnFromTheSameSample() throws {
        let place = try SessionPlace()
        try place.play(["1:1-4"])
        place.settle()
        place.listen(0.7)
        let paused = try place.session.perform(.pause, verb: "pause")
        #expect(paused.state == .paused && Self.close(paused.positionSamples, Self.rate * 7 / 10))
        place.clock.advance(by: 5)
        #expect(place.session.status()?.positionSamples == paused.positionSamples, "paused means frozen, whatever the clock")
        let sleeps = place.clock.blockedSleeps
        let resumed = try place.session.perform(.resume, verb: "resume")
        #expect(resumed.positionSamples == paused.positionSamples)
        place.settle(after: sleeps)
        place.listen(0.3)
        #expect(Self.close(place.session.status()?.positionSamples, paused.positionSamples + Self.rate * 3 / 10))
    }

    @Test func aSeekLandsOnItsSampleAndMPRISStyleRelativeSeeksAddToTheLivePosition() throws {
        let place = try SessionPlace()
        try place.play(["1:1-4"])
        place.settle()
        place.listen(1.5)
        // +0.5 s from where the listener is now (1.5 s), not from a stale snapshot.
        let sleeps = place.clock.blockedSleeps
        let landed = try place.session.perform(.seek(.offset(seconds: 0.5)), verb: "seek")
        #expect(Self.close(landed.positionSamples, Self.rate * 2))
        place.settle(after: sleeps)
        place.listen(0.25)
        #expect(Self.close(place.session.status()?.positionSamples, Self.rate * 2 + Self.rate / 4))
    }

    @Test func repeatForeverKeepsMovingWithinTheAyah() throws {
        // Before, `--repeat inf` stayed at one value for ever.
        let place = try SessionPlace()
        try place.play(["1:2", "--repeat", "inf"])
        place.settle()
        let length = place.samples[try AyahRef(1, 2)]!
        var seen: [Int] = []
        for _ in 0..<8 {
            place.listen(0.5)
            seen.append(try #require(place.session.status()).positionSamples)
        }
        #expect(Set(seen).count == seen.count, "it moves: \(seen)")
        #expect(seen.allSatisfy { $0 < length }, "within the ayah, lap after lap: \(seen)")
    }

    // MARK: - The journal

    @Test func aRefusedPlayWritesNothing() throws {
        let place = try SessionPlace()
        #expect(throws: TartilError.self) { try place.play(["36", "--from", "36:20"]) }  // 36 min 20 s: past the end of surah 36
        #expect(throws: TartilError.self) { try place.play(["112", "--from", "9:00"]) }
        #expect(throws: TartilError.self) { try place.play(["112", "--speed", "3"]) }
        #expect(!FileManager.default.fileExists(atPath: place.journalPath), "not even an empty journal")
    }

    @Test func aPlayThatNeverSoundedRecordsNothing() throws {
        // 36 is not cached and its mirror answers nothing: every file fails (after the downloader's retries, in
        // real time), nothing is heard (the basmala is off: it is 1:1's file, which is cached).
        let place = try SessionPlace()
        try place.play(["36:1-2", "--basmala", "off"])
        place.eventually("the play ends", seconds: 60) { $0?.state.isEnded == true }
        #expect(place.session.lastStatus?.state == .failed)
        let events = try place.events()
        #expect(events.isEmpty, "no session-start, no position: \(events)")
    }

    @Test func theSessionStartComesWithTheFirstSoundAndTheStopIsDurableWhenStopReturns() throws {
        let place = try SessionPlace()
        try place.play(["112"])
        place.settle()
        #expect(try place.events().isEmpty, "nothing heard yet")
        place.listen(0.5)
        let first = try place.events()
        #expect(first.map(\.kind) == [.sessionStart, .position], "\(first)")
        #expect(first.first?.note == "play 112:1-4")
        try place.session.perform(.stop, verb: "stop")
        let positions = try place.session.positions(reciter: nil, surah: 112, sinceMs: nil, settings: place.settings)
        #expect(positions.first?.reason == .stop)
        #expect(positions.first?.offsetSamples == 0, "0.5 s in is still the basmala: offset 0 of 112:1")
        place.eventually { $0?.state.isEnded == true }
        #expect(try place.events([.sessionEnd]).count == 1)
    }

    @Test func alsasNullDeviceRecordsNothing() throws {
        let place = try SessionPlace()
        guard case .play(var request) = try ControlRequest.parse(words: ["play", "112:1"]) else { return }
        request.output = "alsa"
        request.device = "null"
        _ = try place.session.play(request, settings: place.settings)
        place.eventually("ALSA's null device takes everything at once") { $0?.state.isEnded == true }
        #expect(place.session.lastStatus?.state == .finished)
        #expect(try place.events().isEmpty, "nobody heard it")
    }

    // MARK: - What carries over

    @Test func reciterSpeedVolumeAndASleepTimerCarryIntoTheNextPlay() throws {
        let place = try SessionPlace()
        try place.play(["112", "--speed", "1.25", "--volume", "80"])
        place.settle()
        try place.session.perform(.sleep(seconds: 600), verb: "sleep")
        place.listen(1.0)
        let left = try #require(place.session.status()?.sleepSecondsLeft)
        let next = try place.play(["1:1-2"]).status
        #expect(next.speed == 1.25 && next.volume == 80)
        #expect(next.reciter.rawValue == "fixture")
        #expect(abs((next.sleepSecondsLeft ?? 0) - left) < 1, "the sleep timer goes on: \(String(describing: next.sleepSecondsLeft)) after \(left)")
        // The replaced play's last position was recorded.
        let stops = try place.events([.position]).filter { $0.reason == .stop }
        #expect(stops.contains { $0.surah == 112 })
    }

    @Test func aReplacementThatCannotStartLeavesThePlayerAsItWas() throws {
        let place = try SessionPlace()
        try place.play(["1:1-4"])
        place.settle()
        place.listen(0.5)
        #expect(throws: TartilError.self) { try place.play(["112", "--reciter", "nobody"]) }
        #expect(throws: TartilError.self) { try place.play(["999"]) }
        let status = try #require(place.session.status())
        #expect(status.state == .playing && status.surah == 1)
        place.listen(0.5)
        #expect(Self.close(place.session.status()?.positionSamples, Self.rate))
    }

    @Test func statusWithNothingPlayingIsStoppedNotAnError() throws {
        let place = try SessionPlace()
        #expect(try place.session.handle(.status(verb: "status")) == .stopped)
        #expect(throws: TartilError.self) { try place.session.handle(.command(.pause, verb: "pause")) }
    }

    @Test func subscribersSeeTheEventsInOrder() throws {
        let place = try SessionPlace()
        let stream = place.session.subscribe()
        defer { place.session.unsubscribe(stream) }
        try place.play(["112:1-2"])
        place.settle()
        place.listen(10)
        var kinds: [String] = []
        while let event = stream.next(timeout: 2) {
            switch event {
            case .started: kinds.append("started")
            case .player(.item(let index, _)): kinds.append("item \(index)")
            case .player(.end(let state, _)):
                kinds.append("end \(state.rawValue)")
            default: continue
            }
            if kinds.last?.hasPrefix("end") == true { break }
        }
        #expect(kinds.first == "started" && kinds.last == "end finished", "\(kinds)")
        #expect(kinds.filter { $0.hasPrefix("item") } == ["item 0", "item 1", "item 2"], "\(kinds)")
    }

    // MARK: - Many front ends at once

    /// Threads sending plays and control commands at random for a while: the player stays alive, every request
    /// returns (a result or an error), the last play wins, and the journal holds a stop for every replaced play.
    @Test func requestsFromManyThreadsAtOnceNeverBreakIt() throws {
        let place = try SessionPlace()
        try place.play(["112"])
        let answered = Atomic<Int>(0)
        let sent = Atomic<Int>(0)
        let commands: [[String]] = [
            ["play", "112"], ["play", "1:1-3"], ["play", "112:2", "--repeat", "2"], ["pause"], ["resume"], ["toggle"], ["next"], ["prev"],
            ["seek", "0:01"], ["seek", "+1"], ["status"], ["set", "repeat", "2"], ["loop", "off"], ["speed", "1.5"], ["volume", "-5"],
            ["stop-after", "1", "ayah"], ["stop"], ["bookmark", "--note", "storm"],
        ]
        let threads = 8
        let done = Monitor(0)
        for thread in 0..<threads {
            NativeThread.start(stackSize: 512 << 10) {
                var random = SeededRandom(seed: UInt64(thread + 1))
                for _ in 0..<40 {
                    let words = commands[Int(random.next() % UInt64(commands.count))]
                    sent.add(1, ordering: .relaxed)
                    if let request = try? ControlRequest.parse(words: words) {
                        _ = try? place.session.handle(request, settings: place.settings)
                    }
                    answered.add(1, ordering: .relaxed)
                    if random.next() % 4 == 0 { place.clock.advance(by: 0.05) }
                }
                done.update { $0 += 1 }
            }
        }
        done.wait(until: { $0 == threads }, timeout: 120) { _, _ in }
        #expect(answered.load(ordering: .relaxed) == sent.load(ordering: .relaxed))
        #expect(sent.load(ordering: .relaxed) == threads * 40)
        // Still a working session: a last play plays.
        let last = try place.play(["1:1"])
        #expect(last.status.surah == 1)
        place.session.stopAndWait()
        #expect(try place.session.journalProblems(settings: place.settings).problems.isEmpty)
    }
}
