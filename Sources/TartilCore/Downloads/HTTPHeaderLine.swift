/// The lines of an HTTP response header that tartil reads itself (libcurl hands each one to a callback): the
/// status line, `Content-Range` and `Content-Length`. Everything else is `.other`.
///
/// Numbers go through the bounded parser (`NumberText.wholeValue(bytes:)`): a status code is exactly three
/// digits (RFC 9110 §15), sizes and offsets are at most `largestSize`, so no line a server sends can overflow an
/// integer or trap (`HTTP/1.1 99999999999999999999 OK` once did). A line that does not read is `nil` in its
/// case, and the transfer fails with a message saying so.
///
/// ```swift
/// HTTPHeaderLine.parse(Array("HTTP/1.1 206 Partial Content\r\n".utf8))   // .status(206, http2: false)
/// HTTPHeaderLine.parse(Array("Content-Range: bytes 0-1023/5000\r\n".utf8))
/// // .contentRange(ContentRange(first: 0, last: 1023, total: 5000))
/// ```
public enum HTTPHeaderLine: Sendable, Equatable {
    /// A status line (`HTTP/1.1 200 OK`, `HTTP/2 206`): a new response begins (after a redirect or a
    /// `100 Continue`). `code` is nil when it is not three digits.
    case status(Int?, http2: Bool)
    /// `Content-Range:`; nil when its value is not `bytes FIRST-LAST/TOTAL`, `bytes FIRST-LAST/*` or `bytes */TOTAL`.
    case contentRange(ContentRange?)
    /// `Content-Length:`; nil when its value is not a size.
    case contentLength(Int?)
    /// Any other line (other fields, the empty line that ends the header).
    case other

    /// The largest size or offset read (1 TiB: far above any recitation file, far below overflow).
    public static let largestSize = 1 << 40

    /// A `Content-Range` value (RFC 9110 §14.4).
    public struct ContentRange: Sendable, Equatable {
        /// The first and last byte of the range sent; nil for `bytes */TOTAL` (a 416's "unsatisfied range").
        public var first: Int?
        public var last: Int?
        /// The whole file's size; nil for `/*` (not known).
        public var total: Int?

        public init(first: Int?, last: Int?, total: Int?) {
            self.first = first
            self.last = last
            self.total = total
        }
    }

    /// Reads one header line as libcurl gives it (with its CR LF, or without).
    public static func parse<Line: Collection<UInt8>>(_ line: Line) -> HTTPHeaderLine { read(line) }

    /// Reads one header line from libcurl's buffer, as `parse` does any collection of bytes. This overload is what
    /// the header callbacks call: the generic reading is specialized for the raw buffer here, inside this module.
    /// Called generically from another module it ran unspecialized (type metadata looked up for every byte's
    /// slice), which took 18% of a whole-Qur'an prefetch's CPU time (perf, 62,000 header lines).
    public static func parse(_ line: UnsafeRawBufferPointer) -> HTTPHeaderLine { read(line) }

    private static func read<Line: Collection<UInt8>>(_ line: Line) -> HTTPHeaderLine {
        let bytes = trimmed(line[...])
        if hasPrefix(bytes, "HTTP/", ignoringCase: false) { return statusLine(bytes) }
        if let value = field(bytes, "content-range:") { return .contentRange(contentRange(value)) }
        if let value = field(bytes, "content-length:") {
            return .contentLength(NumberText.whole(bytes: value, in: 0...largestSize))
        }
        return .other
    }

    // MARK: - The parts

    /// `HTTP/1.1 206 Partial Content`, `HTTP/2 200`: the version, one space, three digits, then a space or the end.
    static func statusLine<Bytes: Collection<UInt8>>(_ line: Bytes) -> HTTPHeaderLine where Bytes.SubSequence == Bytes {
        let http2 = hasPrefix(line, "HTTP/2", ignoringCase: false)
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return .status(nil, http2: http2) }
        let rest = line[line.index(after: space)...]
        let digits = rest.prefix(while: isDigit)
        guard digits.count == 3, digits.count == rest.count || rest.dropFirst(3).first == UInt8(ascii: " ") else {
            return .status(nil, http2: http2)
        }
        return .status(NumberText.whole(bytes: digits, in: 100...999), http2: http2)
    }

    /// `bytes FIRST-LAST/TOTAL`, `bytes FIRST-LAST/*`, `bytes */TOTAL`, with FIRST ≤ LAST < TOTAL.
    static func contentRange<Bytes: Collection<UInt8>>(_ value: Bytes) -> ContentRange? where Bytes.SubSequence == Bytes {
        guard hasPrefix(value, "bytes ", ignoringCase: true) else { return nil }
        let spec = trimmed(value.dropFirst("bytes ".count))
        guard let slash = spec.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let range = spec[..<slash]
        let length = spec[spec.index(after: slash)...]
        var total: Int?
        if !(length.count == 1 && length.first == UInt8(ascii: "*")) {
            guard let size = NumberText.whole(bytes: length, in: 0...largestSize) else { return nil }
            total = size
        }
        if range.count == 1 && range.first == UInt8(ascii: "*") {
            return total == nil ? nil : ContentRange(first: nil, last: nil, total: total)
        }
        guard let dash = range.firstIndex(of: UInt8(ascii: "-")),
            let first = NumberText.whole(bytes: range[..<dash], in: 0...largestSize),
            let last = NumberText.whole(bytes: range[range.index(after: dash)...], in: 0...largestSize),
            first <= last, total.map({ last < $0 }) ?? true
        else { return nil }
        return ContentRange(first: first, last: last, total: total)
    }

    /// The value of the field `name` (lowercase, with its colon) when `line` is that field, trimmed.
    static func field<Bytes: Collection<UInt8>>(_ line: Bytes, _ name: StaticString) -> Bytes? where Bytes.SubSequence == Bytes {
        guard hasPrefix(line, name, ignoringCase: true) else { return nil }
        return trimmed(line.dropFirst(name.utf8CodeUnitCount))
    }

    /// Whether `line` begins with `prefix` (ASCII letters folded when `ignoringCase`; `prefix` is lowercase then).
    public static func hasPrefix<Bytes: Collection<UInt8>>(_ line: Bytes, _ prefix: StaticString, ignoringCase: Bool) -> Bool {
        let expected = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard line.count >= expected.count else { return false }
        for (actual, wanted) in zip(line, expected) {
            let folded = ignoringCase && actual >= UInt8(ascii: "A") && actual <= UInt8(ascii: "Z") ? actual | 0x20 : actual
            if folded != wanted { return false }
        }
        return true
    }

    /// `bytes` without the spaces, tabs, CRs and LFs at either end.
    public static func trimmed<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bytes where Bytes.SubSequence == Bytes {
        var start = bytes.startIndex
        while start < bytes.endIndex, isSpace(bytes[start]) { start = bytes.index(after: start) }
        var end = start
        var index = start
        while index < bytes.endIndex {
            let next = bytes.index(after: index)
            if !isSpace(bytes[index]) { end = next }
            index = next
        }
        return bytes[start..<end]
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }
}
