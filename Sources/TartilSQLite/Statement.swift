import CSQLite
import Glibc

/// A prepared statement, finalized when released. Bind with `bind`, advance with `step`, read columns by index.
/// The corresponding C functions are `sqlite3_prepare_v2`, `sqlite3_bind_*`, `sqlite3_step`, `sqlite3_finalize`.
public final class Statement {
    private let handle: OpaquePointer
    private let connection: Connection
    public let sql: String

    init(connection: Connection, sql: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v2(connection.handle, sql, -1, &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw SQLiteError(
                code: ResultCode(rawValue: result), message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql)
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// A value to bind to a parameter.
    public enum Value: Sendable, Hashable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
    }

    /// Resets the statement and binds `values` to parameters 1, 2, ….
    public func bind(_ values: [Value]) throws(SQLiteError) {
        sqlite3_reset(handle)
        try connection.check(sqlite3_clear_bindings(handle), sql: sql)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                result = text.withCString { csqlite_bind_text_transient(handle, index, $0, Int32(strlen($0))) }
            }
            try connection.check(result, sql: sql)
        }
    }

    /// Advances to the next row: true when a row is available, false when done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw SQLiteError(
                code: ResultCode(rawValue: result), message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql)
        }
    }

    /// Column `index` of the current row as text (nil for NULL).
    public func text(at index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        return String(cString: pointer)
    }

    /// Column `index` of the current row as an integer (0 for NULL).
    public func integer(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` of the current row as an integer, or nil for NULL.
    public func optionalInteger(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    /// True when column `index` of the current row is NULL.
    public func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// True when the column holds text of no bytes (`''`).
    public func isEmptyText(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_TEXT && sqlite3_column_bytes(handle, index) == 0
    }

    /// Column `index`'s text as UTF-8 bytes, valid until the next `step` (nil for NULL): for writers that copy
    /// rows out without making Strings.
    public func withTextBytes<Result>(at index: Int32, _ body: (UnsafeBufferPointer<UInt8>?) throws -> Result) rethrows -> Result {
        guard let pointer = sqlite3_column_text(handle, index) else { return try body(nil) }
        let count = Int(sqlite3_column_bytes(handle, index))
        return try body(UnsafeBufferPointer(start: pointer, count: count))
    }
}

@available(*, unavailable) extension Statement: Sendable {}
