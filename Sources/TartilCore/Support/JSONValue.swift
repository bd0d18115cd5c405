/// A JSON value with keys kept in the order they were written, so `--json` output reads like the text output.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered() == rhs.rendered() }

    /// Compact JSON on one line (no trailing newline).
    public func rendered() -> String {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Written as UTF-8 bytes, turned into a string once: appending a whole string's bytes is one copy, where
    /// appending to a `String` piece by piece (or scalar by scalar) checks and grows it at every step.
    private func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes += "null".utf8
        case .bool(let value): bytes += (value ? "true" : "false").utf8
        case .int(let value): bytes += String(value).utf8
        case .double(let value): bytes += (value.isFinite ? String(value) : "null").utf8
        case .string(let value): Self.writeString(value, to: &bytes)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string: `"`, `\`, newline, return and tab escaped by name, other control characters as `\u00XX`;
    /// every other byte of the UTF-8 as it is (only ASCII bytes are ever escaped, and no byte of a multi-byte
    /// sequence is ASCII).
    private static func writeString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case UInt8(ascii: "\n"): bytes += #"\n"#.utf8
            case UInt8(ascii: "\r"): bytes += #"\r"#.utf8
            case UInt8(ascii: "\t"): bytes += #"\t"#.utf8
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                bytes += #"\u00"#.utf8
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// `.string(value)` or `.null`.
    public static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// `.int(value)` or `.null`.
    public static func int(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
    public static func bool(_ value: Bool?) -> JSONValue { value.map(JSONValue.bool) ?? .null }
}

/// One record's fields, in the order they are printed.
public typealias Fields = [(String, JSONValue)]
