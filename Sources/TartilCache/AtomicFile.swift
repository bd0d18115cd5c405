import Glibc
import TartilCore
import TartilSystem

/// Writes whole files so that a reader sees either the old contents or the new, never a mix: the bytes go to a
/// temporary file in the same directory, are fsynced, renamed over the final name, and the directory is fsynced.
///
/// A path that names a character device or a FIFO (`-o /dev/stdout`, `-o /dev/null`, a pipe) is written through
/// instead, as `render` writes its WAV: renaming a file over it would replace the device itself (run as root,
/// `table build -o /dev/null` did replace /dev/null with a regular file). Any other path that is there and is not
/// a regular file (a folder, a socket, a block device) is refused.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `data`, creating missing parent directories.
    public static func write(_ data: [UInt8], to path: String) throws(CacheError) {
        var status = stat()
        if stat(path, &status) == 0 {
            switch status.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFCHR, S_IFIFO: return try writeThrough(data, to: path)
            case S_IFDIR: throw CacheError(.io, "\(path) is a folder: give a file to write")
            default: throw CacheError(.io, "\(path) is not a regular file, a character device or a FIFO: tartil does not write there")
            }
        }
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

    /// Writes `data` to the device or FIFO at `path` as it is (no temporary file, no rename, no fsync).
    private static func writeThrough(_ data: [UInt8], to path: String) throws(CacheError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw CacheError.system("open", path: path) }
        defer { close(descriptor) }
        let failure: CacheError? = data.withUnsafeBytes { buffer in
            do throws(Errno) { try SystemCall.writeAll(descriptor, buffer) } catch {
                return CacheError.system("write", path: path, error)
            }
            return nil
        }
        if let failure { throw failure }
    }
}
