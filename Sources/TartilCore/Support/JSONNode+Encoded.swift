/// Reading a value back from the JSON its `Encodable` conformance writes (Foundation's `JSONEncoder`, default
/// strategies), as its `Decodable` conformance would, without Foundation's decoder.
///
/// Why: a tartil process that asks the player for its status is short-lived, and Foundation's `JSONDecoder` spent
/// more than half of such a process's instructions (`tartil status --json`, issue 24) on the Swift runtime's
/// generic metadata and protocol-conformance lookups for the coding keys and containers of every type it met. The
/// types of the control socket's typed result read themselves from a parsed `JSONNode` instead
/// (`init(encoded:)`), and the wire form stays exactly what `JSONEncoder` writes.
///
/// The forms, as the compiler synthesizes them:
/// - a struct is an object of its properties by name; an optional is absent or `null` when nil;
/// - an enum with cases is an object of one member, the case's name, whose value is an object of the case's
///   associated values by label (`_0` for one without a label): `{"times": {"_0": 3}}`, `{"forever": {}}`;
/// - a dictionary whose keys are not strings or integers is an array of keys and values, alternating.
///
/// Numbers are bounded where they are read (a result may come from another process's socket): whole numbers
/// only where a `Double` holds them exactly (at most 2^53 in size), so a number is never read as another one,
/// and larger ones are refused, except by `uint64(_:)` (see there); other numbers (seconds, speeds, multiples)
/// within ±10^12, so a number of seconds in milliseconds, or whole, is still a whole number of at most 2^53.
/// `JSONDecoder` takes any finite number there: this reader refuses more, never less.
extension JSONNode {
    /// A value of another shape than the type read from it expects: what was expected, and where.
    public struct ShapeError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String

        public init(_ message: String) { self.message = message }

