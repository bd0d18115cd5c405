import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TartilCache
import TartilCore
import TartilNet
import TartilPlayer
import TartilSystem

/// `tartil cache …`: what is in the verified cache, checking it, pins, and importing files.
enum CacheCommands {
    static let group = CommandSpec(path: ["cache"], overview: "Inspect, verify, pin and fill the verified audio cache.", run: nil)

    static let reciterOption = CommandSpec.Option(names: ["--reciter"], valueName: "id", help: "Only this reciter.")

    static let ls = CommandSpec(
        path: ["cache", "ls"], overview: "List cached files per reciter: files, bytes, complete surahs, cross-check marks.",
        discussion: """
            Unpinned files show what the cross-check found when they were downloaded: cross-checked (another \
            mirror agreed), single-source (only one mirror could serve it) or disputed (the mirrors disagreed). \
            Fields (json, ndjson, csv), one row per reciter: reciter, files, bytes, complete_surahs, partial_surahs \
            (surah, cached, total), cross_checked (how many), single_source and disputed (surah, ayah).
            """,
        options: [reciterOption, OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
            let summaries = try summarize(cache, reciter: invocation.value("--reciter"))
            context.console.print(Listing(columns: Summary.columns, rows: summaries.map(\.fields)), as: format) {
                lsText(summaries, cache: cache, context.console)
            }
        })

    /// `cache ls` for people.
    static func lsText(_ summaries: [Summary], cache: Cache, _ console: Console) {
        if summaries.isEmpty { console.line("the cache at \(cache.directory) is empty") }
        for summary in summaries {
            console.line("\(summary.reciter): \(Plural.count(summary.files, "file")), \(Formatting.bytes(summary.bytes))")
            let complete = summary.completeSurahs.map(String.init).joined(separator: ", ")
            console.line("  complete surahs: \(complete.isEmpty ? "none" : complete)")
            if !summary.partialSurahs.isEmpty {
                console.line("  partly cached: " + summary.partialSurahs.map { "\($0.surah) (\($0.cached)/\($0.total))" }.joined(separator: ", "))
            }
            if let marks = summary.marksLine { console.line("  unpinned: " + marks) }
        }
    }

    static let du = CommandSpec(
        path: ["cache", "du"], overview: "Show how much space the cache takes, per reciter.",
        discussion: "Fields (json, ndjson, csv), one row per reciter: reciter, files, bytes (the total is their sum).",
        options: [reciterOption, OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
            let summaries = try summarize(cache, reciter: invocation.value("--reciter"))
            let listing = Listing(columns: ["reciter", "files", "bytes"], rows: summaries.map {
                [("reciter", .string($0.reciter)), ("files", .int($0.files)), ("bytes", .int($0.bytes))]
            })
            context.console.print(listing, as: format) {
                let total = summaries.reduce(0) { $0 + $1.bytes }
                var rows = summaries.map { [$0.reciter, Plural.count($0.files, "file"), Formatting.bytes($0.bytes)] }
                rows.append(["total", Plural.count(summaries.reduce(0) { $0 + $1.files }, "file"), Formatting.bytes(total)])
                for line in Formatting.table(rows, rightAligned: [1, 2]) { context.console.line(line) }
            }
        })

    static let verify = CommandSpec(
        path: ["cache", "verify"],
        overview: "Re-hash every cached file; remove bad ones (and download them again with --repair).",
        discussion: """
            Each file is checked against its reciter's table, or against the hash recorded when it was first \
            downloaded; files are hashed on all cores. A file that fails, or that nothing vouches for, or a symbolic \
            link at a cached file's name, is removed (a link: the link only). Unpinned files marked single-source or \
            disputed when they were downloaded are listed (a matching hash proves only that they did not change). \
            Exit 0 only when every file is good (after --repair, when every removed file came back verified). \
            Fields (json, ndjson, csv): checked, good, removed (reciter, surah, ayah, reason), repaired, \
            single_source and disputed (reciter, surah, ayah).
            """,
        options: [reciterOption, .init(names: ["--repair"], valueName: nil, help: "Download removed files again."), OutputFormat.option()],
        run: runVerify)

