import Foundation
import TartilCore

/// Writes one download into the cache: bytes go to `.SSSAAA.mp3.part` beside the final name (locked, so two
/// processes never write the same file), are hashed as they are written (no second pass), and reach the final
/// name only in `finish`, after fsync, the size and hash check and (for unknown files) the caller's validation,
/// followed by an fsync of the directory. A partial file left by an interrupted run is resumed: its bytes are
/// hashed again on open and the download continues from its end.
///
/// Confined to one thread.
public final class CacheWriter {
    public let finalPath: String
    public let partPath: String
    public let expectation: FileExpectation
    private var descriptor: Int32
    /// SHA-256 of the bytes written, computed on the `HashingThread` as they are written.
    private var digest: StreamingDigest
    /// Bytes in the partial file so far: where a resumed download continues.
    public private(set) var offset: Int = 0

    init(finalPath: String, expectation: FileExpectation) throws(CacheError) {
        self.finalPath = finalPath
        self.expectation = expectation
        let directory = Path.parent(finalPath)
        partPath = Path.join(directory, ".\(Path.name(finalPath)).part")
        // One mkdir(2) in the common case (the reciter's folder exists); FileManager only to create parents.
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CacheError(.io, "cannot create \(directory): \(error.localizedDescription)")
            }
        }
        descriptor = try Self.openLocked(partPath, finalPath: finalPath)
        digest = try StreamingDigest()
        try resumeExisting()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Opens and locks the partial file. The lock is only good if the file is still the one at `path` once
    /// locked: another process may have finished it and renamed it to its final name in between (writing to
    /// that inode would damage a verified file), so the inode is compared and the open retried.
    private static func openLocked(_ path: String, finalPath: String) throws(CacheError) -> Int32 {
        for _ in 0..<100 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw CacheError.system("open", path: path) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                throw CacheError(.busy, "\(finalPath) is being downloaded by another tartil process")
            }
            var opened = stat()
            var current = stat()
            if fstat(descriptor, &opened) == 0, stat(path, &current) == 0,
                opened.st_ino == current.st_ino, opened.st_dev == current.st_dev
            {
                return descriptor
            }
            close(descriptor)  // renamed or removed while we waited for the lock: open the new one
        }
        throw CacheError(.busy, "\(finalPath): the partial file keeps changing under another process")
    }

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
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var position = 0
        while position < size {
            let count = pread(descriptor, buffer, min(1 << 16, size - position), off_t(position))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw CacheError.system("read", path: partPath) }
            try digest.updateHere(buffer, count: count)
            position += count
        }
        offset = size
        guard lseek(descriptor, off_t(size), SEEK_SET) >= 0 else { throw CacheError.system("lseek", path: partPath) }
    }

    /// Appends downloaded bytes. Throws `.tooLarge` when the file would grow past what it may be.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        guard offset + bytes.count <= expectation.maxBytes else {
            throw CacheError(.tooLarge, "more than \(expectation.maxBytes) bytes (\(expectation.source == "none" ? "the limit for unpinned files" : "the expected size"))")
        }
        var written = 0
        while written < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw CacheError.system("write", path: partPath)
            }
            written += count
        }
        if let base = bytes.baseAddress { HashingThread.shared.append(base, count: bytes.count, to: digest) }
        offset += bytes.count
    }

    /// Discards what was written and starts from byte 0 (a server that ignored a range request).
    public func restart() throws(CacheError) {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw CacheError.system("ftruncate", path: partPath)
        }
        digest = try StreamingDigest()  // chunks still queued for the old one finish harmlessly
        offset = 0
    }

    /// Checks the finished download: the size and hash against the expectation, then (for files whose hash is
    /// not known) `validate`, which must find MPEG audio. On failure the partial file is removed. Returns the
    /// size and hash. Then `syncData` (or one `syncfs` for a batch) and `publish`; `Cache.commit` does all three.
    func check(validate: (String) throws -> Void) throws(CacheError) -> (bytes: Int, sha256: String) {
        let sha256 = try HashingThread.shared.finish(digest)
        do throws(CacheError) {
            if let problem = expectation.mismatch(bytes: offset, sha256: sha256) {
                throw CacheError(.mismatch, problem)
            }
            if !expectation.isKnown {
                do {
                    try validate(partPath)
                } catch let failure {
                    throw CacheError(.mismatch, "not MPEG audio: \(failure)")
                }
            }
        } catch {
            abandon(keepPartial: false)
            throw error
        }
        return (offset, sha256)
    }

    /// Makes the bytes durable (fdatasync).
    func syncData() throws(CacheError) {
        guard fdatasync(descriptor) == 0 else { throw CacheError.system("fdatasync", path: partPath) }
    }

    /// The open descriptor, for a `syncfs` covering a batch.
    var openDescriptor: Int32 { descriptor }

    /// Renames the checked, durable file to its final name. The caller fsyncs the directory.
    func publish() throws(CacheError) {
        defer { closeDescriptor() }
        guard rename(partPath, finalPath) == 0 else {
            let error = CacheError.system("rename", path: finalPath)
            unlink(partPath)
            throw error
        }
    }

    /// Stops writing. With `keepPartial` the bytes stay for the next run to resume; otherwise they are removed.
    /// (The lock is still held here, so the file unlinked is this writer's own.)
    public func abandon(keepPartial: Bool) {
        if descriptor >= 0 && (!keepPartial || offset == 0) { unlink(partPath) }
        closeDescriptor()
    }

    private func closeDescriptor() {
        if descriptor >= 0 {
            close(descriptor)  // also releases the lock
            descriptor = -1
        }
    }
}

@available(*, unavailable) extension CacheWriter: Sendable {}
