/// Is this journal the only one writing as its device? The decision `journal sync` and `journal merge` make
/// from this device's events in another file (a sync folder's snapshot, a backup) compared with the journal's,
/// by event id, never by counts.
///
/// A journal restored from an older backup lacks the events its device wrote after that backup; a journal
/// copied to a second machine and used there writes events under the same device id as the first. Both look
/// alike at first — another file holds events of this device that the journal lacks — and part later:
///
/// - **in step**: the file holds nothing of this device that the journal lacks. The usual case.
/// - **restored** (or a copy not yet used): every event of this device that the journal holds is in the file,
///   and the file's others all come after the journal's last (each at its own sequence number). They were written
///   by this device in an earlier life of this journal: they are folded back in as this device's own, and the
///   journal goes on numbering after them. Nothing needs doing by the user, and nothing is lost.
/// - **shared**: each side holds events of this device that the other lacks, or the file's come before the
///   journal's last: two journals have been writing as one device. The journal that finds out takes a new device
///   id (the old one is retired: its events, from both journals, are then merged like any other device's, by
///   event id); the other journal finds out the same way at its next sync and does the same. No user action, no
///   event lost, and the two never stop converging. Stopping with a command to run instead would leave a
///   `journal sync` from cron failing on both machines until someone noticed, with the folder's files refused in
///   the meantime; taking a new id is safe at any time, so it is done at once.
///
/// Pure; table-tested.
public enum SyncIdentity {
    /// This device's events in a file compared with the journal's, by event id.
    public struct Comparison: Sendable, Hashable {
        /// Events of this device in the journal that the file lacks.
        public var journalOnly: Int
        /// Events of this device in the file that the journal lacks.
        public var fileOnly: Int
        /// True when every one of `fileOnly` comes after the journal's last event of this device by sequence
        /// number, no two at the same number.
        public var fileOnlyFollowJournal: Bool

        public init(journalOnly: Int, fileOnly: Int, fileOnlyFollowJournal: Bool) {
            self.journalOnly = journalOnly
            self.fileOnly = fileOnly
            self.fileOnlyFollowJournal = fileOnlyFollowJournal
        }
    }

    /// What the comparison means (see the type's documentation).
    public enum Verdict: Sendable, Hashable {
        /// Nothing of this device the journal lacks: merge as usual.
        case inStep
        /// The journal is an older copy of itself: fold this device's events back in, then go on.
        case restored
        /// Two journals write as this device: take a new device id, then merge (the old id's events as another
        /// device's).
        case shared
    }

    public static func verdict(_ comparison: Comparison) -> Verdict {
        if comparison.fileOnly == 0 { return .inStep }
        if comparison.journalOnly == 0 && comparison.fileOnlyFollowJournal { return .restored }
        return .shared
    }

    /// The file at this device's own name in the sync folder, as the journal found it.
    public enum OwnFile: Sendable, Hashable {
        /// Nothing there.
        case absent
        /// A whole tartil journal of this device.
        case ownJournal
        /// A whole tartil journal of another device (`deviceID`): copied there by hand, or this device's id was
        /// taken over.
        case otherDevice(deviceID: String)
        /// Not a whole tartil journal (empty, cut short, damaged, a newer version's): `reason`; `bytes` its size.
        case unusable(reason: String, bytes: Int64)
    }

    /// What `journal sync` does with the file at this device's name before it writes its snapshot there.
    public enum OwnFileAction: Sendable, Hashable {
        /// Nothing to keep: the snapshot is written there.
        case write
        /// Merge it first (this device's events it holds and the journal lacks are folded back by `verdict`; other
        /// devices' it holds are merged like any), then write the snapshot over it: it held nothing the journal
        /// does not have by then.
        case mergeThenWrite
        /// Move it aside (`reason`), never overwrite it: what it holds cannot be taken in. If the merge of
        /// `.mergeThenWrite` fails, the file is moved aside as well.
        case moveAside(reason: String)
    }

    /// The file at this device's name: merged when it is a journal (of any device), moved aside when it is
    /// something tartil cannot read but that may hold events (anything but an empty file), written over only
    /// when it holds nothing.
    public static func action(for file: OwnFile) -> OwnFileAction {
        switch file {
        case .absent: return .write
        case .ownJournal, .otherDevice: return .mergeThenWrite
        case .unusable(_, let bytes) where bytes == 0: return .write
        case .unusable(let reason, _): return .moveAside(reason: reason)
        }
    }

    /// The name a file moved aside gets in the folder: `<device id>.aside-<time>.tartil-journal-aside`, which
    /// `SyncFolder` lists as skipped (with what to do about it) and no sync reads or writes.
    public static func asideName(deviceID: String, timeMs: Int64) -> String {
        "\(deviceID).aside-\(timeMs)\(SyncFolder.asideSuffix)"
    }
}
