import TartilSession
import TartilCore
import CEdit
import TartilCLI
import Glibc
import Synchronization

/// Output written by other threads (events, journal errors) while the prompt waits for a line: it is queued and
/// printed by the thread in libedit's readline, between keys, above the line being typed (`\r\e[K`, the text,
/// then libedit redraws the prompt and the line). Any other time it is written at once.
///
/// Why not write and redraw from the writing thread: libedit is not thread-safe, and redrawing while readline
/// handles a key on the main thread would corrupt its display state. Its `rl_getc_function` hook (see CEdit)
/// lets the main thread itself wait for keys and for this output together.
enum PromptOutput {
    private struct State {
        var atPrompt = false
        var pending: [(descriptor: Int32, text: String)] = []
    }

    private static let state = Mutex(State())
    /// Readable when output is queued (a self-pipe: written by the queuing thread, drained by CEdit).
    private static let wake: (read: Int32, write: Int32) = SelfPipe.make()

    /// Hooks into libedit (before its first readline); false when it cannot (output is then written at once).
    static func install(interruptDescriptor: Int32) -> Bool {
        guard wake.read >= 0 else { return false }
        return cedit_set_output_source(wake.read, interruptDescriptor) { PromptOutput.printPending() } == 0
    }

    /// The prompt starts (or stops) waiting for a line. When it stops, what was queued is written.
    static func setAtPrompt(_ value: Bool) {
        let pending = state.withLock { state in
            state.atPrompt = value
            defer { if !value { state.pending.removeAll() } }
            return value ? [] : state.pending
        }
        for (descriptor, text) in pending { Console.writeAll(descriptor, text) }
    }

    /// Writes queued at most: past this (a terminal that does not take output, Ctrl-S), writers write at once
    /// again and wait on the terminal, as they would without a prompt, instead of queuing without bound.
    static let capacity = 1024

    /// Queues `text` for `descriptor` while the prompt waits; false (the caller writes it) otherwise.
    static func queue(_ descriptor: Int32, _ text: String) -> Bool {
        let queued = state.withLock { state in
            guard state.atPrompt, state.pending.count < capacity else { return false }
            state.pending.append((descriptor, text))
            return true
        }
        if queued {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
        return queued
    }

    /// Called by CEdit on the thread in readline: clears the line being typed and writes what is queued (libedit
    /// then redraws the prompt and the line).
    private static func printPending() {
        let pending = state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
        guard !pending.isEmpty else { return }
        Console.writeAll(1, "\r\u{1B}[K")
        for (descriptor, text) in pending { Console.writeAll(descriptor, text.hasSuffix("\n") ? text : text + "\n") }
    }
}
