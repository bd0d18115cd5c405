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
        Path.join(Path.join(cacheDirectory, reciter.rawValue), learnedTableName)
    }
    static let learnedTableName = "surah-table.tsv"

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
        var failures: [Int: TartilError] = [:]
        for surah in surahs {
            do throws(TartilError) {
                _ = try learn(surah, reciter: reciter, cacheDirectory: cacheDirectory, limits: limits, clock: clock, isCancelled: isCancelled)
            } catch where error.code != .interrupted && error.code != .usage {
                failures[surah] = error
            }
        }
        return failures
    }

    /// Learns `surah` for `reciter` (which must publish its timings) and returns its rows, now in the learned
    /// table. The rows are written before the parts are kept: a crash between the two leaves rows whose parts are
    /// then fetched by range and checked against them, never parts in the cache that no table vouches for; and a
    /// part that cannot be kept (a full disk) is fetched the same way later. Throws why the surah could not be
    /// learned (an interruption as `.interrupted`).
    public static func learn(
        _ surah: Int, reciter: Reciter, cacheDirectory: String, limits: DownloadLimits, clock: any TartilClock = SystemClock.shared,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> SurahTable.File {
        guard let timings = reciter.timings else {
            throw .usage("\(reciter.id) publishes no ayah timings (\"timings\" in mirrors.json) and no table covers surah \(surah)")
        }
        do throws(TartilError) {
            let cache: Cache
            do {
                cache = try Cache(directory: cacheDirectory, clock: clock)
            } catch {
                throw TartilError(.failure, error.message)
            }
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
            if isCancelled() { throw TartilError(.interrupted, "interrupted") }
            try record(measured.file, reciter: reciter.id, cache: cache, source: "\(source); timings from \(timings.template)")
            try? keep(measured.file, of: bytes, reciter: reciter.id, cache: cache)
            return measured.file
        } catch {
            if isCancelled() || error.code == .interrupted { throw TartilError(.interrupted, "stopped: surah \(surah) was not learned") }
            throw error
        }
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

    /// The surah's file, cross-checked by the rules of an unpinned per-ayah file (`CrossCheck`): the first mirror
    /// that serves one whole MPEG audio stream gives the copy in hand, the next mirrors are asked in turn until a
    /// majority of those that answered served the same bytes (two agree, more than all the others together); a
    /// copy only one mirror could serve is single-source; mirrors that disagree with no majority are a dispute,
    /// and nothing is learned. Returns the bytes and what vouches for them, in words.
    private static func fetchFile(
        _ surah: Int, reciter: Reciter, limits: DownloadLimits, clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> ([UInt8], String) {
        var failures: [Int: String] = [:]
        var copies: [Int: (bytes: [UInt8], print: FileFingerprint)] = [:]
        /// Mirror `index`'s whole file, walked and hashed; nil (its reason kept) when it has none.
        func ask(_ index: Int) throws(TartilError) -> FileFingerprint? {
            let mirror = reciter.mirrors[index]
            let bytes: [UInt8]
            switch try fetch(mirror.template.url(forSurah: surah), maxBytes: maximumFileBytes, limits: limits, clock: clock, isCancelled: isCancelled) {
            case .success(let body): bytes = body
            case .failure(let reason):
                failures[index] = reason.message
                return nil
            }
            if let problem = MPEGStream.problem(in: bytes) {
                failures[index] = "not one whole MPEG audio stream: \(problem)"
                return nil
            }
            do throws(CacheError) {
                let print = FileFingerprint(bytes: bytes.count, sha256: try SHA256.hash(bytes: bytes[...]))
                copies[index] = (bytes, print)
                return print
            } catch {
                throw TartilError(.failure, "surah \(surah): cannot hash its file: \(error.message)")
            }
        }
        var check = CrossCheck(mirrorCount: reciter.mirrors.count)
        var action: CrossCheck.Action?
        for index in reciter.mirrors.indices where action == nil {
            guard let print = try ask(index) else { continue }
            action = check.downloaded(from: index, print)
            for failed in failures.keys.sorted() { action = check.probed(failed, .unavailable(failures[failed]!)) }
        }
        guard var next = action else {
            let reasons = failures.keys.sorted().map { "\(reciter.mirrors[$0].name): \(failures[$0]!)" }
            throw TartilError(.failure, "surah \(surah)'s file could not be had: \(reasons.joined(separator: "; "))")
        }
        while true {
            switch next {
            case .probe(let mirror):
                next = check.probed(mirror, try ask(mirror).map { .fingerprint($0) } ?? .unavailable(failures[mirror] ?? ""))
            case .download(let mirror):
                next = check.downloaded(from: mirror, copies[mirror]!.print)  // its whole copy came with its probe
            case .keep(let mark):
                let candidate = check.candidate!
                let name = reciter.mirrors[candidate].name
                guard mark == .crossChecked else { return (copies[candidate]!.bytes, "trusted on first use: \(name), single-source") }
                let print = copies[candidate]!.print
                let agreeing = copies.keys.sorted().filter { $0 != candidate && copies[$0]!.print == print }.map { reciter.mirrors[$0].name }
                let other = copies.keys.sorted().filter { copies[$0]!.print != print }.map { reciter.mirrors[$0].name }
                let against = other.isEmpty ? "" : " (\(other.joined(separator: ", ")) served another file)"
                return (copies[candidate]!.bytes, "trusted on first use: \(name), cross-checked with \(agreeing.joined(separator: ", "))\(against)")
            case .dispute:
                let listed = copies.keys.sorted().map { "\(reciter.mirrors[$0].name): \(copies[$0]!.print)" }
                throw TartilError(.failure, "surah \(surah): the mirrors disagree with no majority (\(listed.joined(separator: "; "))): not learned")
            }
        }
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
    /// reciter's learned table (`Cache.rewrite`): two processes learning at once both keep what they learned.
    private static func record(_ file: SurahTable.File, reciter: ReciterID, cache: Cache, source: String) throws(TartilError) {
        let path = tablePath(cacheDirectory: cache.directory, reciter: reciter)
        do throws(CacheError) {
            try cache.rewrite(reciter: reciter, file: learnedTableName) { current in
                // A learned table that does not read counts as none (see `learnedTable`).
                let earlier = current.flatMap { try? SurahTable.parse(bytes: $0, file: path, expected: reciter) }
                let files = (earlier?.files ?? []).filter { $0.surah != file.surah } + [file]
                let sources = Set((earlier?.source.split(separator: "|").map { $0.trimmedWhitespace } ?? []) + [source]).sorted()
                return Array(SurahTable(reciter: reciter, source: sources.joined(separator: " | "), files: files).rendered().utf8)
            }
        } catch {
            throw TartilError(.io, "cannot write the learned table: \(error.message)")
        }
    }
}
