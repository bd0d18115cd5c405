import CSystem
import Glibc
import TartilCore
import TartilSystem

/// Writes one download into the cache. The file being written has no name: it is opened with `O_TMPFILE` in
/// the reciter's folder, so nothing of it is visible until `publish` links it to its final name, after the size
/// and hash check, (for unknown files) the caller's validation and the data sync; the directory is fsynced
/// after. Bytes are hashed as they are written (no second pass).
///
/// A download that stops early but may be resumed (`abandon(keepPartial: true)`) is linked to
/// `.SSSAAA.mp3.part`; the next writer for that ayah continues it, hashing its bytes again on open. Where the file
/// system has no `O_TMPFILE`, the `.part` name is used from the start and renamed at the end.
///
/// Only one writer at a time works on an ayah, in any process: each holds a lock on the ayah's byte of the
/// reciter's lock file, `<cache>/.<reciter>.lock` (an open file description lock, through the `LockFile` its
/// `Cache` holds open; released when the writer closes).
///
/// Every name is reached through the reciter's folder held open (`CacheFolder`) with `O_NOFOLLOW`: a symbolic
/// link at the partial file's or the lock's name (tartil's own names) is removed, one at the reciter folder's
/// name is refused, and the final name is made by `linkat`/`renameat`, which replace a link there rather than
/// follow it. Nothing is ever written through a link.
///
/// `append` only copies the bytes into a block; the `WritingThreads` hash and write full blocks, and the last
/// one when the file ends (`finishWriting`, which `check` and `abandon(keepPartial: true)` also call).
///
/// Confined to one thread.
public final class CacheWriter {
    public let finalPath: String
    public let partPath: String
    public let expectation: FileExpectation
    /// The reciter's folder, open; the file's names inside it.
    private let folder: CacheFolder
    private let finalName: String
    private let partName: String
    private var descriptor: Int32
    /// Whether the file has no name yet (`O_TMPFILE`); otherwise it is at `partPath`.
    private let unnamed: Bool
    /// The reciter's lock file, `<cache>/.<reciter>.lock`, and this ayah's byte in it, locked while the writer is
    /// open (nil once released).
    private var lockFile: LockFile?
    private let lockKey: Int
    /// The descriptor, SHA-256 and direct-I/O state the writing threads use.
    private let sink: FileSink
    /// The block being filled, and how many bytes it holds.
    private var block: UnsafeMutableRawPointer?
    private var blockCount = 0
    /// Bytes accepted so far (handed to the writing threads or in `block`): where a resumed download continues.
    public private(set) var offset: Int = 0
    /// Where the block being filled starts in the file.
    private var blockStart = 0
    /// The SHA-256 the file must have besides `expectation` (the hash the cross-check's majority agreed on), if any.
    private var requiredSHA256: String?

    /// Opens the writer for the file `finalName` in `folder` (the reciter's folder, already open and checked),
    /// locking byte `lockKey` of `lockFile`.
    init(
        folder: CacheFolder, finalName: String, lockFile: LockFile, lockKey: Int, expectation: FileExpectation
    ) throws(CacheError) {
        self.folder = folder
        self.finalName = finalName
        partName = ".\(finalName).part"
        finalPath = Path.join(folder.path, finalName)
        partPath = Path.join(folder.path, partName)
        self.expectation = expectation
        try lockFile.lock(lockKey, finalPath: finalPath)
        let file: (descriptor: Int32, unnamed: Bool)
        let sink: FileSink
        do throws(CacheError) {
            file = try Self.openFile(folder: folder, partName: partName)
            do throws(CacheError) { sink = try FileSink(descriptor: file.descriptor, path: partPath) } catch {
                close(file.descriptor)
                throw error
            }
        } catch {
            lockFile.unlock(lockKey)
            throw error
        }
        self.lockFile = lockFile
        self.lockKey = lockKey
        descriptor = file.descriptor
        unnamed = file.unnamed
        self.sink = sink
        try resumeExisting()  // on failure, deinit closes the descriptors
    }

    deinit {
        discardBlock()
        try? WritingThreads.shared.drain(sink)  // no write may be pending on a closed descriptor
        closeDescriptors()
    }

    /// Opens the partial file an earlier run left (a link at its name is removed), or else a new unnamed file
    /// (or, without `O_TMPFILE`, a new partial file).
    private static func openFile(folder: CacheFolder, partName: String) throws(CacheError) -> (descriptor: Int32, unnamed: Bool) {
        var descriptor = try folder.openFile(partName, O_RDWR, removingLink: true, what: "a partial download")
        if descriptor >= 0 { return (descriptor, false) }
        if unnamedFilesWork {
            descriptor = csystem_open_unnamed_at(folder.descriptor, 0o644)
            if descriptor >= 0 { return (descriptor, true) }
            let error = Errno.current
            guard error == .notSupported || error == .isDirectory || error == .invalidArgument else {
                throw CacheError.system("open", path: folder.path, error)
            }
        }
        return (try folder.openFile(partName, O_RDWR | O_CREAT | O_EXCL, removingLink: true, what: "a partial download"), false)
    }

