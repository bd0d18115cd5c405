/// An expectation table of a state machine's table test, as text: a header row of place (state) names, then a
/// row per input, its name first and one cell per place.
enum ExpectationTable {
    static func parse(_ table: String) -> (columns: [String], rows: [String: [String]]) {
        var lines = table.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let columns = Array(lines.removeFirst().dropFirst())
        var rows: [String: [String]] = [:]
        for line in lines { rows[line[0]] = Array(line.dropFirst()) }
        return (columns, rows)
    }
}
