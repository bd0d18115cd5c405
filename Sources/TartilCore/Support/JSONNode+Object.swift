extension JSONNode {
    /// A JSON object's members, in the order they were written, each key once (the parser refuses a key twice).
    ///
    /// Not a `[String: JSONNode]`: a small object (a status reply's, a reciter's in mirrors.json) is looked up
    /// faster by comparing its few keys, and every start of tartil that reads JSON would otherwise pay for the
    /// Swift runtime's first instantiation of a dictionary of strings (a scan of every protocol conformance in the
    /// binary). An object of more than `indexedFrom` members keeps an index of its keys, so that no input makes
    /// lookups or the parser's check for a repeated key quadratic.
    public struct Object: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
        public typealias Element = (key: String, value: JSONNode)

        /// The members, in order.
        public private(set) var members: [Element] = []
        /// Each key's position in `members`, once there are more than `indexedFrom` of them.
        private var index: [String: Int]?
        static let indexedFrom = 32

        public init() {}

        public init(dictionaryLiteral elements: (String, JSONNode)...) {
            for (key, value) in elements { _ = insert(key, value) }
        }

        /// Adds a member; false (nothing added) when the object has one of that key already.
        public mutating func insert(_ key: String, _ value: JSONNode) -> Bool {
            if position(of: key) != nil { return false }
            members.append((key: key, value: value))
            if var index {
                index[key] = members.count - 1
                self.index = index
            } else if members.count > Self.indexedFrom {
                var made: [String: Int] = [:]
                for (position, member) in members.enumerated() { made[member.key] = position }
                index = made
            }
            return true
        }

        private func position(of key: String) -> Int? {
            if let index { return index[key] }
            return members.firstIndex { $0.key == key }
        }

        /// The member named `key`, or nil.
        public subscript(_ key: String) -> JSONNode? { position(of: key).map { members[$0].value } }

        /// The keys, in order.
        public var keys: [String] { members.map(\.key) }
        /// The values, in order.
        public var values: [JSONNode] { members.map(\.value) }
        public var count: Int { members.count }
        public var isEmpty: Bool { members.isEmpty }

        public func makeIterator() -> IndexingIterator<[Element]> { members.makeIterator() }

        /// The same members with the same values, in any order (as JSON objects compare).
        public static func == (lhs: Object, rhs: Object) -> Bool {
            lhs.count == rhs.count && lhs.members.allSatisfy { member in rhs[member.key] == member.value }
        }
    }
}
