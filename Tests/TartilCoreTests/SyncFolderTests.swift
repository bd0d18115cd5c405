import Testing

@testable import TartilCore

/// What `journal sync` merges, skips and ignores in a synced folder: one row per kind of name a sync tool (or a
/// person) leaves there.
@Suite struct SyncFolderTests {
    static let own = "9c1e0000-0000-4000-8000-000000000000"
    static let other = "3f2a9c1e-28f3-49f7-b007-da4e6477c012"
    static let page: Int64 = 4096

    enum Expected: Sendable, CustomStringConvertible {
        case merge, own, ignore
        /// Skipped, with a reason containing this text.
        case skip(String)
        var description: String {
            switch self {
            case .merge: "merge"
            case .own: "own"
            case .ignore: "ignore"
            case .skip(let text): "skip(\(text))"
            }
        }
    }

    static let table: [(name: String, kind: SyncFolder.EntryKind, size: Int64, expected: Expected)] = [
        ("\(other).tartil-journal", .regular, 12 * page, .merge),
        ("\(own).tartil-journal", .regular, 12 * page, .own),
        ("\(own).tartil-journal", .regular, 0, .own),  // this device's, whatever its state: it is replaced
        ("a_B-9.tartil-journal", .regular, 512, .merge),
        // Sync tools' temporary files: a copy still arriving.
        (".syncthing.\(other).tartil-journal.tmp", .regular, 5000, .skip("Syncthing's temporary")),
        ("~syncthing~\(other).tartil-journal.tmp", .regular, 5000, .skip("Syncthing's temporary")),
        (".\(other).tartil-journal.~3f2a1b", .regular, 4 * page, .skip("Nextcloud")),
        ("\(other).tartil-journal.1a2b3c4d.partial", .regular, 4 * page, .skip("rclone's partial")),
        ("\(other).tartil-journal.!sync", .regular, 4 * page, .skip("Resilio")),
        (".unison.\(other).tartil-journal.1a2b.unison.tmp", .regular, 4 * page, .skip("Unison")),
        (".\(other).tartil-journal.Xy12Ab", .regular, 4 * page, .skip("hidden file")),
        ("\(other).tartil-journal.part", .regular, 4 * page, .skip("partial copy (.part)")),
        ("~$\(other).tartil-journal", .regular, 162, .skip("~$")),
        // Conflict copies (whole journals, but a second version of one device's file).
        ("\(other).sync-conflict-20261201-001122-ABCDEFG.tartil-journal", .regular, 12 * page, .skip("Syncthing conflict")),
        ("\(other) (Amina's conflicted copy 2026-12-01).tartil-journal", .regular, 12 * page, .skip("Dropbox")),
        ("\(other) (conflicted copy 2026-12-01 001122).tartil-journal", .regular, 12 * page, .skip("Nextcloud or ownCloud")),
        ("\(other).tartil-journal.conflict2", .regular, 12 * page, .skip("rclone bisync")),
        ("\(other).tartil-journal..path1", .regular, 12 * page, .skip("rclone bisync")),
        ("\(other) (SFConflict amina@example.org 2026-12-01-00-11-22).tartil-journal", .regular, 12 * page, .skip("Seafile")),
        // tartil's own and SQLite's.
        ("\(other).tartil-journal.tmp-1a2b3c4d", .regular, 12 * page, .skip("snapshot being written")),
        ("\(other).tartil-journal.tmp-1a2b3c4d-wal", .regular, 12 * page, .skip("snapshot being written")),
        ("\(other).tartil-journal-wal", .regular, 12 * page, .skip("SQLite side file (-wal)")),
        ("\(other).tartil-journal-journal", .regular, 512, .skip("SQLite side file (-journal)")),
        // Names that are not a device id, and files that are not whole.
        ("a.b.tartil-journal", .regular, 12 * page, .skip("not named DEVICE-ID")),
        (".tartil-journal", .regular, 12 * page, .skip("hidden file")),
        ("my tartil-journal backup.sqlite", .regular, 12 * page, .skip("not named DEVICE-ID")),
        ("\(String(repeating: "a", count: 129)).tartil-journal", .regular, 12 * page, .skip("not named DEVICE-ID")),
        ("\(other).tartil-journal", .regular, 0, .skip("empty")),
        ("\(other).tartil-journal", .regular, 5000, .skip("partial copy (5000 bytes")),
        ("\(other).tartil-journal", .regular, 100, .skip("partial copy (100 bytes")),
        ("\(other).tartil-journal", .directory, 4096, .skip("a directory")),
        ("\(other).tartil-journal", .symbolicLink, 40, .skip("symbolic link")),
        ("\(other).tartil-journal", .other, 0, .skip("not a regular file")),
        // Not tartil's.
        ("notes.txt", .regular, 10, .ignore),
        (".stfolder", .directory, 4096, .ignore),
        (".syncthing.photo.jpg.tmp", .regular, 10, .ignore),
        ("journal.sqlite", .regular, 12 * page, .ignore),
    ]

    @Test(arguments: table.indices)
    func decides(index: Int) {
        let row = Self.table[index]
        let decision = SyncFolder.decide(.init(name: row.name, kind: row.kind, size: row.size), ownDeviceID: Self.own)
        switch (row.expected, decision) {
        case (.merge, .merge(let device)): #expect(device + SyncFolder.suffix == row.name)
        case (.own, .own), (.ignore, .ignore): break
        case (.skip(let text), .skip(let reason)): #expect(reason.contains(text), "\(row.name): \(reason)")
        default: Issue.record("\(row.name) (\(row.kind), \(row.size) bytes): expected \(row.expected), got \(decision)")
        }
    }

    @Test func namesTheSnapshotOfADevice() {
        #expect(SyncFolder.fileName(deviceID: Self.other) == "\(Self.other).tartil-journal")
        #expect(SyncFolder.isDeviceID("a-Z_9") && !SyncFolder.isDeviceID("") && !SyncFolder.isDeviceID("a.b") && !SyncFolder.isDeviceID("é"))
    }
}
