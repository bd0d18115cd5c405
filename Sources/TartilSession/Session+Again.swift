import TartilCore

/// Stop and play again, as a desktop media player has them (MPRIS's Stop, then Play): a session whose playback
/// stopped remembers what it played, and `playAgain` starts it again.
extension Session {
    // MARK: - Standing by

    /// True after `stopStandingBy`, until a play starts or the standby ends.
    public var isStandingBy: Bool { standby.read { $0 } }

    /// Stops playback as `stop` does (the position is recorded as a stop and durable when it returns), and stands
    /// by, ready to play it again: until a play starts (`playAgain`, or any play) or the standby ends (`stop`,
    /// `quit`, `stopAndWait`), playback has not ended for good, so a command-line `play` stays, stopped, as a
    /// desktop player stays after Stop. A usage error when nothing is playing.
    @discardableResult
    public func stopStandingBy(verb: String) throws(TartilError) -> PlayerStatus {
        let player = try livePlayer(verb)
        // Before the stop: a waiter that sees the player end sees the standby too.
        standby.update { $0 = true }
        let status: PlayerStatus
        do {
            status = try player.perform(.stop)
        } catch {
            standby.update { $0 = false }
            throw error
        }
        flushJournal()
        return status
    }

    /// Ends a standby: playback has then ended for good (a command-line `play` returns).
    public func endStandby() {
        standby.update { $0 = false }
    }

    // MARK: - Playing again

    /// Whether `playAgain` has something to start: a play began here and its player has stopped or finished.
    public var canPlayAgain: Bool {
        state.withLock { state in
            guard state.lastPlay != nil, let ended = state.player?.status.state else { return false }
            return ended == .stopped || ended == .finished
        }
    }

    /// Starts the last play again, replacing nothing (its player has stopped or finished): the same ayat and
    /// reciter, laid out with the memorisation options it had when it ended (changes made while it played
    /// included), at the speed, volume and output it had. After a stop it starts from the beginning of the surah
    /// it stopped in (MPRIS: "calling Play after Stop should cause playback to start again from the beginning of
    /// the track"; the stop's own position stays in the journal for `resume`); after it finished, from the start.
    /// An A-B loop, a sleep timer and a stop-after are not set again. A usage error when there is nothing to play
    /// again.
    public func playAgain() throws(TartilError) -> PlayStarted {
        let (last, ended) = state.withLock { ($0.lastPlay, $0.player?.status) }
        guard let last, let ended, ended.state == .stopped || ended.state == .finished else {
            throw .usage("play: nothing to play again (start with: play REF)")
        }
        return try play(Self.again(last, after: ended), settings: nil)
    }

    /// The request that plays `last` again after its player ended with `ended`.
    static func again(_ last: PlayRequest, after ended: PlayerStatus) -> PlayRequest {
        var again = PlayRequest(source: last.source)
        again.reciter = last.reciter
        let options = ended.options
        again.layout = [
            .basmala(options.basmala), .repeatEach(options.repeatEach), .repeatRange(options.repeatRange), .pause(options.pause),
            .cyclePause(seconds: options.cyclePauseSeconds), .stepped(options.stepped),
        ]
        if ended.state == .stopped, case .ayat(let ayat) = last.source, let first = ayat.first(where: { $0.surah == ended.surah }) {
            again.start = .ayah(first)
        }
        return again
    }
}
