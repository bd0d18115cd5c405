import Foundation
import TestSupport

/// How many inputs a fuzz run feeds: `TARTIL_FUZZ_BUDGET` (inputs for the in-process parsers, split between
/// them) and `TARTIL_FUZZ_PROCESSES` (runs of the built executable). CI uses the defaults; `tools/fuzz` raises
/// both. `TARTIL_FUZZ_SEED` replays one run.
enum FuzzBudget {
    static let environment = ProcessInfo.processInfo.environment
    /// Inputs for the in-process parsers, in total.
    static let inputs = environment["TARTIL_FUZZ_BUDGET"].flatMap { Int($0) } ?? 24_000
    /// Runs of the built `tartil`.
    static let processes = environment["TARTIL_FUZZ_PROCESSES"].flatMap { Int($0) } ?? 240
    /// The seed of this run (printed when an input fails, so it can be replayed).
    static let seed = environment["TARTIL_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x7A27_1110
}

/// Makes hostile variants of valid inputs: byte flips, hostile bytes and numbers, repeated runs, splices,
/// truncations. Every choice comes from a seeded generator, so a failure can be replayed.
struct Mutator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    /// Bytes that mean something to one of tartil's parsers, and bytes that should mean nothing.
    static let interestingBytes: [[UInt8]] = [
        [0], [0xFF], [0x80], [0xC3], [0xE2, 0x80, 0xAE], [0xF0, 0x9F, 0x98, 0x80], [0xD9, 0xA1],  // NUL, bad UTF-8, RTL mark, emoji, ١
        Array("\n".utf8), Array("\r\n".utf8), Array("\t".utf8), Array(" ".utf8), Array("\"".utf8), Array("'".utf8),
        Array("\\".utf8), Array(";".utf8), Array("#".utf8), Array(":".utf8), Array("-".utf8), Array(",".utf8),
        Array("%".utf8), Array("+".utf8), Array(".".utf8), Array("{".utf8), Array("}".utf8), Array("[".utf8),
        Array("]".utf8), Array("=".utf8), Array("--".utf8), Array("@".utf8), Array("/".utf8),
    ]

    /// Numbers at the edges of every range tartil checks.
    static let interestingNumbers = [
        "0", "1", "-1", "7", "114", "115", "286", "287", "604", "605", "6236", "6237", "59", "60", "99", "100",
        "65535", "65536", "2147483647", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
        "99999999999999999999", "999999999999999999", "1e30", "1e308", "-0", "+5", "05", "0.5", ".5", "5.", "nan",
        "inf", "-inf", "0x10", "١٢", String(repeating: "9", count: 400),
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    /// One to four mutations of `input`; `corpus` gives material to splice in.
    mutating func mutate(_ input: [UInt8], corpus: [[UInt8]]) -> [UInt8] {
        var bytes = input
        for _ in 0..<int(1...4) {
            switch int(0...9) {
            case 0 where !bytes.isEmpty:  // flip a bit
                let index = int(0...bytes.count - 1)
                bytes[index] ^= UInt8(1 << int(0...7))
            case 1:  // insert a hostile byte sequence
                bytes.insert(contentsOf: pick(Self.interestingBytes), at: int(0...bytes.count))
            case 2 where !bytes.isEmpty:  // delete a range
                let start = int(0...bytes.count - 1)
                bytes.removeSubrange(start..<min(bytes.count, start + int(1...16)))
            case 3 where !bytes.isEmpty:  // repeat a range many times
                let start = int(0...bytes.count - 1)
                let piece = Array(bytes[start..<min(bytes.count, start + int(1...8))])
                let times = pick([2, 3, 10, 100, 1000])
                bytes.insert(contentsOf: Array(repeating: piece, count: times).joined(), at: start)
            case 4:  // replace a run of digits (or insert) with an edge number
                let number = Array(pick(Self.interestingNumbers).utf8)
                if let digits = digitRun(in: bytes) {
                    bytes.replaceSubrange(digits, with: number)
                } else {
                    bytes.insert(contentsOf: number, at: int(0...bytes.count))
                }
            case 5 where !corpus.isEmpty:  // splice in part of another input
                let other = pick(corpus)
                guard !other.isEmpty else { continue }
                let start = int(0...other.count - 1)
                bytes.insert(contentsOf: other[start..<min(other.count, start + int(1...32))], at: int(0...bytes.count))
            case 6 where !bytes.isEmpty:  // truncate
                bytes.removeSubrange(int(0...bytes.count - 1)...)
            case 7 where !bytes.isEmpty:  // overwrite a byte with a random one
                bytes[int(0...bytes.count - 1)] = UInt8(int(0...255))
            case 8 where !bytes.isEmpty:  // swap two ranges' order by moving a byte
                let from = int(0...bytes.count - 1)
                let byte = bytes.remove(at: from)
                bytes.insert(byte, at: int(0...bytes.count))
            default:  // random printable noise
                let noise = (0..<int(1...8)).map { _ in UInt8(int(0x20...0x7E)) }
                bytes.insert(contentsOf: noise, at: int(0...bytes.count))
            }
        }
        return bytes
    }

    /// Random bytes, sometimes all printable.
    mutating func noise(maxLength: Int) -> [UInt8] {
        let printable = chance(50)
        return (0..<int(0...maxLength)).map { _ in printable ? UInt8(int(0x20...0x7E)) : UInt8(int(0...255)) }
    }

    private mutating func digitRun(in bytes: [UInt8]) -> Range<Int>? {
        // One pass over the buffer: a closure per index over a whole 560 KB reciter table made this the fuzz suite's
        // hottest function in a debug build. The same starts, so a seed picks the same run as before.
        var starts: [Int] = []
        bytes.withUnsafeBufferPointer { buffer in
            var previousIsDigit = false
            for index in 0..<buffer.count {
                let digit = buffer[index] >= 0x30 && buffer[index] <= 0x39
                if digit && !previousIsDigit { starts.append(index) }
                previousIsDigit = digit
            }
        }
        guard !starts.isEmpty else { return nil }
        let start = pick(starts)
        var end = start
        while end < bytes.count && isDigit(bytes[end]) { end += 1 }
        return start..<end
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

extension Array where Element == UInt8 {
    /// The bytes as text for a parser that takes a String (invalid UTF-8 becomes U+FFFD, as when tartil reads it).
    var text: String { String(decoding: self, as: UTF8.self) }
}
