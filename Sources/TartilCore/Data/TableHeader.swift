/// The header comments both table formats share, read one line at a time: `# tartil-table: N` on the first
/// line, then `# reciter: ID` (before the first row) and `# source: text`; other comments are ignored.
struct TableHeader {
    var version: Int?
    var reciter: ReciterID?
    var source: String?

    /// Reads the comment `line` (whole, its `#` first) of a table in format `formatVersion`. `wrongVersion` says
    /// why a first line naming another version (given as written) is refused; `fail` makes the error for this
    /// line.
    mutating func read(
        comment line: String, isFirstLine: Bool, formatVersion: Int, wrongVersion: (String) -> String, fail: (String) -> TartilError
    ) throws(TartilError) {
        let comment = line.trimmedWhitespace.dropFirst().trimmedWhitespace
        if isFirstLine {
            guard comment.hasPrefix("tartil-table:") else { throw fail("the first line must be '# tartil-table: \(formatVersion)'") }
            let value = comment.dropFirst("tartil-table:".count).trimmedWhitespace
            guard NumberText.whole(value, in: 0...999_999) == formatVersion else { throw fail(wrongVersion(value)) }
            version = formatVersion
        } else if comment.hasPrefix("reciter:") {
            let value = comment.dropFirst("reciter:".count).trimmedWhitespace
            if let problem = ReciterID.problem(with: value) { throw fail("reciter: '\(value)' is not a valid id: \(problem)") }
            reciter = try ReciterID(value)
        } else if comment.hasPrefix("source:") {
            source = comment.dropFirst("source:".count).trimmedWhitespace
        }
    }

    /// Before a row: the first line was the version and the reciter was named.
    func checkBeforeRow(formatVersion: Int, fail: (String) -> TartilError) throws(TartilError) {
        guard version != nil else { throw fail("the first line must be '# tartil-table: \(formatVersion)'") }
        guard reciter != nil else { throw fail("the '# reciter: ID' header must come before the first row") }
    }

    /// At the end: the reciter named (and, when `expected` is given, that one). `file` names the table.
    func checkedReciter(file: String, formatVersion: Int, expected: ReciterID?) throws(TartilError) -> ReciterID {
        guard version != nil else { throw TartilError(.invalidData, "\(file):1: the first line must be '# tartil-table: \(formatVersion)'") }
        guard let reciter else { throw TartilError(.invalidData, "\(file): the '# reciter: ID' header is missing") }
        if let expected, expected != reciter {
            throw TartilError(.invalidData, "\(file): the table is for reciter '\(reciter)', not '\(expected)'")
        }
        return reciter
    }
}
