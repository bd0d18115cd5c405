import CSystem
import Glibc
import TartilCore
import TartilSystem

/// Small files of tartil's own in a reciter's folder of the cache, beside its audio (a surah-file reciter's learned
/// table, `surah-table.tsv`): replaced whole, atomically and durably, under a lock, through the folder's descriptor
/// like every other file of the cache (a link at any of their names is never followed for writing).
extension Cache {
    /// Replaces `name` in `reciter`'s folder (created when missing) with what `change` makes of its current bytes
    /// (nil when there is no such file, or a link at its name), under an exclusive lock on `<name>.lock` held
    /// from the read to the rename, so that two processes changing it at once both keep their change. The new
    /// bytes go to a temporary file that is fsynced and renamed over the name; the folder is fsynced after.
    public func rewrite(
        reciter: ReciterID, file name: String, _ change: ([UInt8]?) throws(CacheError) -> [UInt8]
    ) throws(CacheError) {
        let folder = try folder(reciter.rawValue, create: true)!
        let lock = try folder.openFile(name + ".lock", O_CREAT | O_RDWR, removingLink: true, what: "a lock")
        defer { close(lock) }  // closing the descriptor releases the flock
        do throws(Errno) {
            _ = try SystemCall.retrying { flock(lock, LOCK_EX) }
        } catch {
            throw CacheError.system("flock", path: Path.join(folder.path, name + ".lock"), error)
        }
        let current = folder.isSymbolicLink(name) ? nil : try folder.read(name)
        let bytes = try change(current)
        let temporary = ".\(name).\(getpid()).tmp"
        let descriptor = try folder.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, removingLink: true, what: "a temporary file")
        var written = false
        defer {
            if !written { _ = try? folder.remove(temporary) }
        }
        let failure: CacheError? = bytes.withUnsafeBytes { buffer in
            do throws(Errno) { try SystemCall.writeAll(descriptor, buffer) } catch {
                return CacheError.system("write", path: Path.join(folder.path, temporary), error)
            }
            return fsync(descriptor) == 0 ? nil : CacheError.system("fsync", path: Path.join(folder.path, temporary))
        }
        guard close(descriptor) == 0, failure == nil else {
            throw failure ?? CacheError.system("close", path: Path.join(folder.path, temporary))
        }
        try folder.rename(temporary, to: name)
        written = true
        try folder.sync()
    }

    /// Takes an exclusive lock on byte `key` of the reciter's file `name` (made when missing; a whole-file `flock`
    /// on it, as `rewrite` takes, is independent), waiting while another process holds it and asking
    /// `isCancelled` every 0.1 s: nil when cancelled. Other keys never wait. The lock is let go when the returned
    /// lock is released (or dropped), or when the process ends.
    public func lockByte(reciter: ReciterID, file name: String, key: Int, isCancelled: () -> Bool) throws(CacheError) -> HeldLock? {
        let folder = try folder(reciter.rawValue, create: true)!
        let descriptor = try folder.openFile(name, O_CREAT | O_RDWR, removingLink: true, what: "a lock")
        while true {
            if csystem_try_lock_byte(descriptor, key) == 0 { return HeldLock(descriptor: descriptor) }
            let error = Errno.current
            guard error == .wouldBlock || error == .permissionDenied || error == .interrupted else {
                close(descriptor)
                throw CacheError.system("lock", path: Path.join(folder.path, name), error)
            }
            if isCancelled() {
                close(descriptor)
                return nil
            }
            usleep(100_000)
        }
    }
}

/// A lock `Cache.lockByte` took: held until `release` (or until it is dropped).
public final class HeldLock {
    private var descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { release() }

    /// Lets go of the lock (closing its own descriptor, which releases it).
    public func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }
}
