import Glibc
import TartilCore
import TartilSession
import TartilSystem

/// Where the control socket of this user is, and whether a folder and a socket there may be trusted.
///
/// - Where: `--socket PATH` or `TARTIL_SOCKET` (or `socket=` in the config file), else
///   `$XDG_RUNTIME_DIR/tartil/control.sock`, else `/tmp/tartil-UID/control.sock`.
/// - Trust, on both sides and before a byte is sent: the socket's folder is a real folder (not a symbolic link)
///   owned by this user with no access for anyone else (mode 0700); the socket is a socket owned by this user;
///   the process at the other end is this user's (`SO_PEERCRED`). Another local user who made `/tmp/tartil-UID`
///   first gets nothing.
public struct ControlSocketPath: Sendable, Hashable {
    public let path: String
    /// True when the user named it (`--socket`, `TARTIL_SOCKET`, `socket=`): its folder is never made or changed.
    public let isExplicit: Bool

    public init(path: String, isExplicit: Bool) {
        self.path = path
        self.isExplicit = isExplicit
    }

    /// The socket's path for these settings.
    public init(_ settings: Settings) {
        if let explicit = settings.socketOption ?? settings.environment["TARTIL_SOCKET"] ?? settings.configured("socket"), !explicit.isEmpty {
            self.init(path: explicit, isExplicit: true)
        } else if let runtime = settings.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            self.init(path: Path.join(Path.join(runtime, "tartil"), "control.sock"), isExplicit: false)
        } else {
            self.init(path: "/tmp/tartil-\(getuid())/control.sock", isExplicit: false)
        }
    }

    public var folder: String { Path.parent(path) }

    /// Why the socket's folder cannot be trusted, or nil when it can: it must be a folder, not a symbolic link,
    /// owned by this user, mode 0700 (no group or other bits at all).
    public func folderProblem() -> String? {
        var status = stat()
        guard lstat(folder, &status) == 0 else { return "\(folder): \(Errno.current)" }
        if (status.st_mode & S_IFMT) == S_IFLNK { return "\(folder) is a symbolic link" }
        guard (status.st_mode & S_IFMT) == S_IFDIR else { return "\(folder) is not a folder" }
        guard status.st_uid == getuid() else { return "\(folder) belongs to another user (uid \(status.st_uid))" }
        guard status.st_mode & 0o077 == 0 else {
            return "\(folder) may be used by others (mode \(String(status.st_mode & 0o777, radix: 8)); only 0700 is trusted)"
        }
        return nil
    }

    /// What is at the socket's path: nothing, a socket of this user's, or something else (never touched).
    public enum Occupant: Equatable {
        case nothing
        case socket
        case other(String)
    }

    public func occupant() -> Occupant {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .nothing }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else { return .other("\(path) is not a socket") }
        guard status.st_uid == getuid() else { return .other("\(path) belongs to another user (uid \(status.st_uid))") }
        return .socket
    }

    // MARK: - Sockets

    /// A `sockaddr_un` for `path`, or nil when the path is too long for one.
    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// The user id of the process at the other end of a Unix socket.
    static func peerUID(_ descriptor: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc does not export it without _GNU_SOURCE;
        // SO_PEERCRED is 17 on Linux).
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, 17, &credentials, &length) == 0 else { return nil }
        return credentials.1
    }

    /// What connecting found.
    public enum Connection {
        /// A server of this user's answers: the connected descriptor.
        case connected(Int32)
        /// Nothing listens there (no socket, or a stale one: refused).
        case nobody
        /// Something there is not to be trusted, with why; nothing was sent.
        case untrusted(String)
    }

    /// Connects to the socket, after checking its folder and the socket, and checks the server's uid before
    /// anything is sent.
    public func connect() -> Connection {
        if case .other(let why) = occupant() { return .untrusted(why) }
        if occupant() == .nothing { return .nobody }
        if let problem = folderProblem() { return .untrusted(problem) }
        guard var address = Self.address(path) else { return .untrusted("\(path) is too long for a socket path") }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .untrusted("socket: \(Errno.current)") }
        let result = try? SystemCall.retrying {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        guard result == 0 else {
            close(descriptor)
            return .nobody
        }
        guard Self.peerUID(descriptor) == getuid() else {
            close(descriptor)
            return .untrusted("the server at \(path) runs as another user")
        }
        return .connected(descriptor)
    }
}
