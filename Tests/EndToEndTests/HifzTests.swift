import Foundation
import TestSupport
import Testing

/// The hifz journey end to end against nginx: a plan, today's session played (`--output null` records what it
/// writes), the progress it recorded, tomorrow's session moving on as it should, a stopped play counting as
/// partial, marks, and two journals synced through a folder agreeing on the session and the progress.
@Suite struct HifzEndToEndTests {
    let environment = DownloadEnvironment.shared
    /// Days are local: the tests fix the time zone so that "today" is the UTC date.
    let utc = ["TZ": "UTC"]

    static let today: String = {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }()

    static func day(_ offset: Int) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(Double(offset) * 86_400))
    }

    func tartil(_ arguments: [String], in directory: String) throws -> RunResult {
        try environment.tartil(arguments, urls: [environment.clean], in: directory, environment: utc)
    }

    func json(_ arguments: [String], in directory: String) throws -> [String: Any] {
        let result = try tartil(arguments + ["--json"], in: directory)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
    }

    func parts(_ today: [String: Any]) -> [String: String] {
        var parts: [String: String] = [:]
        for part in today["parts"] as? [[String: Any]] ?? [] { parts[part["part"] as? String ?? ""] = part["ayat"] as? String }
        return parts
    }

    func done(_ today: [String: Any]) -> [String: Bool] {
        var done: [String: Bool] = [:]
        for part in today["parts"] as? [[String: Any]] ?? [] { done[part["part"] as? String ?? ""] = part["done"] as? Bool }
        return done
    }

    @Test func aDayPlayedMovesTheJourneyOnAndTwoSyncedJournalsAgree() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Before any plan: a usage error.
        #expect(try tartil(["hifz", "today"], in: directory).status == 64)
        let plan = try json(["hifz", "plan", "--direction", "112, 1", "--daily", "2", "--sabqi", "1 day", "--manzil", "2",
                             "--sabaq-options", "repeat=2", "--sabqi-options", "none"], in: directory)
        #expect(plan["daily"] as? String == "2 ayat" && plan["direction"] as? String == "112, 1")
        // A bad value: exit 64, and the plan stays as it was.
        #expect(try tartil(["hifz", "plan", "--daily", "3 juz"], in: directory).status == 64)
        #expect(try json(["hifz", "plan"], in: directory)["daily"] as? String == "2 ayat")

        let first = try json(["hifz", "today"], in: directory)
        #expect(first["day"] as? String == Self.today)
        #expect(parts(first) == ["sabaq": "112:1-2"])
        let play = try tartil(["hifz", "play", "--reciter", "fixture", "--output", "null"], in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stderr.contains("sabaq: 112:1-2 (repeat=2)"), "\(play.stderr)")
        let after = try json(["hifz", "today"], in: directory)
        #expect(parts(after) == parts(first))  // the day's session stays
        #expect(done(after) == ["sabaq": true])
        // Nothing left: a second play says so.
        #expect(try tartil(["hifz", "play", "--reciter", "fixture", "--output", "null"], in: directory).status == 64)

        // Tomorrow: the next lesson, and yesterday's as sabqi.
        let tomorrow = try json(["hifz", "today", "--date", Self.day(1)], in: directory)
        #expect(parts(tomorrow) == ["sabaq": "112:3-4", "sabqi": "112:1-2"])
        #expect(done(tomorrow) == ["sabaq": false, "sabqi": false])
        // Played tomorrow, with the sabqi only: the sabaq stays for the day after.
        let sabqi = try tartil(["hifz", "play", "--date", Self.day(1), "--part", "sabqi", "--reciter", "fixture", "--output", "null"], in: directory)
        #expect(sabqi.status == 0, "\(sabqi.stderr)")
        #expect(done(try json(["hifz", "today", "--date", Self.day(1)], in: directory)) == ["sabaq": false, "sabqi": true])
        let dayAfter = try json(["hifz", "today", "--date", Self.day(2)], in: directory)
        #expect(parts(dayAfter)["sabaq"] == "112:3-4")

        let status = try json(["hifz", "status", "--date", Self.day(1)], in: directory)
        #expect(status["memorised_ayat"] as? Int == 2)
        #expect(status["streak_days"] as? Int == 1)
        #expect(status["parts_left"] as? String == "sabaq")
        // A mark: the weak ayah comes back in the next day's sabqi.
        #expect(try tartil(["hifz", "mark", "weak", "112:1"], in: directory).status == 0)
        #expect(try tartil(["hifz", "mark", "sometimes", "112:1"], in: directory).status == 64)
        #expect(try json(["hifz", "status"], in: directory)["weak"] as? String == "112:1")
        #expect(parts(try json(["hifz", "today", "--date", Self.day(1)], in: directory))["sabqi"] == "112:1-2")
        #expect(try tartil(["journal", "check"], in: directory).status == 0)

        // Another device: it syncs through a folder and sees the same.
        let other = TestPaths.makeTemporaryDirectory()
        let folder = TestPaths.makeTemporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: other)
            try? FileManager.default.removeItem(atPath: folder)
        }
        for home in [directory, other, directory] {
            let sync = try tartil(["journal", "sync", folder], in: home)
            #expect(sync.status == 0, "\(sync.stderr)")
        }
        for date in [Self.today, Self.day(1), Self.day(2)] {
            #expect(try tartil(["hifz", "today", "--date", date, "--json"], in: other).stdout
                    == (try tartil(["hifz", "today", "--date", date, "--json"], in: directory).stdout))
            #expect(try tartil(["hifz", "status", "--date", date, "--json"], in: other).stdout
                    == (try tartil(["hifz", "status", "--date", date, "--json"], in: directory).stdout))
        }
        #expect(try json(["hifz", "plan"], in: other)["direction"] as? String == "112, 1")
    }

    @Test func aStoppedPlayCountsWhatWasHeardAsPartial() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try tartil(["hifz", "plan", "--direction", "112", "--daily", "4", "--sabaq-options", "repeat=2"], in: directory).status == 0)
        // Stops after two ayat groups: 112:1 and 112:2 heard with both repetitions, 112:3-4 not.
        let play = try tartil(["hifz", "play", "--reciter", "fixture", "--output", "null", "--stop-after", "2 ayat"], in: directory)
        #expect(play.status == 0, "\(play.stderr)")
        let today = try json(["hifz", "today"], in: directory)
        let sabaq = try #require((today["parts"] as? [[String: Any]])?.first)
        #expect(sabaq["heard"] as? Int == 2 && sabaq["done"] as? Bool == false, "\(sabaq)")
        // The next day's lesson picks up where it stopped.
        #expect(parts(try json(["hifz", "today", "--date", Self.day(1)], in: directory))["sabaq"] == "112:3-4")
        let history = try tartil(["history", "--kind", "hifz-heard"], in: directory)
        #expect(history.stdout.contains("hifz sabaq of \(Self.today) heard 112:1-2"), "\(history.stdout)")
    }

    @Test func setIsRefusedAndOptionsAreChecked() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try tartil(["hifz", "plan", "--direction", "112", "--sabaq-options", "repeat=inf"], in: directory).status == 64)
        #expect(try tartil(["hifz", "plan", "--direction", "112"], in: directory).status == 0)
        for arguments in [["hifz", "today", "--date", "2026-02-30"], ["hifz", "play", "--part", "dawr"], ["hifz", "today", "--date", "2000-01-01"]] {
            let result = try tartil(arguments, in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        // `set` during a hifz play (from a script) is refused; the play goes on and ends.
        let script = try tartil(["-c", "hifz play --reciter fixture --output null; set repeat 3; wait"], in: directory)
        #expect(script.stderr.contains("each with its own options"), "\(script.stderr)")
    }
}