        public var description: String { message }
    }

    /// The largest whole number a `Double` holds exactly, with every whole number below it: 2^53.
    public static let exactIntegerLimit = 9_007_199_254_740_992.0

    /// The members of an object, to read by name; `what` names the value in errors.
    public func members(_ what: String) throws(ShapeError) -> Members {
        guard case .object(let values) = self else { throw ShapeError("\(what) is not an object") }
        return Members(values: values, what: what)
    }

    /// An object's members by name.
    public struct Members: Sendable {
        public let values: JSONNode.Object
        /// What the object is, for errors (`status`, `status.item`).
        public let what: String

        /// The member `key`, which must be there and not `null`.
        public func required(_ key: String) throws(ShapeError) -> JSONNode {
            guard let value = values[key], value != .null else { throw ShapeError("\(what) has no \"\(key)\"") }
            return value
        }

        /// The member `key`, or nil when it is absent or `null` (an optional property that is nil).
        public func optional(_ key: String) -> JSONNode? {
            guard let value = values[key], value != .null else { return nil }
            return value
        }

        /// The name of the value in errors: `what.key`.
        public func name(_ key: String) -> String { "\(what).\(key)" }

        /// The member `key` as a whole number (`int(_:)`).
        public func int(_ key: String) throws(ShapeError) -> Int { try required(key).int(name(key)) }
        /// The member `key` as a whole number of 64 bits (`int(_:)`).
        public func int64(_ key: String) throws(ShapeError) -> Int64 { Int64(try int(key)) }
        /// The member `key` as a number.
        public func double(_ key: String) throws(ShapeError) -> Double { try required(key).double(name(key)) }
        /// The member `key` as a boolean.
        public func bool(_ key: String) throws(ShapeError) -> Bool { try required(key).bool(name(key)) }
        /// The member `key` as a string.
        public func string(_ key: String) throws(ShapeError) -> String { try required(key).text(name(key)) }

        /// The member `key` as a string, or nil when it is absent or `null`.
        public func optionalString(_ key: String) throws(ShapeError) -> String? {
            try optional(key).map { node throws(ShapeError) in try node.text(name(key)) }
        }

        /// The member `key` as a whole number, or nil when it is absent or `null`.
        public func optionalInt(_ key: String) throws(ShapeError) -> Int? {
            try optional(key).map { node throws(ShapeError) in try node.int(name(key)) }
        }

        /// The member `key` as a boolean, or nil when it is absent or `null`.
        public func optionalBool(_ key: String) throws(ShapeError) -> Bool? {
            try optional(key).map { node throws(ShapeError) in try node.bool(name(key)) }
        }

        /// The member `key` as a number, or nil when it is absent or `null`.
        public func optionalDouble(_ key: String) throws(ShapeError) -> Double? {
            try optional(key).map { node throws(ShapeError) in try node.double(name(key)) }
        }
    }

    /// A whole number of at most 2^53 in size (what a `Double` holds exactly): `2.5`, `1e300` or `true` is an
    /// error, never a trap.
    public func int(_ what: String) throws(ShapeError) -> Int {
        guard case .number(let value) = self, value.rounded(.towardZero) == value, abs(value) <= Self.exactIntegerLimit else {
            throw ShapeError("\(what) is not a whole number of at most 2^53")
        }
        return Int(value)
    }

    /// A whole number in `Int32`'s range.
    public func int32(_ what: String) throws(ShapeError) -> Int32 {
        let value = try int(what)
        guard let narrow = Int32(exactly: value) else { throw ShapeError("\(what) is out of range (\(value))") }
        return narrow
    }

    /// A whole number from 0 to 2^64 − 1. Exact up to 2^53; above that, the nearest `Double` to the number written
    /// (JSONNode keeps numbers as `Double`): within one part in 2^53 of it, a few nanoseconds for a clock's
    /// nanoseconds after months, never an error, so a monotonic clock's reading after 104 days of uptime is
    /// still read. (The numbers just below 2^64 round to 2^64 itself, read as 2^64 − 1.)
    public func uint64(_ what: String) throws(ShapeError) -> UInt64 {
        let limit = 18_446_744_073_709_551_616.0  // 2^64
        guard case .number(let value) = self, value.rounded(.towardZero) == value, value >= 0, value <= limit else {
            throw ShapeError("\(what) is not a whole number from 0 to 2^64 - 1")
        }
        return value == limit ? .max : UInt64(value)
    }

    /// The largest number `double(_:)` reads, either way: 10^12 (seconds: 31,000 years).
    public static let largestNumber = 1e12

    /// A number from −10^12 to 10^12.
    public func double(_ what: String) throws(ShapeError) -> Double {
        guard case .number(let value) = self else { throw ShapeError("\(what) is not a number") }
        guard abs(value) <= Self.largestNumber else { throw ShapeError("\(what) is out of range (at most 10^12 either way)") }
        return value
    }

    /// A boolean.
    public func bool(_ what: String) throws(ShapeError) -> Bool {
        guard case .bool(let value) = self else { throw ShapeError("\(what) is not true or false") }
        return value
    }

    /// A string.
    public func text(_ what: String) throws(ShapeError) -> String {
        guard case .string(let value) = self else { throw ShapeError("\(what) is not a string") }
        return value
    }

    /// An array's elements.
    public func elements(_ what: String) throws(ShapeError) -> [JSONNode] {
        guard case .array(let values) = self else { throw ShapeError("\(what) is not an array") }
        return values
    }

    /// An array of numbers.
    public func doubles(_ what: String) throws(ShapeError) -> [Double] {
        var values: [Double] = []
        for element in try elements(what) { values.append(try element.double(what + "[]")) }
        return values
    }

    /// An array of strings.
    public func texts(_ what: String) throws(ShapeError) -> [String] {
        var values: [String] = []
        for element in try elements(what) { values.append(try element.text(what + "[]")) }
        return values
    }

    /// An enum's case, as synthesized `Codable` writes it: an object with exactly one member named after one of
    /// `cases` (members of other names are passed over, as `Decodable` does), whose value is an object of the
    /// case's associated values. Returns the case's name and those values.
    public func enumCase(_ what: String, of cases: [String]) throws(ShapeError) -> (name: String, values: Members) {
        let object = try members(what)
        let named = object.values.filter { cases.contains($0.key) }
        guard named.count == 1, let (name, payload) = named.first else {
            throw ShapeError("\(what) is not one of \(cases.joined(separator: ", "))")
        }
        return (name, try payload.members("\(what).\(name)"))
    }
}
