import Foundation
import Synchronization
import TartilCore
import TartilSession
import TartilSystem
import TestSupport
import Testing

/// A folder with the fixture reciter: its mirrors.json (a mirror nothing answers at, so nothing is ever
/// downloaded), its table, a cache holding every fixture file, and a journal path; and a session on a manual
/// clock that plays there with the silent output, so "two seconds of playback" take no time and give the same
/// samples however busy the machine is.
final class SessionPlace: @unchecked Sendable {
    // @unchecked: every field is set in init and read only after.
    let directory = TestPaths.makeTemporaryDirectory()
    let clock = ManualClock()
    let session: Session
    let settings: Settings
    /// Sample counts of the fixture files, by ayah (1:1 doubles as the basmala).
    let samples: [AyahRef: Int]

    /// The shared table and filled cache are made once and copied for each place.
    private static let template: String = {
        let directory = TestPaths.makeTemporaryDirectory()
        let settings = SessionPlace.settings(directory)
        let session = Session()
        _ = try! session.buildTable(
            directory: TestPaths.fixtures + "/fixture", fromCache: nil, reciter: "fixture", output: directory + "/tables/fixture.tsv",
            source: "fixtures", settings: settings, isCancelled: { false }, progress: { _, _ in })
        let imported = try! session.importFiles(from: TestPaths.fixtures + "/fixture", reciter: "fixture", settings: settings, isCancelled: { false })
        precondition(imported.rejected.isEmpty)
        return directory
    }()

    static func settings(_ directory: String, extra: [String: String] = [:]) -> Settings {
        let mirrors = directory + "/mirrors.json"
        if !FileManager.default.fileExists(atPath: mirrors) {
            try! """
                {"version": 1, "reciters": [
                  {"id": "fixture", "name": "Fixture", "style": "murattal", "mirrors": [{"name": "m1", "url": "http://127.0.0.1:9/fixture/{surah3}{ayah3}.mp3"}]},
                  {"id": "other", "name": "Other Reciter", "style": "murattal", "mirrors": [{"name": "m1", "url": "http://127.0.0.1:9/other/{surah3}{ayah3}.mp3"}]}]}
                """.write(toFile: mirrors, atomically: true, encoding: .utf8)
        }
        let environment = [
            "HOME": directory, "XDG_RUNTIME_DIR": directory + "/run", "TARTIL_MIRRORS": mirrors, "TARTIL_TABLES": directory + "/tables",
            "TARTIL_CACHE_DIR": directory + "/cache", "TARTIL_JOURNAL": directory + "/journal.sqlite", "TARTIL_RECITER": "fixture",
            "TARTIL_OUTPUT": "silent",
        ].merging(extra) { _, new in new }
        try? FileManager.default.createDirectory(atPath: directory + "/tables", withIntermediateDirectories: true)
        return Settings(environment: Environment(environment.map { (name: $0.key, value: $0.value) }), bundledDataDirectory: nil)
    }

    init(environment extra: [String: String] = [:]) throws {
        for item in ["tables", "cache", "mirrors.json"] {
            try FileManager.default.copyItem(atPath: Self.template + "/" + item, toPath: directory + "/" + item)
        }
        settings = Self.settings(directory, extra: extra)
        session = Session(clock: clock)
        var samples: [AyahRef: Int] = [:]
        for row in try ManifestRow.read(TestPaths.fixtures + "/fixture") where row.ayah > 0 {
            samples[try AyahRef(row.surah, row.ayah)] = row.samples
        }
        self.samples = samples
    }

    deinit {
        // A player waiting on the manual clock (a silent output playing out a format change) stops only once time
        // moves: keep it moving until the stop is done.
        let stopped = Atomic<Bool>(false)
        let clock = self.clock
        NativeThread.start(stackSize: 128 << 10) {
            while !stopped.load(ordering: .relaxed) {
                clock.advance(by: 0.05)
                usleep(1000)
            }
        }
        session.stopAndWait()
        stopped.store(true, ordering: .relaxed)
        _ = session.closeJournal()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var journalPath: String { settings.journalFile }

    /// `play` with these words (as the command line or the socket would give them).
    @discardableResult
    func play(_ words: [String]) throws -> PlayStarted {
        guard case .play(let request) = try ControlRequest.parse(words: ["play"] + words) else { throw TartilError(.failure, "not a play") }
        return try session.play(request, settings: settings)
    }

    /// Waits (real time, at most `seconds`) until `condition` holds of the session's status; the status then.
    @discardableResult
    func eventually(_ what: String = "", seconds: Double = 10, _ condition: (PlayerStatus?) -> Bool) -> PlayerStatus? {
        for _ in 0..<Int(seconds * 200) {
            let status = session.lastStatus
            if condition(status) { return status }
            usleep(5_000)
        }
        Issue.record("timed out waiting: \(what); last status: \(String(describing: session.lastStatus))")
        return session.lastStatus
    }

    /// Advances the clock by `seconds`, 50 ms at a time (less than the silent output's 200 ms buffer: a device is
    /// never left to run dry), each time waiting until the player has done what that time allows and waits on the
    /// clock again (or has ended). The status then says exactly where the listener is.
    func listen(_ seconds: Double) {
        var left = seconds
        while left > 1e-9 {
            let step = min(0.05, left)
            let before = clock.blockedSleeps
            clock.advance(by: step)
            left -= step
            if !caughtUp(after: before) {
                if session.isPlaying {
                    Issue.record("the player did not catch up with the clock (\(String(describing: session.lastStatus)))")
                }
                return
            }
        }
    }

    /// Waits (real time, at most 10 s) until a sleep began after the first `count`; false at once when the player
    /// has ended (nothing will sleep again).
    private func caughtUp(after count: Int) -> Bool {
        for _ in 0..<100 {
            if clock.waitForSleep(after: count, timeout: 0.1) { return true }
            if !session.isPlaying { return false }
        }
        return false
    }

    /// Waits until the player has written what it may before any time passes (the silent output's buffer) and
    /// waits on the clock.
    func settle(after count: Int = 0) {
        if !clock.waitForSleep(after: count, timeout: 10) { Issue.record("the player never waited on the clock") }
    }

    /// The journal's events of `kind`, oldest first.
    func events(_ kinds: Set<JournalEvent.Kind>? = nil) throws -> [JournalEvent] {
        session.flushJournal()
        return try session.history(JournalHistoryFilter(kinds: kinds), settings: settings)
    }
}
