import TestSupport
import Testing

@testable import TartilCore

@Suite struct TransferSlotsTests {
    @Test(arguments: [
        ("https://Everyayah.com/data/x/{surah3}{ayah3}.mp3", "https://everyayah.com"),
        ("http://127.0.0.1:8080/a/b.mp3", "http://127.0.0.1:8080"),
        ("https://cdn.example?x=1", "https://cdn.example"),
        ("no-scheme/path", "no-scheme/path"),
        ("HTTP://Host:1#frag/x", "http://host:1"),
        ("https://XN--MGBH0FB.example/x", "https://xn--mgbh0fb.example"),
        ("https://ÉCOLE.example/a", "https://école.example"),
        ("https://", "https://"),
        ("a:/b://C/d", "a:/b://c"),
        (":", ":"),
        ("", ""),
    ])
    func theServerIsTheURLsOrigin(url: String, server: String) {
        #expect(TransferSlots.server(of: url) == server)
    }

    /// A plain http server gets its connections' worth of transfers until an answer shows it speaks HTTP/2, then
    /// its streams; one that answers over HTTP/1.1 again goes back to its connections.
    @Test func aServerKnownToMultiplexGetsItsStreams() {
        var slots = TransferSlots(connectionsPerServer: 2, streamsPerServer: 5, total: 20)
        let a = "http://a", b = "http://b"
        for _ in 0..<2 { slots.started(a) }
        #expect(!slots.hasRoom(for: a))
        #expect(slots.hasRoom(for: b))
        slots.learned(a, multiplexes: true)
        #expect(slots.excess(for: a) == 0)
        #expect(slots.limit(for: a) == 5)
        for _ in 0..<3 {
            #expect(slots.hasRoom(for: a))
            slots.started(a)
        }
        #expect(!slots.hasRoom(for: a))
        slots.learned(a, multiplexes: false)
        #expect(slots.excess(for: a) == 3)
        #expect(slots.limit(for: a) == 2)
        #expect(!slots.hasRoom(for: a))  // 5 in flight, 2 allowed: none starts until 4 have ended
        for _ in 0..<3 { slots.ended(a) }
        #expect(!slots.hasRoom(for: a))
        slots.ended(a)
        #expect(slots.hasRoom(for: a))
        #expect(slots.count == 1)
    }

    /// An https server not heard from yet is taken to multiplex (TLS may agree on HTTP/2, and libcurl holds the
    /// requests for its first connection); when it answers over HTTP/1.1 the transfers over its connections are
    /// the excess, to take back; once known, it keeps its share.
    @Test func anHTTPSServerGetsItsStreamsUntilItAnswersOverHTTP1() {
        var slots = TransferSlots(connectionsPerServer: 2, streamsPerServer: 6, total: 20)
        let a = "https://a"
        #expect(slots.limit(for: a) == 6)
        #expect(slots.multiplexes(a))
        #expect(slots.limit(for: "http://a") == 2)
        #expect(!slots.multiplexes("http://a"))
        // A libcurl without HTTP/2 never multiplexes.
        let plain = TransferSlots(connectionsPerServer: 2, streamsPerServer: 6, total: 20, httpsMayMultiplex: false)
        #expect(plain.limit(for: a) == 2 && !plain.multiplexes(a))
        for _ in 0..<6 { slots.started(a) }
        #expect(!slots.hasRoom(for: a))
        #expect(slots.excess(for: a) == 0)
        slots.learned(a, multiplexes: false)
        #expect(!slots.multiplexes(a))
        #expect(slots.excess(for: a) == 4)
        for _ in 0..<4 { slots.ended(a) }  // taken back
        #expect(slots.excess(for: a) == 0)
        #expect(!slots.hasRoom(for: a))
        slots.ended(a)
        #expect(slots.hasRoom(for: a))
        slots.learned(a, multiplexes: true)
        #expect(slots.excess(for: a) == 0)
        #expect(slots.limit(for: a) == 6 && slots.multiplexes(a))
        // Streams below connections: still one connection's requests, sharing it.
        let few = TransferSlots(connectionsPerServer: 8, streamsPerServer: 4, total: 20)
        #expect(few.multiplexes(a) && few.limit(for: a) == 8)
        #expect(slots.isBusy(a))
        slots.ended(a)
        #expect(!slots.isBusy(a))
    }

    @Test func theTotalCapsEveryServerTogether() {
        var slots = TransferSlots(connectionsPerServer: 4, streamsPerServer: 4, total: 6)
        for _ in 0..<4 { slots.started("https://a") }
        for _ in 0..<2 { slots.started("https://b") }
        #expect(!slots.hasRoom)
        #expect(!slots.hasRoom(for: "https://c"))
        slots.ended("https://a")
        #expect(slots.hasRoom(for: "https://c"))
        slots.ended("https://never-started")  // ignored
        #expect(slots.count == 5)
    }

    /// Seeded property: the count is the sum of what started and has not ended, and never exceeds a limit
    /// when starts are asked first.
    @Test func inFlightNeverExceedsTheLimits() {
        var random = SeededRandom(seed: 0x51_075)
        var slots = TransferSlots(connectionsPerServer: 3, streamsPerServer: 7, total: 12)
        let servers = ["https://a", "https://b", "http://c"]
        var inFlight: [String: Int] = [:]
        for _ in 0..<5000 {
            let server = servers[Int(random.next() % 3)]
            switch random.next() % 4 {
            case 0, 1:
                if slots.hasRoom(for: server) {
                    slots.started(server)
                    inFlight[server, default: 0] += 1
                }
            case 2:
                if inFlight[server, default: 0] > 0 {
                    slots.ended(server)
                    inFlight[server]! -= 1
                }
            default:
                slots.learned(server, multiplexes: random.next() % 2 == 0)
            }
            #expect(slots.count == inFlight.values.reduce(0, +))
            #expect(slots.excess(for: server) == max(0, inFlight[server, default: 0] - slots.limit(for: server)))
            #expect(slots.count <= 12)
            #expect(inFlight.values.allSatisfy { $0 <= 7 })
        }
    }
}