    static let pin = CommandSpec(
        path: ["cache", "pin"], overview: "Keep ayat in the cache: pinned files are never evicted.",
        arguments: [.init(name: "ref", help: "Ayat to pin.", repeating: true)],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: { invocation, context in try setPinned(true, invocation, context) })

    static let unpin = CommandSpec(
        path: ["cache", "unpin"], overview: "Let pinned ayat be evicted again.",
        arguments: [.init(name: "ref", help: "Ayat to unpin.", repeating: true)],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: { invocation, context in try setPinned(false, invocation, context) })

    static let importFiles = CommandSpec(
        path: ["cache", "import"],
        overview: "Put MP3 files you already have into the cache, verified like downloads.",
        discussion: """
            Every SSSAAA.mp3 in the folder is checked against the reciter's table (or, for an unpinned ayah, must \
            decode as MPEG audio and then has its hash recorded) and copied in atomically. Files that fail are \
            reported and left out; exit 0 only when every file was imported.
            """,
        arguments: [.init(name: "dir", help: "A folder of SSSAAA.mp3 files.")],
        options: [.init(names: ["--reciter"], valueName: "id", help: "The reciter the files are from [env: TARTIL_RECITER]."), OutputFormat.option()],
        run: runImport)

    // MARK: - Summaries

    struct Summary {
        let reciter: String
        var files = 0
        var bytes = 0
        var completeSurahs: [Int] = []
        var partialSurahs: [(surah: Int, cached: Int, total: Int)] = []
        /// Unpinned files by the cross-check's mark.
        var marks: [SourceMark: [AyahRef]] = [:]

        static let columns = ["reciter", "files", "bytes", "complete_surahs", "partial_surahs", "cross_checked", "single_source", "disputed"]

