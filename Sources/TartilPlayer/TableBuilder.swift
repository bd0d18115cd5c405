import Glibc
import Synchronization
import TartilAudio
import TartilCache
import TartilCore
import TartilSystem

/// Builds a reciter table from a folder of `SSSAAA.mp3` files, or from the files verified in the cache: each
/// file's size, SHA-256 (libcrypto) and the exact number of PCM frames mpg123 decodes from it with gapless
/// trimming on (remembered by the cache index for cached files decoded before). Files are processed on all cores.
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
        var jobs: [Job] = []
        var skipped: [Skipped] = []
        for name in names {
            switch classify(name) {
            case .ayah(let ayah): jobs.append(Job(ayah: ayah, name: name, path: Path.join(directory, name)))
            case .skip(let reason): skipped.append(Skipped(file: name, reason: reason))
            case .ignore: continue
            }
        }
        guard !jobs.isEmpty else {
            throw .usage("\(directory) holds no SSSAAA.mp3 files (e.g. 036001.mp3 for 36:1)")
        }
        return try run(jobs, reciter: reciter, source: source, skipped: skipped, isCancelled: isCancelled, progress: progress)
    }

    /// Reads every file of `reciter` verified in `cache`: each is hashed again and must match the size and
    /// SHA-256 it was verified with (its table row, or the hash recorded when it was first downloaded); its
    /// sample count is the one the cache index remembers, or decoded when none is. Files nothing vouches for
    /// (no row, no recorded hash) and symbolic links are skipped and reported; a file that no longer matches
    /// fails the build (`tartil cache verify --repair` mends it). The `# source:` line says, unless `source` is
    /// given, that the files were trusted on first use, from which mirrors, and how they were cross-checked.
    public static func build(
        fromCache cache: Cache, reciter: Reciter, table: ReciterTable?, source: String?,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(TartilError) -> Result {
        let files: [Cache.CachedFile]
        do {
            files = try cache.files(reciter: reciter.id.rawValue)
        } catch {
            throw TartilError(.io, error.message)
        }
        var jobs: [Job] = []
        var skipped: [Skipped] = []
        for file in files {
            let name = "\(file.ayah.fileStem).mp3"
            if file.isSymbolicLink {
                skipped.append(Skipped(file: name, reason: "a symbolic link, not a cached file"))
            } else if let pinned = table?.files[file.ayah] {
                jobs.append(Job(ayah: file.ayah, name: name, path: file.path, expected: (pinned.bytes, pinned.sha256)))
            } else if let sha256 = file.recordedSHA256 {
                jobs.append(Job(ayah: file.ayah, name: name, path: file.path, expected: (file.bytes, sha256), length: file.length))
            } else {
                skipped.append(Skipped(file: name, reason: "no recorded hash: not verified (tartil cache verify removes it)"))
            }
        }
        guard !jobs.isEmpty else {
            throw .usage(
                "the cache at \(cache.directory) holds no verified files of \(reciter.id): download some first (tartil prefetch 1 --reciter \(reciter.id))")
        }
        let chosen = jobs.map(\.ayah)
        let used = Set(chosen)
        return try run(
            jobs, reciter: reciter.id, source: source ?? cacheSource(files.filter { used.contains($0.ayah) }, cache: cache, table: table),
            skipped: skipped, isCancelled: isCancelled, progress: progress)
    }

    /// `# source:` of a table built from a cache: `trusted on first use: 181 files verified in the cache at …,
    /// downloaded from everyayah (180), quranicaudio (1); 175 cross-checked, 6 single-source`.
    static func cacheSource(_ files: [Cache.CachedFile], cache: Cache, table: ReciterTable?) -> String {
        var counts: [String: Int] = [:]
        for file in files { counts[file.source ?? "unrecorded mirror", default: 0] += 1 }
        let mirrors = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        var marks: [String] = []
        for mark in SourceMark.allCases {
            let count = files.filter { $0.mark == mark }.count
            if count > 0 { marks.append("\(count) \(mark.rawValue)") }
        }
        let pinned = files.filter { table?.files[$0.ayah] != nil }.count
        if pinned > 0 { marks.append("\(pinned) pinned by the reciter's table") }
        return "trusted on first use: \(files.count) file\(files.count == 1 ? "" : "s") verified in the cache at \(cache.directory), "
            + "downloaded from \(mirrors)" + (marks.isEmpty ? "" : "; " + marks.joined(separator: ", "))
    }

    /// One file to measure: its path, the size and hash it must have (a cached file), and its length when known.
    struct Job: Sendable {
        let ayah: AyahRef
        let name: String
        let path: String
        var expected: (bytes: Int, sha256: String)? = nil
        var length: AudioLength? = nil
    }

    /// Measures `jobs` on all cores; any failure fails the build.
    private static func run(
        _ jobs: [Job], reciter: ReciterID, source: String, skipped: [Skipped], isCancelled: @escaping @Sendable () -> Bool,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void
    ) throws(TartilError) -> Result {
        let measured = try onAllCores(names: jobs.map(\.name), failing: "could not be read as MPEG audio", isCancelled: isCancelled, progress: progress) {
            index throws(TartilError) in
            try measure(jobs[index].path, expected: jobs[index].expected, length: jobs[index].length)
        }
        var files: [AyahRef: PinnedFile] = [:]
        for (job, file) in zip(jobs, measured) { files[job.ayah] = file }
        return Result(table: ReciterTable(reciter: reciter, source: source, files: files), skipped: skipped)
    }

    /// Runs `work` for each of the files `names` names (by index) on all cores, and returns what each gave, in
    /// order. A table is never written from part of a folder: when any fails, the error names up to five
    /// ("2 files \(failing), no table was written: 002.mp3: …"); when `isCancelled`, the build is interrupted.
    static func onAllCores<Value: Sendable>(
        names: [String], failing: String, isCancelled: @escaping @Sendable () -> Bool,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void, work: @escaping @Sendable (Int) throws(TartilError) -> Value
    ) throws(TartilError) -> [Value] {
        let outcomes = Mutex<[Int: Swift.Result<Value, TartilError>]>([:])
        let finished = Atomic<Int>(0)
        NativeThread.concurrentPerform(iterations: names.count) { index in
            guard !isCancelled() else { return }
            let outcome = Swift.Result { () throws(TartilError) -> Value in try work(index) }
            outcomes.withLock { $0[index] = outcome }
            progress(finished.add(1, ordering: .relaxed).newValue, names.count)
        }
        if isCancelled() { throw TartilError(.interrupted, "interrupted: no table was written") }
        var values: [Value] = []
        var failures: [String] = []
        let results = outcomes.withLock { $0 }
        for (index, name) in names.enumerated() {
            switch results[index] {
            case .success(let value): values.append(value)
            case .failure(let error): failures.append("\(name): \(error.message)")
            case nil: failures.append("\(name): not processed")
            }
        }
        guard failures.isEmpty else {
            let shown = failures.prefix(5).joined(separator: "; ")
            let more = failures.count > 5 ? " (and \(failures.count - 5) more)" : ""
            throw TartilError(.failure, "\(Plural.count(failures.count, "file")) \(failing), no table was written: \(shown)\(more)")
        }
        return values
    }

    /// Size, hash and sample count of one file; with `expected`, the size and hash must be those; with
    /// `length`, that is its sample count (remembered), and it is not decoded.
    public static func measure(_ path: String, expected: (bytes: Int, sha256: String)? = nil, length: AudioLength? = nil)
        throws(TartilError) -> PinnedFile
    {
        // Read once, without changing the file's access time (a cached file's is when it was last played), then
        // hashed and, when its length is not known, decoded from memory.
        let contents: [UInt8]
        let hash: (sha256: String, bytes: Int)
        do {
            contents = try UntouchedReads.contents(of: path)
            hash = (try SHA256.hash(bytes: contents[...]), contents.count)
        } catch {
            throw TartilError(.io, error.message)
        }
        if let expected, expected.bytes != hash.bytes || expected.sha256 != hash.sha256 {
            throw TartilError(
                .failure, "no longer the file verified in the cache (\(hash.bytes) bytes, sha256 \(hash.sha256.prefix(12))…): run tartil cache verify --repair")
        }
        if let length { return PinnedFile(bytes: hash.bytes, sha256: hash.sha256, samples: length.samples, sampleRate: length.sampleRate) }
        do {
            let decoder = try Mpg123Decoder()
            let decoded = try decoder.countSamples(bytes: contents, name: path)
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
