import CSystem
import Glibc
import TartilCore
import TartilSystem

/// Reading a file without changing its access time (`O_NOATIME`): a cached file's access time is tartil's record
/// of when it was last played (`Cache.touch`), which checking, hashing or measuring it must leave as it is.
public enum UntouchedReads {
    /// `open(path, flags | O_NOATIME)`, or without `O_NOATIME` for a file the system refuses it for (one tartil does
    /// not own). -1 with `errno` set when the file cannot be opened.
    static func open(_ path: String, _ flags: Int32) -> Int32 {
        let descriptor = Glibc.open(path, flags | csystem_o_noatime)
        if descriptor < 0 && Errno.current == .notPermitted { return Glibc.open(path, flags) }
        return descriptor
    }

    /// The whole file at `path`.
    public static func contents(of path: String) throws(CacheError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw CacheError.system("open", path: path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CacheError.system("fstat", path: path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw CacheError(.io, "\(path) is not a regular file") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let total = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try SystemCall.readAll(descriptor, into: buffer, at: 0) }
        }
        switch total {
        case .success(let count): return Array(bytes.prefix(count))
        case .failure(let error): throw CacheError.system("read", path: path, error)
        }
    }
}
