import Foundation
import Synchronization

/// A `Process` whose `waitUntilExit()` returns as soon as the child has been reaped.
///
/// Foundation's own `waitUntilExit()` on Linux runs the current run loop in slices of 50 ms and looks at
/// `isRunning` between them, so every wait for a child that has already exited costs up to 50 ms: a test that runs
/// `tartil` hundreds of times (the fuzz suites, the merge and kill loops) spent most of its time there. This one
/// waits on a semaphore that the termination handler signals (Foundation calls it once the exit status is set);
/// a `terminationHandler` set before `run()` is still called, first.
///
/// ```swift
/// let process = ChildProcess()
/// process.executableURL = URL(fileURLWithPath: "/bin/true")
/// try process.run()
/// process.waitUntilExit()   // returns within a millisecond or so of the exit, not at the next 50 ms tick
/// ```
public final class ChildProcess: Process, @unchecked Sendable {
    // @unchecked: `exited` is a semaphore and `launched` a Mutex; the rest is Process's own (itself
    // @unchecked Sendable).
    private let exited = DispatchSemaphore(value: 0)
    private let launched = Mutex(false)

    public override func run() throws {
        let handler = terminationHandler
        terminationHandler = { [exited] process in
            handler?(process)
            exited.signal()
        }
        try super.run()
        launched.withLock { $0 = true }
    }

    public override func waitUntilExit() {
        // Never started: nothing to wait for (as Foundation's, which returns when `isRunning` is false).
        guard launched.withLock({ $0 }) else { return }
        exited.wait()
        exited.signal()  // a second wait returns at once too
        // The child is reaped and `isRunning` is false, so this only does Foundation's clean-up: it drops the run
        // loop source that retains the process (and with it its pipes). Without it every run would keep its
        // descriptors open, and past some 1,350 open descriptors Foundation's own scan of /proc/self/fd in `run()`
        // reads beyond its buffer (swift-corelibs-foundation#5472) and the test process crashes.
        super.waitUntilExit()
    }
}
