import TartilCore
import TartilMPRIS
import TestSupport
import Testing

@testable import TartilPlayer

/// The pure half of MPRIS: a player's status as MPRIS properties, what changed between two, µs ↔ samples, and
/// what each call does.
@Suite struct MPRISPropertiesTests {
    /// A player in `state` at ayah `ayah` of surah 36 (item `index` of `count`), `position` samples into a surah
    /// part of `duration` samples at 44.1 kHz.
    static func status(
        _ state: PlayerState, ayah: Int = 12, index: Int = 11, count: Int = 83, position: Int = 441_000, duration: Int = 44_100_000
    ) -> PlayerStatus {
        let item = index < count ? PlanItem(kind: .ayah, ayah: try! AyahRef(36, ayah), group: index + 1) : nil
        return PlayerStatus(
            state: state, reciter: try! ReciterID("fixture"), index: index, item: item, itemCount: count, surah: 36,
            positionSeconds: Double(position) / 44_100, positionSamples: position, durationSeconds: Double(duration) / 44_100,
            durationSamples: duration, sampleRate: 44_100, isEstimated: false, ayahStarts: [], bufferingAyah: nil, skipped: [:],
            totalSamples: duration, writtenFrames: 0, writtenSeconds: 0, endMessage: nil, options: PlaybackOptions(), cycle: 1,
            loop: nil, loopMarkSeconds: nil, stopAfter: nil, sleepSecondsLeft: nil, hasNext: index + 1 < count)
    }

    @Test(arguments: [
        (PlayerState.playing, "Playing"), (.buffering, "Playing"), (.paused, "Paused"), (.stopped, "Stopped"),
        (.finished, "Stopped"), (.failed, "Stopped"),
    ])
    func playbackStatus(state: PlayerState, expected: String) {
        #expect(MPRISProperties(status: Self.status(state), reciterName: "R").playbackStatus == expected)
    }

    @Test func metadataNamesTheSurahTheAyahAndTheReciter() {
        let properties = MPRISProperties(status: Self.status(.playing), reciterName: "Mishary Alafasy")
        let track = try! #require(properties.track)
        #expect(track.id == "/org/tartil/surah/36")
        #expect(track.title == "Yaseen 36:12")
        #expect(track.album == "Yaseen")
        #expect(track.artist == "Mishary Alafasy")
        #expect(track.number == 12)
        #expect(track.lengthMicroseconds == 1_000_000_000)
        #expect(properties.positionMicroseconds == 10_000_000)
        #expect(properties.rate == 1 && properties.minimumRate == 0.5 && properties.maximumRate == 2 && properties.volume == 1)
        #expect(properties.canPlay && properties.canPause && properties.canSeek && properties.canGoNext && properties.canGoPrevious)
    }

    @Test func noPlayerAndFinishedPlaybackHaveNoTrack() {
        let none = MPRISProperties(status: nil, reciterName: "")
        #expect(none.track == nil && none.playbackStatus == "Stopped" && !none.canPlay && !none.canSeek && !none.canGoNext)
        let finished = MPRISProperties(status: Self.status(.finished, index: 83), reciterName: "R")
        #expect(finished.track == nil && !finished.canPause)
        let stopped = MPRISProperties(status: Self.status(.stopped), reciterName: "R")
        #expect(stopped.track != nil && !stopped.canPlay && !stopped.canSeek, "a stopped player keeps its track but cannot go on")
        let last = MPRISProperties(status: Self.status(.playing, ayah: 83, index: 82), reciterName: "R")
        #expect(!last.canGoNext && last.canGoPrevious)
    }

    /// The scrubber's times, each item at its own rate: in a surah whose files differ in rate (surah 1's fixtures:
    /// 22050 Hz, then 44100 Hz at 1:5, 16000 Hz at 1:6), frames do not add up to a time at the current item's rate.
    @Test func positionAndLengthAreTheScrubbersTimesWhateverTheRates() {
        var status = Self.status(.playing, ayah: 6, index: 5, count: 7, position: 200_000, duration: 260_624)
        status.sampleRate = 16_000
        status.positionSeconds = 8.5
        status.durationSeconds = 10.448_26
        let properties = MPRISProperties(status: status, reciterName: "R")
        #expect(properties.positionMicroseconds == 8_500_000, "not 200000 frames at 16 kHz (12.5 s)")
        #expect(properties.track?.lengthMicroseconds == 10_448_260, "not 260624 frames at 16 kHz (16.3 s)")
        // Seek adds to that position, in the same seconds the seek takes.
        #expect(MPRISCall.seek(offsetMicroseconds: 1_000_000).decide(status: status) == .perform(.seek(.time(seconds: 9.5))))
    }

