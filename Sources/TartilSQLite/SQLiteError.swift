import CSQLite

/// An SQLite result code, with the C names as statics so `catch` can match them.
/// The corresponding C constants are `SQLITE_BUSY`, `SQLITE_CONSTRAINT`, … (https://sqlite.org/rescode.html).
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (extended codes carry details in their upper bits).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readonly = ResultCode(rawValue: SQLITE_READONLY)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    /// A statement was interrupted (`sqlite3_interrupt`, or a progress handler that asked to stop).
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    /// Matches an error's code by its primary code, so `case ResultCode.constraint` catches every constraint.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.code.primary == pattern.primary
    }

    public var description: String { String(cString: sqlite3_errstr(rawValue)) }
}

/// An SQLite failure: the result code, SQLite's own message (`sqlite3_errmsg`) and the SQL that failed.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: ResultCode
    public let message: String
    public let sql: String?

    public init(code: ResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}
