/// `journal sync DIR`: which entries of a folder kept in sync between machines are other devices' journals to
/// merge, which is this device's own snapshot, and which are skipped, and why.
///
/// A journal in the folder is named `<device-id>.tartil-journal`, the device id being letters, digits, `-` and `_`
/// (1 to 128 of them, as the journal's own check of device ids). Anything else that mentions `tartil-journal` is
/// skipped with a reason: sync tools' temporary files (a copy still arriving) and conflict copies, tartil's own
/// temporary snapshot, SQLite side files, hidden files, a name that is not a device id, a directory or a symbolic
/// link, an empty file, and a size that is not a whole number of SQLite pages (a copy cut short). Entries that do
/// not mention `tartil-journal` are other files of the folder: not tartil's business, not listed.
///
/// Pure: the caller lists the folder and `lstat`s each entry; what is decided here is tested by a table and fuzzed.
///
/// ```swift
/// SyncFolder.decide(.init(name: "3f2a.tartil-journal", kind: .regular, size: 53248), ownDeviceID: "9c1e")
/// // .merge(deviceID: "3f2a")
/// ```
public enum SyncFolder {
    /// The ending of every journal's name in the folder.
    public static let suffix = ".tartil-journal"

    /// The ending of a file `journal sync` moved aside rather than overwrite (`SyncIdentity.asideName`).
    public static let asideSuffix = ".tartil-journal-aside"

    /// The longest device id (the journal's own limit for ids, `Journal.MergeLimits.idBytes`).
    public static let longestDeviceID = 128

    /// The name of the snapshot of the device `deviceID`.
    public static func fileName(deviceID: String) -> String { deviceID + suffix }

    /// What kind of directory entry it is (from `lstat`: a symbolic link is not followed).
    public enum EntryKind: Sendable, Hashable {
        case regular, directory, symbolicLink, other
    }

    /// One entry of the folder.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var kind: EntryKind
        /// Its size in bytes (of the entry itself, for a symbolic link).
        public var size: Int64

