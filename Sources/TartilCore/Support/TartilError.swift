/// The error every TartilCore operation throws: what went wrong, in words a user can act on.
///
/// `code` says what kind of failure it is (the CLI turns it into an exit code in one place); `message` names the
/// bad value and what is allowed; `cause` carries a lower-level detail (a library's own message) when there is one.
public struct TartilError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure. New kinds can be added without breaking callers that match on the existing ones.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The command line or a reference was malformed (exit 64).
        public static let usage = Code("usage")
        /// A data file (mirrors.json, a reciter table) is malformed.
        public static let invalidData = Code("invalid-data")
        /// Something that was asked for does not exist (a reciter id, a file).
        public static let notFound = Code("not-found")
        /// Reading or writing a file failed.
        public static let io = Code("io")
        /// The user interrupted the operation (SIGINT).
        public static let interrupted = Code("interrupted")
        /// Any other failure.
        public static let failure = Code("failure")

        public var description: String { name }
    }

    public let code: Code
    public let message: String
    public let cause: String?

    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// A usage error: the input was not acceptable and nothing was changed.
    public static func usage(_ message: String) -> TartilError { TartilError(.usage, message) }

    public var description: String {
        guard let cause else { return message }
        return "\(message) (\(cause))"
    }
}
