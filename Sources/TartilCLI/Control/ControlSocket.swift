import FoundationEssentials
import Glibc
import Synchronization
import TartilCore
import TartilSystem

/// The control socket: how another process (`tartil pause` in a second terminal, a script, a program speaking
/// the protocol) reaches the player of this user.
///
/// - Where: `--socket PATH` or `TARTIL_SOCKET`, else `$XDG_RUNTIME_DIR/tartil/control.sock`, else
///   `/tmp/tartil-UID/control.sock`. The folder is made 0700 and must belong to the user; the socket is 0600, and
///   a peer of another user is refused (`SO_PEERCRED`).
/// - Protocol: one request per line, either a command line (`seek 1:00`) or a JSON object
///   `{"command": "seek 1:00", "request_id": 7, "json": true}`; one reply per request, a JSON object on one line:
///   `{"request_id": 7, "exit_code": 0, "output": "…", "errors": "…"}` plus `"data"` (the command's JSON value)
///   when the request asked for JSON (the default for JSON requests). `watch` streams the player's events as
///   JSON lines (`{"event": …}`) before its reply, which comes when playback ends.
enum ControlSocket {
    /// The socket's path for these settings.
    static func path(_ settings: Settings) -> String {
        if let explicit = settings.socketOption ?? settings.environment["TARTIL_SOCKET"] ?? settings.configured("socket"), !explicit.isEmpty {
            return explicit
        }
        if let runtime = settings.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return Path.join(Path.join(runtime, "tartil"), "control.sock")
        }
        return "/tmp/tartil-\(getuid())/control.sock"
    }

    /// The commands another process may send.
    static let commands: Set<String> = [
        "pause", "resume", "toggle", "stop", "next", "prev", "seek", "speed", "volume", "status", "wait", "bookmark", "play", "watch",
        "events", "set", "loop", "sleep", "stop-after",
    ]

    /// The largest request line taken.
    static let maximumRequestBytes = CommandLineSplitter.maximumLineBytes

    // MARK: - Addresses

    /// A `sockaddr_un` for `path`, or nil when the path is too long for one.
    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Connects to the socket at `path`: the descriptor, or nil when nothing listens there.
    static func connect(_ path: String) -> Int32? {
        guard var address = address(path) else { return nil }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// The user id of the process at the other end of a Unix socket.
    static func peerUID(_ descriptor: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (SO_PEERCRED is 17 on Linux).
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, 17, &credentials, &length) == 0 else { return nil }
        return credentials.1
    }

    // MARK: - Lines

    /// Writes all of `text`; false when the other end has gone.
    @discardableResult
    static func send(_ descriptor: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// Reads lines from a socket, keeping what follows the last newline for the next call.
    struct LineReader {
        let descriptor: Int32
        private var pending: [UInt8] = []
        private var scanned = 0

        init(descriptor: Int32) { self.descriptor = descriptor }

        /// The next line (without its newline), `.tooLong` for a line over the limit, or nil at the end.
        mutating func next() -> String?? {
            while true {
                if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                    defer {
                        pending.removeSubrange(...newline)
                        scanned = 0
                    }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                scanned = pending.count
                if pending.count > ControlSocket.maximumRequestBytes { return .some(nil) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    guard !pending.isEmpty else { return nil }
                    defer { pending.removeAll() }
                    return String(decoding: pending, as: UTF8.self)
                }
                pending.append(contentsOf: buffer[..<count])
            }
        }
    }

    // MARK: - Requests

    /// A parsed request: the command line, the id to echo, whether JSON output was asked for.
    struct Request {
        var line: String
        var id: JSONValue
        var json: Bool
    }

    /// Reads one request line: a JSON object with `command` (and optional `request_id`, `json`), or a plain
    /// command line.
    static func request(_ line: String) throws(TartilError) -> Request {
        let trimmed = line.trimmedWhitespace
        guard trimmed.hasPrefix("{") else { return Request(line: trimmed, id: .null, json: false) }
        let node: JSONNode
        do {
            node = try JSONNode.parse(Array(trimmed.utf8))
        } catch {
            throw .usage("the request is not valid JSON: \(error)")
        }
        guard let object = node.object, let command = object["command"]?.string else {
            throw .usage("a JSON request needs \"command\": a command line such as \"seek 1:00\"")
        }
        var id = JSONValue.null
        switch object["request_id"] {
        case .number(let number)?: id = number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .string(String(number))
        case .string(let text)?: id = .string(text)
        default: break
        }
        var json = true
        if case .bool(let value)? = object["json"] { json = value }
        return Request(line: command, id: id, json: json)
    }
}

