import Glibc

/// A regular file mapped read-only into memory, whole, for reading a large file in passes without holding it:
/// each pass reads it front to back and says how far it has come (`passed`), and the pages behind that are let go
/// of as it moves on (`madvise(MADV_DONTNEED)`: they stay in the page cache, and a later pass maps them again on its
/// first touch, a minor fault). So the process never has more than `releaseStep` of the file resident per pass,
/// whatever its size: what learning a surah from its whole file needs (`SurahLearning`), which reads it five times
/// over (the frame walk, two decodes, cutting, and keeping the parts).
///
/// The file must not shrink while it is mapped (a read past its end would be a SIGBUS): map only a file no other
/// process can reach, such as one with no name.
///
/// Confined to one thread at a time. The corresponding C functions are `mmap`, `madvise` and `munmap`.
///
/// ```swift
/// let mapped = try MappedFile(descriptor: fd, count: size)
/// MPEGStream.problem(in: mapped.bytes, passing: mapped.passed)
/// ```
public final class MappedFile {
    /// The file's bytes (empty for an empty file), valid while this object lives.
    public let bytes: UnsafeRawBufferPointer
    /// How far the current pass has let go of pages (a page boundary), and where it last reached.
    private var released = 0
    /// Pages are let go of this many bytes at a time.
    public static let releaseStep = 4 << 20
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Maps the first `count` bytes of the file open at `descriptor` (which may be closed afterwards).
    public init(descriptor: Int32, count: Int) throws(Errno) {
        guard count > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, count, PROT_READ, MAP_SHARED, descriptor, 0), address != MAP_FAILED else { throw Errno.current }
        _ = madvise(address, count, MADV_SEQUENTIAL)  // a hint for read-ahead only: each pass reads front to back
        bytes = UnsafeRawBufferPointer(start: address, count: count)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// The current pass has read everything before `offset`: once that is `releaseStep` past what was let go of,
    /// the pages before it are. An offset before that starts a new pass: what the last one left resident is let go
    /// of, and the pages the new one reads come back as it goes.
    public func passed(_ offset: Int) {
        let boundary = min(max(offset, 0), bytes.count) / Self.pageSize * Self.pageSize
        if boundary < released {
            releaseAll()
            released = boundary
            return
        }
        guard boundary - released >= Self.releaseStep, let base = bytes.baseAddress else { return }
        release(released..<boundary, base: base)
        released = boundary
    }

    /// Lets go of every page (a pass is over).
    public func releaseAll() {
        guard let base = bytes.baseAddress else { return }
        release(0..<bytes.count, base: base)
        released = 0
    }

    private func release(_ range: Range<Int>, base: UnsafeRawPointer) {
        // Best effort: a mapping the kernel will not drop keeps its pages, which is only memory.
        _ = madvise(UnsafeMutableRawPointer(mutating: base + range.lowerBound), range.count, MADV_DONTNEED)
    }
}

@available(*, unavailable) extension MappedFile: Sendable {}
