import Foundation
import Synchronization

/// SIGINT and SIGTERM become a flag that long-running commands poll, so they stop cleanly (removing temporary
/// files) and tartil exits with 130. At the REPL prompt Ctrl-C only prints a hint.
enum Interrupt {
    private static let pending = Atomic<Bool>(false)
    private static let atPrompt = Atomic<Bool>(false)

    /// Whether an interrupt arrived since the last `reset`.
    static var isPending: Bool { pending.load(ordering: .relaxed) }

    static func reset() { pending.store(false, ordering: .relaxed) }

    /// Marks whether the REPL is waiting at its prompt.
    static func setAtPrompt(_ value: Bool) { atPrompt.store(value, ordering: .relaxed) }

    /// Installs the handlers (once per process).
    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            Interrupt.pending.store(true, ordering: .relaxed)
            if Interrupt.atPrompt.load(ordering: .relaxed) {
                let hint = "\n(type quit or press Ctrl-D to leave)\n"
                _ = hint.withCString { write(2, $0, strlen($0)) }
            }
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }
}
