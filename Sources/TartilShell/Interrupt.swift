import TartilSession
import TartilCore
import TartilSystem
import Glibc
import Synchronization

/// SIGINT and SIGTERM become a flag that long-running commands poll, so they stop cleanly (removing temporary
/// files) and tartil exits with 130. At the REPL prompt Ctrl-C only prints a hint.
enum Interrupt {
    private static let pending = Atomic<Bool>(false)
    private static let atPrompt = Atomic<Bool>(false)
    /// The self-pipe: the handler writes a byte to `wakeWrite`, so a thread waiting in poll(2) on `wakeRead`
    /// sees an interrupt even when it arrives just before the wait begins.
    private static let wakeDescriptors: (read: Int32, write: Int32) = SelfPipe.make()
    private static let wakeWrite = Atomic<Int32>(-1)

    /// A descriptor that becomes readable when an interrupt arrives (-1 if the pipe could not be made).
    static var wakeDescriptor: Int32 { wakeDescriptors.read }

    /// Whether an interrupt arrived since the last `reset`.
    static var isPending: Bool { pending.load(ordering: .relaxed) }

    static func reset() {
        pending.store(false, ordering: .relaxed)
        var byte: UInt8 = 0
        while wakeDescriptors.read >= 0 && read(wakeDescriptors.read, &byte, 1) > 0 {}
    }

    /// Marks whether the REPL is waiting at its prompt.
    static func setAtPrompt(_ value: Bool) { atPrompt.store(value, ordering: .relaxed) }

    /// Installs the handlers (once per process).
    static func install() {
        wakeWrite.store(wakeDescriptors.write, ordering: .relaxed)
        let handler: @convention(c) (Int32) -> Void = { _ in
            // errno is put back: the interrupted code may be between a failed call and its read of errno.
            SystemCall.keepingErrno {
                Interrupt.pending.store(true, ordering: .relaxed)
                var byte: UInt8 = 1
                _ = write(Interrupt.wakeWrite.load(ordering: .relaxed), &byte, 1)
                if Interrupt.atPrompt.load(ordering: .relaxed) {
                    let hint = "\n(type quit or press Ctrl-D to leave)\n"
                    _ = hint.withCString { write(2, $0, strlen($0)) }
                }
            }
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: a blocked read returns, so a script on standard input can be interrupted
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A reader that goes away (`play --events | head -2`) ends that output, not tartil: writes get EPIPE.
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these signals blocked (the mask is inherited): unblock them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }
}
