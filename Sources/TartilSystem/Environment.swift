import Glibc

/// Environment variables by name: the process's own (read with getenv(3) when asked, so a start of tartil copies
/// none of the dozens of variables a shell passes), or given ones (tests, and a caller that builds its own).
///
/// Deliberately not a `[String: String]`: a dictionary of strings built at every start costs its hashing and, the
/// first time, the Swift runtime's generic instantiation and conformance scan (about 0.45M instructions of a
/// 3.8M-instruction `tartil status`).
public struct Environment: Sendable, ExpressibleByDictionaryLiteral {
    private enum Source: Sendable {
        case process
        case given([(name: String, value: String)])
    }
    private let source: Source

    /// The running process's environment, read when a variable is asked for.
    public static let process = Environment(source: .process)

    private init(source: Source) { self.source = source }

    /// Given variables (the first of a name wins, as in the process environment).
    public init(_ variables: [(name: String, value: String)]) { source = .given(variables) }

    public init(dictionaryLiteral elements: (String, String)...) { source = .given(elements.map { (name: $0.0, value: $0.1) }) }

    /// A variable's value; nil when it is not set.
    public subscript(_ name: String) -> String? {
        switch source {
        case .process:
            return getenv(name).map { String(cString: $0) }
        case .given(let variables):
            return variables.first { $0.name == name }?.value
        }
    }
}
