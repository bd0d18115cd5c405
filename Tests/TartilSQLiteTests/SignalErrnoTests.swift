import Glibc
import Testing
import TartilSystem

/// A signal handler that keeps `errno` (`SystemCall.keepingErrno`): the code it interrupted reads its own error
/// afterwards, not the handler's (issue 23, item 16).
@Suite(.serialized) struct SignalErrnoTests {
    /// SIGUSR1's handler: a write that fails with EBADF, as a self-pipe write can; kept or not.
    nonisolated(unsafe) static var keeping = true

    @Test func aHandlerThatKeepsErrnoLeavesTheInterruptedCodesError() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            var byte: UInt8 = 1
            if SignalErrnoTests.keeping {
                SystemCall.keepingErrno { _ = write(-1, &byte, 1) }
            } else {
                _ = write(-1, &byte, 1)
            }
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        var previous = sigaction()
        #expect(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }
        // The test runs on a worker thread that blocks signals (libdispatch's do): let SIGUSR1 in here, so that
        // raise(3) runs the handler on this thread before it returns.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGUSR1)
        var mask = sigset_t()
        #expect(pthread_sigmask(SIG_UNBLOCK, &signals, &mask) == 0)
        defer { pthread_sigmask(SIG_SETMASK, &mask, nil) }

        for keeping in [true, false] {
            Self.keeping = keeping
            errno = EXDEV  // what the interrupted code's failed call left, about to be read
            #expect(raise(SIGUSR1) == 0)  // the handler runs on this thread before raise returns
            let seen = errno
            if keeping {
                #expect(seen == EXDEV, "errno kept")
            } else {
                #expect(seen == EBADF, "without keepingErrno the handler's write changes errno: the test can fail")
            }
        }
    }
}
