import TartilCore
import Foundation
import TestSupport
import Testing

@testable import TartilJournal
@testable import TartilSQLite

@Suite struct ConnectionTests {
    @Test func executesPreparesAndBinds() throws {
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t(a INTEGER, b TEXT)")
        let insert = try connection.prepare("INSERT INTO t VALUES (?, ?)")
        try insert.bind([.integer(7), .text("سبعة")])
        try insert.step()
        try insert.bind([.integer(8), .null])
        try insert.step()
        let select = try connection.prepare("SELECT a, b FROM t ORDER BY a")
        #expect(try select.step())
        #expect(select.integer(at: 0) == 7)
        #expect(select.text(at: 1) == "سبعة")
        #expect(try select.step())
        #expect(select.text(at: 1) == nil)
        #expect(try select.step() == false)
    }

    @Test func errorsCarryTheCodeMessageAndSQL() throws {
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        do {
            try connection.execute("SELEC 1")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .error)
            #expect(error.sql == "SELEC 1")
            #expect(error.message.contains("syntax error"))
        }
    }

    @Test func transactionsRollBackOnThrow() throws {
        struct Stop: Error {}
        let connection = try Connection(path: ":memory:")
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t(a)")
        #expect(throws: Stop.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                throw Stop()
            }
        }
        #expect(try connection.scalarText("SELECT count(*) FROM t") == "0")
    }
}

