import CSystem
import Glibc
import TartilCore
import TartilSystem

/// A folder of the cache held open: the cache's root, or a reciter's folder inside it. Everything below the root
/// is reached relative to these descriptors with `O_NOFOLLOW`, so a symbolic link inside the cache (at a file's,
/// a partial file's, the lock's or a reciter folder's name) is never followed: tartil writes nothing outside
/// the cache, whatever links someone put in it. The root itself is resolved once, when it is opened, and may be a
/// link (a cache on another disk).
///
/// Owns its descriptor (closed in `deinit`). A `Cache` keeps its reciters' folders open across its writers, and
/// a writer may be committed on another thread than the one that opened it (a prefetch's committer): its
/// descriptor, path and identity never change after `init`, and every call on it is one `*at` system call, which
/// two threads may make at once. `names` is the exception (it reads through a duplicate descriptor, whose read
/// position is shared): only the thread of the `Cache` that opened the folder lists it.
final class CacheFolder {
    let descriptor: Int32
    /// The folder's path, for messages.
    let path: String
    /// The folder's identity when it was opened (`isAt`; nil for the root, which is never looked up again).
    private let identity: FileIdentity?

    /// Opens the cache's root folder (following links: the root is resolved once, here); messages name it
    /// `shownAs` (the path the user gave).
    init(root path: String, shownAs label: String) throws(CacheError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CacheError.system("open", path: label) }
        self.descriptor = descriptor
        self.path = label
        identity = nil
    }

    /// Opens the folder `name` inside `parent`, creating it when `create`; a link at that name is refused.
    init(_ name: String, in parent: CacheFolder, create: Bool) throws(CacheError) {
        let path = Path.join(parent.path, name)
        if create && mkdirat(parent.descriptor, name, 0o755) != 0 && Errno.current != .exists {
            throw CacheError.system("mkdir", path: path)
        }
        let descriptor = openat(parent.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if parent.isSymbolicLink(name) { throw CacheError.symbolicLink(path, what: "a reciter's folder") }
            throw CacheError.system("open", path: path)
        }
        self.descriptor = descriptor
        self.path = path
        identity = FileIdentity(descriptor: descriptor)  // unknown: never taken for the folder at a name (`isAt`)
    }

    deinit { close(descriptor) }

    /// Whether `name` in `parent` still leads to this folder (not removed, renamed away or replaced, a link
    /// included): one `fstatat`, where opening the folder again takes a `mkdir`, an open and a close.
    func isAt(_ name: String, in parent: CacheFolder) -> Bool { identity?.isAt(name, in: parent) ?? false }

    /// Whether `name` in this folder is a symbolic link (not followed).
    func isSymbolicLink(_ name: String) -> Bool {
        var status = stat()
        return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
    }

    /// What is at `name`, without following a link: nil when nothing is.
    func status(_ name: String) -> stat? {
        var status = stat()
        return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? status : nil
    }

    /// Opens the regular file `name` with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` added). A link at that name is
    /// removed first when `removingLink` (a name of tartil's own: a partial file, a lock), else refused; anything
    /// but a regular file is refused. Returns -1 when there is nothing at that name (and no `O_CREAT`).
    /// `O_NOATIME` in `flags` is dropped for a file the system refuses it for (one tartil does not own).
    func openFile(_ name: String, _ flags: Int32, mode: mode_t = 0o644, removingLink: Bool, what: String) throws(CacheError) -> Int32 {
        var flags = flags
        var descriptor = openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        if descriptor < 0 && Errno.current == .notPermitted && flags & csystem_o_noatime != 0 {
            flags &= ~csystem_o_noatime
            descriptor = openat(self.descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        }
        if descriptor < 0 && Errno.current == .tooManySymbolicLinks {
            guard removingLink else { throw CacheError.symbolicLink(Path.join(path, name), what: what) }
            guard unlinkat(self.descriptor, name, 0) == 0 || Errno.current == .noEntry else {
                throw CacheError.system("unlink", path: Path.join(path, name))
            }
            descriptor = openat(self.descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
            if descriptor < 0 && Errno.current == .tooManySymbolicLinks { throw CacheError.symbolicLink(Path.join(path, name), what: what) }
        }
        guard descriptor >= 0 else {
            if Errno.current == .noEntry && flags & O_CREAT == 0 { return -1 }
            throw CacheError.system("open", path: Path.join(path, name))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw CacheError(.io, "\(Path.join(path, name)) is not a regular file: tartil leaves it alone (remove it)")
        }
        return descriptor
    }

    /// Removes `name` (a link itself, never its target); true when it was there.
    @discardableResult
    func remove(_ name: String) throws(CacheError) -> Bool {
        if unlinkat(descriptor, name, 0) == 0 { return true }
        if Errno.current == .noEntry { return false }
        throw CacheError.system("unlink", path: Path.join(path, name))
    }

    /// Renames `from` to `to` within the folder (a link at `to` is replaced, not followed).
    func rename(_ from: String, to: String) throws(CacheError) {
        guard renameat(descriptor, from, descriptor, to) == 0 else { throw CacheError.system("rename", path: Path.join(path, to)) }
    }

    /// Sets the access time of `name` (a link itself is never followed) to `milliseconds` since 1970, leaving its
    /// modification time; false when it cannot be (nothing at that name, a read-only file system). A file of
    /// another user's, which only its owner may give a time, gets the system's time now (which anyone who may
    /// write it may set).
    @discardableResult
    func setAccessTime(_ name: String, milliseconds: Int64) -> Bool {
        if csystem_set_access_time_at(descriptor, name, milliseconds) == 0 { return true }
        return Errno.current == .notPermitted && csystem_set_access_time_now_at(descriptor, name) == 0
    }

    /// fsyncs the folder, so names made in it survive a power cut.
    func sync() throws(CacheError) {
        guard fsync(descriptor) == 0 else { throw CacheError.system("fsync", path: path) }
    }

    /// The names in the folder (without `.` and `..`).
    func names() -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads the whole regular file `name`, refusing a link; nil when there is nothing at that name. The file's
    /// access time is left as it is (`O_NOATIME`): it is tartil's record of when the file was last played
    /// (`setAccessTime`), which reading to check or list a file must not change.
    func read(_ name: String) throws(CacheError) -> [UInt8]? {
        // O_NONBLOCK: a FIFO put at the name must not hang the open (it is then refused as not a regular file).
        let descriptor = try openFile(name, O_RDONLY | O_NONBLOCK | csystem_o_noatime, removingLink: false, what: "a cached file")
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CacheError.system("fstat", path: Path.join(path, name)) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let total = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try SystemCall.readAll(descriptor, into: buffer, at: 0) }
        }
        switch total {
        case .success(let count): return Array(bytes.prefix(count))
        case .failure(let error): throw CacheError.system("read", path: Path.join(path, name), error)
        }
    }
}

@available(*, unavailable) extension CacheFolder: Sendable {}

/// What a name in the cache led to when it was opened (device, inode and type), to tell later, with one `fstatat`,
/// whether the name still leads there: a folder or lock file kept open (`Cache`) is opened again when it does not.
struct FileIdentity: Sendable, Hashable {
    let device: UInt
    let inode: UInt
    /// `S_IFDIR`, `S_IFREG`…
    let type: mode_t

    /// The identity of what `descriptor` has open; nil when `fstat` fails.
    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }

    init(_ status: stat) {
        device = UInt(status.st_dev)
        inode = UInt(status.st_ino)
        type = status.st_mode & S_IFMT
    }

    /// Whether `name` in `folder` (not followed, should it be a link) is still this file.
    func isAt(_ name: String, in folder: CacheFolder) -> Bool { folder.status(name).map(Self.init) == self }
}

extension CacheError {
    /// A symbolic link where the cache expects `what` of its own.
    static func symbolicLink(_ path: String, what: String) -> CacheError {
        CacheError(
            .symbolicLink,
            "\(path) is a symbolic link where the cache keeps \(what): tartil does not follow links inside the cache (remove it)")
    }
}
