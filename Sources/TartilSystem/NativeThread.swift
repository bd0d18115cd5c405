import Glibc

/// Starts work on a detached POSIX thread. Foundation's `Thread` would do, but it pages in more of
/// CoreFoundation, which counts against tartil's memory budget (see `Path`).
public enum NativeThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new thread with a stack of `stackSize` bytes.
    public static func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            let work = Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue()
            work.body()
            return nil
        }, work)
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    /// Lowers the calling thread's scheduling priority: its nice value raised by `steps` (to at most 19), so that
    /// work in the background (learning a surah while it plays) yields the cores to the sound. On Linux the nice
    /// value is the thread's own, and `setpriority(PRIO_PROCESS, 0, …)` names the calling thread alone. Best
    /// effort: nothing happens where it is refused.
    public static func lowerPriority(by steps: Int32) {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let now = getpriority(which, 0)
        guard now != -1 || errno == 0 else { return }
        _ = setpriority(which, 0, min(19, now + steps))
    }

    /// The processors online (at least 1).
    public static var processorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Runs `body` for each index of `0..<iterations` on up to one thread per processor (this one among them),
    /// and returns when every index is done; the indices are taken in order, each once. (What
    /// `DispatchQueue.concurrentPerform` does, without linking libdispatch into tartil.)
    public static func concurrentPerform(iterations: Int, stackSize: Int = 1 << 20, _ body: @escaping @Sendable (Int) -> Void) {
        guard iterations > 0 else { return }
        let next = Monitor(0)
        let take = { @Sendable () -> Int? in
            next.update { index -> Int? in
                guard index < iterations else { return nil }
                index += 1
                return index - 1
            }
        }
        let helpers = min(processorCount, iterations) - 1
        let done = Semaphore()
        for _ in 0..<helpers {
            start(stackSize: stackSize) {
                while let index = take() { body(index) }
                done.signal()
            }
        }
        while let index = take() { body(index) }
        for _ in 0..<helpers { done.wait() }
    }
}
