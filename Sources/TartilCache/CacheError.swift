import TartilSystem

/// The error TartilCache throws: a kind, a message naming the file and the failing call, and the system's reason.
public struct CacheError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// libcrypto failed.
        public static let crypto = Code("crypto")
        /// A system call on a file failed.
        public static let io = Code("io")
        /// The cache index database failed.
        public static let index = Code("index")
        /// A file's size or SHA-256 is not what was expected, or it is not MPEG audio.
        public static let mismatch = Code("mismatch")
        /// Another process is writing the same file right now.
        public static let busy = Code("busy")
        /// A file is at its final name but nothing vouches for it yet (an unpinned file whose hash is not
        /// recorded): it counts as not cached, and is not deleted.
        public static let unvouched = Code("unvouched")
        /// A symbolic link is where the cache keeps a file or folder of its own: it is not followed.
        public static let symbolicLink = Code("symbolic-link")
        /// The ayah's mirrors disagree with no majority: it is not played until `cache choose` picks a copy.
        public static let disputed = Code("disputed")
        /// `cache choose` was asked for something it cannot do (no dispute, no copy from that mirror).
        public static let notChoosable = Code("not-choosable")
        /// More bytes arrived than the file may have.
        public static let tooLarge = Code("too-large")
        /// The server could not be reached, or stopped sending (the connect or stall timeout): asking it again
        /// at once would cost another timeout.
        public static let unreachable = Code("unreachable")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An error for the system call `call` on `path`, with the system's text for `error` (by default the
    /// `errno` the call just set).
    static func system(_ call: String, path: String, _ error: Errno = .current) -> CacheError {
        CacheError(.io, "\(call) \(path): \(error)")
    }

    public var description: String { message }
}
