import TartilSession
import TartilCore
import Glibc

/// A self-pipe: a signal handler (or another thread) writes a byte to `write`, so a thread waiting in poll(2) on
/// `read` wakes even when the news came just before its wait began. Both ends are non-blocking and close on exec.
enum SelfPipe {
    /// A new pipe's (read, write) descriptors, or (-1, -1) when none can be made (waits then fall back to ticks).
    static func make() -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return (-1, -1) }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        return (descriptors[0], descriptors[1])
    }
}
