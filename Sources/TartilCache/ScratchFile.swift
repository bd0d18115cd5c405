import CSystem
import Glibc
import TartilCore
import TartilSystem

/// A file of a reciter's folder in the cache that is never given a name: the place for a large download that is
/// read but never kept as it is (a surah's whole file, fetched from one mirror to learn the surah from:
/// `SurahLearning`). It is made with `O_TMPFILE` in the reciter's folder (reached through the folder's descriptor,
/// like every file of the cache), so nothing of it is ever visible and it is gone when it is closed, on any error,
/// on Ctrl-C, or when the process dies. Where the file system has no `O_TMPFILE`, a new hidden name is made
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`) and removed at once, leaving only the descriptor.
///
/// Bytes are hashed (SHA-256) as they are appended; the whole file is read back by mapping it (`map`), never
/// into an array.
///
/// Confined to one thread at a time.
///
/// ```swift
/// let copy = try cache.scratchFile(reciter: id)
/// try copy.append(chunk)                 // … as the body arrives
/// let print = try copy.fingerprint()     // its size and SHA-256
/// let mapped = try copy.map()            // read it (mapped.bytes), a pass at a time
/// ```
public final class ScratchFile {
    /// The reciter's folder (for messages).
    public let folderPath: String
    private var descriptor: Int32
    private var hasher: SHA256
    /// Bytes appended so far.
    public private(set) var count = 0
    /// The finished hash, once `fingerprint` was asked.
    private var digest: String?

    init(folder: CacheFolder) throws(CacheError) {
        folderPath = folder.path
        descriptor = try folder.openAnonymous(what: "a file being learned from")
        do throws(CacheError) {
            hasher = try SHA256()
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    deinit { close() }

    /// Closes the file, which frees it (it has no name).
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Appends `bytes` (written at once, hashed).
    public func append(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        precondition(digest == nil, "ScratchFile.append after fingerprint")
        do throws(Errno) {
            try SystemCall.writeAll(descriptor, bytes)
        } catch {
            throw CacheError.system("write", path: "a file being learned from in \(folderPath)", error)
        }
        try hasher.update(bytes)
        count += bytes.count
    }

    /// Empties the file, to start over (a new answer to the request; the next attempt).
    public func restart() throws(CacheError) {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw CacheError.system("ftruncate", path: "a file being learned from in \(folderPath)")
        }
        hasher = try SHA256()
        digest = nil
        count = 0
    }

    /// The file's size and SHA-256 (after this, nothing more may be appended until `restart`).
    public func fingerprint() throws(CacheError) -> FileFingerprint {
        if digest == nil { digest = try hasher.finalize() }
        return FileFingerprint(bytes: count, sha256: digest!)
    }

    /// The file's bytes, mapped read-only (`MappedFile`: read them a pass at a time, telling it how far each pass
    /// has come, so that a large file is never resident whole).
    public func map() throws(CacheError) -> MappedFile {
        do throws(Errno) {
            return try MappedFile(descriptor: descriptor, count: count)
        } catch {
            throw CacheError.system("mmap", path: "a file being learned from in \(folderPath)", error)
        }
    }
}

@available(*, unavailable) extension ScratchFile: Sendable {}

extension Cache {
    /// A new file with no name in `reciter`'s folder (created when missing), for a download that is only read.
    public func scratchFile(reciter: ReciterID) throws(CacheError) -> ScratchFile {
        try ScratchFile(folder: try folder(reciter.rawValue, create: true)!)
    }
}

extension CacheFolder {
    /// Opens a new, empty file in this folder that has no name (`O_TMPFILE`), for reading and writing; where the
    /// file system has none, a new hidden name made with `O_EXCL` and removed at once.
    func openAnonymous(what: String) throws(CacheError) -> Int32 {
        let descriptor = csystem_open_unnamed_at(self.descriptor, 0o600)
        if descriptor >= 0 { return descriptor }
        let error = Errno.current
        guard error == .notSupported || error == .isDirectory || error == .invalidArgument else {
            throw CacheError.system("open", path: path, error)
        }
        for attempt in 0..<100 {
            let name = ".scratch.\(getpid()).\(attempt).tmp"
            let named = openat(self.descriptor, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if named < 0 && Errno.current == .exists { continue }
            guard named >= 0 else { throw CacheError.system("open", path: Path.join(path, name)) }
            guard unlinkat(self.descriptor, name, 0) == 0 else {
                let failure = CacheError.system("unlink", path: Path.join(path, name))
                Glibc.close(named)
                throw failure
            }
            return named
        }
        throw CacheError(.io, "cannot make \(what) in \(path): every name tried is taken")
    }
}
