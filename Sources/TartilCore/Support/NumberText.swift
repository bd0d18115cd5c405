/// The one parser for numbers typed by people: option values, command arguments, seek targets, sizes and spans.
///
/// Every number is read from ASCII digits only (no sign, no spaces, no exponent, no `_`), its length is bounded
/// before it is converted, and its value is checked against a range, so no input can overflow an integer or
/// turn into a value that traps later (`Int(1e30)`). Out-of-range values are usage errors that name the
/// allowed range.
///
/// ```swift
/// try NumberText.whole("8", in: 1...64, for: "--jobs")            // 8
/// try NumberText.decimal("0.75", in: 0...60, for: "--pause")      // 0.75
/// try NumberText.whole("99999999999999999999", in: 1...64, for: "--jobs")
/// // TartilError.usage("--jobs takes a whole number from 1 to 64, not '99999999999999999999'")
/// ```
public enum NumberText {
    /// The most digits read before a number is taken as out of range (more than any allowed value has).
    public static let maximumDigits = 18

    // MARK: - Without a message (for parsers that try several forms)

    /// A whole number written as ASCII digits only, or nil when `text` is something else or outside `range`.
    public static func whole<S: StringProtocol>(_ text: S, in range: ClosedRange<Int>) -> Int? {
        guard case .value(let value) = wholeValue(text), range.contains(value) else { return nil }
        return value
    }

    /// A decimal number (`12`, `0.5`, `.5`, `12.`), or nil when `text` is something else or outside `range`.
    public static func decimal<S: StringProtocol>(_ text: S, in range: ClosedRange<Double>) -> Double? {
        guard case .value(let value) = decimalValue(text), range.contains(value) else { return nil }
        return value
    }

    /// What a piece of text reads as: a number, a number too large to hold, or not a number at all.
    public enum Reading<Value: Sendable & Equatable>: Sendable, Equatable {
        case value(Value)
        case tooLarge
        case notANumber
    }

    /// Reads ASCII digits as a whole number; more than `maximumDigits` digits (leading zeros aside) is `tooLarge`.
    public static func wholeValue<S: StringProtocol>(_ text: S) -> Reading<Int> { wholeValue(bytes: text.utf8) }

    /// `wholeValue` of bytes as they came from a file or the network (a header line's field, a table's column):
    /// ASCII digits only, bounded the same way, with no String made.
    public static func wholeValue<Bytes: Sequence<UInt8>>(bytes: Bytes) -> Reading<Int> {
        var value = 0
        var significant = 0
        var any = false
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return .notANumber }
            any = true
            if significant == 0 && byte == UInt8(ascii: "0") { continue }
            significant += 1
            if significant > maximumDigits { continue }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard any else { return .notANumber }
        return significant > maximumDigits ? .tooLarge : .value(value)
    }

    /// Reads `digits[.digits]` as a decimal number, correctly rounded; a whole part of more than
    /// `maximumDigits` digits is `tooLarge`.
    public static func decimalValue<S: StringProtocol>(_ text: S) -> Reading<Double> {
        let bytes = Array(text.utf8)
        var dot: Int?
        var digits = 0
        var wholeDigits = 0
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: ".") {
                guard dot == nil else { return .notANumber }
                dot = index
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                digits += 1
                if dot == nil && (wholeDigits > 0 || byte != UInt8(ascii: "0")) { wholeDigits += 1 }
            } else {
                return .notANumber
            }
        }
        guard digits > 0 else { return .notANumber }
        guard wholeDigits <= maximumDigits else { return .tooLarge }
        // Digits beyond the 40th after the point cannot change a Double that has passed the checks above.
        let kept = dot.map { min(bytes.count, $0 + 41) } ?? bytes.count
        guard let value = Double(String(decoding: bytes[..<kept], as: UTF8.self)), value.isFinite else {
            return .notANumber
        }
        return .value(value)
    }

    /// A whole number given as bytes (`wholeValue(bytes:)`) in `range`, or nil.
    public static func whole<Bytes: Sequence<UInt8>>(bytes: Bytes, in range: ClosedRange<Int>) -> Int? {
        guard case .value(let value) = wholeValue(bytes: bytes), range.contains(value) else { return nil }
        return value
    }

    // MARK: - Numbers a JSON parser read (already Doubles)

    /// The whole number `number` is, when it is one and lies in `range`; nil for a fraction, a value out of
    /// range (`1e308`), infinity or NaN. Never traps, unlike `Int(number)`: this is how a number read from a
    /// JSON file (`mirrors.json`, a control request) becomes an `Int`.
    public static func whole(_ number: Double, in range: ClosedRange<Int>) -> Int? {
        // Every Int in ±2^53 is exact as a Double; the bounds are checked as Doubles before any conversion.
        guard number.isFinite, number == number.rounded(), abs(number) <= 9_007_199_254_740_992,
            number >= Double(range.lowerBound), number <= Double(range.upperBound)
        else { return nil }
        let value = Int(number)
        return range.contains(value) ? value : nil
    }

    /// `number` when it is finite and lies in `range`, else nil (a JSON number for a decimal field).
    public static func decimal(_ number: Double, in range: ClosedRange<Double>) -> Double? {
        number.isFinite && range.contains(number) ? number : nil
    }

    // MARK: - With a usage error naming the range

    /// A whole number for `what` (an option name such as `--jobs`, or a phrase such as `a juz`), in `range`.
    public static func whole<S: StringProtocol>(
        _ text: S, in range: ClosedRange<Int>, for what: String
    ) throws(TartilError) -> Int {
        guard let value = whole(text, in: range) else {
            throw .usage("\(what) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// A decimal number for `what`, in `range`.
    public static func decimal<S: StringProtocol>(
        _ text: S, in range: ClosedRange<Double>, for what: String
    ) throws(TartilError) -> Double {
        guard let value = decimal(text, in: range) else {
            throw .usage("\(what) takes a number from \(format(range.lowerBound)) to \(format(range.upperBound)), not '\(text)'")
        }
        return value
    }

    /// `60` for 60.0, `0.5` for 0.5: the shortest text for a bound in a message.
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
