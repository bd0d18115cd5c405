import Foundation
import Synchronization
import TestSupport
import Testing

/// A `bookmark` sent to a player (from another terminal, through the control socket) as it ends is either
/// recorded — and then in the journal — or fails with a clear message: never answered as done and lost, never
/// a silent exit. Raced: bookmarks fired back to back around the end of a short play.
@Suite(.serialized) struct BookmarkRaceTests {
    let environment = DownloadEnvironment.shared

    @Test func aBookmarkAsThePlayerEndsIsRecordedOrFailsClearly() throws {
        let home = try ControlTests.Home(environment)
        var outcomes: [(status: Int32, id: String?, stderr: String)] = []
        for round in 0..<6 {
            let player = try home.startPlayer(["play", "112:4", "--output", "silent"])
            defer { if player.isRunning { player.terminate() } }
            var afterExit = 0
            while afterExit < 3 {
                if !player.isRunning { afterExit += 1 }
                // Four at once: some reach the player while it closes its socket and its journal.
                let batch = Mutex<[(Int32, String?, String)]>([])
                DispatchQueue.concurrentPerform(iterations: 4) { _ in
                    guard let result = try? home.run(["bookmark", "--json"]) else { return }
                    let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                    batch.withLock { $0.append((result.status, object?["event_id"] as? String, result.stderr)) }
                }
                outcomes += batch.withLock { $0 }.map { (status: $0.0, id: $0.1, stderr: $0.2) }
                _ = round
            }
            player.waitUntilExit()
        }
        let export = try home.run(["journal", "export"]).stdout
        var recorded = 0
        for outcome in outcomes {
            if outcome.status == 0 {
                let id = try #require(outcome.id, "exit 0 without a bookmark: \(outcome.stderr)")
                #expect(export.contains("\"event_id\":\"\(id)\""), "bookmark \(id) answered as recorded is not in the journal")
                recorded += 1
            } else {
                #expect(outcome.stderr.hasPrefix("Error: ") && outcome.stderr.count > 20, "a failure without a clear message: \(outcome.stderr.debugDescription)")
                #expect(!outcome.stderr.contains("without replying") || outcome.stderr.contains("not recorded") || outcome.stderr.contains("may"),
                        "a lost reply must say whether the bookmark was recorded: \(outcome.stderr)")
            }
        }
        #expect(recorded > 0, "no bookmark was recorded while playing")
        #expect(outcomes.contains { $0.status != 0 }, "no bookmark came after the end")
        let messages = Set(outcomes.filter { $0.status != 0 }.map(\.stderr))
        print("bookmark race: \(outcomes.count) sent, \(recorded) recorded; failures: \(messages)")
    }
}