        public init(name: String, kind: EntryKind, size: Int64) {
            self.name = name
            self.kind = kind
            self.size = size
        }
    }

    /// What `journal sync` does with an entry.
    public enum Decision: Sendable, Hashable {
        /// Another device's snapshot: merged (if its content is a valid tartil journal of that device).
        case merge(deviceID: String)
        /// This device's own snapshot: replaced after the merges, never merged from.
        case own
        /// Skipped, and listed with this reason.
        case skip(reason: String)
        /// Not tartil's: ignored, not listed.
        case ignore
    }

    /// The smallest page SQLite writes: every database file is a whole number of pages of at least this size.
    static let smallestPage: Int64 = 512

    /// Decides what to do with `entry` in a folder where this device is `ownDeviceID`.
    public static func decide(_ entry: Entry, ownDeviceID: String) -> Decision {
        let name = entry.name
        guard name.contains(text: "tartil-journal") else { return .ignore }
        if name.hasSuffix(asideSuffix) {
            return .skip(reason: "moved aside by tartil, which found it at its own name holding what it could not merge; look at it (tartil journal merge FILE), then remove it")
        }
        if let reason = syncToolCopy(name) { return .skip(reason: reason) }
        guard name.hasSuffix(suffix), isDeviceID(name.dropLast(suffix.count)) else {
            return .skip(reason: "not named DEVICE-ID\(suffix) (letters, digits, - and _ before \(suffix))")
        }
        let deviceID = String(name.dropLast(suffix.count))
        switch entry.kind {
        case .regular: break
        case .directory: return .skip(reason: "a directory, not a journal file")
        case .symbolicLink: return .skip(reason: "a symbolic link (not followed)")
        case .other: return .skip(reason: "not a regular file")
        }
        if deviceID == ownDeviceID { return .own }
        if entry.size == 0 { return .skip(reason: "empty (a copy not yet written)") }
        if entry.size < smallestPage || entry.size % smallestPage != 0 {
            return .skip(reason: "a partial copy (\(entry.size) bytes is not a whole number of SQLite pages)")
        }
        return .merge(deviceID: deviceID)
    }

    /// Whether `text` is a device id: 1 to 128 ASCII letters, digits, `-` and `_`.
    public static func isDeviceID(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= longestDeviceID
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    /// The reason a name is a sync tool's (or tartil's, or SQLite's) temporary file or conflict copy, if it is one.
    ///
    /// - Syncthing: `.syncthing.NAME.tmp` (`~syncthing~NAME.tmp` on Windows) while a file arrives; conflict copies
    ///   `STEM.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.tartil-journal`.
    /// - Dropbox: `STEM (Someone's conflicted copy YYYY-MM-DD).tartil-journal`; a file arriving is kept in
    ///   `.dropbox.cache` until complete.
    /// - Nextcloud and ownCloud: `STEM (conflicted copy YYYY-MM-DD HHMMSS).tartil-journal`; a file arriving is
    ///   `.NAME.~HEX`.
    /// - rclone: `NAME.HASH.partial` while copying (`--partial-suffix`); bisync's conflicts `NAME.conflict1`,
    ///   `NAME..path1`, `NAME..path2`.
    /// - Seafile `(SFConflict …)`, Resilio Sync `.!sync`, Unison `.unison.….tmp`, rsync's hidden `.NAME.XXXXXX`,
    ///   browsers' and others' `.part`, `.crdownload`, `.tmp`, editors' `~$NAME` and `NAME~`.
    /// - tartil's own snapshot being written: `NAME.tmp-XXXXXXXX`; SQLite's side files `-wal`, `-shm`, `-journal`.
    static func syncToolCopy(_ name: String) -> String? {
        let lower = name.lowercased()
        if name.hasPrefix(".syncthing.") || name.hasPrefix("~syncthing~") {
            return "Syncthing's temporary file (a copy still arriving)"
        }
        if lower.contains(text: ".sync-conflict-") { return "a Syncthing conflict copy" }
        if lower.contains(text: "'s conflicted copy") || lower.contains(text: "\u{2019}s conflicted copy") {
            return "a Dropbox conflict copy"
        }
        if lower.contains(text: "(conflicted copy") { return "a Nextcloud or ownCloud conflict copy" }
        if lower.contains(text: "conflicted copy") || lower.contains(text: "conflict copy") { return "a conflict copy" }
        if lower.contains(text: "(sfconflict") { return "a Seafile conflict copy" }
        if name.hasPrefix("~$") { return "an editor's lock or temporary file (~$)" }
        if name.hasPrefix("."), name.contains(text: ".~") { return "Nextcloud's or ownCloud's temporary file (a copy still arriving)" }
        if lower.hasSuffix(".partial") { return "rclone's partial copy (a copy still arriving)" }
        if lower.hasSuffix("..path1") || lower.hasSuffix("..path2") || hasConflictNumber(lower) {
            return "an rclone bisync conflict copy"
        }
        if lower.hasSuffix(".!sync") { return "Resilio Sync's temporary file (a copy still arriving)" }
        if name.hasPrefix(".unison.") { return "Unison's temporary file (a copy still arriving)" }
        if name.contains(text: suffix + ".tmp-") { return "a tartil snapshot being written (temporary)" }
        for side in ["-wal", "-shm", "-journal"] where name.hasSuffix(side) && !name.hasSuffix(suffix) {
            return "an SQLite side file (\(side))"
        }
        for ending in [".part", ".crdownload", ".download", ".tmp", ".temp", "~"] where lower.hasSuffix(ending) {
            return "a temporary or partial copy (\(ending))"
        }
        if name.hasPrefix(".") { return "a hidden file (a sync tool's or rsync's temporary copy)" }
        return nil
    }

    /// `….conflict1`, `….conflict23`: rclone bisync's numbered conflict copies.
    static func hasConflictNumber(_ lower: String) -> Bool {
        guard let last = lower.split(separator: ".", omittingEmptySubsequences: false).last, last.hasPrefix("conflict") else {
            return false
        }
        let digits = last.dropFirst("conflict".count)
        return !digits.isEmpty && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
