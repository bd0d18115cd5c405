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
}
