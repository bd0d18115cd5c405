import Glibc
import TartilCore

/// Gives back the process's resident pages of code and read-only data that its start-up touched: every mapping
/// `MemoryMapping.isReleasable` accepts (private, read-only, mapped from a file, none of its pages copied) is
/// unmapped with `madvise(MADV_DONTNEED)`. The bytes stay in the page cache; what the process runs afterwards is
/// mapped again on its first access (a minor fault, with the kernel's fault-around). For long work whose steady
/// state uses little of the code its start-up went through: a whole-Qur'an prefetch.
///
/// The corresponding C function is `madvise`; the mappings are read from `/proc/self/smaps`.
public enum ResidentPages {
    /// What `releaseStartupPages` did.
    public struct Released: Sendable, Hashable {
        /// Mappings unmapped, and the KiB they had resident before.
        public var mappings: Int
        public var residentKiB: Int
    }

    /// Unmaps the resident pages of every releasable mapping. Best effort: a mapping the kernel refuses is left as
    /// it was; throws only when `/proc/self/smaps` cannot be read.
    ///
    /// ```swift
    /// _ = try? ResidentPages.releaseStartupPages()
    /// ```
    @discardableResult
    public static func releaseStartupPages() throws(TartilError) -> Released {
        let mappings = MemoryMappings.parse(try FileSystem.read("/proc/self/smaps"))
        var released = Released(mappings: 0, residentKiB: 0)
        for mapping in mappings where mapping.isReleasable {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            do throws(Errno) {
                _ = try SystemCall.retrying { madvise(start, Int(mapping.end - mapping.start), MADV_DONTNEED) }
                released.mappings += 1
                released.residentKiB += mapping.residentKiB
            } catch {
                continue  // (EINVAL for a locked or special mapping): it keeps its pages
            }
        }
        return released
    }
}
