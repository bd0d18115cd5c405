import Glibc
import TartilCore

/// File system calls with the system's own reasons: `TartilError(.io, …, cause: "Permission denied")`.
///
/// tartil links no Foundation (not even FoundationEssentials: its 1,190 protocol conformances made every
/// runtime conformance lookup longer, and its code and relocations cost every start), so the file system calls
/// the modules need are made here.
public enum FileSystem {
    /// Whether `path` exists (following symbolic links).
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The target of the symbolic link `path` (readlink(2)), or nil when it is not one or cannot be read.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// What is at a path.
    public enum Kind: Sendable, Equatable {
        case regular, directory, characterDevice, fifo, other
    }

    /// What is at `path` (following symbolic links), or nil when nothing is.
    public static func kind(of path: String) -> Kind? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        case S_IFCHR: return .characterDevice
        case S_IFIFO: return .fifo
        default: return .other
        }
    }

    /// Whether `path` is a directory (following symbolic links).
    public static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `path` is a regular file (following symbolic links).
    public static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// Creates `path` and any missing parents, like `mkdir -p`.
    public static func createDirectories(_ path: String) throws(TartilError) {
        if mkdir(path, 0o755) == 0 || (errno == EEXIST && isDirectory(path)) { return }
        if errno == ENOENT {
            let parent = Path.parent(path)
            if parent != path && parent != "." && parent != "/" {
                try createDirectories(parent)
                if mkdir(path, 0o755) == 0 || (errno == EEXIST && isDirectory(path)) { return }
            }
        }
        throw TartilError(.io, "cannot create \(path)", cause: reason())
    }

    /// The names in a directory (without `.` and `..`), in no particular order.
    public static func names(in directory: String) throws(TartilError) -> [String] {
        guard let stream = opendir(directory) else { throw TartilError(.io, "cannot list \(directory)", cause: reason()) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The whole file at `path`.
    public static func read(_ path: String) throws(TartilError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TartilError(errno == ENOENT ? .notFound : .io, "cannot read \(path)", cause: reason())
        }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, path: path)
    }

    /// The whole file open at `descriptor` (`path`: its name, for messages).
    private static func read(descriptor: Int32, path: String) throws(TartilError) -> [UInt8] {
        var status = stat()
        let size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
        var failure: Errno?
        // Read into uninitialized memory (a table is 400 KB: no zero-filling first), one byte more than the size
        // so that the read that finds the end needs no second buffer.
        var bytes = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            count = 0
            while count < buffer.count {
                do throws(Errno) {
                    let result = try SystemCall.retrying { Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count) }
                    if result == 0 { return }
                    count += result
                } catch {
                    failure = error
                    return
                }
            }
        }
        // A file that grew while it was read: the rest in pieces.
        var piece = [UInt8](repeating: 0, count: bytes.count > size ? 65536 : 0)
        while failure == nil && !piece.isEmpty {
            let result = piece.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try SystemCall.retrying { Glibc.read(descriptor, buffer.baseAddress!, buffer.count) } }
            }
            switch result {
            case .success(0): piece = []
            case .success(let count): bytes.append(contentsOf: piece[..<count])
            case .failure(let error): failure = error
            }
        }
        if let failure {
            throw TartilError(.io, "cannot read \(path)", cause: failure.description)
        }
        return bytes
    }

    /// The whole regular file at `path` (a symbolic link is followed), of at most `maxBytes` bytes, for a file
    /// someone handed over (`cache import`): what stands in the way is named in words, not only the system's
    /// reason — a link to nothing, a folder, something other than a regular file (a pipe is opened without
    /// waiting for a writer), a file too large, one that cannot be opened or read.
    public static func readRegularFile(_ path: String, maxBytes: Int) throws(TartilError) -> [UInt8] {
        var status = stat()
        if stat(path, &status) != 0 {
            let cause = reason()
            var link = stat()
            if errno == ENOENT && lstat(path, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK {
                throw TartilError(.notFound, "\(path) is a symbolic link to nothing (its target does not exist)")
            }
            throw TartilError(.io, "cannot read \(path)", cause: cause)
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw TartilError(.io, "\(path) is a folder, not a file")
        default: throw TartilError(.io, "\(path) is not a regular file (a pipe, a socket or a device)")
        }
        guard Int(status.st_size) <= maxBytes else {
            throw TartilError(.io, "\(path) is too large (\(status.st_size) bytes, at most \(maxBytes) expected)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw TartilError(.io, "cannot open \(path)", cause: reason()) }
        defer { close(descriptor) }
        // What is read is what this descriptor opened: a regular file, not one swapped for a pipe in between.
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
            throw TartilError(.io, "\(path) changed while it was opened: not a regular file")
        }
        let bytes = try read(descriptor: descriptor, path: path)
        guard bytes.count <= maxBytes else { throw TartilError(.io, "\(path) is too large (it grew past \(maxBytes) bytes)") }
        return bytes
    }

    /// fsyncs the directory `path`, so that a rename or link inside it survives a power cut; false when it could
    /// not be opened or synced (best effort: the callers' files are complete either way).
    @discardableResult
    public static func syncDirectory(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// `errno`'s text.
    public static func reason() -> String { String(cString: strerror(errno)) }
}