    @Test(arguments: [(0.0, Int64(0)), (-1, 0), (.nan, 0), (1e-7, 0), (4.499_999_999_9, 4_500_000), (3600.000_000_4, 3_600_000_000)])
    func microsecondsOfSeconds(seconds: Double, expected: Int64) {
        #expect(MPRISProperties.microseconds(seconds: seconds) == expected)
    }

    /// µs → seconds → the machine's sample round(t · rate) → µs lands within half a sample of where it began.
    @Test func microsecondsRoundTripThroughSamples() {
        var random = SeededRandom(seed: 14)
        for _ in 0..<2_000 {
            let rate = [16_000, 22_050, 44_100, 48_000].randomElement(using: &random)!
            let microseconds = Int64.random(in: 0...3_600_000_000, using: &random)
            let samples = Int((MPRISProperties.seconds(microseconds: microseconds) * Double(rate)).rounded())
            let back = MPRISProperties.microseconds(seconds: Double(samples) / Double(rate))
            #expect(abs(back - microseconds) <= Int64(500_000 / rate) + 1, "\(microseconds) µs at \(rate) Hz came back as \(back)")
        }
    }

    @Test func changedNamesWhatDiffersAndNeverPosition() {
        let playing = MPRISProperties(status: Self.status(.playing), reciterName: "R")
        let later = MPRISProperties(status: Self.status(.playing, position: 900_000), reciterName: "R")
        #expect(later.changed(since: playing).isEmpty, "position alone is not signalled")
        let paused = MPRISProperties(status: Self.status(.paused), reciterName: "R")
        #expect(paused.changed(since: playing) == ["PlaybackStatus"])
        let nextAyah = MPRISProperties(status: Self.status(.playing, ayah: 13, index: 12), reciterName: "R")
        #expect(nextAyah.changed(since: playing) == ["Metadata"])
        let lastAyah = MPRISProperties(status: Self.status(.playing, ayah: 83, index: 82), reciterName: "R")
        #expect(lastAyah.changed(since: playing) == ["Metadata", "CanGoNext"])
        let stopped = MPRISProperties(status: Self.status(.stopped), reciterName: "R")
        #expect(stopped.changed(since: playing) == ["PlaybackStatus", "CanGoNext", "CanGoPrevious", "CanPlay", "CanPause", "CanSeek"])
        let none = MPRISProperties(status: nil, reciterName: "")
        #expect(playing.changed(since: none).contains("Metadata"))
    }

    @Test(arguments: [
        // (call, state, decision)
        (MPRISCall.play, PlayerState.paused, MPRISCall.Decision.perform(.resume)),
        (.play, .playing, .ignore),
        (.play, .buffering, .ignore),
        (.pause, .playing, .perform(.pause)),
        (.pause, .buffering, .perform(.pause)),
        (.pause, .paused, .ignore),
        (.pause, .stopped, .ignore),
        (.stop, .finished, .ignore),
        (.playPause, .playing, .perform(.toggle)),
        (.playPause, .paused, .perform(.toggle)),
        (.stop, .paused, .stopAndStandBy),
        (.stop, .playing, .stopAndStandBy),
        (.next, .playing, .perform(.next)),
        (.setRate(0), .playing, .perform(.pause)),
        (.setRate(0), .buffering, .perform(.pause)),
        (.setRate(0), .paused, .ignore),
        (.previous, .paused, .perform(.previous)),
        (.seek(offsetMicroseconds: 5_000_000), .playing, .perform(.seek(.time(seconds: 15)))),
        (.seek(offsetMicroseconds: -60_000_000), .playing, .perform(.seek(.time(seconds: 0)))),
        (.seek(offsetMicroseconds: Int64.min), .playing, .perform(.seek(.time(seconds: 0)))),
        (.seek(offsetMicroseconds: 990_000_000), .playing, .perform(.next)),
        (.seek(offsetMicroseconds: Int64.max), .playing, .ignore),
        (.setPosition(trackID: "/org/tartil/surah/36", microseconds: 123_456_789), .playing, .perform(.seek(.time(seconds: 123.456789)))),
        (.setPosition(trackID: "/org/tartil/surah/36", microseconds: 0), .paused, .perform(.seek(.time(seconds: 0)))),
        (.setPosition(trackID: "/org/tartil/surah/2", microseconds: 1_000_000), .playing, .ignore),
        (.setPosition(trackID: "/org/tartil/surah/36", microseconds: -1), .playing, .ignore),
        (.setPosition(trackID: "/org/tartil/surah/36", microseconds: 1_000_000_001), .playing, .ignore),
        (.setRate(1), .playing, .ignore),
        (.setVolume(1), .playing, .ignore),
    ])
    func decisions(call: MPRISCall, state: PlayerState, expected: MPRISCall.Decision) {
        #expect(call.decide(status: Self.status(state)) == expected)
    }

