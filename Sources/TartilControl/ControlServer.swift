import Glibc
import Synchronization
import TartilCore
import TartilSession
import TartilSystem

/// Serves the control socket for a session: a thread accepts connections and each connection gets a thread of
/// its own, which reads its requests (`ControlProtocol`), hands each to the session as a typed `ControlRequest`
/// and writes the typed reply. Nothing here parses what another front end printed, and a request can name no
/// path: the socket takes control verbs with their own arguments only.
///
/// Limits, so that no client can crash, hang or pin the server: a line is at most 64 KiB; at most
/// `maximumConnections` at once (more are told so and closed); a connection that sends nothing for
/// `idleSeconds` is closed; a reply or event the client does not read within `sendSeconds` ends the connection.
public final class ControlServer: Sendable {
    public static let maximumConnections = 64
    public static let idleSeconds = 300
    public static let sendSeconds = 5

    public let socket: ControlSocketPath
    private let listener: Int32
    /// The socket's inode once bound: at exit only this socket is removed (never one another player made since).
    private let inode: UInt64
    private let stopped = Atomic<Bool>(false)
    private let connections = Atomic<Int>(0)
    /// The requests being answered (not `watch` streams): `stop` lets them send their replies.
    let answering = Monitor(0)
    /// The `watch` streams open: `stop` lets them send the events published before it (the player's `end` among
    /// them) and their replies, so a watcher of a player that finishes sees it finish.
    let watching = Monitor(0)
    /// How long `stop` waits for the replies of requests being answered.
    public static let replySeconds = 2.0

    /// Binds the socket and starts serving `session`; nil when another live player already serves this user, or
    /// when the socket cannot be made safely (`note` says why, once). Only a stale socket of this user's is ever
    /// removed; a folder named with `--socket` is never made or changed; the default folder is made 0700 if it
    /// is missing, and refused (not changed) if it is not a folder of this user's with mode 0700.
    public static func start(_ socket: ControlSocketPath, session: Session, note: @Sendable (String) -> Void) -> ControlServer? {
        let folder = socket.folder
        if !socket.isExplicit && !FileSystem.exists(folder) {
            let oldMask = umask(0o077)
            try? FileSystem.createDirectories(Path.parent(folder))  // XDG_RUNTIME_DIR may not exist yet
            let made = mkdir(folder, 0o700) == 0 || Errno.current == .exists
            umask(oldMask)
            if !made {
                note("note: no control socket (cannot make \(folder): \(Errno.current))")
                return nil
            }
        }
        if let problem = socket.folderProblem() {
            note("note: no control socket (\(problem)); other terminals cannot reach this player")
            return nil
        }
        // One process at a time decides what is at the path and binds there (a lock on the folder itself: no file
        // is made for it).
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else {
            note("note: no control socket (\(folder): \(Errno.current))")
            return nil
        }
        defer { close(folderDescriptor) }
        _ = try? SystemCall.retrying { flock(folderDescriptor, LOCK_EX) }
        switch socket.occupant() {
        case .other(let why):
            note("note: no control socket (\(why); it is left as it is)")
            return nil
        case .socket:
            switch socket.connect() {
            case .connected(let live):
                close(live)
                return nil  // another player serves this user
            case .untrusted(let why):
                note("note: no control socket (\(why))")
                return nil
            case .nobody:
                unlink(socket.path)  // a stale socket of this user's: nothing answers there
            }
        case .nothing:
            break
        }
        guard var address = ControlSocketPath.address(socket.path) else {
            note("note: no control socket (\(socket.path) is too long for a socket path)")
            return nil
        }
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let socketMask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(socketMask)
        guard bound == 0, listen(descriptor, 32) == 0 else {
            note("note: no control socket (\(socket.path): \(Errno.current))")
            close(descriptor)
            return nil
        }
        var status = stat()
        let inode = lstat(socket.path, &status) == 0 ? UInt64(status.st_ino) : 0
        let server = ControlServer(socket: socket, listener: descriptor, inode: inode)
        NativeThread.start(stackSize: 256 << 10) { server.acceptLoop(session: session) }
        return server
    }

