import TestSupport
import Testing

@testable import TartilCore

@Suite struct StallWatchTests {
    /// Observations of one server (seconds since it became busy, running total received), a 2 s window at
    /// 100 bytes/s, and whether the last one says stalled.
    struct Case: Sendable, CustomTestStringConvertible {
        let observations: [Observation]
        let stalled: Bool
        let why: String
        var testDescription: String { why }
    }

    struct Observation: Sendable {
        let time: Double
        let bytes: Int
    }

    static func at(_ time: Double, _ bytes: Int) -> Observation { Observation(time: time, bytes: bytes) }

    static let cases: [Case] = [
        Case(observations: [at(0, 0), at(1, 0), at(2, 0)], stalled: true, why: "nothing for 2 s"),
        Case(observations: [at(0, 0), at(1, 0), at(1.9, 0)], stalled: false, why: "not busy 2 s yet"),
        Case(observations: [at(0, 0), at(1, 150), at(2, 199)], stalled: true, why: "199 bytes in 2 s, under 100/s"),
        Case(observations: [at(0, 0), at(1, 150), at(2, 200)], stalled: false, why: "exactly the rate"),
        Case(observations: [at(0, 0), at(1.5, 5_000), at(3, 5_000)], stalled: false, why: "a burst within the window counts"),
        Case(observations: [at(0, 0), at(1.5, 5_000), at(3.6, 5_000)], stalled: true, why: "then 2 s of nothing"),
        Case(observations: [at(0, 0), at(0.1, 0), at(0.2, 0), at(2.05, 0)], stalled: true, why: "observations closer than the sample interval"),
    ]

    @Test(arguments: cases)
    func aServerStallsWhenItsRateStaysUnderTheBarForTheWindow(_ test: Case) {
        var watch = StallWatch(seconds: 2, bytesPerSecond: 100)
        var last = false
        for observation in test.observations { last = watch.observe("s", bytes: observation.bytes, busy: true, now: 100 + observation.time) }
        #expect(last == test.stalled)
    }

    /// A server that goes idle (no request sharing a connection in flight) starts afresh, as does one reset
    /// after its requests were stopped; servers are judged apart.
    @Test func idleAndResetServersStartAfresh() {
        var watch = StallWatch(seconds: 2, bytesPerSecond: 100)
        let steps: [(String, Bool, Double, Bool)] = [  // server, busy, time, stalled
            ("a", true, 0, false), ("b", true, 0, false), ("a", false, 1.5, false), ("a", true, 2, false),
            ("b", true, 2, true), ("a", true, 3.9, false), ("a", true, 4, true),
        ]
        for (server, busy, time, stalled) in steps {
            let said = watch.observe(server, bytes: 0, busy: busy, now: time)
            #expect(said == stalled, "\(server) at \(time)")
        }
        watch.reset("a")
        let afterReset = watch.observe("a", bytes: 0, busy: true, now: 5)
        let windowLater = watch.observe("a", bytes: 0, busy: true, now: 7)
        #expect(!afterReset && windowLater)
    }

    /// Seeded properties over random observation times: a server fed at the rate or faster never stalls; one
    /// that is silent while busy stalls once a whole window has passed and never before.
    @Test func aFedServerNeverStallsAndASilentOneAlwaysDoes() {
        var random = SeededRandom(seed: 0x57A11)
        for _ in 0..<300 {
            var fed = StallWatch(seconds: 1.5, bytesPerSecond: 1_000)
            var silent = StallWatch(seconds: 1.5, bytesPerSecond: 1_000)
            var time = 0.0, total = 0
            var busySince: Double?
            for _ in 0..<40 {
                let gap = Double(random.next() % 700) / 1000
                time += gap
                busySince = busySince ?? time
                total += Int((gap * 1_000).rounded(.up)) + Int(random.next() % 500)
                let fedStalled = fed.observe("s", bytes: total, busy: true, now: time)
                let silentStalled = silent.observe("s", bytes: 0, busy: true, now: time)
                #expect(!fedStalled, "fed, at \(time)")
                let busyFor = time - busySince!
                if abs(busyFor - 1.5) > 1e-9 {  // exactly one window: rounding decides either way
                    #expect(silentStalled == (busyFor > 1.5), "silent, at \(time)")
                }
            }
        }
    }
}
