import Foundation
import TestSupport
import Testing

/// The built `tartil`, fed mutated command lines, option values and scripts on standard input, against a real
/// cache (the fixture reciter, served by nginx on loopback) and a real journal. Every run must end by itself
/// within the deadline, without a signal, with a documented exit code (0, 1, 64); a run refused as bad input
/// (64) must leave the cache and the journal exactly as they were (a single command; a script may have run good
/// commands before its bad one).
///
/// Budget: `TARTIL_FUZZ_PROCESSES` runs (default 240; `tools/fuzz` runs more). `TARTIL_FUZZ_SEED` replays.
@Suite(.serialized) struct ProcessFuzzTests {
    /// The longest one run may take: a debug build plays a short surah to the null output or downloads a few
    /// small files in a second or two; this leaves room for a 2-core machine running the rest of the suite.
    static let deadline = 60.0

    /// A scratch home with a cache holding the fixture reciter's surahs 1 and 112, a journal, and the
    /// environment that points tartil at them and at nginx.
    final class World: Sendable {
        let home: String
        let work: String
        let environment: [String: String]
        let nginx: TestServer

        init() throws {
            home = TestPaths.makeTemporaryDirectory()
            work = home + "/work"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            nginx = try TestServer.nginx(root: TestPaths.fixtures)
            let tables = home + "/tables"
            try FileManager.default.createDirectory(atPath: tables, withIntermediateDirectories: true)
            let mirrors = home + "/mirrors.json"
            try """
                {"version": 1, "reciters": [
                  {"id": "fixture", "name": "Fixture", "style": "murattal",
                   "mirrors": [{"name": "nginx", "url": "\(nginx.base)/fixture/{surah3}{ayah3}.mp3"}]}]}
                """.write(toFile: mirrors, atomically: true, encoding: .utf8)
            environment = [
                "TARTIL_MIRRORS": mirrors, "TARTIL_TABLES": tables, "TARTIL_CACHE_DIR": home + "/cache",
                "TARTIL_JOURNAL": home + "/journal.sqlite", "TARTIL_RECITER": "fixture", "TARTIL_OUTPUT": "null",
            ]
            for arguments in [
                ["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "-o", tables + "/fixture.tsv"],
                ["prefetch", "1", "112"], ["bookmark", "112:2", "--note", "seed"],
            ] {
                let result = try run(arguments)
                precondition(result.status == 0 && !result.signaled, String(decoding: result.stderr, as: UTF8.self))
            }
        }

        func run(_ arguments: [String], input: [UInt8] = []) throws -> BoundedRunResult {
            try runTartilBounded(arguments, input: input, environment: environment, home: home, directory: work, deadline: ProcessFuzzTests.deadline)
        }

        /// Every file under the cache and the journal's files: path, size and content hash, so any change shows.
        func snapshot() -> [String: String] {
            var files: [String: String] = [:]
            for root in [home + "/cache", home] {
                guard let names = FileManager.default.enumerator(atPath: root) else { continue }
                for case let name as String in names {
                    let path = root + "/" + name
                    if root == home && !name.hasPrefix("journal.sqlite") { continue }
                    // SQLite's shared-memory index is rebuilt by every connection, readers included; it holds
                    // no data.
                    if name.hasSuffix("-shm") { continue }
                    var status = stat()
                    guard lstat(path, &status) == 0 else { continue }
                    if (status.st_mode & S_IFMT) == S_IFDIR { files[path] = "dir"; continue }
                    // An empty write-ahead log holds nothing: a connection that wrote nothing may leave one.
                    if name.hasSuffix("-wal") && status.st_size == 0 { continue }
                    let data = FileManager.default.contents(atPath: path) ?? Data()
                    files[path] = "\(status.st_mode) \(data.count) \(data.hashValue)"
                }
            }
            return files
        }

        deinit { try? FileManager.default.removeItem(atPath: home) }
    }

    /// Valid command lines; words starting with `?` are the ones mutated (paths never are: a mutated path could
    /// name any file on this machine).
    static let templates: [[String]] = [
        ["surahs", "?36", "?2:255-260"], ["resolve", "?112:1-4", "--json"], ["resolve", "?juz", "?30"],
        ["play", "?112", "--from", "?0:02", "--repeat", "?2", "--pause", "?0.1"], ["play", "?1:1-3", "--from", "?45%"],
        ["play", "?112", "--basmala", "?off", "--output", "null"], ["prefetch", "?112", "--jobs", "?4", "--retries", "?1", "--max-size", "?500M"],
        ["prefetch", "?1:2-4", "--connect-timeout", "?5", "--stall-timeout", "?3"], ["positions", "--surah", "?112", "--csv"],
        ["history", "--since", "?7d"], ["history", "--since", "?2026-11-29T08:00"], ["journal", "export", "--since", "?2026-11-01", "--format", "?csv"],
        ["bookmark", "?112:3", "--note", "?a note"], ["cache", "ls", "--reciter", "?fixture"], ["cache", "verify", "--reciter", "?fixture"],
        ["cache", "pin", "?112:1", "--reciter", "?fixture"], ["cache", "du"], ["reciters", "--json"], ["resume", "--surah", "?112"],
        ["-c", "?play 112 --output null; seek 0:01; status --json; seek +1; next; prev; pause; resume; stop"],
        ["-c", "?play 1 --output null; seek ayah 1:3; seek 50%; status; wait"], ["help", "?seek"], ["journal", "stats"],
        ["history", "--format", "?csv"], ["journal", "export", "--format", "?json"], ["bookmarks", "--format", "?ndjson", "--surah", "?112"],
        ["cache", "du", "--format", "?csv"], ["surahs", "?112", "--format", "?text"],
    ]

