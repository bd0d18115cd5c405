import TartilSession
import TartilCore

/// How a data command prints: `--format text|json|ndjson|csv`. `--json` is `--format json`.
///
/// The one rule for every command (README, "Scripts and JSON"):
/// - a **listing** (rows of one kind: `positions`, `history`, `bookmarks`, `surahs`, `reciters`, `resolve`,
///   `cache ls`, `cache du`, `journal export`) is one JSON array of objects with `json`, one object per line
///   with `ndjson`, a header row and one row per object with `csv` (the header even when there are no rows);
/// - a **report** about one thing (`status`, `journal stats`, `cache verify`, `bookmark`, …) is one object with
///   `json` and `ndjson` alike, and a header and one row with `csv`;
/// - in CSV (RFC 4180, LF line ends), a field holding a comma, a quote, CR or LF is quoted, quotes doubled; a
///   missing value is an empty field; an array or object is its compact JSON text in one field.
enum OutputFormat: String, CaseIterable, Sendable {
    case text, json, ndjson, csv

    /// The `--format` option of a command printing one of `allowed` (`default` without one).
    static func option(_ allowed: [OutputFormat] = allCases, default: OutputFormat = .text) -> CommandSpec.Option {
        .init(
            names: ["--format"], valueName: allowed.dropFirst().reduce(allowed.first?.rawValue ?? "") { $0 + "|" + $1.rawValue },
            help: "The output format (default \(`default`.rawValue)); README: Scripts and JSON.")
    }

    /// The format the command line asks for: `--format`, `--json`, or an old spelling (`--csv`, `--ndjson`); a
    /// value outside `allowed`, or two different choices, is a usage error.
    static func chosen(
        _ invocation: Invocation, _ context: Context, allowed: [OutputFormat] = allCases, default: OutputFormat = .text
    ) throws(TartilError) -> OutputFormat {
        var names: String { allowed.map(\.rawValue).joined(separator: ", ") }  // for messages only
        var choices: [(String, OutputFormat)] = []
        if let text = invocation.value("--format") {
            guard let format = OutputFormat(rawValue: text), allowed.contains(format) else {
                throw Suggestion.unknownValue(text, for: "--format", among: allowed.map(\.rawValue))
            }
            choices.append(("--format \(text)", format))
        }
        if context.settings.json { choices.append(("--json", .json)) }
        if invocation.flag("--csv") { choices.append(("--csv", .csv)) }
        if invocation.flag("--ndjson") { choices.append(("--ndjson", .ndjson)) }
        guard choices.allSatisfy({ $0.1 == choices[0].1 }) else {
            throw .usage("choose one output format, not \(choices.map(\.0).joined(separator: " and ")) (--format takes \(names))")
        }
        guard let format = choices.first?.1 else { return `default` }
        guard allowed.contains(format) else { throw .usage("\(choices[0].0): \(invocation.command.name) prints \(names)") }
        return format
    }

    /// Whether a command line asks for JSON on standard output (so that a failure prints its error as JSON too).
    /// Words after `--` are arguments, not options.
    static func asksForJSON(_ words: [String]) -> Bool {
        for (index, word) in words.enumerated() {
            if word == "--" { return false }
            if word == "--json" || word == "--ndjson" || word == "--format=json" || word == "--format=ndjson" { return true }
            if word == "--format", index + 1 < words.count, ["json", "ndjson"].contains(words[index + 1]) { return true }
        }
        return false
    }
}


/// A listing: rows of one kind under fixed column names.
struct Listing {
    /// The field names every row has, in order (the CSV header).
    let columns: [String]
    let rows: [Fields]

    init(columns: [String], rows: [Fields]) {
        assert(rows.allSatisfy { $0.map(\.0) == columns }, "every row has the listing's columns")
        self.columns = columns
        self.rows = rows
    }

}

extension Console {
    /// Prints `listing` as `format`; `text` prints it for people.
    func print(_ listing: Listing, as format: OutputFormat, text: () -> Void) {
        switch format {
        case .text: text()
        case .json: json(.array(listing.rows.map(JSONValue.object)))
        case .ndjson:
            var lines = ""
            for row in listing.rows { lines += JSONValue.object(row).rendered() + "\n" }
            if !lines.isEmpty { writeOut(lines) }
        case .csv:
            var lines = CSV.row(listing.columns.map(JSONValue.string)) + "\n"
            for row in listing.rows { lines += CSV.row(row.map(\.1)) + "\n" }
            writeOut(lines)
        }
    }

    /// Prints the report `fields` as `format`; `text` prints it for people.
    func print(report fields: Fields, as format: OutputFormat, text: () -> Void) {
        switch format {
        case .text: text()
        case .json, .ndjson: json(.object(fields))
        case .csv: writeOut(CSV.row(fields.map { .string($0.0) }) + "\n" + CSV.row(fields.map(\.1)) + "\n")
        }
    }
}

/// CSV as tartil writes it (RFC 4180 quoting, LF line ends).
enum CSV {
    /// One line's fields (without the line end).
    static func row(_ values: [JSONValue]) -> String { values.map(field).joined(separator: ",") }

    /// One field: strings as they are (quoted when needed), numbers and booleans as in JSON, null empty, arrays
    /// and objects as their compact JSON.
    static func field(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return quoted(text)
        case .array, .object: return quoted(value.rendered())
        case .bool, .int, .double: return value.rendered()
        }
    }

    /// `text`, in quotes with its quotes doubled when it holds a comma, a quote, CR or LF; with a `'` before it
    /// when it starts like a spreadsheet formula (`CSVRule.needsFormulaGuard`).
    static func quoted(_ text: String) -> String {
        let guarded = text.utf8.first.map(CSVRule.needsFormulaGuard) == true ? "'" + text : text
        guard guarded.utf8.contains(where: CSVRule.needsQuotes) else { return guarded }
        return "\"" + guarded.replacingEvery("\"", with: "\"\"") + "\""
    }
}