// MARK: - The client

extension ControlSocket {
    /// The commands a process without a player of its own sends to this user's player, when one is running.
    static let forwarded: Set<String> = [
        "pause", "resume", "toggle", "stop", "next", "prev", "seek", "speed", "volume", "status", "wait", "bookmark", "play", "watch",
        "set", "loop", "sleep", "stop-after",
    ]

    /// Runs `words` on the player serving the control socket, printing what it printed and returning its exit
    /// code; nil when no player answers there.
    static func forward(_ words: [String], settings: Settings, console: Console) -> Int32? {
        let path = path(settings)
        guard let descriptor = connect(path) else { return nil }
        defer { close(descriptor) }
        let line = words.map(quoted).joined(separator: " ")
        let request = JSONValue.object([("command", .string(line)), ("request_id", .int(1)), ("json", .bool(settings.json))])
        guard send(descriptor, request.rendered() + "\n") else { return nil }
        var reader = LineReader(descriptor: descriptor)
        var sawEnd = false
        while let next = reader.next() {
            guard let text = next, let node = try? JSONNode.parse(Array(text.utf8)), let object = node.object else { continue }
            if let event = object["event"]?.string {
                console.writeOut(text + "\n")  // `watch`: an event
                sawEnd = sawEnd || event == "end"
                continue
            }
            guard let code = object["exit_code"]?.integer else { continue }
            if let output = object["output"]?.string, !output.isEmpty { console.writeOut(output) }
            if let errors = object["errors"]?.string, !errors.isEmpty { console.writeError(errors) }
            return Int32(clamping: code)
        }
        // A player that ended (and exited) right after its last event: the watch is complete.
        if sawEnd { return ExitStatus.success }
        console.writeError("Error: the player at \(path) closed the connection without replying\n")
        return ExitStatus.failure
    }

    /// A word as the command-line splitter reads it back: plain when it can be, else single-quoted.
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.allSatisfy { !$0.isWhitespace && !"'\"\\;#".contains($0) }
        guard !plain else { return word }
        return "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

// MARK: - The server

/// Serves the control socket for a session: a thread accepts connections, and each connection gets a thread
/// that runs its requests through the same command table as the prompt, against the same session.
final class ControlServer: Sendable {
    let path: String
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)

