import Glibc
import TartilCore
import TartilSQLite
import TartilSystem

/// `journal export`: the raw events as NDJSON, one JSON array or CSV, streamed from SQLite to a file descriptor without making a
/// String per value (an export of a million events is a benchmark target against `sqlite3 -json`).
///
/// Columns, in this order (stable; documented in the README): `event_id`, `device_id`, `device_seq`, `ts_ms`,
/// `kind`, `reciter`, `surah`, `ayah`, `offset_samples`, `offset_ms`, `reason`, `note`, `target_id`. Missing values are JSON
/// `null` and empty CSV fields (CSV quoting by `CSVRule`, LF line ends). Rows come in order of (time, device id, event id).
extension Journal {

    /// The CSV header line (without its line end).
    public static var exportHeader: String { columnNames.joined(separator: ",") }

    /// The exported columns' names, in order.
    public static let columnNames = JournalEvent.columnNames

    /// The export query (also what the benchmark gives `sqlite3 -json`).
    public static func exportSQL(sinceMs: Int64?) -> String { exportSQL(sinceMs: sinceMs, columns: columns) }

    static func exportSQL(sinceMs: Int64?, columns: String) -> String {
        "SELECT \(columns) FROM events\(sinceMs.map { " WHERE ts_ms >= \($0)" } ?? "") ORDER BY ts_ms, device_id, event_id"
    }

    /// Writes every event from `sinceMs` on to `descriptor`; returns how many.
    @discardableResult
    public func export(sinceMs: Int64?, format: ExportFormat, to descriptor: Int32) throws(JournalError) -> Int {
        let names = Self.columnNames.map { Array($0.utf8) }
        var output = OutputBuffer(descriptor: descriptor)
        var count = 0
        do {
            let statement = try database.connection.prepare(Self.exportSQL(sinceMs: sinceMs, columns: selectColumns))
            if format == .csv { output.append(Self.exportHeader + "\n") }
            if format == .json { output.byte(UInt8(ascii: "[")) }
            while try statement.step() {
                count += 1
                switch format {
                case .ndjson, .json:
                    if format == .json && count > 1 { output.byte(UInt8(ascii: ",")) }
                    output.byte(UInt8(ascii: "{"))
                    for (index, name) in names.enumerated() {
                        if index > 0 { output.byte(UInt8(ascii: ",")) }
                        output.byte(UInt8(ascii: "\""))
                        output.append(name)
                        output.append("\":")
                        let column = Int32(index)
                        if statement.isNull(at: column) || (index == Self.noteColumn && statement.isEmptyText(at: column)) {
                            output.append("null")
                        } else if Self.integerColumns.contains(index) {
                            output.integer(statement.integer(at: column))
                        } else {
                            statement.withTextBytes(at: column) { output.jsonString($0!) }
                        }
                    }
                    if format == .json { output.byte(UInt8(ascii: "}")) } else { output.append("}\n") }
                case .csv:
                    for index in names.indices {
                        if index > 0 { output.byte(UInt8(ascii: ",")) }
                        let column = Int32(index)
                        guard !statement.isNull(at: column), index != Self.noteColumn || !statement.isEmptyText(at: column) else { continue }
                        if Self.integerColumns.contains(index) {
                            output.integer(statement.integer(at: column))
                        } else {
                            statement.withTextBytes(at: column) { output.csvField($0!) }
                        }
                    }
                    output.byte(UInt8(ascii: "\n"))
                }
                try output.flushIfFull()
            }
            if format == .json { output.append("]\n") }
            try output.flush()
        } catch let error as SQLiteError {
            throw JournalError(error, "cannot read the journal \(path)")
        } catch {
            throw JournalError(.failed, "cannot write the export: \(error)")
        }
        return count
    }

    /// The index of `note`: an empty note (a note edit that cleared it) is exported as none, `null`.
    static let noteColumn = 11

    /// Indexes of `device_seq`, `ts_ms`, `surah`, `ayah`, `offset_samples`, `offset_ms`.
    static let integerColumns: Set<Int> = [2, 3, 6, 7, 8, 9]
}

/// Bytes on their way to a file descriptor, written in 256 KiB pieces.
struct OutputBuffer {
    let descriptor: Int32
    var bytes: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
        bytes.reserveCapacity(Self.limit + 4096)
    }

    static let limit = 256 << 10

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
    mutating func append(_ text: [UInt8]) { bytes.append(contentsOf: text) }

    mutating func integer(_ value: Int64) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped; other UTF-8 as is.
    mutating func jsonString(_ text: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var plainStart = 0
        for index in text.indices {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[plainStart..<index]))
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            case UInt8(ascii: "\r"): append("\\r")
            case UInt8(ascii: "\t"): append("\\t")
            default:
                let hex = Array("0123456789abcdef".utf8)
                append("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xf)])
            }
            plainStart = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[plainStart...]))
        bytes.append(UInt8(ascii: "\""))
    }

    /// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a `'` before a field that
    /// starts like a spreadsheet formula (`CSVRule.needsFormulaGuard`).
    mutating func csvField(_ text: UnsafeBufferPointer<UInt8>) {
        let guarded = text.first.map(CSVRule.needsFormulaGuard) == true
        guard text.contains(where: CSVRule.needsQuotes) else {
            if guarded { bytes.append(UInt8(ascii: "'")) }
            bytes.append(contentsOf: text)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        if guarded { bytes.append(UInt8(ascii: "'")) }
        for byte in text {
            if byte == UInt8(ascii: "\"") { bytes.append(byte) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func flushIfFull() throws {
        if bytes.count >= Self.limit { try flush() }
    }

    mutating func flush() throws {
        try bytes.withUnsafeBytes { buffer in try SystemCall.writeAll(descriptor, buffer) }
        bytes.removeAll(keepingCapacity: true)
    }
}
