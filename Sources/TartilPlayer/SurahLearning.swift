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
///
/// The whole file is never held in memory: each mirror's copy is written, hashed as it arrives, to a file with no
/// name in the reciter's folder (`ScratchFile`: gone when closed, on any failure, on Ctrl-C, or with the process),
/// only the copies the cross-check may still keep are kept (one per fingerprint), and the one kept is read by
/// mapping it, its pages let go of as each pass over it moves on (`MappedFile`). What learning holds in memory
/// does not grow with the file's size.
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
        learnedTableRead(cacheDirectory: cacheDirectory, reciter: reciter).table
    }

    /// The learned table as far as it reads (`SurahTable.salvaged`: a damaged surah's rows are passed over, and
    /// that surah is learned again when it is wanted; the others keep theirs), and why it did not read whole.
    public static func learnedTableRead(cacheDirectory: String, reciter: ReciterID) -> (table: SurahTable?, problem: String?) {
        let path = tablePath(cacheDirectory: cacheDirectory, reciter: reciter)
        guard FileSystem.exists(path), let bytes = try? FileSystem.read(path) else { return (nil, nil) }
        return SurahTable.salvaged(bytes: bytes, file: path, expected: reciter)
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
    ///
    /// With `chosenMirror` (`cache choose`, for a surah whose mirrors disagree), the file is that mirror's alone,
    /// not cross-checked: the listener chose it, and the learned table says so.
    ///
    /// One process at a time learns a surah of a reciter (a lock on its byte of the learned table's lock file):
    /// another that wants it meanwhile waits, then takes the rows it learned instead of fetching the file again —
    /// unless `again` (`table relearn`, `cache choose`), which learns it whatever was learned.
    public static func learn(
        _ surah: Int, reciter: Reciter, cacheDirectory: String, limits: DownloadLimits, clock: any TartilClock = SystemClock.shared,
        chosenMirror: Int? = nil, again: Bool = false, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> SurahTable.File {
        guard let timings = reciter.timings else {
            throw .usage("\(reciter.id) publishes no ayah timings (\"timings\" in mirrors.json) and no table covers surah \(surah)")
        }
        do throws(TartilError) {
            let (cache, held) = try lockedSurah(surah, reciter: reciter, cacheDirectory: cacheDirectory, clock: clock, isCancelled: isCancelled)
            defer { held.release() }
            if !again, chosenMirror == nil, let learned = learnedTable(cacheDirectory: cacheDirectory, reciter: reciter.id)?.file(surah: surah) {
                return learned  // learned by another process while this one waited
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
            var (copy, source, mark, mirror): (ScratchFile, String, SourceMark, String)
            if let chosenMirror {
                let only = Reciter(
                    id: reciter.id, name: reciter.name, style: reciter.style, bitrateKbps: reciter.bitrateKbps, tableFile: reciter.tableFile,
                    note: reciter.note, mirrors: [reciter.mirrors[chosenMirror]], maximumSpeed: reciter.maximumSpeed, files: reciter.files,
                    timings: reciter.timings)
                (copy, _, _, mirror) = try fetchFile(surah, reciter: only, cache: cache, limits: limits, clock: clock, isCancelled: isCancelled)
                source = "chosen: \(reciter.mirrors[chosenMirror].name) (cache choose)"
                mark = .chosen
            } else {
                (copy, source, mark, mirror) = try fetchFile(surah, reciter: reciter, cache: cache, limits: limits, clock: clock, isCancelled: isCancelled)
            }
            defer { copy.close() }
            let mapped: MappedFile
            do throws(CacheError) { mapped = try copy.map() } catch { throw TartilError(.io, error.message) }
            let measured = try SurahTableBuilder.measure(
                mapped.bytes, name: "\(AyahRef.pad3(surah)).mp3", timings: parsed, sha256: try? copy.fingerprint().sha256,
                isCancelled: isCancelled, passing: mapped.passed)
            mapped.releaseAll()
            if isCancelled() { throw TartilError(.interrupted, "interrupted") }
            try record(measured.file, reciter: reciter.id, cache: cache, source: "\(source); timings from \(timings.template)")
            try? keep(measured.file, of: mapped, reciter: reciter.id, cache: cache, mark: mark, mirror: mirror)
            return measured.file
        } catch {
            if isCancelled() || error.code == .interrupted { throw TartilError(.interrupted, "stopped: surah \(surah) was not learned") }
            throw error
        }
    }

    /// What the cross-check left on each of `parts` (a learned surah's parts, as cached): its mark, and the URL its
    /// file came from (`originURL`). What `LearningOrder` and `LearnedComparison` decide by.
    public static func learnedParts(_ parts: [AyahRef], reciter: Reciter, cache: Cache) throws(CacheError) -> [LearningOrder.LearnedPart] {
        var learned: [LearningOrder.LearnedPart] = []
        for part in parts {
            learned.append(LearningOrder.LearnedPart(
                mark: try cache.mark(reciter: reciter.id, ayah: part),
                url: originURL(recorded: try cache.source(reciter: reciter.id, ayah: part), surah: part.surah, reciter: reciter)))
        }
        return learned
    }

    /// The parts of a learned surah's `file`, under their file keys (the basmala's is `AyahRef.basmalaPart`).
    public static func partKeys(of file: SurahTable.File) -> [AyahRef] {
        file.parts.compactMap { AyahRef(fileKeySurah: file.surah, ayah: $0.ayah) }
    }

    /// Where a learned surah's part came from, as a URL of the surah's file: a part cut from the learned file
    /// records that URL; one fetched again by range records the mirror's name, taken here as that mirror's URL
    /// (nil for an unknown name: it says nothing about the mirror the file came from).
    public static func originURL(recorded: String?, surah: Int, reciter: Reciter) -> String? {
        guard let recorded else { return nil }
        if let mirror = reciter.mirrors.first(where: { $0.name == recorded }) { return mirror.template.url(forSurah: surah) }
        return recorded.contains(text: "://") ? recorded : nil
    }

    /// The reciter's cache, and surah `surah`'s learning lock, held (waited for while another process learns it).
    private static func lockedSurah(
        _ surah: Int, reciter: Reciter, cacheDirectory: String, clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> (Cache, HeldLock) {
        let cache: Cache
        let held: HeldLock?
        do {
            cache = try Cache(directory: cacheDirectory, clock: clock)
            held = try cache.lockByte(reciter: reciter.id, file: learnedTableName + ".lock", key: surah, isCancelled: isCancelled)
        } catch {
            throw TartilError(.failure, error.message)
        }
        guard let held else { throw TartilError(.interrupted, "interrupted") }
        return (cache, held)
    }

    /// What comparing a learned surah again came to (`compareAgain`).
    public struct Comparison: Sendable, Hashable {
        /// The surah's mark now: `.crossChecked` once a second mirror served the file learned.
        public let mark: SourceMark
        /// What was wrong, or nil: why it is still single-source (no other mirror served a file or is listed;
        /// another file was served), or a mirror that served another file and was outvoted.
        public let problem: String?
        /// The bytes fetched to compare.
        public let bytes: Int
    }

    /// Compares `learned`, surah `surah`'s file learned from one mirror only, with what the reciter's other mirrors
    /// serve now, as `LearnedComparison` decides (each part records the URL its file came from; the mirrors not at
    /// those URLs are asked, each for the whole file, until one serves the file learned). Once one does, the parts
    /// are marked cross-checked and the surah's source line in the learned table says so; nothing else changes
    /// (the rows, the parts). One another process compared meanwhile is asked nothing. A mirror that serves
    /// another file does not replace it (`problem` says which, and how to take it); one that serves none, or no
    /// MPEG audio, is passed over (`problem` says why). Throws `.interrupted` when stopped (what was learned
    /// stays), and what the cache could not do.
    public static func compareAgain(
        _ surah: Int, learned: SurahTable.File, reciter: Reciter, cacheDirectory: String, limits: DownloadLimits,
        clock: any TartilClock = SystemClock.shared, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Comparison {
        do throws(TartilError) {
            let (cache, held) = try lockedSurah(surah, reciter: reciter, cacheDirectory: cacheDirectory, clock: clock, isCancelled: isCancelled)
            defer { held.release() }
            // What another process did while this one waited for the surah: learned it again, compared or chose it.
            let now = learnedTable(cacheDirectory: cacheDirectory, reciter: reciter.id)?.file(surah: surah)
            let parts = partKeys(of: now ?? learned)
            let states: [LearningOrder.LearnedPart]
            do throws(CacheError) { states = try learnedParts(parts, reciter: reciter, cache: cache) } catch {
                throw TartilError(.failure, error.message)
            }
            let marks = states.map(\.mark)
            let single = zip(parts, states).filter { $0.1.mark == .singleSource }.map(\.0)
            let servedBy = Set(states.filter { $0.mark == .singleSource }.compactMap(\.url))  // the URLs its file came from
            guard now == learned, !single.isEmpty else {
                // Nothing is left to compare: the mark its parts have now, as they say it.
                let mark = marks.compactMap { $0 }.first ?? .singleSource
                let what = now == nil ? "it is not learned any more" : now != learned ? "it was learned again meanwhile" : nil
                return Comparison(mark: mark, problem: what ?? (marks.contains { $0 != nil } ? nil : "its parts are not in the cache"), bytes: 0)
            }
            let wanted = FileFingerprint(bytes: learned.bytes, sha256: learned.digest.hex)
            let urls = reciter.mirrors.map { $0.template.url(forSurah: surah) }
            var comparison = LearnedComparison(urls: urls, servedBy: servedBy, wanted: wanted)
            var reasons: [Int: String] = [:]
            var prints: [Int: FileFingerprint] = [:]
            var bytes = 0
            var action = comparison.start()
            while case .ask(let index) = action {
                // Asked once each time (a comparison is not needed to play, and the next prefetch asks again).
                switch try fetchCopy(surah, mirror: index, tries: 1, reciter: reciter, cache: cache, limits: limits, clock: clock, isCancelled: isCancelled) {
                case .failure(let reason):
                    reasons[index] = reason.message
                    action = comparison.answered(index, .none)
                case .success(let (copy, print)):
                    copy.close()
                    bytes += print.bytes
                    prints[index] = print
                    action = comparison.answered(index, .file(print))
                }
            }
            guard case .settled(let outcome) = action else { preconditionFailure("LearnedComparison ended without settling") }
            /// A mirror as the messages name it: its name, or the URL a file came from when no listed mirror has it.
            func named(_ url: String) -> String { reciter.mirrors.first { $0.template.url(forSurah: surah) == url }?.name ?? url }
            let learnedFrom = servedBy.sorted().map { "\(named($0)) (\($0))" }.joined(separator: ", ")
            let otherFiles = { (others: [Int]) in
                "another file than the one learned\(learnedFrom.isEmpty ? "" : " from " + learnedFrom) (\(wanted)) was served by "
                    + others.map { "\(reciter.mirrors[$0].name) (\(urls[$0])): \(prints[$0].map(String.init(describing:)) ?? "none")" }.joined(separator: "; ")
            }
            switch outcome {
            case .crossChecked(var confirmedBy, let outvoted):
                // The learned table says so first (its source line for the surah), then the parts are marked. The
                // mirror it was learned from goes by the name its line gave it then (a mirror may be renamed since);
                // without one, by what its parts record, or (neither recorded) the first that served it now.
                let line = learnedTable(cacheDirectory: cacheDirectory, reciter: reciter.id)?.surahSources[surah]
                let origin: String
                if let then = line.flatMap(LearnedSource.firstUseMirror) {
                    origin = then
                } else if !servedBy.isEmpty {
                    origin = servedBy.sorted().map(named).joined(separator: ", ")
                } else {
                    origin = reciter.mirrors[confirmedBy.removeFirst()].name
                }
                let against = outvoted.isEmpty ? "" : " (\(outvoted.map { reciter.mirrors[$0].name }.joined(separator: ", ")) served another file)"
                let timings = reciter.timings.map { "; timings from \($0.template)" } ?? ""
                let confirming = confirmedBy.map { reciter.mirrors[$0].name }.joined(separator: ", ")
                try rewriteLearned(reciter: reciter.id, cache: cache) { _, sources in
                    sources[surah] = "trusted on first use: \(origin), cross-checked with \(confirming) when compared again\(against)\(timings)"
                }
                do throws(CacheError) { try cache.setMark(.crossChecked, reciter: reciter.id, ayat: single) } catch {
                    throw TartilError(.failure, error.message)
                }
                return Comparison(mark: .crossChecked, problem: outvoted.isEmpty ? nil : otherFiles(outvoted) + ", and was outvoted", bytes: bytes)
            case .anotherFile(let others):
                let chooser = "tartil cache choose \(surah) --reciter \(reciter.id) --mirror NAME"
                return Comparison(
                    mark: .singleSource,
                    problem: "\(otherFiles(others)); the one learned is kept: listen to each at its URL, then `\(chooser)` takes the one you trust, or `tartil table relearn \(surah) --reciter \(reciter.id)` learns what the mirrors agree on",
                    bytes: bytes)
            case .unserved(let failed, let served):
                let problem: String
                if !failed.isEmpty {
                    problem = "no other mirror served it (\(failed.map { "\(reciter.mirrors[$0].name): \(reasons[$0] ?? "")" }.joined(separator: "; ")))"
                        + (served.isEmpty ? "" : "; \(reciter.mirrors[served[0]].name) served the file learned")
                } else if !served.isEmpty {
                    problem = "one mirror served the file learned, and no other is listed"
                } else {
                    problem = "no mirror other than the one its file came from (\(learnedFrom)) is listed in mirrors.json"
                }
                return Comparison(mark: .singleSource, problem: problem, bytes: bytes)
            }
        } catch {
            if isCancelled() || error.code == .interrupted {
                throw TartilError(.interrupted, "stopped: surah \(surah) was not compared again; what was learned is kept")
            }
            throw error
        }
    }

    /// Asks for a file up to `attempts` times with `once` (which returns why the server did not give it, if it did
    /// not, and throws what is not the server's doing), waiting before each retry; the last reason when it never
    /// did. A file too large, an answer that is not the file (4xx), and a server that cannot be reached or stopped
    /// sending (another timeout would follow) are not asked again: the next mirror is.
    private static func asking<Value>(
        tries: Int = attempts, clock: any TartilClock, isCancelled: () -> Bool, _ once: () throws(TartilError) -> Result<Value, CacheError>
    ) throws(TartilError) -> Result<Value, TartilError> {
        var reason = ""
        for attempt in 1...tries {
            if isCancelled() { throw TartilError(.interrupted, "interrupted") }
            switch try once() {
            case .success(let value):
                return .success(value)
            case .failure(let error):
                if isCancelled() { throw TartilError(.interrupted, "interrupted") }
                reason = error.message
                if error.code == .tooLarge || error.code == .unreachable || reason.hasPrefix("HTTP 4") {
                    return .failure(TartilError(.failure, reason))
                }
                if attempt < tries { clock.sleep(seconds: retryDelay(attempt)) }
            }
        }
        return .failure(TartilError(.failure, reason))
    }

    /// `url` whole, into memory (a timing file), asked as `asking` says.
    private static func fetch(
        _ url: String, maxBytes: Int, limits: DownloadLimits, clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Result<[UInt8], TartilError> {
        try asking(clock: clock, isCancelled: isCancelled) { () throws(TartilError) -> Result<[UInt8], CacheError> in
            do throws(CacheError) {
                return .success(try WholeFile.fetch(url, maxBytes: maxBytes, limits: limits, isCancelled: isCancelled))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Surah `surah`'s file from `url`, written to `copy` as it arrives (and hashed), asked as `asking` says (up to
    /// `tries` times). Throws when the copy cannot be written (a full disk): no mirror can help with that.
    private static func fetch(
        _ surah: Int, from url: String, into copy: ScratchFile, tries: Int, limits: DownloadLimits, clock: any TartilClock,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Result<Void, TartilError> {
        try asking(tries: tries, clock: clock, isCancelled: isCancelled) { () throws(TartilError) -> Result<Void, CacheError> in
            do throws(CacheError) {
                if let failure = try WholeFile.fetch(url, into: copy, maxBytes: maximumFileBytes, limits: limits, isCancelled: isCancelled) {
                    return .failure(failure)
                }
                return .success(())
            } catch {
                if isCancelled() { throw TartilError(.interrupted, "interrupted") }
                throw TartilError(.io, "surah \(surah)'s file could not be fetched: \(error.message)")
            }
        }
    }

    /// Mirror `index`'s copy of surah `surah`'s whole file, fetched (as `asking` says) into a file with no name in
    /// the reciter's folder, walked (one whole MPEG audio stream) and hashed; or why the mirror has none. Throws
    /// what no mirror can help with (the copy cannot be written or read back) and an interruption.
    private static func fetchCopy(
        _ surah: Int, mirror index: Int, tries: Int = attempts, reciter: Reciter, cache: Cache, limits: DownloadLimits,
        clock: any TartilClock, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> Result<(ScratchFile, FileFingerprint), TartilError> {
        let copy: ScratchFile
        do throws(CacheError) { copy = try cache.scratchFile(reciter: reciter.id) } catch {
            throw TartilError(.io, "surah \(surah)'s file cannot be fetched: \(error.message)")
        }
        if case .failure(let reason) = try fetch(
            surah, from: reciter.mirrors[index].template.url(forSurah: surah), into: copy, tries: tries, limits: limits, clock: clock,
            isCancelled: isCancelled)
        {
            copy.close()
            return .failure(reason)
        }
        do throws(CacheError) {
            let mapped = try copy.map()
            if let problem = MPEGStream.problem(in: mapped.bytes, passing: mapped.passed) {
                copy.close()
                return .failure(TartilError(.failure, "not one whole MPEG audio stream: \(problem)"))
            }
            return .success((copy, try copy.fingerprint()))
        } catch {
            copy.close()
            throw TartilError(.failure, "surah \(surah): cannot read its file back: \(error.message)")
        }
    }

    /// The surah's file, cross-checked by the rules of an unpinned per-ayah file (`CrossCheck`): the first mirror
    /// that serves one whole MPEG audio stream gives the copy in hand, the next mirrors are asked in turn until a
    /// majority of those that answered served the same bytes (two agree, more than all the others together); a
    /// copy only one mirror could serve is single-source; mirrors that disagree with no majority are a dispute,
    /// and nothing is learned. Each mirror's copy goes to a file with no name in the reciter's folder; a copy the
    /// same as one kept already, or one the check can no longer keep (`CrossCheck.mayStillKeep`), is let go of at
    /// once. Returns the copy kept (its file), what vouches for it, in words, its mark, and the URL it came from.
    private static func fetchFile(
        _ surah: Int, reciter: Reciter, cache: Cache, limits: DownloadLimits, clock: any TartilClock,
        isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> (ScratchFile, String, SourceMark, String) {
        var failures: [Int: String] = [:]
        /// What each mirror served, and one copy of each file the check may still keep.
        var prints: [Int: FileFingerprint] = [:]
        var kept: [FileFingerprint: ScratchFile] = [:]
        var check = CrossCheck(mirrorCount: reciter.mirrors.count)
        defer { for copy in kept.values { copy.close() } }  // the one returned is taken out of `kept` first
        /// Mirror `index`'s whole file, fetched, walked and hashed; nil (its reason kept) when it has none.
        func ask(_ index: Int) throws(TartilError) -> FileFingerprint? {
            switch try fetchCopy(surah, mirror: index, reciter: reciter, cache: cache, limits: limits, clock: clock, isCancelled: isCancelled) {
            case .failure(let reason):
                failures[index] = reason.message
                return nil
            case .success(let (copy, print)):
                prints[index] = print
                if kept[print] == nil { kept[print] = copy } else { copy.close() }  // the same bytes as a copy kept already
                return print
            }
        }
        /// Lets go of the copies the check can no longer keep.
        func prune() {
            for print in Array(kept.keys) where !check.mayStillKeep(print) {
                kept.removeValue(forKey: print)?.close()
            }
        }
        var action: CrossCheck.Action?
        for index in reciter.mirrors.indices where action == nil {
            guard let print = try ask(index) else { continue }
            action = check.downloaded(from: index, print)
            for failed in failures.keys.sorted() { action = check.probed(failed, .unavailable(failures[failed]!)) }
            prune()
        }
        guard var next = action else {
            let reasons = failures.keys.sorted().map { "\(reciter.mirrors[$0].name): \(failures[$0]!)" }
            throw TartilError(.failure, "surah \(surah)'s file could not be had: \(reasons.joined(separator: "; "))")
        }
        while true {
            switch next {
            case .probe(let mirror):
                next = check.probed(mirror, try ask(mirror).map { .fingerprint($0) } ?? .unavailable(failures[mirror] ?? ""))
                prune()
            case .download(let mirror):
                next = check.downloaded(from: mirror, prints[mirror]!)  // its whole copy came with its probe
                prune()
            case .keep(let mark):
                let candidate = check.candidate!
                let name = reciter.mirrors[candidate].name
                let print = prints[candidate]!
                guard let copy = kept.removeValue(forKey: print) else {
                    preconditionFailure("SurahLearning: the copy the cross-check keeps was let go of")  // mayStillKeep says it is not
                }
                let url = reciter.mirrors[candidate].template.url(forSurah: surah)
                guard mark == .crossChecked else { return (copy, "trusted on first use: \(name), single-source", mark, url) }
                let agreeing = prints.keys.sorted().filter { $0 != candidate && prints[$0] == print }.map { reciter.mirrors[$0].name }
                let other = prints.keys.sorted().filter { prints[$0] != print }.map { reciter.mirrors[$0].name }
                let against = other.isEmpty ? "" : " (\(other.joined(separator: ", ")) served another file)"
                return (copy, "trusted on first use: \(name), cross-checked with \(agreeing.joined(separator: ", "))\(against)", mark, url)
            case .dispute:
                let listed = prints.keys.sorted().map { "\(reciter.mirrors[$0].name) (\(reciter.mirrors[$0].template.url(forSurah: surah))): \(prints[$0]!)" }
                throw TartilError(
                    .failure,
                    "surah \(surah): the mirrors disagree with no majority (\(listed.joined(separator: "; "))): not learned; listen to each mirror's file at its URL, then `tartil cache choose \(surah) --reciter \(reciter.id) --mirror NAME` learns it from the one you trust")
            }
        }
    }

    /// Keeps each part of `file` (cut from the mapped whole file) in the cache, checked against its own hash, a group
    /// at a time (`Cache.commit(parts:…)`).
    /// `mirror`: the URL the file came from, recorded with each part (what `compareAgain` does not ask again, whatever
    /// the mirror's name).
    private static func keep(
        _ file: SurahTable.File, of mapped: MappedFile, reciter: ReciterID, cache: Cache, mark: SourceMark, mirror: String
    ) throws(TartilError) {
        let cut = Cache.SurahFileCut(surah: file.surah, parts: file.parts.map { part in
            Cache.SurahFilePart(
                ayah: part.ayah == 0 ? AyahRef.basmalaPart(ofSurah: file.surah) : AyahRef(fileKeySurah: file.surah, ayah: part.ayah)!, bytes: part.bytes,
                expectation: .pinned(PinnedFile(bytes: part.bytes.count, digest: part.digest, samples: part.sampleCount, sampleRate: file.sampleRate)))
        })
        do throws(CacheError) {
            _ = try cache.commit(parts: cut, reciter: reciter, source: mirror, mark: mark) { range, writer throws(CacheError) in
                try writer.append(UnsafeRawBufferPointer(rebasing: mapped.bytes[range]))
                mapped.passed(range.upperBound + 1)
            }
        } catch {
            throw TartilError(.failure, "cannot keep surah \(file.surah)'s parts in the cache: \(error.message)")
        }
        mapped.releaseAll()
    }

    /// Adds `file`'s rows to the learned table (replacing the surah's, if any), with `source` as its source,
    /// atomically, under a lock on the reciter's learned table (`Cache.rewrite`): two processes learning at once
    /// both keep what they learned.
    private static func record(_ file: SurahTable.File, reciter: ReciterID, cache: Cache, source: String) throws(TartilError) {
        try rewriteLearned(reciter: reciter, cache: cache) { files, sources in
            files = files.filter { $0.surah != file.surah } + [file]
            sources[file.surah] = source
        }
    }

    /// Changes the learned table's files and their sources, atomically, under its lock. What of a damaged table
    /// still reads is kept (see `learnedTableRead`); a surah learned before each surah had its own source line
    /// keeps the table's `# source:` as its own, when that says one thing.
    private static func rewriteLearned(
        reciter: ReciterID, cache: Cache, _ change: (inout [SurahTable.File], inout [Int: String]) -> Void
    ) throws(TartilError) {
        let path = tablePath(cacheDirectory: cache.directory, reciter: reciter)
        do throws(CacheError) {
            try cache.rewrite(reciter: reciter, file: learnedTableName) { current in
                let earlier = current.flatMap { SurahTable.salvaged(bytes: $0, file: path, expected: reciter).table }
                var files = earlier?.files ?? []
                var sources = earlier?.surahSources ?? [:]
                if let earlier, !earlier.source.isEmpty {
                    // (Only one that says one thing: a merged one, ` | `, cannot say which surah each part is of.)
                    if !earlier.source.contains(text: " | ") {
                        for file in files where sources[file.surah] == nil { sources[file.surah] = earlier.source }
                    }
                }
                change(&files, &sources)
                return Array(SurahTable.learned(reciter: reciter, files: files, surahSources: sources).rendered().utf8)
            }
        } catch {
            throw TartilError(.io, "cannot write the learned table: \(error.message)")
        }
    }
}