    /// Binds the socket, replacing a stale one (left by a player that was killed); nil when another live player
    /// already serves it (one player per user), or when it cannot be made (a message explains, once).
    static func start(settings: Settings, table: CommandTable, session: PlaybackSession, console: Console) -> ControlServer? {
        let shell = Shell(table: table, console: console, session: session)
        let path = ControlSocket.path(settings)
        let folder = Path.parent(path)
        let oldMask = umask(0o077)
        try? FileSystem.createDirectories(Path.parent(folder))  // XDG_RUNTIME_DIR, or a --socket folder, may not exist yet
        let made = mkdir(folder, 0o700) == 0 || errno == EEXIST
        umask(oldMask)
        if !made {
            shell.console.writeError("note: no control socket (cannot make \(folder): \(String(cString: strerror(errno))))\n")
            return nil
        }
        var status = stat()
        guard lstat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid() else {
            shell.console.writeError("note: no control socket (\(folder) is not a folder of yours)\n")
            return nil
        }
        if status.st_mode & 0o077 != 0 { chmod(folder, 0o700) }
        if let live = ControlSocket.connect(path) {
            close(live)
            return nil  // another player serves this user
        }
        unlink(path)  // a stale socket: nothing answered
        guard var address = ControlSocket.address(path) else { return nil }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let socketMask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(socketMask)
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            return nil
        }
        chmod(path, 0o600)
        let server = ControlServer(path: path, listener: descriptor)
        NativeThread.start(stackSize: 256 << 10) { server.acceptLoop(settings: settings, shell: shell) }
        return server
    }

    private init(path: String, listener: Int32) {
        self.path = path
        self.listener = listener
    }

    /// Removes the socket (at exit).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        unlink(path)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop(settings: Settings, shell: Shell) {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            guard ControlSocket.peerUID(client) == getuid() else {
                ControlSocket.send(client, #"{"request_id":null,"exit_code":64,"errors":"Error: refused: the player belongs to another user\n"}"# + "\n")
                close(client)
                continue
            }
            NativeThread.start(stackSize: 512 << 10) { Self.serve(client, settings: settings, shell: shell) }
        }
    }

    /// Runs one connection's requests in order until it closes.
    private static func serve(_ client: Int32, settings: Settings, shell: Shell) {
        defer { close(client) }
        var reader = ControlSocket.LineReader(descriptor: client)
        while let next = reader.next() {
            guard let line = next else {
                reply(client, id: .null, code: ExitStatus.usage, output: "", errors: "Error: a request may have at most \(ControlSocket.maximumRequestBytes) bytes\n", data: nil)
                return
            }
            if line.trimmedWhitespace.isEmpty { continue }
            let request: ControlSocket.Request
            do {
                request = try ControlSocket.request(line)
            } catch {
                let data = JSONValue.object([("error", .string(error.message)), ("exit_code", .int(Int(ExitStatus.usage)))])
                reply(client, id: .null, code: ExitStatus.usage, output: "", errors: "Error: \(error.message)\n", data: data)
                continue
            }
            if !run(request, on: client, settings: settings, shell: shell) { return }
        }
    }

    /// Runs one request and replies; false when the client has gone.
    private static func run(_ request: ControlSocket.Request, on client: Int32, settings: Settings, shell: Shell) -> Bool {
        let commands: [[String]]
        do {
            commands = try CommandLineSplitter.split(request.line)
        } catch {
            return reply(client, id: request.id, code: ExitStatus.usage, output: "", errors: "Error: \(error.message)\n", data: nil)
        }
        guard commands.count == 1, let words = commands.first, let name = words.first else {
            let message = "send one command per request (\(ControlSocket.commands.sorted().joined(separator: ", ")))"
            return reply(client, id: request.id, code: ExitStatus.usage, output: "", errors: "Error: \(message)\n", data: nil)
        }
        guard ControlSocket.commands.contains(name) else {
            let message = "'\(name)' is not a control command (the player takes: \(ControlSocket.commands.sorted().joined(separator: ", ")))"
            let data = JSONValue.object([("error", .string(message)), ("exit_code", .int(Int(ExitStatus.usage)))])
            return reply(client, id: request.id, code: ExitStatus.usage, output: "", errors: "Error: \(message)\n", data: request.json ? data : nil)
        }
        if name == "watch" {
            return watch(words, client: client, id: request.id, shell: shell)
        }
        let output = Mutex("")
        let errors = Mutex("")
        let console = Console(
            writeOut: { text in output.withLock { $0 += text } }, writeError: { text in errors.withLock { $0 += text } })
        var requestSettings = settings
        requestSettings.json = request.json
        let captured = Shell(table: shell.table, console: console, session: shell.session)
        let code: Int32
        switch captured.run(words, settings: requestSettings) {
        case .finished(let status): code = status
        case .quit: code = ExitStatus.success
        }
        let text = output.withLock { $0 }
        // The command's one JSON value, as it printed it.
        var data: String?
        if request.json, let line = text.split(separator: "\n").last, (try? JSONNode.parse(Array(line.utf8))) != nil {
            data = String(line)
        }
        return reply(client, id: request.id, code: code, output: text, errors: errors.withLock { $0 }, dataText: data)
    }

    /// `watch [--follow]`: the session's events as JSON lines until playback ends (with --follow, until the
    /// client goes), then the reply.
    private static func watch(_ words: [String], client: Int32, id: JSONValue, shell: Shell) -> Bool {
        let follow = words.contains("--follow")
        let ended = shell.session.watch(follow: follow) { line in ControlSocket.send(client, line + "\n") }
        guard ended else { return false }
        return reply(client, id: id, code: ExitStatus.success, output: "", errors: "", data: .object([("watch", .string("ended"))]))
    }

    /// Sends the reply to a request; false when the client has gone.
    @discardableResult
    private static func reply(
        _ client: Int32, id: JSONValue, code: Int32, output: String, errors: String, data: JSONValue? = nil, dataText: String? = nil
    ) -> Bool {
        var text = JSONValue.object([("request_id", id), ("exit_code", .int(Int(code))), ("output", .string(output)), ("errors", .string(errors))]).rendered()
        if let raw = dataText ?? data?.rendered() {
            text.removeLast()
            text += ",\"data\":" + raw + "}"
        }
        return ControlSocket.send(client, text + "\n")
    }
}
