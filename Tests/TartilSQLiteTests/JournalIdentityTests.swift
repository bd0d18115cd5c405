import Foundation
import TartilCore
import TestSupport
import Testing

@testable import TartilJournal
@testable import TartilSQLite

/// A journal that finds its device id shared takes a new one: the schema stays a tartil journal's, the old id is
/// kept as retired, and another connection to the journal (a player in another process) appends under the new id
/// from its next event. A restored journal folds its own later events back and goes on numbering after them.
@Suite struct JournalIdentityTests {
    @Test func aNewDeviceIDKeepsTheSchemaAndReachesOtherConnections() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        let journal = try Journal(path: path)
        let player = try Journal(path: path)
        try player.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        let old = journal.deviceID
        #expect(try journal.takeNewDeviceID(reason: "test") == old)
        #expect(journal.deviceID != old)
        #expect(try journal.retiredDeviceIDs() == [old])
        #expect(try journal.problems().isEmpty)
        // The other connection still holds the old id, but its next event is the new id's first.
        let event = try player.append(EventDraft(kind: .bookmark, surah: 1, ayah: 2))
        #expect(event.deviceID == journal.deviceID && event.deviceSeq == 1 && player.deviceID == journal.deviceID)
        journal.close()
        player.close()
        // Reopened: the new id, and a schema every check accepts (merged into another journal as any journal).
        let reopened = try Journal(path: path)
        #expect(reopened.deviceID == event.deviceID)
        reopened.close()
        let other = try Journal(path: directory + "/other.sqlite")
        #expect(try other.merge(from: path) == 2)
        other.close()
    }

    @Test func aRestoredJournalFoldsItsLaterEventsBackAndNumbersAfterThem() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        let journal = try Journal(path: path)
        try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        try journal.backup(to: directory + "/older.sqlite", replacing: false)
        try journal.append(contentsOf: [EventDraft(kind: .bookmark, surah: 1, ayah: 2), EventDraft(kind: .bookmark, surah: 1, ayah: 3)])
        journal.close()
        let restored = try Journal(path: directory + "/older.sqlite")
        #expect(try restored.merge(from: path) == 2)
        #expect(restored.lastMergeIdentity == .restored)
        #expect(try restored.append(EventDraft(kind: .bookmark, surah: 1, ayah: 4)).deviceSeq == 4)
        // Merging again adds nothing and finds nothing odd.
        #expect(try restored.merge(from: path) == 0 && restored.lastMergeIdentity == .inStep)
        restored.close()
    }

    @Test func twoJournalsWritingAsOneDeviceBothTakeNewIDsAndLoseNothing() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = directory + "/first.sqlite"
        let second = directory + "/second.sqlite"
        let one = try Journal(path: first)
        try one.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1))
        one.close()
        try FileManager.default.copyItem(atPath: first, toPath: second)
        let a = try Journal(path: first)
        let b = try Journal(path: second)
        let shared = a.deviceID
        try a.append(EventDraft(kind: .bookmark, surah: 2, ayah: 1))
        try b.append(EventDraft(kind: .bookmark, surah: 3, ayah: 1))
        a.close()
        #expect(try b.merge(from: first) == 1)
        #expect(b.lastMergeIdentity == .shared && b.deviceID != shared)
        try b.append(EventDraft(kind: .bookmark, surah: 4, ayah: 1))
        b.close()
        let again = try Journal(path: first)
        #expect(try again.merge(from: second) == 2)
        #expect(again.lastMergeIdentity == .shared && again.deviceID != shared)
        let ids = Set(try again.events().map(\.eventID))
        again.close()
        let back = try Journal(path: second)
        #expect(try back.merge(from: first) == 0)
        #expect(Set(try back.events().map(\.eventID)) == ids && ids.count == 4)
        back.close()
    }
}
