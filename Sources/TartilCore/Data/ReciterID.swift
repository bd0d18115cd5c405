/// A reciter's id in `mirrors.json`: lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit
/// (`[a-z0-9][a-z0-9._-]*`), at most 64 characters. It names the cache folder and the table file, so it can never
/// contain a path separator.
public struct ReciterID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Throws a usage error naming the rule when `text` is not a valid id.
    public init(_ text: String) throws(TartilError) {
        guard let problem = Self.problem(with: text) else {
            rawValue = text
            return
        }
        throw .usage("'\(text)' is not a valid reciter id: \(problem)")
    }

    /// Why `text` is not a valid id, or nil when it is.
    static func problem(with text: String) -> String? {
        if text.isEmpty { return "it is empty (ids look like alafasy-128: [a-z0-9][a-z0-9._-]*)" }
        if text.utf8.count > 64 { return "it is longer than 64 characters" }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        if let bad = text.first(where: { !allowed.contains($0) }) {
            return "'\(bad)' is not allowed (use a-z, 0-9, '.', '_' and '-')"
        }
        if let first = text.first, !first.isLetter && !first.isNumber {
            return "it must start with a letter or digit"
        }
        return nil
    }

    public var description: String { rawValue }

    public static func < (lhs: ReciterID, rhs: ReciterID) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension ReciterID: Codable {
    /// Encoded as its text; decoding checks it like `init(_:)`.
    public init(from decoder: any Decoder) throws {
        self = try ReciterID(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
