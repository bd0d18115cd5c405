/// A parsed JSON value. tartil reads its JSON files (`mirrors.json`) with this small parser rather than
/// Foundation's, for two reasons: syntax errors name the line and column, and it does not go through
/// CoreFoundation (see `Path`).
public enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object(Object)

    /// The largest whole number `integer` reads (below 10^15: every one is exact as a Double).
    public static let largestInteger = 999_999_999_999_999

    /// A whole number (not a boolean, not a fraction) of at most 15 digits, through the bounded parser
    /// (`NumberText.whole(_:in:)`): `1e308` or `2.5` is nil, never a trap.
    public var integer: Int? { integer(in: -Self.largestInteger...Self.largestInteger) }

    /// A whole number in `range`, or nil (another kind of value, a fraction, or a number outside `range`).
    public func integer(in range: ClosedRange<Int>) -> Int? {
        guard case .number(let value) = self else { return nil }
        return NumberText.whole(value, in: range)
    }

    /// A number in `range`, or nil (another kind of value, or a number outside `range`).
    public func number(in range: ClosedRange<Double>) -> Double? {
        guard case .number(let value) = self else { return nil }
        return NumberText.decimal(value, in: range)
    }

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var array: [JSONNode]? { if case .array(let value) = self { value } else { nil } }
    public var object: Object? { if case .object(let value) = self { value } else { nil } }

    /// A syntax error at a line and column (both from 1).
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let column: Int
        public let message: String
        public var description: String { "\(line):\(column): \(message)" }
    }

    /// Parses UTF-8 JSON text (RFC 8259; one value, white space around it).
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONNode {
        var parser = Parser(bytes: bytes)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func error(_ message: String) -> SyntaxError {
            var line = 1
            var column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return SyntaxError(line: line, column: column, message: message)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ word: String, _ value: JSONNode) throws(SyntaxError) -> JSONNode {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected else {
                throw error("expected \(word)")
            }
            index += expected.count
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONNode {
            guard depth < 100 else { throw error("nested too deeply") }
            guard let byte = current else { throw error("unexpected end of the file") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default:
                throw error(byte >= 0x21 && byte < 0x7F ? "unexpected character '\(Character(Unicode.Scalar(byte)))'" : "unexpected byte 0x\(String(byte, radix: 16))")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONNode {
            index += 1
            var members = Object()
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a \"key\"") }
                let key = try string()
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                index += 1
                skipSpace()
                guard members[key] == nil else { throw error("\"\(key)\" appears twice in one object") }
                _ = members.insert(key, try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard current == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                index += 1
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONNode {
            index += 1
            var elements: [JSONNode] = []
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipSpace()
                elements.append(try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard current == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                index += 1
                return .array(elements)
            }
        }

        /// A string's bytes are gathered as UTF-8, escapes included (each encoded as UTF-8), and decoded once
        /// at the end (ill-formed UTF-8 repaired as `String(decoding:as:)` does: an escape never joins or splits
        /// an ill-formed sequence, so this equals decoding each run between escapes on its own).
        mutating func string() throws(SyntaxError) -> String {
            index += 1
            // Most strings (every key) have no escape: made from their bytes at once.
            let start = index
            while index < bytes.count, bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            var utf8 = Array(bytes[start..<index])
            while true {
                guard let byte = current else { throw error("unterminated string") }
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(decoding: utf8, as: UTF8.self)
                }
                if byte < 0x20 { throw error("control character in a string (escape it)") }
                if byte != UInt8(ascii: "\\") {
                    utf8.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard let escape = current else { throw error("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    UTF8.encode(scalar) { utf8.append($0) }
                default:
                    throw error("invalid escape in a string")
                }
            }
        }

        /// RFC 8259's number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        static func isNumber(_ text: ArraySlice<UInt8>) -> Bool {
            var rest = text[...]
            func digits() -> Int {
                let count = rest.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }).count
                rest = rest.dropFirst(count)
                return count
            }
            if rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
            if rest.first == UInt8(ascii: "0") {
                rest = rest.dropFirst()
            } else if digits() == 0 {
                return false
            }
            if rest.first == UInt8(ascii: ".") {
                rest = rest.dropFirst()
                if digits() == 0 { return false }
            }
            if rest.first == UInt8(ascii: "e") || rest.first == UInt8(ascii: "E") {
                rest = rest.dropFirst()
                if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
                if digits() == 0 { return false }
            }
            return rest.isEmpty
        }

        /// Four hex digits, exactly (`UInt32(_:radix:)` alone would also take a sign: `\u+5e9`).
        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw error("invalid \\u escape") }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }

        mutating func number() throws(SyntaxError) -> JSONNode {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            {
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            // The lexer of JSON numbers (RFC 8259's grammar, checked first); what a number may be is bounded
            // where it is used (`integer(in:)`, `number(in:)`).
            guard Self.isNumber(bytes[start..<index]), let value = Double(text) else {
                index = start
                throw error("invalid number '\(text.prefix(40))'")
            }
            guard value.isFinite else {
                index = start
                throw error("number '\(text.prefix(40))' is out of range")
            }
            return .number(value)
        }
    }
}
