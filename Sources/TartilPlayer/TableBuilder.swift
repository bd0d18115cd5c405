import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TartilAudio
import TartilCache
import TartilCore

/// Builds a reciter table from a folder of `SSSAAA.mp3` files: each file's size, SHA-256 (libcrypto) and the
/// exact number of PCM frames mpg123 decodes from it with gapless trimming on. Files are processed on all cores.
public enum TableBuilder {
    /// A file the builder passed over, and why.
    public struct Skipped: Sendable, Hashable {
        public let file: String
        public let reason: String
    }

    /// What a build produced.
    public struct Result: Sendable {
        public let table: ReciterTable
        public let skipped: [Skipped]

        /// Surahs every ayah of which is in the table.
        public var completeSurahs: [Int] {
            Catalog.surahs.filter { surah in surah.range.allSatisfy { table.files[$0] != nil } }.map(\.number)
        }
    }

    /// Reads every `SSSAAA.mp3` in `directory` (not recursively). Files with other names and `SSS000.mp3`
    /// (basmala files, which are not ayat) are skipped and reported. Any file that cannot be read or decoded
    /// fails the whole build: a table is never written from a partial or doubtful folder.
    public static func build(
        directory: String, reciter: ReciterID, source: String,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(TartilError) -> Result {
        guard FileSystem.exists(directory) else {
            throw .usage("\(directory) does not exist: give a folder of SSSAAA.mp3 files")
        }
        guard FileSystem.isDirectory(directory) else { throw .usage("\(directory) is not a folder: give a folder of SSSAAA.mp3 files") }
        let names = try FileSystem.names(in: directory).sorted()
        var jobs: [(AyahRef, String)] = []
        var skipped: [Skipped] = []
        for name in names {
            switch classify(name) {
            case .ayah(let ayah): jobs.append((ayah, name))
            case .skip(let reason): skipped.append(Skipped(file: name, reason: reason))
            case .ignore: continue
            }
        }
        guard !jobs.isEmpty else {
            throw .usage("\(directory) holds no SSSAAA.mp3 files (e.g. 036001.mp3 for 36:1)")
        }

        let paths = jobs.map { Path.join(directory, $0.1) }
        let outcomes = Mutex<[Int: Swift.Result<PinnedFile, TartilError>]>([:])
        let finished = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            guard !isCancelled() else { return }
            let outcome = Swift.Result { () throws(TartilError) -> PinnedFile in try measure(paths[index]) }
            outcomes.withLock { $0[index] = outcome }
            progress(finished.add(1, ordering: .relaxed).newValue, paths.count)
        }
        if isCancelled() { throw TartilError(.interrupted, "interrupted: no table was written") }

        var files: [AyahRef: PinnedFile] = [:]
        var failures: [String] = []
        let results = outcomes.withLock { $0 }
        for (index, (ayah, name)) in jobs.enumerated() {
            switch results[index] {
            case .success(let file): files[ayah] = file
            case .failure(let error): failures.append("\(name): \(error.message)")
            case nil: failures.append("\(name): not processed")
            }
        }
        guard failures.isEmpty else {
            let shown = failures.prefix(5).joined(separator: "; ")
            let more = failures.count > 5 ? " (and \(failures.count - 5) more)" : ""
            throw TartilError(.failure, "\(Plural.count(failures.count, "file")) could not be read as MPEG audio, no table was written: \(shown)\(more)")
        }
        return Result(table: ReciterTable(reciter: reciter, source: source, files: files), skipped: skipped)
    }

    /// Size, hash and sample count of one file.
    public static func measure(_ path: String) throws(TartilError) -> PinnedFile {
        let hash: (sha256: String, bytes: Int)
        do {
            hash = try SHA256.hash(fileAt: path)
        } catch {
            throw TartilError(.io, error.message)
        }
        do {
            let decoder = try Mpg123Decoder()
            let decoded = try decoder.countSamples(path)
            return PinnedFile(
                bytes: hash.bytes, sha256: hash.sha256, samples: decoded.samples, sampleRate: decoded.format.sampleRate)
        } catch {
            throw TartilError(.failure, error.message)
        }
    }

    private enum Classification {
        case ayah(AyahRef)
        case skip(String)
        case ignore
    }

    private static func classify(_ name: String) -> Classification {
        guard name.lowercased().hasSuffix(".mp3") else { return name.hasPrefix(".") ? .ignore : .skip("not an .mp3 file") }
        guard let numbers = AyahRef.numbers(inFileName: name) else { return .skip("not named SSSAAA.mp3") }
        if numbers.ayah == 0 { return .skip("ayah 0 is a basmala file, not an ayah") }
        do {
            return .ayah(try AyahRef(numbers.surah, numbers.ayah))
        } catch {
            return .skip(error.message)
        }
    }
}
