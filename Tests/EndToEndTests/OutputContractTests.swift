import Foundation
import TestSupport
import Testing

/// The output contract (README, "Scripts and JSON"): every data command's output in each format against a golden
/// file, and every command's JSON checked against the field naming rules.
///
/// Goldens are in Tests/EndToEndTests/Golden/output; after an intended change run the tests with
/// TARTIL_UPDATE_GOLDEN=1 to rewrite them, and review the diff. Inputs are fixed: a journal whose events are
/// written by the test (fixed times, ids and device id), the fixture reciter's cache and table, and TZ=UTC.
@Suite(.serialized) struct OutputContractTests {
    static let goldenDirectory = TestPaths.repository + "/Tests/EndToEndTests/Golden/output"

    /// A private home with the fixture reciter (table built, files imported into the cache) and the fixed journal.
    final class Place: Sendable {
        let home: String
        let journal: String
        let mirrors: String

        init() throws {
            home = TestPaths.makeTemporaryDirectory()
            journal = home + "/data/tartil/journal.sqlite"
            mirrors = home + "/mirrors.json"
            try #"{"version": 1, "reciters": [{"id": "fixture", "name": "Fixture", "style": "murattal", "mirrors": [{"name": "nowhere", "url": "http://127.0.0.1:9/{surah3}{ayah3}.mp3"}]}]}"#
                .write(toFile: mirrors, atomically: true, encoding: .utf8)
            let build = try run(["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "--source", "tools/make-fixtures"])
            guard build.status == 0 else { throw Failure("table build: \(build.stderr)") }
            let imported = try run(["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", "fixture"])
            guard imported.status == 0 else { throw Failure("cache import: \(imported.stderr)") }
            try Self.makeJournal(at: journal, seedHome: home)
        }

        struct Failure: Error, CustomStringConvertible {
            let description: String
            init(_ description: String) { self.description = description }
        }

        /// Runs tartil here, in UTC, with the fixture mirrors.
        func run(_ arguments: [String], input: String? = nil) throws -> RunResult {
            try runTartil(arguments, input: input, environment: ["TZ": "UTC", "TARTIL_MIRRORS": mirrors], home: home)
        }

        /// The output with this place's folder written as `$HOME`.
        func normalized(_ text: String) -> String { text.replacingOccurrences(of: home, with: "$HOME") }

        /// A journal with the schema tartil makes (taken from a journal it made) and fixed events only: two
        /// devices, a session, positions, bookmarks (one with a comma and quotes in its note, one removed, one
        /// with an edited note).
        static func makeJournal(at path: String, seedHome: String) throws {
            let seed = seedHome + "/seed.sqlite"
            let made = try runTartil(["bookmark", "1:1", "--journal", seed], home: seedHome)
            guard made.status == 0 else { throw Failure("seed journal: \(made.stderr)") }
            let schema = try shell("sqlite3 '\(seed)' .dump").split(separator: "\n", omittingEmptySubsequences: false).filter {
                !$0.hasPrefix("INSERT INTO events") && !$0.hasPrefix("INSERT INTO sqlite_sequence") && !$0.hasPrefix("DELETE FROM sqlite_sequence")
                    && !$0.hasPrefix("INSERT INTO meta") && $0 != "COMMIT;"
            }
            let base: Int64 = 1_796_000_000_000  // 2026-11-30 (UTC)
            let a = "device-a"
            let b = "device-b"
            let rows = [
                "('event-01', '\(a)', 1, \(base), 'session-start', 'fixture', NULL, NULL, NULL, NULL, NULL, 'play 112', NULL)",
                "('event-02', '\(a)', 2, \(base + 1_000), 'position', 'fixture', 112, 1, 0, 0, 'ayah-start', NULL, NULL)",
                "('event-03', '\(a)', 3, \(base + 4_500), 'position', 'fixture', 112, 2, 33075, 1500, 'pause', NULL, NULL)",
                "('event-04', '\(a)', 4, \(base + 5_000), 'session-end', NULL, NULL, NULL, NULL, NULL, NULL, 'stopped', NULL)",
                "('event-05', '\(a)', 5, \(base + 60_000), 'bookmark', 'fixture', 112, 3, NULL, NULL, NULL, 'kursi, \"the throne\"', NULL)",
                "('event-06', '\(b)', 1, \(base + 120_000), 'position', 'fixture', 1, 4, 22050, 1000, 'seek', NULL, NULL)",
                "('event-07', '\(b)', 2, \(base + 180_000), 'bookmark', NULL, 1, 2, NULL, NULL, NULL, NULL, NULL)",
                "('event-08', '\(b)', 3, \(base + 181_000), 'bookmark-note', NULL, 1, 2, NULL, NULL, NULL, 'edited', 'event-07')",
                "('event-09', '\(b)', 4, \(base + 240_000), 'bookmark', NULL, 36, 12, NULL, NULL, NULL, 'gone soon', NULL)",
                "('event-10', '\(a)', 6, \(base + 300_000), 'bookmark-removed', NULL, 36, 12, NULL, NULL, NULL, NULL, 'event-09')",
            ]
            let sql = schema.joined(separator: "\n") + "\nINSERT INTO meta VALUES('device_id', '\(a)');\n"
                + "INSERT INTO events(event_id, device_id, device_seq, ts_ms, kind, reciter, surah, ayah, offset_samples, offset_ms, reason, note, target_id) VALUES\n"
                + rows.joined(separator: ",\n") + ";\nCOMMIT;\nPRAGMA journal_mode=WAL;\n"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try sql.write(toFile: seedHome + "/journal.sql", atomically: true, encoding: .utf8)
            _ = try shell("sqlite3 '\(path)' < '\(seedHome)/journal.sql' > /dev/null")
        }
    }

    static let place: Place = try! Place()

    // MARK: - Goldens

    /// Every data command whose output is fixed by its inputs, with the formats it takes.
    static let goldenCommands: [(name: String, arguments: [String], formats: [String])] = {
        let all = ["text", "json", "ndjson", "csv"]
        return [
            ("positions", ["positions"], all),
            ("history", ["history"], all),
            ("bookmarks", ["bookmarks"], all),
            ("journal-export", ["journal", "export"], ["ndjson", "json", "csv"]),
            ("journal-stats", ["journal", "stats"], all),
            ("journal-check", ["journal", "check"], all),
            ("surahs", ["surahs", "112-114"], all),
            ("reciters", ["reciters"], all),
            ("resolve", ["resolve", "112:1-2", "--reciter", "fixture"], all),
            ("cache-ls", ["cache", "ls"], all),
            ("cache-du", ["cache", "du"], all),
            ("cache-verify", ["cache", "verify"], all),
        ]
    }()

    static var goldenCases: [String] {
        goldenCommands.flatMap { command in command.formats.map { "\(command.name).\($0)" } }
    }

    @Test(arguments: goldenCases)
    func golden(_ name: String) throws {
        let parts = name.split(separator: ".").map(String.init)
        let command = try #require(Self.goldenCommands.first { $0.name == parts[0] })
        let result = try Self.place.run(command.arguments + ["--format", parts[1]])
        #expect(result.status == 0, "\(name): \(result.stderr)")
        let text = Self.place.normalized(result.stdout)
        let path = "\(Self.goldenDirectory)/\(name)"
        if ProcessInfo.processInfo.environment["TARTIL_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(atPath: Self.goldenDirectory, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == expected, "\(name) differs from \(path); TARTIL_UPDATE_GOLDEN=1 rewrites it")
    }

    /// The same rows in every format: json and ndjson hold the same objects, csv the same values under the same
    /// header, and json's keys are the CSV header.
    @Test(arguments: goldenCommands.filter { $0.formats.contains("csv") }.map(\.name))
    func formatsAgree(_ name: String) throws {
        let command = try #require(Self.goldenCommands.first { $0.name == name })
        let json = try JSONSerialization.jsonObject(with: Data(try Self.place.run(command.arguments + ["--json"]).stdout.utf8))
        let ndjson = try Self.place.run(command.arguments + ["--format", "ndjson"]).stdout.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8))
        }
        let csv = try Self.place.run(command.arguments + ["--format", "csv"]).stdout
        let report = json as? [String: Any]
        let rows = try (json as? [[String: Any]]) ?? [#require(report)]
        #expect(ndjson.count == rows.count)
        func canonical(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
        }
        for (left, right) in zip(rows, ndjson) { #expect(try canonical(left) == canonical(right)) }
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "" && lines.count == rows.count + 2, "\(csv)")
        let header = lines[0].split(separator: ",").map(String.init)
        for row in rows { #expect(Set(row.keys) == Set(header)) }
    }

    @Test func badFormatsAreUsageErrorsNamingTheAllowedOnes() throws {
        let cases: [([String], String)] = [
            (["positions", "--format", "xml"], "--format takes text, json, ndjson or csv, not 'xml'"),
            (["journal", "export", "--format", "text"], "--format takes ndjson, json or csv, not 'text'"),
            (["prefetch", "112", "--reciter", "fixture", "--format", "csv"], "--format takes text, json or ndjson, not 'csv'"),
            (["positions", "--json", "--format", "csv"], "choose one output format"),
            (["positions", "--csv", "--ndjson"], "choose one output format"),
        ]
        for (arguments, message) in cases {
            let result = try Self.place.run(arguments)
            #expect(result.status == 64 && result.stderr.hasPrefix("Error: \(message)"), "\(arguments): \(result.stderr)")
        }
        // The older spellings are the same as --format.
        for (old, new) in [("--csv", "csv"), ("--ndjson", "ndjson")] {
            let before = try Self.place.run(["positions", old]).stdout
            let after = try Self.place.run(["positions", "--format", new]).stdout
            #expect(before == after && !before.isEmpty)
        }
    }

    // MARK: - Field naming rules

    /// Every command that prints JSON, run end to end; each line of standard output that is JSON is checked.
    static let jsonCommands: [[String]] = [
        ["version", "--json"], ["help", "surahs", "--json"], ["surahs", "--json"], ["reciters", "--json"],
        ["resolve", "112", "--reciter", "fixture", "--json"],
        ["positions", "--json"], ["positions", "--format", "ndjson"], ["history", "--json"], ["bookmarks", "--json"],
        ["bookmark", "112:4", "--note", "n", "--reciter", "fixture", "--json"], ["bookmark", "note", "event-05", "x", "--json"],
        ["bookmark", "rm", "event-07", "--json"],
        ["journal", "export", "--format", "json"], ["journal", "export"], ["journal", "stats", "--json"], ["journal", "check", "--json"],
        ["journal", "backup", "BACKUP", "--json"], ["journal", "merge", "BACKUP", "--json"],
        ["cache", "ls", "--json"], ["cache", "du", "--json"], ["cache", "verify", "--json"],
        ["cache", "pin", "112:1", "--reciter", "fixture", "--json"], ["cache", "unpin", "112:1", "--reciter", "fixture", "--json"],
        ["cache", "import", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "--json"],
        ["prefetch", "112", "2:1", "--reciter", "fixture", "--retries", "0", "--json"],
        ["render", "112:1", "--reciter", "fixture", "-o", "RENDER", "--json"],
        ["table", "build", TestPaths.fixtures + "/fixture", "--reciter", "fixture", "-o", "TABLE", "--json"],
        ["-c", "events on --json; play 112:1-2 --reciter fixture --output null --pause 0.25 --json; wait --json; status --json; pause --json"],
        ["play", "112:1", "--reciter", "fixture", "--output", "null", "--events"],
        ["play", "112:1-3", "--reciter", "fixture", "--output", "null", "--events", "--stepped", "--pause", "0.5x", "--repeat-range", "2",
         "--cycle-pause", "0.1", "--json"],
        ["-c", "play 112 --reciter fixture --output silent --loop 112:1-112:2 --stop-after 20m --json; status --json; stop --json"],
        ["nosuch", "--json"],
    ]

    @Test func everyCommandsJSONFollowsTheNamingRules() throws {
        let place = try Place()  // its own: these commands change the journal and the cache
        defer { try? FileManager.default.removeItem(atPath: place.home) }
        let scratch = place.home
        var problems: [String] = []
        var seenKeys: Set<String> = []
        for command in Self.jsonCommands {
            let arguments = command.map {
                $0 == "BACKUP" ? scratch + "/backup.sqlite" : $0 == "RENDER" ? scratch + "/out.wav" : $0 == "TABLE" ? scratch + "/t.tsv" : $0
            }
            let result = try place.run(arguments)
            let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("{") || $0.hasPrefix("[") }
            if lines.isEmpty { problems.append("\(command): no JSON (\(result.stderr))") }
            for line in lines {
                // A pause's `multiple` and the `speed` are the fractional numbers (factors, not times).
                let withoutFactors = String(line).replacing(/"(multiple|speed)":[0-9.eE+-]+/, with: "\"factor\":0")
                problems += JSONFieldRules.fractionalNumbers(in: withoutFactors).map { "\(command): a fractional number \($0)" }
                let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
                JSONFieldRules.walk(value, path: "") { key, value, path in
                    seenKeys.insert(key)
                    if let problem = JSONFieldRules.problem(key: key, value: value) { problems.append("\(command) \(path): \(problem)") }
                } strings: { text, path in
                    if text.wholeMatch(of: /[0-9]{1,3}:[0-9]{1,3}/) != nil {
                        problems.append("\(command) \(path): '\(text)' is an ayah as text (use surah and ayah)")
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        // The walk saw the shared names (so the commands above did print their data).
        for name in [
            "surah", "ayah", "reciter", "offset_ms", "offset_samples", "ts_ms", "duration_ms", "bytes", "duration_samples", "event", "multiple",
            "review_for", "loop", "start_ms",
        ] {
            #expect(seenKeys.contains(name), "no command printed \(name)")
        }
    }
}

extension OutputContractTests {
    /// The rules catch the shapes the output had before the contract.
    @Test func theRulesCatchTheOldShapes() {
        let old: [(String, Any)] = [
            ("seconds", 0.034), ("bookmark", "36:12"), ("session-start", 1), ("time", "2026-11-29 22:30:05"), ("frames", 5),
            ("milliseconds", 1500), ("id", "alafasy-128"), ("number", 36), ("samples", 84719),
        ]
        for (key, value) in old { #expect(JSONFieldRules.problem(key: key, value: value) != nil, "\(key)") }
        for (key, value) in [("surah", "36") as (String, Any), ("offset_ms", "5"), ("first_ms_ts", 1), ("sample_count", 3), ("reciter", [1])] {
            #expect(JSONFieldRules.problem(key: key, value: value) != nil, "\(key)")
        }
        #expect(JSONFieldRules.fractionalNumbers(in: #"{"seconds":0.034,"a":[1,2e3,-4],"s":"1.5","t":true}"#) == ["0.034", "2e3"])
        #expect(JSONFieldRules.problem(key: "offset_samples", value: 12) == nil && JSONFieldRules.problem(key: "wal_bytes", value: 0) == nil)
    }
}

/// The naming rules every JSON key and value of tartil's output follows (README, "Scripts and JSON").
enum JSONFieldRules {
    /// Words that must not name a field: a time is `…_ms` (whole milliseconds), a size `bytes`, a count of
    /// samples `…_samples`, an ayah `surah` and `ayah`, an id says whose (`event_id`, `device_id`, `reciter`).
    static let forbiddenWords: Set<String> = [
        "seconds", "secs", "milliseconds", "millis", "time", "timestamp", "ts", "frames", "size", "length", "ref", "id", "offset",
        "duration", "place", "bookmark", "samples", "number", "num",
    ]

    /// What is wrong with one key and its value, or nil.
    static func problem(key: String, value: Any) -> String? {
        guard key.wholeMatch(of: /[a-z][a-z0-9]*(_[a-z0-9]+)*/) != nil else { return "'\(key)' is not snake_case" }
        if forbiddenWords.contains(key) { return "'\(key)' is not one of the shared names (see the README's field rules)" }
        let words = key.split(separator: "_").map(String.init)
        // (Fractions are found in the text by `fractionalNumbers`.)
        let isNumber = value is NSNumber && !(value is String)
        let isNull = value is NSNull
        if words.last == "ms" || words.last == "samples" || words.last == "bytes" || key == "surah" || key == "ayah" {
            if !(isNumber || isNull) { return "'\(key)' must be a whole number (or null), not \(value)" }
        }
        if words.contains("ms") && words.last != "ms" { return "'\(key)': _ms ends the name" }
        if words.contains("sample") && key != "sample_rate" { return "'\(key)': a sample count ends in _samples; only sample_rate names a rate" }
        if words.contains("bytes") && words.last != "bytes" { return "'\(key)': a size ends in bytes" }
        if key == "reciter", !(value is String || isNull) { return "reciter is the reciter's id (a string)" }
        return nil
    }

    /// Calls `key` for every member of every object in `value` and `strings` for every string.
    static func walk(_ value: Any, path: String, key: (String, Any, String) -> Void, strings: (String, String) -> Void) {
        if let object = value as? [String: Any] {
            for (name, member) in object.sorted(by: { $0.key < $1.key }) {
                key(name, member, path + "." + name)
                walk(member, path: path + "." + name, key: key, strings: strings)
            }
        } else if let array = value as? [Any] {
            for (index, element) in array.enumerated() { walk(element, path: path + "[\(index)]", key: key, strings: strings) }
        } else if let text = value as? String {
            strings(text, path)
        }
    }

    /// The numbers in a JSON text written with a fraction or an exponent (none may be: times are whole ms).
    static func fractionalNumbers(in text: String) -> [String] {
        var found: [String] = []
        var inString = false
        var escaped = false
        var number = ""
        for character in text {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            if character == "\"" {
                inString = true
            } else if number.isEmpty ? (character.isNumber || character == "-") : (character.isNumber || "-+.eE".contains(character)) {
                number.append(character)
                continue
            }
            if number.contains(where: { ".eE".contains($0) }) { found.append(number) }
            number = ""
        }
        return found
    }
}
