import Synchronization
import TartilCore
import TartilPlayer

/// The player a prompt or script controls, shared by its commands: `play` starts one (stopping any before it),
/// `pause`, `seek`, `status` and the rest act on it, and `events` chooses whether its events are printed.
final class PlaybackSession: Sendable {
    private struct State {
        var player: Player?
        /// Counts `begin` calls: events of an earlier player are not printed.
        var generation = 0
        var printEvents = false
        var console: Console?
    }

    private let state = Mutex(State())

    /// The player, or a usage error saying how to start one.
    func player(for command: String) throws(TartilError) -> Player {
        guard let player = state.withLock({ $0.player }) else {
            throw .usage("\(command): nothing is playing (start with: play REF)")
        }
        return player
    }

    /// The player, if one was started (ended or not).
    var current: Player? { state.withLock { $0.player } }

    /// Stops the session's player (if any) before a new one starts; returns the new player's generation.
    func begin() -> Int {
        let previous = state.withLock { state in
            defer {
                state.player = nil
                state.generation += 1
            }
            return state.player
        }
        previous?.stop()
        previous?.waitUntilEnded()
        return state.withLock { $0.generation }
    }

    /// Makes `player` (started after `begin` returned `generation`) the session's player.
    func attach(_ player: Player, generation: Int) {
        state.withLock { state in
            if state.generation == generation { state.player = player }
        }
    }

    /// Prints events as JSON lines on `console` from now on (or stops printing them).
    func setPrintEvents(_ on: Bool, console: Console) {
        state.withLock { state in
            state.printEvents = on
            state.console = console
        }
    }

    /// Called by the player's threads: prints the event when events are on and it is the current player's.
    func deliver(_ event: PlayerEvent, generation: Int, plan: PlaybackPlan) {
        let target = state.withLock { state -> Console? in
            state.printEvents && state.generation == generation ? state.console : nil
        }
        target?.json(PlayCommands.json(event, plan: plan))
    }

    /// Stops the player (quit, Ctrl-C) and waits until it has.
    func stopAndWait() {
        guard let player = current else { return }
        player.stop()
        player.waitUntilEnded()
    }
}
