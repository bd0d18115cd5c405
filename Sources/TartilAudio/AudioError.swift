/// The error TartilAudio throws: what failed, with the library's own message and the C function's name.
public struct AudioError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The file is not decodable MPEG audio (or not there).
        public static let decode = Code("decode")
        /// The decoder library failed in a way that is not about the file.
        public static let library = Code("library")
        /// The sound device or output file failed (cannot open, cannot write).
        public static let output = Code("output")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
