import Foundation
import TartilCore
import TartilSession
import TestSupport
import Testing

/// Stop and play again, as MPRIS's Stop and Play have them: a stop that stands by is not the end of playback,
/// and `playAgain` starts the last play again (from the start of the surah it stopped in, with the options it
/// had), on a manual clock.
@Suite(.serialized) struct SessionAgainTests {
    @Test func aStopThatStandsByIsNotTheEndAndPlayAgainStartsTheSurahOverWithItsOptions() throws {
        let place = try SessionPlace()
        #expect(!place.session.canPlayAgain, "nothing played yet")
        #expect(throws: TartilError.self) { try place.session.playAgain() }
        try place.play(["1:1-4", "--volume", "80"])
        place.settle()
        place.listen(1.8)  // into 1:2
        try place.session.perform(.set(.repeatEach(.times(2))), verb: "set")
        #expect(throws: TartilError.self, "while it plays there is nothing to play again") { try place.session.playAgain() }

        let stopped = try place.session.stopStandingBy(verb: "mpris")
        #expect(try stopped.state == .stopped && stopped.item?.ayah == AyahRef(1, 2))
        #expect(place.session.isStandingBy && place.session.canPlayAgain)
        #expect(place.session.status() == nil, "nothing plays while it stands by")
        #expect(!place.session.hasEnded(waiting: 0.05), "standing by is not the end of playback")
        let stop = try place.session.positions(reciter: nil, surah: 1, sinceMs: nil, settings: place.settings).first
        #expect(stop?.reason == .stop && stop?.ayah == 2, "the stop is recorded, and durable when it returns")

        let again = try place.session.playAgain().status
        #expect(!place.session.isStandingBy)
        #expect(try again.index == 0 && again.item?.ayah == AyahRef(1, 1), "from the start of the surah: \(again)")
        #expect(again.options.repeatEach == .times(2), "with the options it had when it stopped")
        #expect(again.volume == 80 && again.reciter.rawValue == "fixture", "at the volume it had")
        #expect(again.itemCount == stopped.itemCount, "the same ayat")
        place.settle()
        place.listen(0.3)
        #expect(place.session.status()?.state == .playing)
        try place.session.perform(.stop, verb: "stop")
        #expect(place.session.hasEnded(waiting: 5), "a plain stop ends it")
    }

    @Test func stopOrQuitEndsTheStandbyAndToggleStartsAgain() throws {
        let place = try SessionPlace()
        try place.play(["1:1-4"])
        place.settle()
        place.listen(0.5)
        try place.session.stopStandingBy(verb: "mpris")
        let resumed = try place.session.perform(.toggle, verb: "toggle")
        #expect(resumed.state != .stopped && resumed.index == 0, "toggle (the space key) plays it again: \(resumed)")
        place.settle()
        place.listen(0.5)
        try place.session.stopStandingBy(verb: "mpris")
        let ended = try place.session.perform(.stop, verb: "stop")
        #expect(ended.state == .stopped && !place.session.isStandingBy)
        #expect(place.session.hasEnded(waiting: 1))
        #expect(throws: TartilError.self, "nothing plays: a stop is a usage error again") { try place.session.perform(.stop, verb: "stop") }
        // quit (the q key), and leaving tartil, end it too.
        _ = try place.session.playAgain()
        place.settle()
        try place.session.stopStandingBy(verb: "mpris")
        try place.session.perform(.quit, verb: "quit")
        #expect(place.session.hasEnded(waiting: 1))
        _ = try place.session.playAgain()
        place.settle()
        try place.session.stopStandingBy(verb: "mpris")
        place.session.stopAndWait()
        #expect(!place.session.isStandingBy && place.session.hasEnded(waiting: 1))
    }

    @Test func playAgainStartsTheSurahItStoppedInAndAfterTheEndTheWholeRange() throws {
        let place = try SessionPlace()
        try place.play(["1:7", "112:1-2"])
        place.settle()
        let inSurah112 = try #require(place.eventually("112 plays") { status in
            if status?.surah != 112 { place.listen(0.25) }
            return status?.surah == 112
        })
        #expect(inSurah112.surah == 112)
        try place.session.stopStandingBy(verb: "mpris")
        let again = try place.session.playAgain().status
        #expect(again.surah == 112 && again.item?.kind == .basmala, "112 from its start, its basmala included: \(again)")
        place.settle()
        place.eventually("the end") { status in
            if status?.state.isEnded != true { place.listen(0.5) }
            return status?.state == .finished
        }
        #expect(place.session.canPlayAgain, "a finished play can be played again")
        let over = try place.session.playAgain().status
        #expect(over.index == 0 && over.surah == 1, "from the start of the range: \(over)")
    }
}