    /// Rate is the speed (the nearest tartil has: 0.5 to 2 in 0.05 steps), Volume the percent over 100 (0 to 1.5).
    @Test(arguments: [
        (MPRISCall.setRate(1.5), PlaybackMachine.Command.setSpeed(1.5)), (.setRate(1.23), .setSpeed(1.25)), (.setRate(9), .setSpeed(2)),
        (.setRate(0.1), .setSpeed(0.5)), (.setVolume(0.5), .setVolume(.to(50))), (.setVolume(-1), .setVolume(.to(0))),
        (.setVolume(3), .setVolume(.to(150))), (.setVolume(0.333), .setVolume(.to(33))),
    ])
    func rateAndVolumeSetSpeedAndVolume(call: MPRISCall, command: PlaybackMachine.Command) {
        #expect(call.decide(status: Self.status(.playing)) == .perform(command))
    }

    @Test func refusals() {
        for call in [MPRISCall.play, .playPause, .next, .previous, .seek(offsetMicroseconds: 1)] {
            #expect(call.decide(status: nil) == .refuse("nothing is playing (start with: tartil play REF)"))
            #expect(call.decide(status: Self.status(.finished, index: 83)) == .refuse("nothing is playing (start with: tartil play REF)"))
        }
        for rate in [-1, -0.5, Double.nan, .infinity] {
            #expect(MPRISCall.setRate(rate).decide(status: Self.status(.playing)) == .refuse("Rate must be 0 (pause) or a speed from 0.5 to 2"))
        }
        #expect(MPRISCall.setVolume(.nan).decide(status: Self.status(.playing)) == .refuse("Volume must be a number"))
        #expect(MPRISCall.setLoopStatus("Shuffle").decide(status: Self.status(.playing)) == .refuse("LoopStatus is None, Track or Playlist, not 'Shuffle'"))
        #expect(MPRISCall.setLoopStatus("Track").decide(status: nil) == .refuse("nothing is playing (start with: tartil play REF)"))
    }

    /// "If CanGoNext is false, attempting to call this method should have no effect": Next on the last ayah, and a
    /// seek past its end (which "acts like a call to Next"), change nothing and are not errors.
    @Test func nextOnTheLastAyahDoesNothing() {
        let last = Self.status(.playing, ayah: 83, index: 82)
        #expect(MPRISCall.next.decide(status: last) == .ignore)
        #expect(MPRISCall.seek(offsetMicroseconds: 999_000_000).decide(status: last) == .ignore)
        #expect(MPRISCall.next.decide(status: Self.status(.paused, ayah: 83, index: 82)) == .ignore)
        #expect(MPRISCall.seek(offsetMicroseconds: 999_000_000).decide(status: Self.status(.playing)) == .perform(.next), "not the last: Next")
    }

    /// Rate 0 is Pause ("the media player should act as though Pause was called"), and the Rate read stays the speed.
    @Test func rateZeroPausesAndKeepsTheSpeed() {
        var status = Self.status(.playing)
        status.speed = 1.25
        #expect(MPRISCall.setRate(0).decide(status: status) == .perform(.pause))
        status.state = .paused
        #expect(MPRISProperties(status: status, reciterName: "").rate == 1.25)
        #expect(MPRISCall.setRate(0).decide(status: nil) == .ignore, "Pause with nothing playing is ignored, so is Rate 0")
        // A reciter's max_speed bounds the rates taken, as MaximumRate says.
        status.state = .playing
        status.maximumSpeed = 1.5
        #expect(MPRISCall.setRate(2).decide(status: status) == .perform(.setSpeed(1.5)))
    }

