import Foundation
import TestSupport
import Testing

/// Numbers far out of range, given to every option and command that takes a time, a count or a size, on the
/// command line and at the prompt: a clear usage error (exit 64) naming the value, never a trap or a wait that
/// overflows (issue 23, items 12 and 16).
@Suite struct BoundedNumbersTests {
    /// The values that once trapped somewhere, or might: past Int64, past Double, exponents, NaN, infinity.
    static let huge = ["1e12", "1e308", "99999999999999999999", "9223372036854775808", "nan", "inf", "-1e308"]

    /// An argument list with `VALUE` where the huge value goes.
    static let places: [[String]] = [
        ["play", "112", "--stop-after", "VALUE"], ["play", "112", "--pause", "VALUE"], ["play", "112", "--cycle-pause", "VALUE"],
        ["play", "112", "--repeat", "VALUE"], ["play", "112", "--speed", "VALUE"], ["play", "112", "--volume", "VALUE"],
        ["play", "112", "--from", "VALUE"], ["play", "112", "--loop", "0:00", "VALUE"], ["render", "112", "-o", "x.wav", "--pause", "VALUE"],
        ["prefetch", "112", "--connect-timeout", "VALUE"], ["prefetch", "112", "--stall-timeout", "VALUE"],
        ["prefetch", "112", "--jobs", "VALUE"], ["prefetch", "112", "--retries", "VALUE"], ["prefetch", "112", "--max-size", "VALUE"],
        ["journal", "sync", "DIR", "--watch", "--interval", "VALUE"], ["history", "--since", "VALUE"], ["history", "--limit", "VALUE"],
    ]

    @Test(arguments: places)
    func aHugeValueIsAUsageError(place: [String]) throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        // `--repeat inf` is a count (for ever), not a number out of range.
        for value in Self.huge + ["1e12s", "99999999999999999999m"] where !(place.contains("--repeat") && value == "inf") {
            let arguments = place.map { $0 == "VALUE" ? value : $0 == "DIR" ? home : $0 }
            let result = try runTartilBounded(
                arguments, environment: ["TARTIL_OUTPUT": "null"], home: home, directory: home, deadline: 30)
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(!result.signaled && result.status == 64, "\(arguments): \(result.status) \(stderr)")
            #expect(stderr.hasPrefix("Error: ") && stderr.contains(value), "\(arguments): \(stderr)")
        }
    }

    /// The same at the prompt and in scripts (`-c`): the timers and seeks of a playing session.
    @Test func aHugeValueForAPlayersCommandIsAUsageError() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        for command in ["sleep", "stop-after", "seek", "speed", "volume", "set repeat", "set pause", "loop 0:00"] {
            for value in ["1e12", "99999999999999999999", "1e308", "nan"] {
                let result = try runTartilBounded(["-c", "\(command) \(value)"], home: home, directory: home, deadline: 30)
                let stderr = String(decoding: result.stderr, as: UTF8.self)
                #expect(!result.signaled && result.status == 64, "\(command) \(value): \(result.status) \(stderr)")
                #expect(stderr.contains("Error: "), "\(command) \(value): \(stderr)")
            }
        }
    }
}
