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

    /// Replaces the list with `entries` (none: the list is removed), durably: written to a temporary name, synced,
    /// renamed, the directory synced. A repair calls it before it removes a file.
    public func setPendingRepairs(_ entries: [RepairList.Entry]) throws(CacheError) {
        let path = directory + "/" + RepairList.fileName
        guard !entries.isEmpty else {
            if unlink(path) != 0 && Errno.current != .noEntry { throw CacheError.system("unlink", path: path) }
            syncDirectory()
            return
        }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw CacheError.system("open", path: temporary) }
        do throws(Errno) {
            try SystemCall.writeAll(descriptor, RepairList.render(entries))
            _ = try SystemCall.retrying { fsync(descriptor) }
        } catch {
            Glibc.close(descriptor)
            unlink(temporary)
            throw CacheError.system("write", path: temporary, error)
        }
        Glibc.close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = Errno.current
            unlink(temporary)
            throw CacheError.system("rename", path: path, error)
        }
        syncDirectory()
    }

    private func syncDirectory() {
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            Glibc.close(folder)
        }
    }
}