@Suite struct JournalDatabaseTests {
    @Test func newJournalIsWALWithFullSyncAndAppendOnlyEvents() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        let connection = journal.database.connection
        #expect(try connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try connection.scalarText("PRAGMA synchronous") == "2")  // FULL
        #expect(try Migrator.applied(connection) == ["v1-events", "v2-bookmark-edits", "v3-hifz"])
        try journal.append(.position(reciter: "r", surah: 36, ayah: 1, offsetSamples: 0, sampleRate: 22050, reason: .ayahStart))
        for sql in ["UPDATE events SET kind = 'bookmark'", "DELETE FROM events", "UPDATE meta SET value = 'x'", "DELETE FROM meta"] {
            do {
                try connection.execute(sql)
                Issue.record("\(sql) should be refused")
            } catch {
                #expect(error.message.contains("append-only") || error.message.contains("written once"), "\(sql)")
            }
        }
        #expect(try connection.scalarText("SELECT count(*) FROM events") == "1")
        #expect(try journal.problems().isEmpty)
    }

    /// The events in a copy of the journal file alone (no -wal or -shm beside the copy).
    func eventsInACopyOfTheFileAlone(_ path: String) throws -> Int {
        let copy = path + ".copy"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let connection = try Connection(uri: Connection.readOnlyURI(copy) + "&immutable=1", mode: .readOnly)
        defer { try? connection.close() }
        guard try connection.scalarText("SELECT name FROM sqlite_master WHERE name = 'events'") != nil else { return -1 }
        return Int(try connection.scalarText("SELECT count(*) FROM events") ?? "") ?? -1
    }

    @Test func afterCloseTheFileAloneHoldsEveryEventEvenWithAReaderStillOpen() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        let journal = try Journal(path: path)
        for ayah in 1...40 { try journal.append(EventDraft(kind: .bookmark, surah: 2, ayah: ayah)) }
        // While open, the events are in the write-ahead log (kept while running).
        #expect((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 > 0)
        // A reader that stays open: the writer is not the last connection, so SQLite's own close would not
        // checkpoint; the journal's close must.
        let reader = try Journal(path: path, readOnly: true)
        #expect(try reader.events().count == 40)
        journal.close()
        #expect(try eventsInACopyOfTheFileAlone(path) == 40)
        #expect((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 == 0)
        reader.close()
        // Reopened and closed again: still every event, and no log left beside it.
        let again = try Journal(path: path)
        try again.append(EventDraft(kind: .bookmark, surah: 3, ayah: 1))
        again.close()
        #expect(try eventsInACopyOfTheFileAlone(path) == 41)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func theDeviceIdIsMadeOnceAndSequenceNumbersCount() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Journal(path: directory + "/journal.sqlite")
        let device = first.deviceID
        let one = try first.append(EventDraft(kind: .bookmark, surah: 2, ayah: 255, note: "kursi"))
        let two = try first.append(EventDraft(kind: .bookmark, surah: 2, ayah: 256))
        first.close()
        let again = try Journal(path: directory + "/journal.sqlite")
        defer { again.close() }
        #expect(again.deviceID == device && UUID(uuidString: device) != nil)
        #expect(one.deviceSeq == 1 && two.deviceSeq == 2)
        #expect(try again.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1)).deviceSeq == 3)
        let stored = try again.events()
        #expect(stored.map(\.note) == ["kursi", nil, nil])
        #expect(stored[0] == one)
    }

    @Test func latestPositionWinsByTimeThenDeviceThenEventID() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let here = try Journal(path: directory + "/here.sqlite")
        let there = try Journal(path: directory + "/there.sqlite")
        defer { here.close() }
        try here.append(.position(reciter: "a", surah: 36, ayah: 5, offsetSamples: 0, sampleRate: 22050, reason: .pause), timeMs: 2000)
        try here.append(.position(reciter: "a", surah: 67, ayah: 2, offsetSamples: 0, sampleRate: 22050, reason: .ayahStart), timeMs: 2500)
        try there.append(.position(reciter: "b", surah: 36, ayah: 9, offsetSamples: 22050, sampleRate: 22050, reason: .stop), timeMs: 3000)
        // The same millisecond on two devices: the larger device id wins.
        let tie = try there.append(.position(reciter: "b", surah: 112, ayah: 1, offsetSamples: 0, sampleRate: 22050, reason: .stop), timeMs: 4000)
        let mine = try here.append(.position(reciter: "a", surah: 112, ayah: 2, offsetSamples: 0, sampleRate: 22050, reason: .stop), timeMs: 4000)
        there.close()
        #expect(try here.merge(from: directory + "/there.sqlite") == 2)
        let latest = try here.latestPositions(reciter: nil, surah: nil)
        #expect(latest.map { "\($0.surah!):\($0.ayah!)" } == [mine.deviceID > tie.deviceID ? "112:2" : "112:1", "36:9", "67:2"])
        #expect(latest[1].offsetMs == 1000)
        #expect(try here.lastPosition(reciter: "a", surah: 36).map { "\($0.surah!):\($0.ayah!)" } == "36:5")
        #expect(try here.latestPositions(reciter: nil, surah: 67).count == 1)
    }

    @Test func timesOnOneDeviceOnlyGoForward() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        let first = try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 1), timeMs: 5000)
        let second = try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 2), timeMs: 5000)
        let third = try journal.append(EventDraft(kind: .bookmark, surah: 1, ayah: 3), timeMs: 1000)  // the clock went back
        #expect([first.timeMs, second.timeMs, third.timeMs] == [5000, 5001, 5002])
    }

    @Test func foreignDatabaseIsRefusedAndLeftAlone() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/other.sqlite"
        let other = try Connection(path: path)
        try other.execute("CREATE TABLE notes(x)")
        try other.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect { try Journal(path: path) } throws: { ($0 as? JournalError)?.code == .notAJournal }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // Nor is it merged from.
        let journal = try Journal(path: directory + "/journal.sqlite")
        defer { journal.close() }
        #expect { try journal.merge(from: path) } throws: { ($0 as? JournalError)?.code == .notAJournal }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test(arguments: ["text", "damaged"])
    func aFileThatIsNotADatabaseIsRefusedAndLeftAlone(kind: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/journal.sqlite"
        var bytes = Data(String(repeating: "not a database\n", count: 300).utf8)
        if kind == "damaged" { bytes.replaceSubrange(0..<16, with: Data("SQLite format 3\0".utf8)) }
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect { try Journal(path: path) } throws: { ($0 as? JournalError)?.code == .notAJournal }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}

