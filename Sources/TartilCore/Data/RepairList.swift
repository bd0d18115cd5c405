/// The cache's list of files `cache verify --repair` removed and has not downloaded again yet
/// (`<cache>/repairs-pending.tsv`): written before a bad file is removed, so that a repair killed midway is
/// finished by the next `cache verify --repair` (and the next `cache verify` says what is missing) instead of
/// the files silently being gone.
///
/// One line per file: `reciter<TAB>SSSAAA` (the reciter's id and the file's stem). Pure: parsing and writing
/// only; a line that is not one is left out (the list is tartil's own, and a damaged line must not stop a repair).
public enum RepairList {
    /// The file's name in the cache directory.
    public static let fileName = "repairs-pending.tsv"

    /// The most lines read (every ayah of 26 reciters, and then some).
    public static let mostEntries = 200_000

    /// One file to download again.
    public struct Entry: Sendable, Hashable, Comparable {
        public let reciter: String
        public let ayah: AyahRef

        public init(reciter: String, ayah: AyahRef) {
            self.reciter = reciter
            self.ayah = ayah
        }

        public static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.reciter, lhs.ayah.surah, lhs.ayah.ayah) < (rhs.reciter, rhs.ayah.surah, rhs.ayah.ayah)
        }
    }

    /// The entries of `text`, in order, without repeats; lines that are not entries are left out.
    public static func parse(_ text: String) -> [Entry] {
        var seen = Set<Entry>()
        var entries: [Entry] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if entries.count >= mostEntries { break }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2, (try? ReciterID(String(fields[0]))) != nil, fields[1].utf8.count == 6,
                let ayah = AyahRef(fileName: fields[1] + ".mp3")
            else { continue }
            let entry = Entry(reciter: String(fields[0]), ayah: ayah)
            if seen.insert(entry).inserted { entries.append(entry) }
        }
        return entries
    }

    /// The file's text for `entries` (sorted, without repeats).
    public static func render(_ entries: some Sequence<Entry>) -> String {
        Set(entries).sorted().map { "\($0.reciter)\t\($0.ayah.fileStem)\n" }.joined()
    }
}
