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
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .int(let value): text += String(value)
        case .double(let value):
            text += value.isFinite ? String(value) : "null"
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, to: &text)
                text += ":"
                value.write(to: &text)
            }
            text += "}"
        }
    }

    private static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
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
