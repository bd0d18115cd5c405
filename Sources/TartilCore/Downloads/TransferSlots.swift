/// How many transfers may be in flight to each server, by what the server speaks. Over HTTP/1.1 a connection
/// carries one request at a time, so a server gets as many transfers as it may have connections; over HTTP/2
/// one connection carries many requests at once (streams), so a server known to multiplex gets
/// `streamsPerServer`. A server is known to multiplex once one of its answers came over HTTP/2; until then (a
/// new server, a plain http:// one) it gets the HTTP/1.1 share, so asking a server that cannot multiplex never
/// queues more requests than it has connections for, and the player's next file never waits behind them.
///
/// A pure bookkeeping value: the downloader asks `hasRoom(for:)` before it starts a transfer and reports
/// `started`, `ended` and `learned`.
public struct TransferSlots: Sendable, Hashable {
    /// Transfers in flight to a server that is not known to multiplex (its connections).
    public let connectionsPerServer: Int
    /// Transfers in flight to a server that multiplexes (HTTP/2 streams).
    public let streamsPerServer: Int
    /// Transfers in flight in all, whatever the servers (each holds an open file).
    public let total: Int
    private var inFlight: [String: Int] = [:]
    private var multiplexing: Set<String> = []
    /// Transfers in flight now, to every server.
    public private(set) var count = 0

    public init(connectionsPerServer: Int, streamsPerServer: Int, total: Int) {
        precondition(connectionsPerServer > 0 && streamsPerServer > 0 && total > 0, "at least one transfer at a time")
        self.connectionsPerServer = connectionsPerServer
        self.streamsPerServer = streamsPerServer
        self.total = total
    }

    /// The transfers `server` (an origin, `https://host:port`) may have in flight.
    public func limit(for server: String) -> Int {
        multiplexing.contains(server) ? max(streamsPerServer, connectionsPerServer) : connectionsPerServer
    }

    /// Whether one more transfer to `server` may start now.
    public func hasRoom(for server: String) -> Bool {
        count < total && inFlight[server, default: 0] < limit(for: server)
    }

    /// Whether any transfer may start now, whatever the server.
    public var hasRoom: Bool { count < total }

    public mutating func started(_ server: String) {
        inFlight[server, default: 0] += 1
        count += 1
    }

    public mutating func ended(_ server: String) {
        guard let current = inFlight[server], current > 0 else { return }
        inFlight[server] = current == 1 ? nil : current - 1
        count -= 1
    }

    /// An answer from `server` came over HTTP/2 (`multiplexes`) or HTTP/1.x (not).
    public mutating func learned(_ server: String, multiplexes: Bool) {
        if multiplexes { multiplexing.insert(server) } else { multiplexing.remove(server) }
    }

    /// The origin of `url`: its scheme, host and port, lowercased (`https://everyayah.com`); the URL itself
    /// when it has no `://`.
    public static func server(of url: String) -> String {
        let characters = Array(url)
        guard let colon = characters.indices.first(where: { characters[$0...].starts(with: "://") }) else { return url }
        let authority = characters[(colon + 3)...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return String(characters[..<(colon + 3)] + authority).lowercased()
    }
}
