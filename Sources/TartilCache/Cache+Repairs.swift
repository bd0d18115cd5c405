import Glibc
import TartilCore
import TartilSystem

/// The files a repair removed and has not downloaded again (`RepairList`, `<cache>/repairs-pending.tsv`).
extension Cache {
    /// The files removed by a repair that did not finish (empty when there is no list, or it cannot be read).
    public func pendingRepairs() -> [RepairList.Entry] {
        guard let bytes = try? FileSystem.read(directory + "/" + RepairList.fileName) else { return [] }
        return RepairList.parse(String(decoding: bytes, as: UTF8.self))
    }

    /// Replaces the list with `entries` (none: the list is removed), durably (`AtomicFile`). A repair calls it
    /// before it removes a file.
    public func setPendingRepairs(_ entries: [RepairList.Entry]) throws(CacheError) {
        let path = directory + "/" + RepairList.fileName
        guard !entries.isEmpty else {
            if unlink(path) != 0 && Errno.current != .noEntry { throw CacheError.system("unlink", path: path) }
            try? AtomicFile.syncDirectory(directory)
            return
        }
        try AtomicFile.write(Array(RepairList.render(entries).utf8), to: path)
    }
}
