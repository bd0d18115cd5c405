import Foundation
import Glibc
import Synchronization
import TartilCore
import TartilSystem
import TestSupport
import Testing

@testable import TartilJournal

/// The journal takes its time from the clock it is given: events' times are its wall time, and the sync lock's
/// wait is measured on it.
@Suite struct JournalClockTests {
    @Test func eventsTakeTheClocksWallTime() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock(wallMilliseconds: 1_700_000_000_000)
        let journal = try Journal(path: directory + "/journal.sqlite", clock: clock)
        defer { journal.close() }
        #expect(try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1)).timeMs == 1_700_000_000_000)
        clock.advance(by: 2.5)
        #expect(try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 2)).timeMs == 1_700_000_002_500)
    }

    /// Another sync holds the lock: the wait gives up after a minute of the journal's clock, which a manual clock
    /// passes in no time.
    @Test func theSyncLockWaitsOnTheJournalsClock() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        try FileManager.default.createDirectory(atPath: directory + "/folder", withIntermediateDirectories: true)
        let holder = open(path + ".sync-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
        defer { close(holder) }
        let clock = ManualClock()
        let outcome = Mutex<String?>(nil)
        let started = clock.blockedSleeps
        let thread = Thread {
            do {
                let journal = try Journal(path: path, clock: clock)
                defer { journal.close() }
                _ = try journal.sync(folder: directory + "/folder")
                outcome.withLock { $0 = "synced" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        thread.start()
        #expect(clock.waitForSleep(after: started), "the sync did not wait for the lock")
        clock.advance(by: Double(Journal.syncLockWaitMilliseconds) / 1000 + 1)
        let deadline = SystemClock.shared.now.adding(seconds: 10)
        while outcome.withLock({ $0 }) == nil && SystemClock.shared.now < deadline {
            SystemClock.shared.sleep(seconds: 0.01)
        }
        let message = try #require(outcome.withLock { $0 })
        #expect(message.contains("has been running for over 60 s"), "\(message)")
    }
}
