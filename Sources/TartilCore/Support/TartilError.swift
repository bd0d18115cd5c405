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
        /// Nothing is playing (`status` with no player: not a failure, not bad input).
        public static let notPlaying = Code("not-playing")

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

/// tartil's exit codes: the one mapping from errors to codes, for the command line and the control socket alike.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | failure (a file could not be read, a download failed, an ayah was skipped, …) |
/// | 3 | nothing is playing (`status`) |
/// | 64 | usage error: a bad command line or bad input; nothing was changed |
/// | 130 | interrupted by Ctrl-C (SIGINT) or SIGTERM |
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let notPlaying: Int32 = 3
    public static let usage: Int32 = 64
    public static let interrupted: Int32 = 130

    /// The code `error` ends a command with.
    public static func of(_ error: TartilError) -> Int32 {
        switch error.code {
        case .usage: usage
        case .interrupted: interrupted
        case .notPlaying: notPlaying
        default: failure
        }
    }

    /// The kind of error a code stands for (a reply from the control socket carries the code).
    public static func code(for exitCode: Int32) -> TartilError.Code {
        switch exitCode {
        case usage: .usage
        case interrupted: .interrupted
        case notPlaying: .notPlaying
        default: .failure
        }
    }
}
