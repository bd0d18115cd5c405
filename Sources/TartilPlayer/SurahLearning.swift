import FoundationEssentials
import TartilCache
import TartilCore
import TartilNet
import TartilSystem

/// A surah of a reciter of one file per surah that no table pins, made playable by trust on first use, as an
/// unpinned per-ayah file is: its published timing file and its whole file are fetched from the reciter's
/// mirrors, the file must be one whole MPEG audio stream (and, with two mirrors or more, the second mirror's copy
/// the same bytes), it is cut as `table build` cuts one (`SurahTableBuilder.measure`: every part checked sample
/// for sample), each part is kept in the cache under its own hash, and the surah's rows are added to the
/// reciter's learned table, `<cache>/<reciter>/surah-table.tsv` (format 2), which pins them from then on.
public enum SurahLearning {
    /// The largest surah file fetched (a long surah at a high bitrate is well under it).
    public static let maximumFileBytes = 512 << 20
    /// The largest timing file fetched.
    public static let maximumTimingBytes = 4 << 20

    /// Where the rows learned for `reciter` are kept.
    public static func tablePath(cacheDirectory: String, reciter: ReciterID) -> String {
        Path.join(Path.join(cacheDirectory, reciter.rawValue), "surah-table.tsv")
    }

    /// The learned table of `reciter` in `cacheDirectory`, or nil when none was learned.
    public static func learnedTable(cacheDirectory: String, reciter: ReciterID) throws(TartilError) -> SurahTable? {
        let path = tablePath(cacheDirectory: cacheDirectory, reciter: reciter)
        guard FileSystem.exists(path) else { return nil }
        return try SurahTable.parse(bytes: try FileSystem.read(path), file: path, expected: reciter)
    }

    /// Learns each of `surahs` (1…114, in order) for `reciter`, which must publish its timings. Any failure stops
    /// there with the surahs learned before it kept; nothing half-learned is kept.
    public static func learn(
        _ surahs: [Int], reciter: Reciter, cacheDirectory: String, limits: DownloadLimits, clock: any TartilClock = SystemClock.shared,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) {
        guard let timings = reciter.timings else {
            throw .usage("\(reciter.id) publishes no ayah timings (\"timings\" in mirrors.json) and no table covers surah \(surahs.first ?? 0)")
        }
        let cache: Cache
        do {
            cache = try Cache(directory: cacheDirectory, clock: clock)
        } catch {
            throw TartilError(.failure, error.message)
        }
        for surah in surahs {
            if isCancelled() { throw TartilError(.interrupted, "interrupted: surah \(surah) was not learned") }
            let timingURL = timings.template.url(forSurah: surah)
            let timingBytes: [UInt8]
            do {
                timingBytes = try WholeFile.fetch(timingURL, maxBytes: maximumTimingBytes, limits: limits, isCancelled: isCancelled)
            } catch {
                throw TartilError(.failure, "surah \(surah)'s timings (\(timingURL)): \(error.message)")
            }
            let parsed = try SurahTimings.parse(timingBytes, format: timings.format, surah: surah, file: timingURL)
            let (bytes, source) = try fetchFile(surah, reciter: reciter, limits: limits, isCancelled: isCancelled)
            let measured = try SurahTableBuilder.measure(bytes, name: "\(AyahRef.pad3(surah)).mp3", timings: parsed, isCancelled: isCancelled)
            try keep(measured.file, of: bytes, reciter: reciter.id, cache: cache)
            try record(measured.file, reciter: reciter.id, cacheDirectory: cacheDirectory, source: "\(source); timings from \(timings.template)")
        }
    }

