/// The one CSV quoting rule (RFC 4180) of every CSV tartil writes: a field holding one of these bytes is
/// written in double quotes, its quotes doubled; others as they are. Lines end with LF.
public enum CSVRule {
    /// Whether a field holding `byte` must be quoted: a comma, a double quote, CR or LF.
    @inlinable
    public static func needsQuotes(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// Whether a text field starting with `byte` is written with a single quote (`'`) before it, so that a
    /// spreadsheet shows it as text instead of running it as a formula (CSV injection; OWASP's advice): `=`,
    /// `+`, `-`, `@`, tab and CR. Numbers tartil writes as numbers (a negative offset, say) are not text fields
    /// and are written as they are.
    @inlinable
    public static func needsFormulaGuard(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "=") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "@")
            || byte == 0x09 || byte == 0x0D
    }
}
