import Glibc
import Synchronization
import TartilCore
import TartilSystem

/// Checking the cache (`cache verify`) and filling it from files at hand (`cache import`).
extension Cache {
    /// A cached file that failed its check, and why.
    public struct Problem: Sendable {
        public let file: CachedFile
        public let reason: String
    }

    /// Re-hashes `files` on every core against what vouches for each: the reciter's table (`tables`), else the
    /// hash recorded when it was first downloaded. A file nothing vouches for, or a symbolic link at a cached
    /// file's name, is a problem too. Problems come in the order of `files`. `tableSource` names where a table
    /// row came from in a mismatch's message (a surah-file reciter's learned rows: its mirrors).
    public static func verify(
        _ files: [CachedFile], tables: [String: ReciterTable], tableSource: @escaping @Sendable (_ reciter: String, _ file: AyahRef) -> String = { _, _ in "table" }
    ) -> [Problem] {
        let problems = Mutex<[Int: String]>([:])
        NativeThread.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let expectation: FileExpectation?
            if let pinned = tables[file.reciter]?.files[file.ayah] {
                expectation = .pinned(pinned, source: tableSource(file.reciter, file.ayah))
            } else if let sha = file.recordedSHA256 {
                expectation = .recorded(bytes: file.bytes, sha256: sha)
            } else {
                expectation = nil
            }
            let problem: String?
            if file.isSymbolicLink {
                problem = "a symbolic link, not a file: tartil does not follow links inside the cache"
            } else if file.mark == .disputed, tables[file.reciter]?.files[file.ayah] == nil {
                problem = "kept by an older tartil although its mirrors disagreed: no majority vouches for it"
            } else if let expectation {
                do {
                    let hashed = try SHA256.hash(fileAt: file.path, followingLinks: false)
                    problem = expectation.mismatch(bytes: hashed.bytes, sha256: hashed.sha256)
                } catch {
                    problem = "\(error)"
                }
            } else {
                problem = "no table row and no recorded hash vouch for it"
            }
            if let problem { problems.withLock { $0[index] = problem } }
        }
        return problems.withLock { $0 }.sorted { $0.key < $1.key }.map { Problem(file: files[$0.key], reason: $0.value) }
    }

    /// What `importFiles` did.
    public struct ImportReport: Sendable {
        public var imported = 0
        public var alreadyCached = 0
        /// Files left out, with why.
        public var rejected: [(file: String, reason: String)] = []
        public var interrupted = false
    }

    /// Copies every `SSSAAA.mp3` in `directory` into the cache as `reciter`'s, verified like a download: against
    /// `table`, or (unpinned) decoded by `validate` and its hash recorded. Files that fail, and entries that cannot
    /// be read (no permission, a link to nothing, a folder or a pipe at the name, a file larger than it may be),
    /// are reported and left out, and the rest go on. Stops between files when `isCancelled` says so.
    public func importFiles(
        from directory: String, reciter: ReciterID, table: ReciterTable?, unpinnedLimit: Int,
        validate: (String) throws -> AudioLength?, isCancelled: () -> Bool
    ) throws(CacheError) -> ImportReport {
        var report = ImportReport()
        let names = ((try? FileSystem.names(in: directory)) ?? []).sorted()
        for (name, ayah) in names.compactMap({ name in AyahRef(fileName: name).map { (name, $0) } }) {
            if isCancelled() {
                report.interrupted = true
                return report
            }
            let expectation = try self.expectation(reciter: reciter, ayah: ayah, pinned: table?.files[ayah], unpinnedLimit: unpinnedLimit)
            if try containsVerified(reciter: reciter, ayah: ayah, expectation: expectation) {
                report.alreadyCached += 1
                continue
            }
            do {
                let bytes = try FileSystem.readRegularFile(Path.join(directory, name), maxBytes: expectation.maxBytes)
                let writer = try self.writer(reciter: reciter, ayah: ayah, expectation: expectation)
                if writer.offset > 0 { try writer.restart() }
                do {
                    try bytes.withUnsafeBytes { buffer in try writer.append(buffer) }
                    try commit(writer, reciter: reciter, ayah: ayah, source: "import", validate: validate)
                    report.imported += 1
                } catch {
                    writer.abandon(keepPartial: false)
                    throw error
                }
            } catch let error as CacheError {
                report.rejected.append((name, error.message))
            } catch let error as TartilError {
                report.rejected.append((name, error.description))
            } catch {
                report.rejected.append((name, "\(error)"))
            }
        }
        return report
    }
}