    /// Inputs that crashed or hung tartil before, kept as regression cases.
    static let regressions: [[String]] = [
        ["-c", "play 112; seek 999999999999999999:00"], ["-c", "play 112; seek 99999999999999999999"],
        ["play", "112", "--from", "99999999999999999999"], ["render", "112", "-o", "out.wav", "--from", "9999999999999:00:00"],
        ["prefetch", "112", "--max-size", "1e30"], ["history", "--since", "999999999999999d"],
        ["history", "--since", "99999999999-01-01"], ["journal", "export", "--since", "-9223372036854775808d"],
        ["resolve", String(repeating: "x", count: 100_000)], ["surahs", String(repeating: "al ", count: 30_000)],
        ["prefetch", "112", "--jobs", "99999999999999999999"], ["play", "112", "--pause", "1e308"],
        ["play", "012", "--from", "0:02", "--repeat", "2", "--pause", "0.1"],  // found by tools/fuzz: spun forever
    ]

    @Test func noRunCrashesHangsOrChangesStateWhenRefused() throws {
        let world = try World()
        var mutator = Mutator(seed: FuzzBudget.seed)
        var before = world.snapshot()
        var runs: [(arguments: [String], input: [UInt8])] = Self.regressions.map { ($0, []) }
        // Standard input: random bytes, NUL, a 10 MB line, unterminated quotes, long scripts of mutated lines.
        runs += [
            ([], Array("play 112\0; status\n".utf8)), ([], Array(repeating: UInt8(ascii: "a"), count: 10_000_000) + [10]),
            ([], Array("status \"unterminated\nseek 'also\n".utf8)), ([], [0xFF, 0xFE, 0x00, 0x0A, 0xC3, 0x28, 0x0A]),
        ]
        while runs.count < FuzzBudget.processes {
            var words = mutator.pick(Self.templates)
            let mutable = words.indices.filter { words[$0].hasPrefix("?") }
            for index in words.indices where words[index].hasPrefix("?") { words[index].removeFirst() }
            switch mutator.int(0...9) {
            case 0...5 where !mutable.isEmpty:
                let index = mutator.pick(mutable)
                words[index] = mutator.mutate(Array(words[index].utf8), corpus: words.map { Array($0.utf8) }).text
                runs.append((words, []))
            case 6:
                words.insert(mutator.pick(["--jobs", "--from", "--since", "--repeat", "--json", "--", "-c", "--help", "--pause"]), at: mutator.int(1...words.count))
                runs.append((words, []))
            default:
                // A script on standard input: mutated lines of the templates.
                let lines = (0..<mutator.int(1...6)).map { _ -> [UInt8] in
                    let line = mutator.pick(Self.templates).filter { $0 != "-c" }.map { $0.hasPrefix("?") ? String($0.dropFirst()) : $0 }
                        .map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
                    return mutator.chance(60) ? mutator.mutate(Array(line.utf8), corpus: []) : Array(line.utf8)
                }
                runs.append(([], Array(lines.joined(separator: [10])) + [10]))
            }
        }
        for (number, run) in runs.enumerated() {
            let result = try world.run(run.arguments, input: run.input)
            let shown = "run #\(number) (seed \(FuzzBudget.seed)): tartil \(run.arguments.map { $0.count > 80 ? String($0.prefix(80)) + "…" : $0 }.map(\.debugDescription).joined(separator: " "))"
                + (run.input.isEmpty ? "" : " < \(run.input.count > 200 ? "\(run.input.count) bytes" : run.input.text.debugDescription)")
            let stderr = String(decoding: result.stderr.prefix(2000), as: UTF8.self)
            guard !result.timedOut else {
                Issue.record("\(shown): still running after \(Self.deadline) s")
                before = world.snapshot()  // what the killed run left is not the next run's doing
                continue
            }
            guard !result.signaled else {
                Issue.record("\(shown): ended by signal \(result.status)\n\(stderr)")
                continue
            }
            // 3: `status` with nothing playing (a documented exit status of its own, not an error).
            guard [0, 1, 3, 64].contains(result.status) else {
                Issue.record("\(shown): exit \(result.status), not 0, 1, 3 or 64\n\(stderr)")
                continue
            }
            let after = world.snapshot()
            // One command from argv must change nothing when refused; a script may have run good commands before
            // its bad one.
            let singleCommand = run.input.isEmpty && run.arguments.first != "-c"
            if result.status == 64 && singleCommand {
                if after != before {
                    let changed = Set(after.keys).union(before.keys).filter { after[$0] != before[$0] }.sorted()
                    Issue.record("\(shown): refused (64) but changed \(changed)\n\(stderr)")
                }
                guard stderr.hasPrefix("Error: ") else {
                    Issue.record("\(shown): exit 64 without an 'Error: ' message: \(stderr)")
                    continue
                }
            }
            before = after
        }
    }
}
