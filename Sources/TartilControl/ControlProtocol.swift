import TartilCore
import TartilSession

/// The control socket's protocol: one request per line, one reply per request, each a line of UTF-8.
///
/// - A request is a command line of a control verb with its own arguments (`seek 1:00`), or a JSON object
///   `{"command": "seek 1:00", "request_id": 7}` whose command is that line or its words (`["seek", "1:00"]`).
///   Only control verbs are taken (`ControlVerbs`), with their own options: no global options, no paths.
/// - A reply is a JSON object: `{"request_id": 7, "exit_code": 0, "data": {…}, "result": {…}}`, with `"error"`
///   (the message) when `exit_code` is not 0. `data` is the verb's documented JSON (what `--json` prints: the
///   status object, a bookmark); `result` is the same typed for tartil's own clients.
/// - `watch` sends the player's events first, one JSON object per line (`{"event": …}`, as `--events` prints
///   them), and its reply (`"data": {"watch": "ended"}`) when playback ends.
public enum ControlProtocol {
    /// The longest request line taken, in bytes.
    public static let maximumRequestBytes = CommandLineSplitter.maximumLineBytes

    /// A request as read from its line: its words and the id to echo.
    public struct Request: Sendable {
        public var words: [String]
        public var id: JSONValue
    }

    /// Reads one request line; a usage error names what is wrong (the reply then echoes `id` when it was read).
    public static func request(_ line: String) throws(RequestError) -> Request {
        let trimmed = line.trimmedWhitespace
        guard trimmed.hasPrefix("{") else {
            return Request(words: try words(of: trimmed, id: .null), id: .null)
        }
        let node: JSONNode
        do {
            node = try JSONNode.parse(Array(trimmed.utf8))
        } catch {
            throw RequestError(id: .null, message: "the request is not valid JSON: \(error)")
        }
        guard let object = node.object else {
            throw RequestError(id: .null, message: "a JSON request is an object with \"command\": a command line such as \"seek 1:00\"")
        }
        var id = JSONValue.null
        switch object["request_id"] {
        case .number(let number)?:
            // A whole id (through the bounded parser) is echoed as one; any other number as the Double it is.
            id = object["request_id"]?.integer.map(JSONValue.int) ?? .double(number)
        case .string(let text)?: id = .string(String(text.prefix(256)))
        case .bool(let value)?: id = .bool(value)
        default: break
        }
        switch object["command"] {
        case .string(let command)?:
            return Request(words: try words(of: command, id: id), id: id)
        case .array(let items)?:
            let strings = items.compactMap { item -> String? in if case .string(let text) = item { return text } else { return nil } }
            guard strings.count == items.count, !strings.isEmpty else {
                throw RequestError(id: id, message: "\"command\" as a list holds the command's words, each a string")
            }
            return Request(words: strings, id: id)
        default:
            throw RequestError(id: id, message: "a JSON request needs \"command\": a command line such as \"seek 1:00\", or its words")
        }
    }

    /// The words of one command line; more than one command, or none, is refused.
    static func words(of line: String, id: JSONValue) throws(RequestError) -> [String] {
        let commands: [[String]]
        do {
            commands = try CommandLineSplitter.split(line)
        } catch {
            throw RequestError(id: id, message: error.message)
        }
        guard commands.count == 1, let words = commands.first else {
            throw RequestError(id: id, message: "send one command per request (\(ControlVerbs.names.joined(separator: ", ")))")
        }
        return words
    }

    /// A request that could not be read.
    public struct RequestError: Error, Sendable {
        public let id: JSONValue
        public let message: String
    }

    // MARK: - Replies

    /// A reply line (with its newline).
    public static func reply(id: JSONValue, code: Int32, data: JSONValue?, error: String?, result: ControlResult?) -> String {
        var members: [(String, JSONValue)] = [("request_id", id), ("exit_code", .int(Int(code)))]
        if let error { members.append(("error", .string(error))) }
        if let data { members.append(("data", data)) }
        if let result, let encoded = try? JSONValueEncoder.encode(result) { members.append(("result", encoded)) }
        return JSONValue.object(members).rendered() + "\n"
    }

    /// A reply as a tartil client reads it.
    public struct Reply: Sendable {
        public let exitCode: Int32
        public let error: String?
        public let result: ControlResult?

        /// The reply in `node`: `exit_code` (a whole number in `Int32`'s range), and `error` and `result` when they
        /// are there and not `null`; `result` as `JSONValueEncoder` (like `JSONEncoder`) wrote it (`ControlResult.init(encoded:)`).
        public init(_ node: JSONNode) throws(JSONNode.ShapeError) {
            let members = try node.members("the reply")
            exitCode = try members.required("exit_code").int32("exit_code")
            error = try members.optionalString("error")
            result = try members.optional("result").map { node throws(JSONNode.ShapeError) in try ControlResult(encoded: node) }
        }
    }

    /// The reply in `line`, or nil when the line is not one (an event line of `watch`) or does not read as one.
    /// Read with TartilCore's `JSONNode`, not Foundation's `JSONDecoder`, whose generic metadata and conformance
    /// lookups were most of a `tartil status` process's instructions (issue 24).
    public static func reply(_ line: String) -> Reply? {
        let bytes = Array(line.utf8)
        guard bytes.contains(bytes: Array("\"exit_code\"".utf8)), let node = try? JSONNode.parse(bytes) else { return nil }
        return try? Reply(node)
    }
}
