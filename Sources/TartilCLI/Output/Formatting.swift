import TartilSession
import TartilCore
import Glibc

/// Text formatting shared by the commands' human output.
enum Formatting {
    /// `1:02:03.456`, `2:03.456` or `3.456 s`.
    static func duration(seconds: Double) -> String {
        // Journals merged from elsewhere may hold any number: never trap on one (a billion seconds is 31 years).
        let seconds = seconds.isFinite ? min(max(seconds, -1e9), 1e9) : 0
        let totalMilliseconds = Int((seconds * 1000).rounded())
        let milliseconds = totalMilliseconds % 1000
        let totalSeconds = totalMilliseconds / 1000
        let (hours, minutes, secs) = (totalSeconds / 3600, totalSeconds / 60 % 60, totalSeconds % 60)
        let fraction = pad(milliseconds, 3)
        if hours > 0 { return "\(hours):\(pad(minutes, 2)):\(pad(secs, 2)).\(fraction)" }
        if minutes > 0 { return "\(minutes):\(pad(secs, 2)).\(fraction)" }
        return "\(secs).\(fraction) s"
    }

    /// `2026-11-29 22:30:05` in local time, for people (exports keep milliseconds since 1970).
    static func timestamp(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "\(parts.tm_year + 1900)-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2)) "
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(character)
        }
        return value < 0 ? "-" + result : result
    }

    /// `8.3 MiB`.
    static func bytes(_ value: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        if unit == 0 { return "\(value) B" }
        let tenths = Int((amount * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Left-aligns `text` in `width` columns (counting characters).
    static func left(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// Right-aligns `text` in `width` columns.
    static func right(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `table(rows, rightAligned:)` narrowed to `width` columns (a terminal's; nil: not a terminal, nothing
    /// dropped): the columns in `dropping` go, in that order (the least needed first), until every line fits or
    /// none is left to drop.
    static func table(_ rows: [[String]], rightAligned: Set<Int> = [], width: Int?, dropping: [Int]) -> [String] {
        var kept = Array(0..<(rows.map(\.count).max() ?? 0))
        var droppable = dropping[...]
        while true {
            let lines = table(rows.map { row in kept.filter { $0 < row.count }.map { row[$0] } }, rightAligned: Set(kept.indices.filter { rightAligned.contains(kept[$0]) }))
            guard let width, lines.contains(where: { TerminalText.columns($0) > width }), let next = droppable.popFirst() else { return lines }
            kept.removeAll { $0 == next }
        }
    }

    /// Labels and values in two columns (`  cache    /root/.cache/tartil`), as `table` lays them out; on a
    /// terminal (`width`) each value is wrapped under its first line, or, where fewer than 20 columns would be
    /// left for it, goes under its label.
    static func labelled(_ rows: [(label: String, value: String)], width: Int?) -> [String] {
        guard let width else { return table(rows.map { [$0.label, $0.value] }) }
        let column = (rows.map { TerminalText.columns($0.label) }.max() ?? 0) + 2
        let stacked = width - column < 20
        return rows.flatMap { label, value -> [String] in
            let indent = stacked ? TerminalText.columns(label) - TerminalText.columns(label.trimmedWhitespace) + 2 : column
            var lines = TextWrap.lines(value, width: width, indent: indent)
            if stacked { return [label] + lines }
            if lines.isEmpty { lines = [""] }
            // A word longer than the value's column starts further left (TextWrap keeps it whole): the label then
            // gets a line of its own.
            let first = left(label, column) + lines[0].drop(while: { $0 == " " })
            if TerminalText.columns(first) > width { return [label] + lines }
            lines[0] = first
            return lines
        }
    }

    /// Rows laid out in columns two spaces apart; `rightAligned` holds the indexes of numeric columns.
    static func table(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        guard let columnCount = rows.map(\.count).max() else { return [] }
        let widths = (0..<columnCount).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                if column == row.count - 1 && !rightAligned.contains(column) { return cell }
                return rightAligned.contains(column) ? right(cell, widths[column]) : left(cell, widths[column])
            }.joined(separator: "  ")
        }
    }
}
