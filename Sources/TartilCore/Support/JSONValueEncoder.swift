/// Encodes an `Encodable` value as a `JSONValue`, the way Foundation's `JSONEncoder` (default options) writes it,
/// so that tartil needs no Foundation: keyed containers become objects (members in the order they were encoded;
/// `JSONEncoder` orders them as a dictionary does, so no reader may rely on an order), unkeyed ones arrays, `nil`
/// in a keyed container with `encodeIfPresent` is left out, a whole `Double` is written without a fraction
/// (`50`, as `JSONEncoder` writes it), and a number that is not finite is an error (`JSONEncoder`'s default).
/// The control socket's typed `result` is written with it; `ControlResultEncodedTests` checks it against
/// `JSONEncoder` on seeded values.
public enum JSONValueEncoder {
    /// What could not be encoded: a number that is not finite, or a whole number past `Int`'s range.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func encode(_ value: some Encodable) throws -> JSONValue {
        let root = Slot()
        try value.encode(to: ValueEncoder(slot: root, codingPath: []))
        return root.value
    }

    /// Where one value goes, filled in as it is encoded.
    final class Slot {
        enum Content {
            case empty
            case value(JSONValue)
            case object([(key: String, slot: Slot)])
            case array([Slot])
        }
        var content: Content = .empty

        var value: JSONValue {
            switch content {
            case .empty: .object([])  // a value that encoded nothing, as JSONEncoder writes it
            case .value(let value): value
            case .object(let members): .object(members.map { ($0.key, $0.slot.value) })
            case .array(let elements): .array(elements.map(\.value))
            }
        }

        /// This slot as an object (it becomes one if it is not), and its member `key`'s slot (made if missing).
        func member(_ key: String) -> Slot {
            var members: [(key: String, slot: Slot)] = []
            if case .object(let existing) = content { members = existing }
            if let found = members.first(where: { $0.key == key }) { return found.slot }
            let slot = Slot()
            members.append((key: key, slot: slot))
            content = .object(members)
            return slot
        }

        /// This slot as an array (it becomes one if it is not), with a new element's slot appended.
        func appended() -> Slot {
            var elements: [Slot] = []
            if case .array(let existing) = content { elements = existing }
            let slot = Slot()
            elements.append(slot)
            content = .array(elements)
            return slot
        }

        var count: Int {
            switch content {
            case .array(let elements): elements.count
            case .object(let members): members.count
            default: 0
            }
        }
    }

    static func number(_ value: Double, _ path: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else { throw Failure(description: "\(pathText(path)): \(value) is not a finite number") }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return .int(Int(value)) }
        return .double(value)
    }

    static func integer(_ value: some BinaryInteger, _ path: [any CodingKey]) throws -> JSONValue {
        guard let whole = Int(exactly: value) else { throw Failure(description: "\(pathText(path)): \(value) is past the range of a whole number") }
        return .int(whole)
    }

    static func pathText(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "the value" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(with: ".")
    }

    struct ValueEncoder: Encoder {
        let slot: Slot
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if case .object = slot.content {} else { slot.content = .object([]) }
            return KeyedEncodingContainer(KeyedContainer<Key>(slot: slot, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if case .array = slot.content {} else { slot.content = .array([]) }
            return UnkeyedContainer(slot: slot, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(slot: slot, codingPath: codingPath) }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let slot: Slot
        let codingPath: [any CodingKey]

        private func set(_ value: JSONValue, _ key: Key) { slot.member(key.stringValue).content = .value(value) }

        mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { set(try number(value, codingPath + [key]), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { set(try number(Double(value), codingPath + [key]), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { set(try integer(value, codingPath + [key]), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { set(try integer(value, codingPath + [key]), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int(value)), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try integer(value, codingPath + [key]), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let member = slot.member(key.stringValue)
            member.content = .empty
            try value.encode(to: ValueEncoder(slot: member, codingPath: codingPath + [key]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            ValueEncoder(slot: slot.member("super"), codingPath: codingPath + [IndexKey(stringValue: "super")])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]
        var count: Int { slot.count }

        private var nextKey: IndexKey { IndexKey(intValue: count) }
        private func append(_ value: JSONValue) { slot.appended().content = .value(value) }

        mutating func encodeNil() throws { append(.null) }
        mutating func encode(_ value: Bool) throws { append(.bool(value)) }
        mutating func encode(_ value: String) throws { append(.string(value)) }
        mutating func encode(_ value: Double) throws { append(try number(value, codingPath + [nextKey])) }
        mutating func encode(_ value: Float) throws { append(try number(Double(value), codingPath + [nextKey])) }
        mutating func encode(_ value: Int) throws { append(.int(value)) }
        mutating func encode(_ value: Int8) throws { append(.int(Int(value))) }
        mutating func encode(_ value: Int16) throws { append(.int(Int(value))) }
        mutating func encode(_ value: Int32) throws { append(.int(Int(value))) }
        mutating func encode(_ value: Int64) throws { append(try integer(value, codingPath + [nextKey])) }
        mutating func encode(_ value: UInt) throws { append(try integer(value, codingPath + [nextKey])) }
        mutating func encode(_ value: UInt8) throws { append(.int(Int(value))) }
        mutating func encode(_ value: UInt16) throws { append(.int(Int(value))) }
        mutating func encode(_ value: UInt32) throws { append(.int(Int(value))) }
        mutating func encode(_ value: UInt64) throws { append(try integer(value, codingPath + [nextKey])) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let key = nextKey
            try value.encode(to: ValueEncoder(slot: slot.appended(), codingPath: codingPath + [key]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let key = nextKey
            return ValueEncoder(slot: slot.appended(), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let key = nextKey
            return ValueEncoder(slot: slot.appended(), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = nextKey
            return ValueEncoder(slot: slot.appended(), codingPath: codingPath + [key])
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]

        private func set(_ value: JSONValue) { slot.content = .value(value) }

        mutating func encodeNil() throws { set(.null) }
        mutating func encode(_ value: Bool) throws { set(.bool(value)) }
        mutating func encode(_ value: String) throws { set(.string(value)) }
        mutating func encode(_ value: Double) throws { set(try number(value, codingPath)) }
        mutating func encode(_ value: Float) throws { set(try number(Double(value), codingPath)) }
        mutating func encode(_ value: Int) throws { set(.int(value)) }
        mutating func encode(_ value: Int8) throws { set(.int(Int(value))) }
        mutating func encode(_ value: Int16) throws { set(.int(Int(value))) }
        mutating func encode(_ value: Int32) throws { set(.int(Int(value))) }
        mutating func encode(_ value: Int64) throws { set(try integer(value, codingPath)) }
        mutating func encode(_ value: UInt) throws { set(try integer(value, codingPath)) }
        mutating func encode(_ value: UInt8) throws { set(.int(Int(value))) }
        mutating func encode(_ value: UInt16) throws { set(.int(Int(value))) }
        mutating func encode(_ value: UInt32) throws { set(.int(Int(value))) }
        mutating func encode(_ value: UInt64) throws { set(try integer(value, codingPath)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            slot.content = .empty
            try value.encode(to: ValueEncoder(slot: slot, codingPath: codingPath))
        }
    }

    /// A position in an array (or `super`), for the coding path.
    struct IndexKey: CodingKey {
        let stringValue: String
        let intValue: Int?
        init(intValue: Int) {
            self.intValue = intValue
            stringValue = "Index \(intValue)"
        }
        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }
    }
}