    /// Naming an unnamed file goes through /proc/self/fd.
    private static let unnamedFilesWork = access("/proc/self/fd", F_OK) == 0

    /// Hashes what an earlier run left, or starts over when it cannot be part of the file.
    private func resumeExisting() throws(CacheError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CacheError.system("fstat", path: partPath) }
        let size = Int(status.st_size)
        guard size > 0 else { return }
        if size > expectation.maxBytes {
            try restart()  // too big to be a prefix of the file: start over
            return
        }
        try Self.read(0..<size, of: descriptor, path: partPath) { chunk throws(CacheError) in
            try sink.hasher.update(chunk)
        }
        offset = size
        blockStart = size
    }

    /// Appends downloaded bytes. Throws `.tooLarge` when the file would grow past what it may be.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        guard offset + bytes.count <= expectation.maxBytes else {
            throw CacheError(.tooLarge, "more than \(expectation.maxBytes) bytes (\(expectation.source == "none" ? "the limit for unpinned files" : "the expected size"))")
        }
        guard let base = bytes.baseAddress else { return }
        var copied = 0
        while copied < bytes.count {
            let block = self.block ?? WritingThreads.shared.takeBlock()
            self.block = block
            let count = min(WritingThreads.blockSize - blockCount, bytes.count - copied)
            (block + blockCount).copyMemory(from: base + copied, byteCount: count)
            blockCount += count
            copied += count
            if blockCount == WritingThreads.blockSize { handOverBlock() }
        }
        offset += bytes.count
    }

    /// Every byte written so far, read back once the writing threads have written them: what the cross-check
    /// hashes and walks frame by frame (an unpinned file, up to its size limit). Call after `finishWriting`.
    public func contents() throws(CacheError) -> [UInt8] {
        finishWriting()
        try WritingThreads.shared.drain(sink)
        let reader = try openReader()
        defer { close(reader) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(offset)
        try Self.read(0..<offset, of: reader, path: partPath) { chunk in bytes.append(contentsOf: chunk) }
        return bytes
    }

    /// Appends the bytes `range` of this file, once written (after `check`), to `other`: a part cut out of a
    /// surah's whole file. Reads a block at a time.
    func copy(_ range: ClosedRange<Int>, to other: CacheWriter) throws(CacheError) {
        guard range.upperBound < offset else {
            throw CacheError(.io, "bytes \(range.lowerBound)-\(range.upperBound) are past the end of \(partPath) (\(offset) bytes)")
        }
        let reader = try openReader()
        defer { close(reader) }
        try Self.read(range.lowerBound..<(range.upperBound + 1), of: reader, path: partPath) { chunk throws(CacheError) in try other.append(chunk) }
    }

    /// The file open for reading through a description of its own (the writing one may have O_DIRECT set, which
    /// needs aligned reads); the caller closes it.
    private func openReader() throws(CacheError) -> Int32 {
        let reader = open("/proc/self/fd/\(descriptor)", O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw CacheError.system("open", path: partPath) }
        return reader
    }

    /// Reads `range` of the file open at `descriptor` 64 KiB at a time, handing each chunk to `body`; a file that
    /// ends before the range does throws.
    private static func read(
        _ range: Range<Int>, of descriptor: Int32, path: String, _ body: (UnsafeRawBufferPointer) throws(CacheError) -> Void
    ) throws(CacheError) {
        let size = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var position = range.lowerBound
        while position < range.upperBound {
            let wanted = min(size, range.upperBound - position)
            let count: Int
            do throws(Errno) {
                count = try SystemCall.retrying { pread(descriptor, buffer, wanted, off_t(position)) }
            } catch {
                throw CacheError.system("read", path: path, error)
            }
            // The file shrank while it was read (another process truncated it).
            guard count > 0 else { throw CacheError(.io, "read \(path): the file ended at \(position) of \(range.upperBound) bytes") }
            try body(UnsafeRawBufferPointer(start: buffer, count: count))
            position += count
        }
    }

    /// The file must have this SHA-256 when it is checked (the hash the cross-check's majority agreed on).
    public func require(sha256: String) { requiredSHA256 = sha256 }

    /// Hands the block being filled to the writing threads.
    private func handOverBlock() {
        guard let block else { return }
        WritingThreads.shared.submit(block, count: blockCount, offset: blockStart, to: sink)
        blockStart += blockCount
        self.block = nil
        blockCount = 0
    }

    /// Hands over the last bytes: after this, `WritingThreads.drain` covers the whole file.
    public func finishWriting() {
        if blockCount > 0 { handOverBlock() } else { discardBlock() }
    }

    /// Gives back the block being filled, unwritten.
    private func discardBlock() {
        if let block { WritingThreads.shared.returnBlock(block) }
        block = nil
        blockCount = 0
    }

    /// Discards what was written and starts from byte 0 (a server that ignored a range request).
    public func restart() throws(CacheError) {
        discardBlock()
        try? WritingThreads.shared.drain(sink)  // whatever failed before no longer matters
        guard ftruncate(descriptor, 0) == 0 else { throw CacheError.system("ftruncate", path: partPath) }
        try sink.reset()
        offset = 0
        blockStart = 0
    }

    /// Checks the finished download: the size and hash against the expectation, then (for files whose hash is
    /// not known) `validate`, which must find MPEG audio. On failure the partial file is removed. Returns the
    /// size and hash. Then `syncData` (or one `syncfs` for a batch) and `publish`; `Cache.commit` does all three.
    func check(validate: (String) throws -> AudioLength?) throws(CacheError) -> (bytes: Int, sha256: String, length: AudioLength?) {
        finishWriting()
        do throws(CacheError) {
            try WritingThreads.shared.drain(sink)
            let sha256 = try sink.hasher.finalize()
            if let problem = expectation.mismatch(bytes: offset, sha256: sha256) {
                throw CacheError(.mismatch, problem)
            }
            if let requiredSHA256, requiredSHA256 != sha256 {
                throw CacheError(.mismatch, "sha256 \(sha256.prefix(16))…, expected \(requiredSHA256.prefix(16))… (the mirrors' agreement)")
            }
            var length: AudioLength?
            if !expectation.isKnown {
                do {
                    // Reached through its descriptor's name in /proc: unnamed or not, no path is looked up again.
                    length = try validate("/proc/self/fd/\(descriptor)")
                } catch let failure {
                    throw CacheError(.mismatch, "not MPEG audio: \(failure)")
                }
            }
            return (offset, sha256, length)
        } catch {
            abandon(keepPartial: false)
            throw error
        }
    }

    /// Makes the bytes durable (fdatasync).
    func syncData() throws(CacheError) {
        guard fdatasync(descriptor) == 0 else { throw CacheError.system("fdatasync", path: partPath) }
    }

    /// The open descriptor, for a `syncfs` covering a batch.
    var openDescriptor: Int32 { descriptor }

    /// Gives the checked, durable file its final name (replacing whatever is there, a link included, without
    /// following it). The caller fsyncs the folder (`syncFolder`).
    func publish() throws(CacheError) {
        defer { closeDescriptors() }
        if !unnamed {
            do throws(CacheError) { try folder.rename(partName, to: finalName) } catch {
                _ = try? folder.remove(partName)
                throw error
            }
            return
        }
        if csystem_link_unnamed_at(descriptor, folder.descriptor, finalName) == 0 { return }
        guard Errno.current == .exists else { throw CacheError.system("link", path: finalPath) }
        // A file is in the way (one that failed its check, or was put there by hand): link beside it and rename
        // over it, so the name never points at nothing.
        let beside = ".\(finalName).\(getpid()).new"
        _ = try? folder.remove(beside)
        guard csystem_link_unnamed_at(descriptor, folder.descriptor, beside) == 0 else {
            throw CacheError.system("link", path: Path.join(folder.path, beside))
        }
        do throws(CacheError) { try folder.rename(beside, to: finalName) } catch {
            _ = try? folder.remove(beside)
            throw error
        }
    }

    /// Sets the published file's access time (what eviction goes by) to `milliseconds` since 1970: `Cache.touch`
    /// through the folder this writer already holds open.
    func setAccessTime(milliseconds: Int64) { folder.setAccessTime(finalName, milliseconds: milliseconds) }

    /// fsyncs the reciter's folder, so the names made in it survive a power cut.
    func syncFolder() throws(CacheError) { try folder.sync() }

    /// The reciter's folder this writer works in, as a path (to fsync each folder once per batch).
    var folderPath: String { folder.path }

    /// Stops writing. With `keepPartial` the bytes written stay at `partPath` for the next run to resume;
    /// otherwise they are removed. (The ayah's lock is still held here, so the partial file is this writer's.)
    public func abandon(keepPartial: Bool) {
        if keepPartial { finishWriting() } else { discardBlock() }
        let written = (try? WritingThreads.shared.drain(sink)) != nil
        let keep = keepPartial && offset > 0 && written
        if descriptor >= 0 {
            if unnamed {
                if keep { _ = csystem_link_unnamed_at(descriptor, folder.descriptor, partName) }  // best effort: else the next run starts over
            } else if !keep {
                _ = try? folder.remove(partName)
            }
        }
        closeDescriptors()
    }

    /// Closes the file, then releases the ayah's lock.
    private func closeDescriptors() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        lockFile?.unlock(lockKey)
        lockFile = nil
    }
}

@available(*, unavailable) extension CacheWriter: Sendable {}