        var fields: Fields {
            [
                ("reciter", .string(reciter)), ("files", .int(files)), ("bytes", .int(bytes)),
                ("complete_surahs", .array(completeSurahs.map(JSONValue.int))),
                ("partial_surahs", .array(partialSurahs.map { .object([("surah", .int($0.surah)), ("cached", .int($0.cached)), ("total", .int($0.total))]) })),
                ("cross_checked", .int(marks[.crossChecked]?.count ?? 0)),
                ("single_source", .array((marks[.singleSource] ?? []).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
                ("disputed", .array((marks[.disputed] ?? []).map { .object([("surah", .int($0.surah)), ("ayah", .int($0.ayah))]) })),
            ]
        }

        /// `3 cross-checked, 1 single-source (112:4), 1 disputed (112:1)`, or nil when no file has a mark.
        var marksLine: String? {
            let parts = SourceMark.allCases.compactMap { mark -> String? in
                guard let ayat = marks[mark], !ayat.isEmpty else { return nil }
                let listed = mark == .crossChecked ? "" : " (" + ayat.prefix(10).map(\.description).joined(separator: ", ") + (ayat.count > 10 ? ", …" : "") + ")"
                return "\(ayat.count) \(mark.rawValue)" + listed
            }
            return parts.isEmpty ? nil : parts.joined(separator: ", ")
        }
    }

    static func summarize(_ cache: Cache, reciter: String?) throws -> [Summary] {
        if let reciter { _ = try ReciterID(reciter) }
        var summaries: [String: Summary] = [:]
        var perSurah: [String: [Int: Int]] = [:]
        for file in try cache.files(reciter: reciter) {
            summaries[file.reciter, default: Summary(reciter: file.reciter)].files += 1
            summaries[file.reciter]!.bytes += file.bytes
            if let mark = file.mark { summaries[file.reciter]!.marks[mark, default: []].append(file.ayah) }
            perSurah[file.reciter, default: [:]][file.ayah.surah, default: 0] += 1
        }
        return summaries.keys.sorted().map { name in
            var summary = summaries[name]!
            for (surah, count) in perSurah[name, default: [:]].sorted(by: { $0.key < $1.key }) {
                let total = Catalog.surahs[surah - 1].ayahCount
                if count == total { summary.completeSurahs.append(surah) } else { summary.partialSurahs.append((surah, count, total)) }
            }
            return summary
        }
    }

    // MARK: - Verify

    static func runVerify(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
        let library = try? context.library()
        if let reciter = invocation.value("--reciter") { _ = try ReciterID(reciter) }
        let files = try cache.files(reciter: invocation.value("--reciter"))
        var tables: [String: ReciterTable] = [:]
        for name in Set(files.map(\.reciter)) {
            if let library, let id = try? ReciterID(name), let reciter = try? library.reciter(id), let table = try library.table(for: reciter) {
                tables[name] = table
            }
        }
        // Hash on every core.
        let tablesByReciter = tables
        let problems = Mutex<[Int: String]>([:])
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let expectation: FileExpectation?
            if let pinned = tablesByReciter[file.reciter]?.files[file.ayah] {
                expectation = .pinned(pinned)
            } else if let sha = file.recordedSHA256 {
                expectation = .recorded(bytes: file.bytes, sha256: sha)
            } else {
                expectation = nil
            }
            let problem: String?
            if file.isSymbolicLink {
                problem = "a symbolic link, not a file: tartil does not follow links inside the cache"
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
        let bad = problems.withLock { $0 }.sorted { $0.key < $1.key }.map { (files[$0.key], $0.value) }
        let badPaths = Set(bad.map(\.0.path))
        /// Good files (kept) whose unpinned download was marked `mark` by the cross-check.
        func markedGood(_ mark: SourceMark) -> [Cache.CachedFile] { files.filter { $0.mark == mark && !badPaths.contains($0.path) } }
        func fileJSON(_ file: Cache.CachedFile) -> JSONValue {
            .object([("reciter", .string(file.reciter)), ("surah", .int(file.ayah.surah)), ("ayah", .int(file.ayah.ayah))])
        }
        for (file, _) in bad {
            try cache.remove(reciter: try ReciterID(file.reciter), ayah: file.ayah)
        }
        var repaired = 0
        var repairFailures: [(AyahRef, String)] = []
        if invocation.flag("--repair") && !bad.isEmpty {
            guard let library else { throw TartilError(.failure, "cannot repair: mirrors.json could not be read") }
            for (name, group) in Dictionary(grouping: bad.map(\.0), by: \.reciter) {
                let id = try ReciterID(name)
                let reciter = try library.reciter(id)
                let requests = try group.map { file in
                    DownloadRequest(
                        reciter: id, ayah: file.ayah, mirrors: reciter.mirrors,
                        expectation: try cache.expectation(reciter: id, ayah: file.ayah, pinned: tables[name]?.files[file.ayah], unpinnedLimit: AudioValidation.unpinnedLimit),
                        priority: .prefetch)
                }
                var progress = PrefetchProgress(requested: requests.count)
                try PrefetchCommand.fetch(
                    requests, into: cache, limits: try context.settings.trusting(DownloadLimits()), policy: DownloadPolicy(),
                    progress: &progress, context: context, json: format != .text, started: Date())
                repaired += progress.downloaded
                repairFailures += progress.failed
            }
        }
        let fields: Fields = [
            ("checked", .int(files.count)),
            ("good", .int(files.count - bad.count)),
            ("removed", .array(bad.map { file, reason in
                .object([("reciter", .string(file.reciter)), ("surah", .int(file.ayah.surah)), ("ayah", .int(file.ayah.ayah)), ("reason", .string(reason))])
            })),
            ("repaired", .int(repaired)),
            ("single_source", .array(markedGood(.singleSource).map(fileJSON))),
            ("disputed", .array(markedGood(.disputed).map(fileJSON))),
        ]
        context.console.print(report: fields, as: format) {
            for (file, reason) in bad { context.console.note("removed \(file.reciter)/\(file.ayah.fileStem).mp3: \(reason)") }
            for file in markedGood(.disputed) {
                context.console.note("disputed \(file.reciter)/\(file.ayah.fileStem).mp3: its mirrors disagreed when it was downloaded (it matches its recorded hash, which only one mirror vouches for)")
            }
            for file in markedGood(.singleSource) {
                context.console.note("single-source \(file.reciter)/\(file.ayah.fileStem).mp3: only one mirror could serve it when it was downloaded")
            }
            for (ayah, reason) in repairFailures { context.console.note("could not repair \(ayah): \(reason)") }
            let singles = markedGood(.singleSource).count
            let disputes = markedGood(.disputed).count
            let markText = singles + disputes == 0 ? "" : "; unpinned: \(singles) single-source, \(disputes) disputed"
            context.console.line("\(Plural.count(files.count, "file")) checked: \(files.count - bad.count) good, \(bad.count) bad (removed)"
                + (invocation.flag("--repair") ? ", \(repaired) downloaded again" : "") + markText)
        }
        if Interrupt.isPending { throw TartilError(.interrupted, "verification stopped") }
        let unrepaired = invocation.flag("--repair") ? bad.count - repaired : bad.count
        if unrepaired > 0 { throw TartilError(.failure, "\(unrepaired) bad file(s) are not in the cache any more") }
    }

    // MARK: - Pins

    static func setPinned(_ pinned: Bool, _ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let references = try ReferenceParser.parse(invocation.arguments)
        let reciter = try context.reciterID(invocation)
        _ = try context.library().reciter(reciter)
        let ayat = ReferenceParser.uniqueAyat(of: references)
        let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
        try cache.setPinned(pinned, reciter: reciter, ayat: ayat)
        context.console.print(report: [("reciter", .string(reciter.rawValue)), (pinned ? "pinned" : "unpinned", .int(ayat.count))], as: format) {
            context.console.line("\(pinned ? "pinned" : "unpinned") \(Plural.count(ayat.count, "ayah")) of \(reciter)")
        }
    }

    // MARK: - Import

    static func runImport(_ invocation: Invocation, _ context: Context) throws {
        let format = try OutputFormat.chosen(invocation, context)
        let reciterID = try context.reciterID(invocation)
        let library = try context.library()
        let reciter = try library.reciter(reciterID)
        let table = try library.table(for: reciter)
        let directory = invocation.arguments[0]
        guard FileSystem.isDirectory(directory) else {
            throw TartilError.usage("\(directory) is not a folder: give a folder of SSSAAA.mp3 files")
        }
        let cache = try Cache(directory: try context.settings.checkedCacheDirectory())
        var imported = 0
        var already = 0
        var rejected: [(String, String)] = []
        let names = (try FileManager.default.contentsOfDirectory(atPath: directory)).sorted()
        let candidates = names.compactMap { name in AyahRef(fileName: name).map { (name, $0) } }
        guard !candidates.isEmpty else { throw TartilError.usage("\(directory) holds no SSSAAA.mp3 files") }
        for (name, ayah) in candidates {
            if Interrupt.isPending { throw TartilError(.interrupted, "import stopped after \(Plural.count(imported, "file"))") }
            let expectation = try cache.expectation(reciter: reciterID, ayah: ayah, pinned: table?.files[ayah], unpinnedLimit: AudioValidation.unpinnedLimit)
            if try cache.containsVerified(reciter: reciterID, ayah: ayah, expectation: expectation) {
                already += 1
                continue
            }
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: Path.join(directory, name)))
                let writer = try cache.writer(reciter: reciterID, ayah: ayah, expectation: expectation)
                if writer.offset > 0 { try writer.restart() }
                do {
                    try data.withUnsafeBytes { buffer in try writer.append(buffer) }
                    try cache.commit(writer, reciter: reciterID, ayah: ayah, source: "import", validate: AudioValidation.validate)
                    imported += 1
                } catch {
                    writer.abandon(keepPartial: false)
                    throw error
                }
            } catch let error as CacheError {
                rejected.append((name, error.message))
            }
        }
        let fields: Fields = [
            ("imported", .int(imported)), ("already_cached", .int(already)),
            ("rejected", .array(rejected.map { .object([("file", .string($0.0)), ("reason", .string($0.1))]) })),
        ]
        context.console.print(report: fields, as: format) {
            for (name, reason) in rejected { context.console.note("rejected \(name): \(reason)") }
            context.console.line("\(imported) imported, \(already) already cached, \(rejected.count) rejected")
        }
        if !rejected.isEmpty { throw TartilError(.failure, "\(Plural.count(rejected.count, "file")) \(Plural.word(rejected.count, "was")) not imported") }
    }
}
