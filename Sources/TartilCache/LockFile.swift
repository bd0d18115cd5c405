import CSystem
import Glibc
import TartilCore
import TartilSystem

/// A reciter's lock file in the cache's root (`<cache>/.<reciter>.lock`), held open by one `Cache` instance for
/// all the writers it starts: each writer locks the byte of its ayah (an open file description lock, so other
/// processes, and other instances with descriptions of their own, are kept out) and unlocks it when it closes.
/// A prefetch starts thousands of writers; opening the lock file for each, as every writer once did, cost an
/// open, an fstat and a close apiece.
///
/// Bytes locked through this description are remembered here, so that a second writer of the same ayah within
/// the instance is refused as one in another process is (the kernel would grant the description its own lock
/// again). A writer may close on another thread than the one that started it (a prefetch's committer), hence the
/// monitor.
final class LockFile: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    /// The file's identity when it was opened: the name may since lead elsewhere (`isUsable`).
    private let identity: FileIdentity
    /// The bytes locked through this description, and whether an unlock failed (`isUsable`).
    private struct State {
        var held: Set<Int> = []
        var unlockFailed = false
    }
    private let state = Monitor(State())

    /// Opens (creating when needed) the lock file `name` in `root`; a link at its name is removed, never followed.
    init(_ name: String, in root: CacheFolder) throws(CacheError) {
        path = Path.join(root.path, name)
        descriptor = try root.openFile(name, O_RDWR | O_CREAT, removingLink: true, what: "a lock file")
        guard let identity = FileIdentity(descriptor: descriptor) else {
            let error = CacheError.system("fstat", path: path)
            close(descriptor)
            throw error
        }
        self.identity = identity
    }

    deinit { close(descriptor) }

    /// Whether the file at `name` in `root` is still this one (not removed, not replaced: one `fstatat`) and every
    /// unlock through it worked. An unlock can fail (ENOLCK: releasing one ayah's byte out of a run of neighbours'
    /// may need memory the kernel does not have); that byte then stays locked until this description is closed,
    /// so it is given up for a new one, and closed when its last writer lets go.
    func isUsable(as name: String, in root: CacheFolder) -> Bool {
        !state.read({ $0.unlockFailed }) && identity.isAt(name, in: root)
    }

    /// Locks byte `key` without waiting; throws `.busy` (naming `finalPath`) when another writer holds it.
    func lock(_ key: Int, finalPath: String) throws(CacheError) {
        let taken: Result<Void, CacheError> = state.update { state in
            guard !state.held.contains(key) else { return .failure(Self.busy(finalPath)) }
            do throws(Errno) {
                _ = try SystemCall.retrying { csystem_try_lock_byte(descriptor, key) }
            } catch {
                guard error == .wouldBlock || error == .permissionDenied else {
                    return .failure(CacheError.system("lock", path: path, error))
                }
                return .failure(Self.busy(finalPath))
            }
            state.held.insert(key)
            return .success(())
        }
        try taken.get()
    }

    /// Releases byte `key` (locked by `lock`).
    func unlock(_ key: Int) {
        state.update { state in
            guard state.held.remove(key) != nil else { return }
            if csystem_unlock_byte(descriptor, key) != 0 { state.unlockFailed = true }
        }
    }

    private static func busy(_ finalPath: String) -> CacheError {
        CacheError(.busy, "\(finalPath) is being downloaded by another tartil process")
    }
}