/// Merge is a set union by event id, and positions derive from the events alone: so merging is commutative,
/// idempotent and associative. Checked on random journals with clashing times across devices.
@Suite struct JournalMergeTests {
    /// A small deterministic generator (xorshift64*), so a failure can be replayed from its seed.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
    }

    func randomJournal(_ path: String, events: Int, random: inout Random) throws -> Journal {
        let journal = try Journal(path: path)
        for _ in 0..<events {
            let surah = Int.random(in: 110...114, using: &random)
            let draft: EventDraft = Int.random(in: 0..<5, using: &random) == 0
                ? EventDraft(kind: .bookmark, surah: surah, ayah: 1, note: "n\(Int.random(in: 0..<100, using: &random))")
                : .position(
                    reciter: ["a", "b"].randomElement(using: &random)!, surah: surah, ayah: Int.random(in: 1...3, using: &random),
                    offsetSamples: Int.random(in: 0..<50_000, using: &random), sampleRate: 22050,
                    reason: JournalEvent.Reason.allCases.randomElement(using: &random)!)
            // Few distinct times, so ties between devices are common and the tie-breaks are exercised.
            try journal.append(draft, timeMs: Int64(Int.random(in: 0..<8, using: &random)))
        }
        return journal
    }

    /// Everything derived state depends on: the set of events, and the positions.
    func derived(_ journal: Journal) throws -> (Set<String>, [String]) {
        let events = Set(try journal.events().map(\.eventID))
        let positions = try journal.latestPositions(reciter: nil, surah: nil).map { "\($0.surah!):\($0.ayah!)@\($0.eventID)" }
        return (events, positions)
    }

    func copy(_ source: String, _ destination: String) throws {
        let journal = try Journal(path: destination)
        try journal.merge(from: source)
        journal.close()
    }

    @Test(arguments: [1 as UInt64, 7, 42, 1234, 99_991])
    func mergeIsCommutativeIdempotentAndAssociative(seed: UInt64) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var random = Random(state: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        for (name, count) in [("a", 40), ("b", 30), ("c", 25)] {
            try randomJournal("\(directory)/\(name).sqlite", events: count, random: &random).close()
        }
        func merged(_ order: [String], into name: String) throws -> Journal {
            let journal = try Journal(path: "\(directory)/\(name).sqlite")
            for source in order { try journal.merge(from: "\(directory)/\(source).sqlite") }
            return journal
        }
        let ab = try merged(["a", "b"], into: "ab")
        let ba = try merged(["b", "a"], into: "ba")
        defer { ab.close(); ba.close() }
        #expect(try derived(ab) == derived(ba), "commutative (seed \(seed))")
        // Idempotent: merging again adds nothing and changes nothing.
        let before = try derived(ab)
        #expect(try ab.merge(from: "\(directory)/a.sqlite") == 0 && ab.merge(from: "\(directory)/b.sqlite") == 0)
        #expect(try derived(ab) == before)
        // Associative: (a ∪ b) ∪ c == a ∪ (b ∪ c). (A journal in use, with its log beside it, is not merged from:
        // `ab` is closed first, which folds its log into the file.)
        ab.close()
        let abThenC = try merged(["ab", "c"], into: "ab-c")
        let bc = try merged(["b", "c"], into: "bc")
        bc.close()
        let aThenBC = try merged(["a", "bc"], into: "a-bc")
        defer { abThenC.close(); aThenBC.close() }
        #expect(try derived(abThenC) == derived(aThenBC), "associative (seed \(seed))")
        #expect(try derived(abThenC).0.count == 95 + 0)  // every event once (the empty merge targets add none)
        #expect(try abThenC.problems().isEmpty)
    }

    /// A merge reads what is new by device and sequence number; where two files disagree about a device (a journal
    /// copied to a second machine and used on both: two histories under one device id) it still unites them by
    /// event id.
    @Test func mergeTakesOnlyNewEventsAndStillUnitesAForkedDevice() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func append(_ name: String, _ count: Int) throws {
            let journal = try Journal(path: "\(directory)/\(name).sqlite")
            try journal.append(contentsOf: (0..<count).map { EventDraft(kind: .bookmark, surah: 3, ayah: 1 + $0, note: "\(name)\($0)") })
            journal.close()
        }
        try append("a", 5)
        let b = try Journal(path: directory + "/b.sqlite")
        defer { b.close() }
        #expect(try b.merge(from: directory + "/a.sqlite") == 5)
        try append("a", 3)
        #expect(try b.merge(from: directory + "/a.sqlite") == 3)
        #expect(try b.merge(from: directory + "/a.sqlite") == 0)
        // The fork: c is a copy of a, then both go on.
        try FileManager.default.copyItem(atPath: directory + "/a.sqlite", toPath: directory + "/c.sqlite")
        try append("a", 2)
        try append("c", 4)
        #expect(try b.merge(from: directory + "/a.sqlite") == 2)
        #expect(try b.merge(from: directory + "/c.sqlite") == 4)
        #expect(try b.merge(from: directory + "/c.sqlite") == 0 && b.merge(from: directory + "/a.sqlite") == 0)
        #expect(try b.events().count == 14)
    }
}
