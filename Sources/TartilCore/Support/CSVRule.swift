/// The one CSV quoting rule (RFC 4180) of every CSV tartil writes: a field holding one of these bytes is
/// written in double quotes, its quotes doubled; others as they are. Lines end with LF.
public enum CSVRule {
    /// Whether a field holding `byte` must be quoted: a comma, a double quote, CR or LF.
    @inlinable
    public static func needsQuotes(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }
}
