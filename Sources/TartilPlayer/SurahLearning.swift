import FoundationEssentials
import Glibc
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

    /// The learned table of `reciter` in `cacheDirectory`, or nil when none was learned. A learned table that
    /// does not read (damaged, or edited by hand) counts as none: it is a cache file, and its surahs are learned
    /// again (and it rewritten) when next played.
    public static func learnedTable(cacheDirectory: String, reciter: ReciterID) -> SurahTable? {
        let path = tablePath(cacheDirectory: cacheDirectory, reciter: reciter)
        guard FileSystem.exists(path), let bytes = try? FileSystem.read(path) else { return nil }
        return try? SurahTable.parse(bytes: bytes, file: path, expected: reciter)
    }

    /// How many times a timing file or a surah's file is asked of one mirror before the next is tried (a 5xx,
    /// a reset or a timeout may pass), and the wait before each retry.
    public static let attempts = 3
    static func retryDelay(_ attempt: Int) -> Double { Double(attempt) }

    /// Learns each of `surahs` (1…114, in order) for `reciter`, which must publish its timings; returns why each
    /// surah that could not be learned was not (the others are learned; nothing half-learned is kept). Throws
    /// only when interrupted (and for a reciter without timings).
    public static func learn(
        _ surahs: [Int], reciter: Reciter, cacheDirectory: String, limits: DownloadLimits, clock: any TartilClock = SystemClock.shared,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> [Int: TartilError] {
        guard let timings = reciter.timings else {
            throw .usage("\(reciter.id) publishes no ayah timings (\"timings\" in mirrors.json) and no table covers surah \(surahs.first ?? 0)")
        }
        let cache: Cache
        do {
            cache = try Cache(directory: cacheDirectory, clock: clock)
        } catch {
            throw TartilError(.failure, error.message)
        }
        var failures: [Int: TartilError] = [:]
        for surah in surahs {
            do throws(TartilError) {
                let timingURL = timings.template.url(forSurah: surah)
                let timingBytes = try fetch(timingURL, maxBytes: maximumTimingBytes, limits: limits, clock: clock, isCancelled: isCancelled)
                    .mapError { TartilError(.failure, "surah \(surah)'s timings (\(timingURL)): \($0.message)") }.get()
                let parsed: SurahTimings
                do throws(TartilError) {
                    parsed = try SurahTimings.parse(timingBytes, format: timings.format, surah: surah, file: timingURL)
                } catch {
                    throw TartilError(.failure, "surah \(surah)'s timings are not usable: \(error.message)")
                }
                let (bytes, source) = try fetchFile(surah, reciter: reciter, limits: limits, clock: clock, isCancelled: isCancelled)
                let measured = try SurahTableBuilder.measure(bytes, name: "\(AyahRef.pad3(surah)).mp3", timings: parsed, isCancelled: isCancelled)
                try keep(measured.file, of: bytes, reciter: reciter.id, cache: cache)
                try record(measured.file, reciter: reciter.id, cacheDirectory: cacheDirectory, source: "\(source); timings from \(timings.template)")
            } catch {
                if isCancelled() || error.code == .interrupted { throw TartilError(.interrupted, "stopped: surah \(surah) was not learned") }
                failures[surah] = error
            }
        }
        return failures
    }

    /// `url` whole, asked up to `attempts` times; the last reason when it could not be had.
    private static func fetch(
        _ url: String, maxBytes: Int, limits: DownloadLimits, clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Result<[UInt8], TartilError> {
        var reason = ""
        for attempt in 1...attempts {
            if isCancelled() { throw TartilError(.interrupted, "interrupted") }
            do throws(CacheError) {
                return .success(try WholeFile.fetch(url, maxBytes: maxBytes, limits: limits, isCancelled: isCancelled))
            } catch {
                if isCancelled() { throw TartilError(.interrupted, "interrupted") }
                reason = error.message
                // A file too large, or an answer that is not the file (4xx), is not asked again.
                if error.code == .tooLarge || reason.hasPrefix("HTTP 4") { break }
                if attempt < attempts { clock.sleep(seconds: retryDelay(attempt)) }
            }
        }
        return .failure(TartilError(.failure, reason))
    }

    /// The surah's file from the first mirror that serves one whole MPEG audio stream, compared with the next
    /// mirror's copy when there is one; and what vouches for it, in words.
    private static func fetchFile(
        _ surah: Int, reciter: Reciter, limits: DownloadLimits, clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> ([UInt8], String) {
        var failures: [String] = []
        var found: (bytes: [UInt8], sha256: String, mirror: Int)?
        for (index, mirror) in reciter.mirrors.enumerated() {
            let url = mirror.template.url(forSurah: surah)
            let bytes: [UInt8]
            switch try fetch(url, maxBytes: maximumFileBytes, limits: limits, clock: clock, isCancelled: isCancelled) {
            case .success(let body): bytes = body
            case .failure(let reason):
                failures.append("\(mirror.name): \(reason.message)")
                continue
            }
            if let problem = MPEGStream.problem(in: bytes) {
                failures.append("\(mirror.name): not one whole MPEG audio stream: \(problem)")
                continue
            }
            let sha256: String
            do throws(CacheError) {
                sha256 = try SHA256.hash(bytes: bytes[...])
            } catch {
                throw TartilError(.failure, "surah \(surah): cannot hash its file: \(error.message)")
            }
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

    /// Adds `file`'s rows to the learned table (replacing the surah's, if any), atomically, under a lock on the
    /// reciter's learned table: two processes learning at once both keep what they learned.
    private static func record(_ file: SurahTable.File, reciter: ReciterID, cacheDirectory: String, source: String) throws(TartilError) {
        let path = tablePath(cacheDirectory: cacheDirectory, reciter: reciter)
        let lock: Int32
        do throws(Errno) {
            lock = try SystemCall.retrying { open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o644) }
        } catch {
            throw TartilError(.io, "cannot open \(path).lock: \(error)")
        }
        defer { close(lock) }  // closing the descriptor releases the flock
        do throws(Errno) {
            _ = try SystemCall.retrying { flock(lock, LOCK_EX) }
        } catch {
            throw TartilError(.io, "cannot lock \(path).lock: \(error)")
        }
        let earlier = learnedTable(cacheDirectory: cacheDirectory, reciter: reciter)
        let files = (earlier?.files ?? []).filter { $0.surah != file.surah } + [file]
        let sources = Set((earlier?.source.split(separator: "|").map { $0.trimmedWhitespace } ?? []) + [source]).sorted()
        let table = SurahTable(reciter: reciter, source: sources.joined(separator: " | "), files: files)
        do {
            try AtomicFile.write(Data(table.rendered().utf8), to: path)
        } catch {
            throw TartilError(.io, "cannot write the learned table: \(error)")
        }
    }
}