    /// The surah's file from the first mirror that serves one whole MPEG audio stream, compared with the next
    /// mirror's copy when there is one; and what vouches for it, in words.
    private static func fetchFile(
        _ surah: Int, reciter: Reciter, limits: DownloadLimits, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> ([UInt8], String) {
        var failures: [String] = []
        var found: (bytes: [UInt8], sha256: String, mirror: Int)?
        for (index, mirror) in reciter.mirrors.enumerated() {
            if isCancelled() { throw TartilError(.interrupted, "interrupted: surah \(surah) was not learned") }
            let url = mirror.template.url(forSurah: surah)
            do {
                let bytes = try WholeFile.fetch(url, maxBytes: maximumFileBytes, limits: limits, isCancelled: isCancelled)
                if let problem = MPEGStream.problem(in: bytes) {
                    failures.append("\(mirror.name): not one whole MPEG audio stream: \(problem)")
                    continue
                }
                let sha256 = try SHA256.hash(Data(bytes))
                if let first = found {
                    let firstName = reciter.mirrors[first.mirror].name
                    guard first.sha256 == sha256 else {
                        throw TartilError(
                            .failure,
                            "surah \(surah): the mirrors disagree (\(firstName): \(first.bytes.count) bytes, sha256 \(first.sha256.prefix(12))…; \(mirror.name): \(bytes.count) bytes, sha256 \(sha256.prefix(12))…): not learned")
                    }
                    return (first.bytes, "trusted on first use: \(firstName), cross-checked with \(mirror.name)")
                }
                found = (bytes, sha256, index)
                if reciter.mirrors.count == 1 { break }
            } catch let error as TartilError {
                throw error
            } catch {
                failures.append("\(mirror.name): \(error)")
            }
        }
        if let found {
            return (found.bytes, "trusted on first use: \(reciter.mirrors[found.mirror].name), single-source")
        }
        throw TartilError(.failure, "surah \(surah)'s file could not be had: \(failures.joined(separator: "; "))")
    }

    /// Keeps each part of `file` (cut from `bytes`) in the cache, checked against its own hash.
    private static func keep(_ file: SurahTable.File, of bytes: [UInt8], reciter: ReciterID, cache: Cache) throws(TartilError) {
        var pending: [Cache.PendingFile] = []
        do throws(CacheError) {
            for part in file.parts {
                let key = part.ayah == 0 ? AyahRef.basmalaPart(ofSurah: file.surah) : AyahRef(fileKeySurah: file.surah, ayah: part.ayah)!
                let pinned = PinnedFile(bytes: part.bytes.count, digest: part.digest, samples: part.sampleCount, sampleRate: file.sampleRate)
                let writer = try cache.writer(reciter: reciter, ayah: key, expectation: .pinned(pinned))
                if writer.offset > 0 { try writer.restart() }
                var failure: CacheError?
                bytes[part.bytes].withUnsafeBytes { raw in
                    do throws(CacheError) { try writer.append(raw) } catch { failure = error }
                }
                if let failure { throw failure }
                pending.append(Cache.PendingFile(writer: writer, reciter: reciter, ayah: key))
            }
            for result in try cache.commit(pending, validate: { _ in nil }) {
                if case .failure(let error) = result { throw error }
            }
        } catch {
            for file in pending { file.writer.abandon(keepPartial: false) }
            throw TartilError(.failure, "cannot keep surah \(file.surah)'s parts in the cache: \(error.message)")
        }
    }

    /// Adds `file`'s rows to the learned table (replacing the surah's, if any), atomically.
    private static func record(_ file: SurahTable.File, reciter: ReciterID, cacheDirectory: String, source: String) throws(TartilError) {
        let earlier = try learnedTable(cacheDirectory: cacheDirectory, reciter: reciter)
        let files = (earlier?.files ?? []).filter { $0.surah != file.surah } + [file]
        let sources = Set((earlier?.source.split(separator: "|").map { $0.trimmedWhitespace } ?? []) + [source]).sorted()
        let table = SurahTable(reciter: reciter, source: sources.joined(separator: " | "), files: files)
        do {
            try AtomicFile.write(Data(table.rendered().utf8), to: tablePath(cacheDirectory: cacheDirectory, reciter: reciter))
        } catch {
            throw TartilError(.io, "cannot write the learned table: \(error)")
        }
    }
}
