import Glibc
import TartilCore
import TartilSystem

/// Writes whole files so that a reader sees either the old contents or the new, never a mix: the bytes go to a
/// temporary file in the same directory, are fsynced, renamed over the final name, and the directory is fsynced.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `data`, creating missing parent directories.
    public static func write(_ data: [UInt8], to path: String) throws(CacheError) {
        let directory = Path.parent(path).isEmpty
            ? "." : Path.parent(path)
        do {
            try FileSystem.createDirectories(directory)
        } catch {
            throw CacheError(.io, "cannot create \(directory): \(error.cause ?? error.message)")
        }
        let name = Path.name(path)
        let temporary = Path.join(directory, ".\(name).\(getpid()).tmp")
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw CacheError.system("open", path: temporary) }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        let writeFailure: CacheError? = data.withUnsafeBytes { buffer in
            do throws(Errno) { try SystemCall.writeAll(descriptor, buffer) } catch {
                return CacheError.system("write", path: temporary, error)
            }
            return fsync(descriptor) == 0 ? nil : CacheError.system("fsync", path: temporary)
        }
        if let writeFailure {
            close(descriptor)
            throw writeFailure
        }
        guard close(descriptor) == 0 else { throw CacheError.system("close", path: temporary) }
        guard rename(temporary, path) == 0 else { throw CacheError.system("rename", path: path) }
        succeeded = true
        try syncDirectory(directory)
    }

    /// fsyncs a directory so a rename inside it survives a power cut.
    public static func syncDirectory(_ directory: String) throws(CacheError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CacheError.system("open", path: directory) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CacheError.system("fsync", path: directory) }
    }
}
