import Glibc
import TartilCore
import TartilSession
import TartilSystem

/// The client side of the control socket: how a tartil process without a player of its own reaches this user's
/// player. It trusts the socket only as `ControlSocketPath.connect` allows (its folder, the socket, the server's
/// uid, all checked before a byte is sent), and every wait ends within 200 ms of `cancellation` (Ctrl-C, SIGTERM)
/// or of `output` closing (the reader of `tartil watch | jq` gone).
public struct ControlClient: Sendable {
    public let socket: ControlSocketPath

    /// What interrupts a wait: a flag to ask, and a descriptor that becomes readable when it is set (-1: none).
    public struct Cancellation: Sendable {
        public var isCancelled: @Sendable () -> Bool
        public var wakeDescriptor: Int32
        /// A descriptor whose closing ends a stream (standard output for `watch`), or -1.
        public var output: Int32

        public init(isCancelled: @escaping @Sendable () -> Bool, wakeDescriptor: Int32 = -1, output: Int32 = -1) {
            self.isCancelled = isCancelled
            self.wakeDescriptor = wakeDescriptor
            self.output = output
        }

        public static let never = Cancellation(isCancelled: { false })
    }

    public init(_ socket: ControlSocketPath) { self.socket = socket }

    /// What became of a request.
    public enum Outcome: Sendable {
        /// The player answered.
        case replied(ControlProtocol.Reply)
        /// No player serves this user (nothing listens at the socket).
        case noPlayer
        /// Something at the socket is not to be trusted; nothing was sent.
        case untrusted(String)
        /// The wait was interrupted (or the output closed); the connection was closed.
        case interrupted
        /// The player closed the connection without replying, or the connection failed.
        case lost(String)
    }

    /// Sends the command `words` and waits for its reply; `onLine` gets each line before the reply (the events of
    /// `watch`) and returns false to stop.
    public func send(_ words: [String], cancellation: Cancellation = .never, onLine: (String) -> Bool = { _ in true }) -> Outcome {
        let descriptor: Int32
        switch socket.connect() {
        case .connected(let connected): descriptor = connected
        case .nobody: return .noPlayer
        case .untrusted(let why): return .untrusted(why)
        }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = JSONValue.object([("command", .array(words.map(JSONValue.string))), ("request_id", .int(1))]).rendered() + "\n"
        do {
            try SystemCall.writeAll(descriptor, request, flags: Int32(MSG_NOSIGNAL))
        } catch {
            return .lost("cannot send to the player at \(socket.path): \(error)")
        }
        var reader = LineReader(descriptor: descriptor, limit: 16 << 20)
        while true {
            switch wait(descriptor, cancellation) {
            case .cancelled: return .interrupted
            case .idle: continue
            case .readable: break
            }
            switch reader.next(idleMilliseconds: 200) {
            case .line(let line):
                if let reply = ControlProtocol.reply(line) { return .replied(reply) }
                if !onLine(line) { return .interrupted }
            case .idle:
                continue
            case .tooLong:
                return .lost("the player at \(socket.path) sent a line over 16 MiB")
            case .end, .failed:
                return .lost("the player at \(socket.path) closed the connection without replying")
            }
        }
    }

    private enum Wait { case readable, idle, cancelled }

    /// Waits at most 200 ms for the socket to be readable; cancelled when asked, or when the output closed.
    private func wait(_ descriptor: Int32, _ cancellation: Cancellation) -> Wait {
        if cancellation.isCancelled() { return .cancelled }
        var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if cancellation.wakeDescriptor >= 0 { entries.append(pollfd(fd: cancellation.wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        let outputIndex = entries.count
        if cancellation.output >= 0 { entries.append(pollfd(fd: cancellation.output, events: 0, revents: 0)) }
        let ready = (try? SystemCall.retrying { poll(&entries, nfds_t(entries.count), 200) }) ?? 0
        if cancellation.isCancelled() { return .cancelled }
        if cancellation.output >= 0, entries[outputIndex].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .cancelled }
        if ready > 0, entries[0].revents != 0 { return .readable }
        return .idle
    }

    /// Waits until a player serves this user (for `watch --follow`): true when one does, false when cancelled.
    public func waitForPlayer(cancellation: Cancellation) -> Bool {
        while true {
            if case .connected(let descriptor) = socket.connect() {
                close(descriptor)
                return true
            }
            var entries: [pollfd] = []
            if cancellation.wakeDescriptor >= 0 { entries.append(pollfd(fd: cancellation.wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
            if cancellation.output >= 0 { entries.append(pollfd(fd: cancellation.output, events: 0, revents: 0)) }
            _ = try? SystemCall.retrying { poll(&entries, nfds_t(entries.count), 200) }
            if cancellation.isCancelled() { return false }
            if cancellation.output >= 0, let last = entries.last, last.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return false }
        }
    }
}
