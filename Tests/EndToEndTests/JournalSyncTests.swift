import Foundation
import Synchronization
import TestSupport
import Testing

/// `tartil journal sync DIR` with the real binary: three devices (three private HOMEs, three journals) append
/// random events and sync through one shared folder in random orders, some runs at the same time, while partial,
/// conflict and garbage copies lie in the folder. After every device has synced twice more, all three have the
/// same events and the same `positions` and `bookmarks` (convergence), and no run ever lost an event or had one
/// that no device appended.
///
/// Seeded. One campaign by default (well under a minute); `TARTIL_FUZZ_SYNCS=N` runs N campaigns with seeds
/// 1…N, `TARTIL_SYNC_SEED=S` replays one.
@Suite(.serialized) struct JournalSyncTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seeds: [UInt64] = {
        if let seed = environment["TARTIL_SYNC_SEED"].flatMap(UInt64.init) { return [seed] }
        let count = environment["TARTIL_FUZZ_SYNCS"].flatMap(Int.init) ?? 1
        return (1...max(1, count)).map { UInt64($0) &* 0x5EED_0013 }
    }()

    /// One device: a private HOME whose journal is the default one.
    struct Device {
        let home: String
        var id = ""
        var journal: String { home + "/data/tartil/journal.sqlite" }
    }

    func tartil(_ arguments: [String], _ device: Device) throws -> RunResult {
        try runTartil(arguments, home: device.home)
    }

    /// The event ids in the device's journal (its own and merged), by device id.
    func events(_ device: Device) throws -> [String: Set<String>] {
        let export = try tartil(["journal", "export"], device)
        #expect(export.status == 0, "\(export.stderr)")
        var byDevice: [String: Set<String>] = [:]
        for line in export.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            byDevice[object["device_id"] as? String ?? "", default: []].insert(object["event_id"] as? String ?? "")
        }
        return byDevice
    }

    /// A position appended the way the player appends one (next sequence number of the device, a time after its
    /// last), through sqlite3: playing audio would make the test slow and is not what it is about.
    func appendPosition(_ device: Device, surah: Int, ayah: Int, offsetMs: Int) throws {
        let sql = """
            INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason)
            SELECT lower(hex(randomblob(16))), d.value,
                   (SELECT coalesce(max(device_seq), 0) + 1 FROM events WHERE device_id = d.value),
                   max(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
                       coalesce((SELECT max(ts_ms) + 1 FROM events WHERE device_id = d.value), 0)),
                   'position', 'alafasy-128', \(surah), \(ayah), \(offsetMs * 22), \(offsetMs), 'pause'
            FROM meta AS d WHERE d.key = 'device_id';
            """
        _ = try shell("sqlite3 '\(device.journal)' \"\(sql)\"")
    }

    /// Runs `journal sync` on each device at once (the same device may be there twice: its runs take turns).
    func syncTogether(_ devices: [Device], folder: String) throws -> [RunResult] {
        let results = Mutex([RunResult?](repeating: nil, count: devices.count))
        DispatchQueue.concurrentPerform(iterations: devices.count) { index in
            let result = try? runTartil(["journal", "sync", folder, "--json"], home: devices[index].home)
            results.withLock { $0[index] = result }
        }
        return results.withLock { $0 }.compactMap { $0 }
    }

    @Test(arguments: seeds)
    func threeDevicesConvergeThroughOneFolder(seed: UInt64) throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/shared"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var random = SeededRandom(seed: seed)
        var devices = (0..<3).map { Device(home: "\(root)/device\($0)") }
        for index in devices.indices {
            try FileManager.default.createDirectory(atPath: devices[index].home, withIntermediateDirectories: true)
            #expect(try tartil(["bookmark", "\(index + 1):1", "--note", "first of \(index)"], devices[index]).status == 0)
            let stats = try tartil(["journal", "stats", "--json"], devices[index])
            let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
            devices[index].id = try #require(object?["device_id"] as? String)
        }
        // What each device appended (its own events: no other device can add any, a merge refuses them).
        var appended = Dictionary(uniqueKeysWithValues: try devices.map { ($0.id, try events($0)[$0.id] ?? []) })
        var held = [Set<String>](repeating: [], count: devices.count)

        /// After a sync: nothing lost since the last look, nothing that no device appended.
        func checkNothingLostOrInvented(_ index: Int, _ label: String) throws {
            let now = try events(devices[index])
            let all = now.values.reduce(into: Set<String>()) { $0.formUnion($1) }
            let union = appended.values.reduce(into: Set<String>()) { $0.formUnion($1) }
            #expect(held[index].isSubset(of: all), "\(label): device \(index) lost \(held[index].subtracting(all).count) events")
            #expect(all.isSubset(of: union), "\(label): device \(index) has \(all.subtracting(union).count) events no device appended")
            #expect(now[devices[index].id] == appended[devices[index].id], "\(label): device \(index)'s own events changed")
            held[index] = all
        }

        /// A copy of a device's snapshot in the folder, cut at a random length, under `name`.
        func partialCopy(of device: Device, as name: String) throws {
            let snapshot = "\(folder)/\(device.id).tartil-journal"
            guard let bytes = FileManager.default.contents(atPath: snapshot), bytes.count > 1 else { return }
            let length = random.below(2) == 0 ? (1 + random.below(bytes.count / 4096)) * 4096 : 1 + random.below(bytes.count - 1)
            try bytes.prefix(min(length, bytes.count - 1)).write(to: URL(fileURLWithPath: "\(folder)/\(name)"))
        }

        for step in 0..<40 {
            let index = random.below(devices.count)
            let device = devices[index]
            let label = "seed \(seed) step \(step)"
            switch random.below(10) {
            case 0, 1, 2:  // a position
                try appendPosition(device, surah: 1 + random.below(114), ayah: 1, offsetMs: random.below(60_000))
            case 3, 4:  // a bookmark
                #expect(try tartil(["bookmark", "\(1 + random.below(114)):1", "--note", "s\(step)"], device).status == 0)
            case 5:  // a bookmark removed, or its note edited (of any device's bookmark this one knows)
                let list = try tartil(["bookmarks", "--json"], device)
                let ids = (try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
                if let id = ids.isEmpty ? nil : ids[random.below(ids.count)] {
                    let change = random.below(2) == 0 ? ["bookmark", "rm", id] : ["bookmark", "note", id, "edited at \(step)"]
                    #expect(try tartil(change, device).status == 0, "\(label): \(change)")
                }
            case 6:  // junk in the folder: partial copies under sync tools' names and a valid one, a conflict copy, garbage
                let other = devices[random.below(devices.count)]
                switch random.below(6) {
                case 0: try partialCopy(of: other, as: ".syncthing.\(other.id).tartil-journal.tmp")
                case 1: try partialCopy(of: other, as: "\(other.id).tartil-journal.\(step)a1b2.partial")
                case 2: try partialCopy(of: other, as: ".\(other.id).tartil-journal.~\(step)f3e")
                case 3: try partialCopy(of: other, as: "\(other.id).tartil-journal")  // arriving in place
                case 4: try partialCopy(of: other, as: "ffff0000-0000-4000-8000-00000000000\(step % 10).tartil-journal")
                default:
                    let snapshot = "\(folder)/\(other.id).tartil-journal"
                    if FileManager.default.fileExists(atPath: snapshot) {
                        try? FileManager.default.copyItem(
                            atPath: snapshot, toPath: "\(folder)/\(other.id).sync-conflict-20261201-0000\(10 + step)-ABCDEFG.tartil-journal")
                    }
                    var garbage = [UInt8](repeating: 0, count: 8192)
                    for position in garbage.indices { garbage[position] = UInt8(truncatingIfNeeded: random.next()) }
                    try Data(garbage).write(to: URL(fileURLWithPath: "\(folder)/garbage.tartil-journal"))
                }
            default:  // syncs: one device, or several at once (sometimes the same one twice)
                let chosen = (0..<(1 + random.below(3))).map { _ in random.below(devices.count) }
                let results = try syncTogether(chosen.map { devices[$0] }, folder: folder)
                for (number, result) in results.enumerated() {
                    #expect(result.status == 0, "\(label): device \(chosen[number]) sync: \(result.stderr)")
                    #expect(!result.stderr.contains("Fatal error"), "\(label): \(result.stderr)")
                }
                for chosenIndex in Set(chosen) { try checkNothingLostOrInvented(chosenIndex, label) }
            }
            appended[device.id] = try events(device)[device.id] ?? []
        }

        // Every device syncs twice, in turn: then all have everything.
        for round in 0..<2 {
            for index in devices.indices {
                let result = try tartil(["journal", "sync", folder], devices[index])
                #expect(result.status == 0, "seed \(seed) final round \(round): device \(index): \(result.stderr)")
                try checkNothingLostOrInvented(index, "seed \(seed) final round \(round)")
            }
        }
        let union = appended.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(union.count > 10, "seed \(seed): the campaign appended only \(union.count) events")
        let positions = try devices.map { try tartil(["positions", "--json"], $0).stdout }
        let bookmarks = try devices.map { try tartil(["bookmarks", "--json"], $0).stdout }
        for index in devices.indices {
            #expect(held[index] == union, "seed \(seed): device \(index) has \(held[index].count) of \(union.count) events")
            #expect(positions[index] == positions[0], "seed \(seed): device \(index)'s positions differ")
            #expect(bookmarks[index] == bookmarks[0], "seed \(seed): device \(index)'s bookmarks differ")
        }
        // Idempotent: one more sync merges nothing and writes nothing.
        let again = try tartil(["journal", "sync", folder, "--json"], devices[0])
        let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        #expect(report?["new_events"] as? Int == 0 && report?["published"] as? Bool == false, "\(again.stdout)")
        // Nothing of tartil's but the three snapshots (and the junk the test put there) is in the folder.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(!names.contains { $0.contains(".tmp-") || $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }, "\(names)")
        for device in devices { #expect(names.contains("\(device.id).tartil-journal")) }
    }

    @Test func aFolderThatCannotBeUsedIsAUsageError() throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let device = Device(home: root)
        #expect(try tartil(["bookmark", "1:1"], device).status == 0)
        FileManager.default.createFile(atPath: root + "/file", contents: Data("x".utf8))
        for folder in [root + "/missing", root + "/file"] {
            let result = try tartil(["journal", "sync", folder], device)
            #expect(result.status == 64 && result.stderr.contains(folder), "\(folder): \(result.stderr)")
        }
        #expect(try tartil(["journal", "sync", root, "--interval", "5"], device).status == 64)
        #expect(try tartil(["journal", "sync", root, "--watch", "--interval", "0"], device).status == 64)
    }

    /// A journal restored from an older copy never overwrites the snapshot that holds the device's later events:
    /// it folds them back in as its own (exit 0, a note saying so), and the snapshot it writes holds every event
    /// the old one did.
    @Test func aJournalRestoredFromAnOlderCopyFoldsItsLaterEventsBack() throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let device = Device(home: root + "/home")
        try FileManager.default.createDirectory(atPath: root + "/shared", withIntermediateDirectories: true)
        #expect(try tartil(["bookmark", "1:1"], device).status == 0)
        #expect(try tartil(["journal", "backup", root + "/older.sqlite"], device).status == 0)
        #expect(try tartil(["bookmark", "1:2"], device).status == 0)
        #expect(try tartil(["journal", "sync", root + "/shared"], device).status == 0)
        let snapshot = try #require(try FileManager.default.contentsOfDirectory(atPath: root + "/shared").first)
        let before = try events(device)
        try FileManager.default.removeItem(atPath: device.journal)
        try FileManager.default.copyItem(atPath: root + "/older.sqlite", toPath: device.journal)
        let result = try tartil(["journal", "sync", root + "/shared"], device)
        #expect(result.status == 0 && result.stderr.contains("folded back"), "\(result.stderr)")
        #expect(try events(device) == before)
        // The device goes on numbering after its folded-back events, under the same id.
        #expect(try tartil(["bookmark", "1:3"], device).status == 0)
        let after = try tartil(["journal", "export"], device).stdout.split(separator: "\n")
        #expect(after.last?.contains("\"device_seq\":3") == true, "\(after)")
        #expect(try tartil(["journal", "sync", root + "/shared"], device).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/shared") == [snapshot])
    }

    /// A file at this device's name holding another device's journal is merged, and one that cannot be merged is
    /// moved aside: never overwritten.
    @Test func aFileAtThisDevicesNameIsMergedOrMovedAsideNeverOverwritten() throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/shared"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var one = Device(home: root + "/one")
        let two = Device(home: root + "/two")
        #expect(try tartil(["bookmark", "1:1"], one).status == 0)
        #expect(try tartil(["bookmark", "2:255", "--note", "two's"], two).status == 0)
        let stats = try JSONSerialization.jsonObject(with: Data(try tartil(["journal", "stats", "--json"], one).stdout.utf8)) as? [String: Any]
        one.id = try #require(stats?["device_id"] as? String)
        let ownName = folder + "/\(one.id).tartil-journal"
        // Another device's journal, put at this device's name.
        try FileManager.default.copyItem(atPath: two.journal, toPath: ownName)
        let merged = try tartil(["journal", "sync", folder], one)
        #expect(merged.status == 0, "\(merged.stderr)")
        let twos = try events(two).values.first ?? []
        let ones = try events(one)
        #expect(!twos.isEmpty && ones.values.contains { $0 == twos }, "two's events were not merged")
        // Something that is not a journal (a copy cut short) at this device's name: moved aside, kept byte for byte.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: two.journal))
        let cut = bytes.prefix(bytes.count / 2 + 100)
        try cut.write(to: URL(fileURLWithPath: ownName))
        let moved = try tartil(["journal", "sync", folder, "--json"], one)
        #expect(moved.status == 0 && moved.stderr.contains("aside"), "\(moved.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        let aside = try #require(names.first { $0.hasSuffix(".tartil-journal-aside") }, "\(names)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + aside)) == cut)
        // The next run lists it as skipped, with what to do.
        let again = try tartil(["journal", "sync", folder], one)
        #expect(again.status == 0 && again.stderr.contains("moved aside by tartil"), "\(again.stderr)")
    }

    /// Two journals restored from one backup (on two machines), and a journal copied to a second machine, all
    /// used and synced through one folder many times, in random orders, some at once: every device converges on
    /// every event any journal ever held, and no run loses one. The journals that find their id shared take a
    /// new one; the old id's events merge like another device's.
    @Test(arguments: seeds)
    func restoredAndCopiedJournalsConvergeWithNothingLost(seed: UInt64) throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/shared"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var random = SeededRandom(seed: seed)
        // a: the original; b: a second device; c: a second journal from a's backup; d: a copy of b's journal.
        let devices = ["a", "b", "c", "d"].map { Device(home: "\(root)/\($0)") }
        for device in devices { try FileManager.default.createDirectory(atPath: device.home + "/data/tartil", withIntermediateDirectories: true) }
        let (a, b, c, d) = (devices[0], devices[1], devices[2], devices[3])
        func bookmark(_ device: Device, _ step: Int) throws {
            let result = try tartil(["bookmark", "\(1 + random.below(114)):1", "--note", "step \(step)"], device)
            #expect(result.status == 0, "\(result.stderr)")
        }
        var everHeld = Set<String>()
        func look(_ label: String) throws {
            for (index, device) in devices.enumerated() where FileManager.default.fileExists(atPath: device.journal) {
                let held = try events(device).values.reduce(into: Set<String>()) { $0.formUnion($1) }
                everHeld.formUnion(held)
                _ = (index, label)
            }
        }
        for step in 0..<3 { try bookmark(a, step) }
        try bookmark(b, 0)
        #expect(try tartil(["journal", "sync", folder], a).status == 0)
        #expect(try tartil(["journal", "sync", folder], b).status == 0)
        #expect(try tartil(["journal", "backup", root + "/a-backup.sqlite"], a).status == 0)
        for step in 3..<6 { try bookmark(a, step) }
        #expect(try tartil(["journal", "sync", folder], a).status == 0)
        try look("before the restores")
        // a is restored from its backup; c gets the same backup; d gets a copy of b's journal.
        try FileManager.default.removeItem(atPath: a.journal)
        try FileManager.default.copyItem(atPath: root + "/a-backup.sqlite", toPath: a.journal)
        try FileManager.default.copyItem(atPath: root + "/a-backup.sqlite", toPath: c.journal)
        try FileManager.default.copyItem(atPath: b.journal, toPath: d.journal)

        for step in 6..<46 {
            let label = "seed \(seed) step \(step)"
            if random.below(2) == 0 {
                try bookmark(devices[random.below(devices.count)], step)
            } else {
                let chosen = (0..<(1 + random.below(3))).map { _ in random.below(devices.count) }
                for (number, result) in try syncTogether(chosen.map { devices[$0] }, folder: folder).enumerated() {
                    #expect(result.status == 0, "\(label): device \(chosen[number]) sync: \(result.stderr)")
                    #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("claims to come from this device"), "\(label): \(result.stderr)")
                }
            }
            try look(label)
        }
        // Rounds until every device has synced enough: a new id taken in one round is learnt by the others in the
        // next.
        for round in 0..<4 {
            for (index, device) in devices.enumerated() {
                let result = try tartil(["journal", "sync", folder], device)
                #expect(result.status == 0, "seed \(seed) final round \(round): device \(index): \(result.stderr)")
                #expect(!result.stderr.contains("claims to come from this device"), "seed \(seed) round \(round): \(result.stderr)")
            }
            try look("final round \(round)")
        }
        #expect(everHeld.count >= 15, "seed \(seed): only \(everHeld.count) events")
        let bookmarks = try devices.map { try tartil(["bookmarks", "--json"], $0).stdout }
        for (index, device) in devices.enumerated() {
            let held = try events(device).values.reduce(into: Set<String>()) { $0.formUnion($1) }
            #expect(held == everHeld, "seed \(seed): device \(index) has \(held.count) of \(everHeld.count) events (lost \(everHeld.subtracting(held).count))")
            #expect(bookmarks[index] == bookmarks[0], "seed \(seed): device \(index)'s bookmarks differ")
        }
        // No two devices write as one any more.
        let ids = try devices.map { device -> String in
            let stats = try JSONSerialization.jsonObject(with: Data(try tartil(["journal", "stats", "--json"], device).stdout.utf8)) as? [String: Any]
            return stats?["device_id"] as? String ?? ""
        }
        #expect(Set(ids).count == devices.count, "seed \(seed): device ids \(ids)")
        // And a last round changes nothing.
        for device in devices {
            let again = try tartil(["journal", "sync", folder, "--json"], device)
            let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
            #expect(report?["new_events"] as? Int == 0, "seed \(seed): \(again.stdout)")
        }
    }

    @Test func watchSyncsUntilSIGTERMAndExitsCleanly() throws {
        let root = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let device = Device(home: root + "/home")
        try FileManager.default.createDirectory(atPath: device.home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/shared", withIntermediateDirectories: true)
        #expect(try tartil(["bookmark", "1:1"], device).status == 0)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: TestPaths.executable)
        process.arguments = ["journal", "sync", root + "/shared", "--watch", "--interval", "1"]
        process.environment = isolatedEnvironment(home: device.home)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, (try? FileManager.default.contentsOfDirectory(atPath: root + "/shared"))?.contains(where: { $0.hasSuffix(".tartil-journal") }) != true {
            usleep(50_000)
        }
        usleep(300_000)
        process.terminate()  // SIGTERM
        let stopped = Date()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(stopped) < 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/shared").filter { $0.hasSuffix(".tartil-journal") }.count == 1)
    }
}
