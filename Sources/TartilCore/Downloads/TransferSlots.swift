/// How many transfers may be in flight to each server, by what the server speaks. Over HTTP/1.1 a connection
/// carries one request at a time, so a server gets as many transfers as it may have connections; over HTTP/2
/// one connection carries many requests at once (streams), so a server that multiplexes gets
/// `streamsPerServer`.
///
/// A server is known to multiplex once one of its answers came over HTTP/2, and known not to once one came over
/// HTTP/1.x. Before its first answer, an `https://` server is taken to multiplex, as curl --parallel does: libcurl
/// holds every request for the first connection (CURLOPT_PIPEWAIT) and sends them all on it once TLS has
/// agreed on HTTP/2, one round trip sooner than waiting for an answer would (measured: juz 30 at RTT 300 ms,
/// 100 Mbit/s, see the README). When the answer shows HTTP/1.1 instead, `excess(for:)` says how many of the
/// transfers in flight are over the server's connections; the downloader takes that many back (those not sent
/// yet) so that the player's next file never waits behind them. A plain `http://` server (no TLS, so no HTTP/2
/// here) gets its connections from the start.
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
    /// Servers whose last answer came over HTTP/2, and over HTTP/1.x.
    private var multiplexing: Set<String> = []
    private var single: Set<String> = []
    /// Transfers in flight now, to every server.
    public private(set) var count = 0

    /// Whether an https server not heard from yet may multiplex: false when this libcurl cannot speak HTTP/2.
    public let httpsMayMultiplex: Bool

    public init(connectionsPerServer: Int, streamsPerServer: Int, total: Int, httpsMayMultiplex: Bool = true) {
        precondition(connectionsPerServer > 0 && streamsPerServer > 0 && total > 0, "at least one transfer at a time")
        self.connectionsPerServer = connectionsPerServer
        self.streamsPerServer = streamsPerServer
        self.total = total
        self.httpsMayMultiplex = httpsMayMultiplex
    }

    /// The transfers `server` (an origin, `https://host:port`) may have in flight.
    public func limit(for server: String) -> Int {
        multiplexes(server) ? max(streamsPerServer, connectionsPerServer) : connectionsPerServer
    }

    /// Whether `server`'s transfers share connections: it answered over HTTP/2, or it is an https server not heard
    /// from yet (TLS may agree on HTTP/2; tartil never asks for HTTP/2 over plain http). A shared connection's
    /// stall is judged on all of them together (`StallWatch`), so 64 streams on a slow but moving link are not
    /// taken for 64 stalls.
    public func multiplexes(_ server: String) -> Bool {
        if multiplexing.contains(server) { return true }
        if single.contains(server) { return false }
        return httpsMayMultiplex && server.hasPrefix("https://")
    }

    /// How many of the transfers in flight to `server` are over its limit (after an answer showed that it does
    /// not multiplex, or a config change): the ones to take back if they have not been sent.
    public func excess(for server: String) -> Int {
        max(0, inFlight[server, default: 0] - limit(for: server))
    }

    /// Whether one more transfer to `server` may start now.
    public func hasRoom(for server: String) -> Bool {
        count < total && inFlight[server, default: 0] < limit(for: server)
    }

    /// Whether `server` has a transfer in flight.
    public func isBusy(_ server: String) -> Bool { inFlight[server, default: 0] > 0 }

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

    /// An answer from `server` came over HTTP/2 (`multiplexes`) or HTTP/1.x (not); `excess(for:)` then says how
    /// many of its transfers are over its new limit.
    public mutating func learned(_ server: String, multiplexes: Bool) {
        if multiplexes {
            multiplexing.insert(server)
            single.remove(server)
        } else {
            single.insert(server)
            multiplexing.remove(server)
        }
    }

    /// The origin of `url`: its scheme, host and port, lowercased (`https://everyayah.com`); the URL itself
    /// when it has no `://`.
    public static func server(of url: String) -> String {
        // Over the UTF-8 bytes (every byte searched for is ASCII, so never part of another character): this runs
        // for every file's every mirror, and an array of Characters cost 9% of a whole-Qur'an prefetch's download
        // thread (perf).
        let bytes = url.utf8
        var at = bytes.startIndex
        var schemeEnd: String.Index?
        while at != bytes.endIndex {
            if bytes[at] == UInt8(ascii: ":"), bytes[bytes.index(after: at)...].starts(with: "//".utf8) {
                schemeEnd = bytes.index(at, offsetBy: 3)
                break
            }
            at = bytes.index(after: at)
        }
        guard let schemeEnd else { return url }
        let end = bytes[schemeEnd...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        return url[..<(end ?? bytes.endIndex)].lowercased()
    }
}