    /// LoopStatus is the repeat options: Track an ayah repeated (`--repeat` n > 1 or inf), Playlist the range
    /// repeated (`--repeat-range`), None neither; Track when both.
    @Test(arguments: [
        (RepeatCount.times(1), RepeatCount.times(1), "None"), (.times(3), .times(1), "Track"), (.forever, .times(1), "Track"),
        (.times(1), .times(2), "Playlist"), (.times(1), .forever, "Playlist"), (.forever, .forever, "Track"),
    ])
    func loopStatusReadsTheRepeatOptions(each: RepeatCount, range: RepeatCount, expected: String) {
        var status = Self.status(.playing)
        status.options = PlaybackOptions(repeatEach: each, repeatRange: range)
        #expect(MPRISProperties(status: status, reciterName: "").loopStatus == expected)
    }

    /// Setting LoopStatus sets the repeat options (Track: `set repeat inf`, Playlist: `set repeat-range inf`, None:
    /// both once), only those that differ, and nothing when it already reads so.
    @Test(arguments: [
        ("Track", RepeatCount.times(1), RepeatCount.times(1), MPRISCall.Decision.performInTurn([.set(.repeatEach(.forever))])),
        ("Playlist", .times(1), .times(1), .performInTurn([.set(.repeatRange(.forever))])),
        ("None", .forever, .times(1), .performInTurn([.set(.repeatEach(.times(1)))])),
        ("None", .times(3), .forever, .performInTurn([.set(.repeatEach(.times(1))), .set(.repeatRange(.times(1)))])),
        ("Track", .times(1), .forever, .performInTurn([.set(.repeatEach(.forever)), .set(.repeatRange(.times(1)))])),
        ("Playlist", .forever, .times(1), .performInTurn([.set(.repeatEach(.times(1))), .set(.repeatRange(.forever))])),
        ("Track", .times(3), .times(1), .ignore),
        ("Playlist", .times(1), .times(5), .ignore),
        ("None", .times(1), .times(1), .ignore),
    ])
    func settingLoopStatusSetsTheRepeatOptions(wanted: String, each: RepeatCount, range: RepeatCount, expected: MPRISCall.Decision) {
        var status = Self.status(.playing)
        status.options = PlaybackOptions(repeatEach: each, repeatRange: range)
        #expect(MPRISCall.setLoopStatus(wanted).decide(status: status) == expected)
    }

    @Test func aLoopStatusChangeIsSignalled() {
        let playing = MPRISProperties(status: Self.status(.playing), reciterName: "R")
        var status = Self.status(.playing)
        status.options.repeatEach = .forever
        #expect(MPRISProperties(status: status, reciterName: "R").changed(since: playing) == ["LoopStatus"])
    }

    /// After Stop the player stays: Stopped, with its track and CanPlay, at position 0; Play starts it again.
    @Test func aStoppedPlayerThatCanPlayAgain() {
        let stopped = Self.status(.stopped)
        let properties = MPRISProperties(status: stopped, reciterName: "R", canPlayAgain: true)
        #expect(properties.playbackStatus == "Stopped" && properties.track?.id == "/org/tartil/surah/36")
        #expect(properties.canPlay && !properties.canPause && !properties.canSeek && !properties.canGoNext && !properties.canGoPrevious)
        #expect(properties.positionMicroseconds == 0, "Play starts again from the beginning of the track")
        #expect(MPRISCall.play.decide(status: stopped, canPlayAgain: true) == .playAgain)
        #expect(MPRISCall.playPause.decide(status: stopped, canPlayAgain: true) == .playAgain)
        #expect(MPRISCall.play.decide(status: Self.status(.finished, index: 83), canPlayAgain: true) == .playAgain)
        #expect(MPRISCall.stop.decide(status: stopped, canPlayAgain: true) == .ignore, "already stopped: no effect")
        #expect(MPRISCall.next.decide(status: stopped, canPlayAgain: true) == .refuse("nothing is playing (start with: tartil play REF)"))
    }
}