    private init(socket: ControlSocketPath, listener: Int32, inode: UInt64) {
        self.socket = socket
        self.listener = listener
        self.inode = inode
    }

    /// Stops accepting and removes the socket (at exit), if it is still the one bound here; then waits (at most
    /// `replySeconds`) until the requests being answered have sent their replies: a `stop` that ends this
    /// player's playback, and so this process, still gets its answer.
    /// True once `stop` was called: the process is ending.
    var isStopping: Bool { stopped.load(ordering: .relaxed) }

    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        var status = stat()
        if lstat(socket.path, &status) == 0, UInt64(status.st_ino) == inode { unlink(socket.path) }
        shutdown(listener, Int32(SHUT_RDWR))
        answering.wait(until: { $0 == 0 }, timeout: Self.replySeconds) { _, _ in }
        watching.wait(until: { $0 == 0 }, timeout: Self.replySeconds) { _, _ in }
    }

    private func acceptLoop(session: Session) {
        while !stopped.load(ordering: .relaxed) {
            let client: Int32
            do throws(Errno) {
                client = try SystemCall.retrying { accept(listener, nil, nil) }
            } catch {
                if error == .connectionAborted || error == .tooManyOpenFiles || error == .tooManyOpenFilesInSystem {
                    usleep(10_000)
                    continue
                }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            var timeout = timeval(tv_sec: Self.sendSeconds, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard ControlSocketPath.peerUID(client) == getuid() else {
                _ = try? SystemCall.writeAll(
                    client, ControlProtocol.reply(id: .null, code: ExitCode.usage, data: nil, error: "refused: the player belongs to another user", result: nil),
                    flags: Int32(MSG_NOSIGNAL))
                close(client)
                continue
            }
            guard connections.add(1, ordering: .relaxed).newValue <= Self.maximumConnections else {
                connections.subtract(1, ordering: .relaxed)
                _ = try? SystemCall.writeAll(
                    client,
                    ControlProtocol.reply(
                        id: .null, code: ExitCode.failure, data: nil,
                        error: "the player has \(Self.maximumConnections) connections open; try again when one closes", result: nil),
                    flags: Int32(MSG_NOSIGNAL))
                close(client)
                continue
            }
            NativeThread.start(stackSize: 512 << 10) { [self] in
                ControlConnection(descriptor: client, session: session, server: self).serve()
                connections.subtract(1, ordering: .relaxed)
            }
        }
    }
}

/// One client's connection, on its own thread: requests in order, each answered.
final class ControlConnection {
    let descriptor: Int32
    let session: Session
    /// The server: its counts of requests being answered and of watch streams, and whether it is stopping.
    let server: ControlServer
    private var reader: LineReader

    init(descriptor: Int32, session: Session, server: ControlServer) {
        self.descriptor = descriptor
        self.session = session
        self.server = server
        reader = LineReader(descriptor: descriptor, limit: ControlProtocol.maximumRequestBytes)
    }

    func serve() {
        defer { close(descriptor) }
        while true {
            switch reader.next(idleMilliseconds: ControlServer.idleSeconds * 1000) {
            case .line(let line):
                if line.trimmedWhitespace.isEmpty { continue }
                if !answer(line) { return }
            case .tooLong:
                send(ControlProtocol.reply(
                    id: .null, code: ExitCode.usage, data: nil, error: "a request may have at most \(ControlProtocol.maximumRequestBytes) bytes",
                    result: nil))
                return
            case .end, .idle, .failed:
                return
            }
        }
    }

    /// Answers one request line; false when the client has gone.
    private func answer(_ line: String) -> Bool {
        let request: ControlProtocol.Request
        do throws(ControlProtocol.RequestError) {
            request = try ControlProtocol.request(line)
        } catch {
            return send(ControlProtocol.reply(id: error.id, code: ExitCode.usage, data: nil, error: error.message, result: nil))
        }
        let typed: ControlRequest
        do throws(TartilError) {
            typed = try ControlRequest.parse(words: request.words)
        } catch {
            return send(ControlProtocol.reply(id: request.id, code: ExitCode.of(error), data: nil, error: error.message, result: nil))
        }
        if case .watch(let follow) = typed { return watch(follow: follow, id: request.id) }
        server.answering.update { $0 += 1 }
        defer { server.answering.update { $0 -= 1 } }
        do throws(TartilError) {
            let result = try session.handle(typed, settings: nil, isCancelled: { [descriptor] in Self.hasGone(descriptor) })
            let code = result == .stopped ? ExitCode.notPlaying : ExitCode.success
            return send(ControlProtocol.reply(id: request.id, code: code, data: SessionJSON.data(result), error: nil, result: result))
        } catch {
            return send(ControlProtocol.reply(id: request.id, code: ExitCode.of(error), data: nil, error: error.message, result: nil))
        }
    }

    /// `watch [--follow]`: the session's events as JSON lines until playback ends (with `--follow`, until the
    /// client goes), then the reply.
    private func watch(follow: Bool, id: JSONValue) -> Bool {
        server.watching.update { $0 += 1 }
        defer { server.watching.update { $0 -= 1 } }
        let stream = session.subscribe()
        defer { session.unsubscribe(stream) }
        if !follow && !session.isPlaying {
            return send(ControlProtocol.reply(id: id, code: ExitCode.success, data: .object([("watch", .string("ended"))]), error: nil, result: nil))
        }
        // Once the process is ending (`stop`), the stream is sent to its player's end, or until it has been quiet
        // for a second (no player will come for a --follow watcher).
        var quietAfterStop = 0
        while true {
            if Self.hasGone(descriptor) { return false }
            if stream.overflowed { return false }
            guard let event = stream.next(timeout: 0.2) else {
                if server.isStopping {
                    quietAfterStop += 1
                    if quietAfterStop >= 5 { break }
                }
                continue
            }
            guard case .player(let playerEvent) = event else { continue }
            if !send(SessionJSON.json(playerEvent).rendered() + "\n") { return false }
            if case .end = playerEvent, !follow || server.isStopping { break }
        }
        return send(ControlProtocol.reply(id: id, code: ExitCode.success, data: .object([("watch", .string("ended"))]), error: nil, result: nil))
    }

    /// Sends `text`; false when the client has gone or does not read (`sendSeconds`).
    @discardableResult
    private func send(_ text: String) -> Bool {
        (try? SystemCall.writeAll(descriptor, text, flags: Int32(MSG_NOSIGNAL))) != nil
    }

    /// True when the client has closed its socket (or it failed). A client that only shut down its sending side
    /// (`socat` at the end of its input) still reads the reply: it has not gone.
    static func hasGone(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: 0, revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        return entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }
}

/// Reads lines from a socket, keeping what follows the last newline for the next call; a last line without a
/// newline before the end is a line too.
struct LineReader {
    enum Next: Equatable {
        case line(String)
        case tooLong
        case end
        case idle
        case failed
    }

    let descriptor: Int32
    let limit: Int
    private var pending: [UInt8] = []
    private var scanned = 0

    init(descriptor: Int32, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
    }

    mutating func next(idleMilliseconds: Int) -> Next {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                scanned = 0
                return .line(line)
            }
            scanned = pending.count
            if pending.count > limit { return .tooLong }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = (try? SystemCall.retrying { poll(&entry, 1, Int32(idleMilliseconds)) }) ?? -1
            if ready == 0 { return .idle }
            if ready < 0 { return .failed }
            let count = (try? buffer.withUnsafeMutableBytes { bytes in try SystemCall.retrying { recv(descriptor, bytes.baseAddress, bytes.count, 0) } }) ?? -1
            if count < 0 { return .failed }
            if count == 0 {
                guard !pending.isEmpty else { return .end }
                let line = String(decoding: pending, as: UTF8.self)
                pending.removeAll()
                scanned = 0
                return .line(line)
            }
            pending.append(contentsOf: buffer[..<count])
        }
    }
}
