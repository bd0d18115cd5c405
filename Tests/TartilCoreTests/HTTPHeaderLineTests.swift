import TestSupport
import Testing

@testable import TartilCore

/// The header lines tartil reads from a server, through the bounded parser: every number a server can send,
/// huge or malformed, reads as a value in range or as "unreadable", never as an overflow (issue 23, item 12).
@Suite struct HTTPHeaderLineTests {
    typealias Range = HTTPHeaderLine.ContentRange

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\n", HTTPHeaderLine.status(200, http2: false)),
        ("HTTP/1.1 206 Partial Content\r\n", .status(206, http2: false)),
        ("HTTP/2 200\r\n", .status(200, http2: true)),
        ("HTTP/2 302 \r\n", .status(302, http2: true)),
        ("HTTP/1.0 503 Service Unavailable", .status(503, http2: false)),
        // Found by reading: the old loop multiplied every digit in, and 20 of them trapped.
        ("HTTP/1.1 200000000000000000000000000000 OK\r\n", .status(nil, http2: false)),
        ("HTTP/1.1 99999999999999999999\r\n", .status(nil, http2: false)),
        ("HTTP/1.1 2x0 OK\r\n", .status(nil, http2: false)),
        ("HTTP/1.1 20 OK\r\n", .status(nil, http2: false)),
        ("HTTP/1.1 099 OK\r\n", .status(nil, http2: false)),
        ("HTTP/1.1\r\n", .status(nil, http2: false)),
        ("HTTP/1.1 ٢٠٠ OK\r\n", .status(nil, http2: false)),
        ("http/1.1 200 OK\r\n", .other),  // the version is case-sensitive (RFC 9112 §2.3)
        ("Content-Length: 5000\r\n", .contentLength(5000)),
        ("content-length:0\r\n", .contentLength(0)),
        ("CONTENT-LENGTH:   12 \r\n", .contentLength(12)),
        ("Content-Length: 99999999999999999999999999999\r\n", .contentLength(nil)),
        ("Content-Length: 1099511627777\r\n", .contentLength(nil)),  // past 1 TiB
        ("Content-Length: -1\r\n", .contentLength(nil)),
        ("Content-Length: 1e3\r\n", .contentLength(nil)),
        ("Content-Length: 12, 12\r\n", .contentLength(nil)),
        ("Content-Range: bytes 0-1023/5000\r\n", .contentRange(Range(first: 0, last: 1023, total: 5000))),
        ("content-range: bytes 4984-5000/5001\r\n", .contentRange(Range(first: 4984, last: 5000, total: 5001))),
        ("Content-Range: bytes 0-1023/*\r\n", .contentRange(Range(first: 0, last: 1023, total: nil))),
        ("Content-Range: bytes */5000\r\n", .contentRange(Range(first: nil, last: nil, total: 5000))),
        ("Content-Range: BYTES 0-0/1\r\n", .contentRange(Range(first: 0, last: 0, total: 1))),
        ("Content-Range: bytes 5-4/10\r\n", .contentRange(nil)),
        ("Content-Range: bytes 0-10/10\r\n", .contentRange(nil)),
        ("Content-Range: bytes */*\r\n", .contentRange(nil)),
        ("Content-Range: bytes 0-1023\r\n", .contentRange(nil)),
        ("Content-Range: items 0-1/2\r\n", .contentRange(nil)),
        ("Content-Range: bytes -1-5/10\r\n", .contentRange(nil)),
        ("Content-Range: bytes 99999999999999999999-99999999999999999999/99999999999999999999\r\n", .contentRange(nil)),
        ("Retry-After: 1\r\n", .other),
        ("\r\n", .other),
        ("", .other),
    ])
    func readsALine(text: String, expected: HTTPHeaderLine) {
        #expect(HTTPHeaderLine.parse(Array(text.utf8)) == expected)
        let raw = Array(text.utf8).withUnsafeBytes { HTTPHeaderLine.parse($0) }
        #expect(raw == expected, "the raw buffer libcurl gives reads the same")
    }

    @Test func readsEveryLengthOfDigitsWithoutTrapping() {
        for count in 0...400 {
            let digits = String(repeating: "9", count: count)
            _ = HTTPHeaderLine.parse(Array("HTTP/1.1 \(digits) OK".utf8))
            _ = HTTPHeaderLine.parse(Array("Content-Length: \(digits)".utf8))
            _ = HTTPHeaderLine.parse(Array("Content-Range: bytes \(digits)-\(digits)/\(digits)".utf8))
        }
    }
}

/// Numbers a JSON file gave as Doubles become whole numbers only through the bounded parser; waits far in the
/// future saturate (issue 23, items 12 and 16).
@Suite struct BoundedConversionTests {
    @Test(arguments: [
        (64.0, 8...320, Optional(64)),
        (1e308, 8...320, nil),
        (-1e308, Int.min...Int.max, nil),
        (.infinity, Int.min...Int.max, nil),
        (.nan, Int.min...Int.max, nil),
        (64.5, 8...320, nil),
        (9.223372036854775807e18, Int.min...Int.max, nil),  // past 2^53, and Int(…) of it would trap
        (9_007_199_254_740_992, Int.min...Int.max, 9_007_199_254_740_992),
        (-0.0, 0...1, 0),
        (Double.leastNonzeroMagnitude, 0...1, nil),
    ] as [(Double, ClosedRange<Int>, Int?)])
    func aJSONNumberAsAWholeNumber(number: Double, range: ClosedRange<Int>, expected: Int?) {
        #expect(NumberText.whole(number, in: range) == expected)
        #expect(JSONNode.number(number).integer(in: range) == expected)
    }

    @Test func speedsOfAnySizeAreShownWithoutTrapping() {
        #expect(PlaybackSpeed.text(1e308) == "1e+308")
        #expect(PlaybackSpeed.text(-1e308) == "-1e+308")
        #expect(PlaybackSpeed.text(1.25) == "1.25")
        #expect(throws: TartilError.usage("max_speed takes a number from 0.5 to 2 in steps of 0.05, not '1e+308'")) {
            try PlaybackSpeed.checked(1e308, for: "max_speed")
        }
    }

    @Test func farDeadlinesSaturate() {
        let now = ClockInstant(nanoseconds: 5_000_000_000)
        #expect(now.adding(seconds: .nan) == now)
        #expect(now.adding(seconds: .infinity).nanoseconds == 5_000_000_000 + 1_000_000_000_000_000_000)
        #expect(now.adding(seconds: 1e300) == now.adding(seconds: .infinity))
        #expect(now.adding(seconds: -.infinity).nanoseconds == 0)
        #expect(ClockInstant(nanoseconds: .max - 1).adding(seconds: 1e12).nanoseconds == .max)
        #expect(now.adding(seconds: 1.5).nanoseconds == 6_500_000_000)
    }
}
