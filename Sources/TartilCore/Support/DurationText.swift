/// The one parser for lengths of time typed by people: `--pause`, `--cycle-pause`, `--stop-after`, `sleep`,
/// `seek`, `--from`, `--loop`, the download timeouts and `journal sync --interval` all read their times here.
///
/// | text | seconds |
/// |---|---|
/// | `1.5`, `90` | a bare number, in the option's own unit: seconds (minutes for the sleep timer) |
/// | `1.5s`, `90s`, `500ms`, `2m`, `1h`, `1h30m`, `1m30.5s` | units `h`, `m` (or `min`), `s`, `ms`; largest first, each once |
/// | `1:30`, `1:02:03`, `1:30.5` | `M:SS` or `H:MM:SS`: two digits after each colon, below 60 |
///
/// Numbers are read by `NumberText` (ASCII digits, bounded length), letters in any case; no sign, no spaces.
/// Nothing longer than `maximumSeconds` is read as a value, so no input can overflow what uses it.
///
/// ```swift
/// DurationText.seconds("1:30")                   // .value(90)
/// DurationText.seconds("45", bare: .minutes)     // .value(2700)
/// try DurationText.parse("2m", in: 0...60, for: "--pause")
/// // TartilError.usage("--pause takes a time from 0 to 60 s (1.5, 1.5s, 500ms, 0:30), not '2m'")
/// ```
public enum DurationText {
    /// The longest time read: 100 hours, longer than any recitation of the whole Qur'an.
    public static let maximumSeconds = 360_000.0

    /// What a number without a unit counts.
    public enum BareUnit: Sendable {
        case seconds, minutes

        var seconds: Double { self == .seconds ? 1 : 60 }
    }

    /// Examples of the forms, for messages: with a bare number in seconds or in minutes.
    public static func forms(bare: BareUnit = .seconds) -> String {
        switch bare {
        case .seconds: "1.5, 1.5s, 90s, 500ms, 2m, 1h30m, 1:30 or 1:02:03"
        case .minutes: "minutes: 45; or 90s, 20m, 1h30m, 1:30:00"
        }
    }

    /// Reads `text` as a length of time in seconds: `.tooLarge` past `maximumSeconds`, `.notANumber` for
    /// anything that is not one of the forms above.
    public static func seconds<S: StringProtocol>(_ text: S, bare: BareUnit = .seconds) -> NumberText.Reading<Double> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return .notANumber }
        let reading: NumberText.Reading<Double>
        if bytes.contains(UInt8(ascii: ":")) {
            reading = clock(bytes)
        } else if bytes.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }) {
            reading = scaled(NumberText.decimalValue(text), by: bare.seconds)
        } else {
            reading = withUnits(bytes)
        }
        if case .value(let seconds) = reading, !(seconds <= maximumSeconds) { return .tooLarge }
        return reading
    }

    /// A length of time for `what` (an option or command name), in `range` seconds; a usage error naming the
    /// range and the forms otherwise.
    public static func parse(
        _ text: String, in range: ClosedRange<Double>, bare: BareUnit = .seconds, for what: String
    ) throws(TartilError) -> Double {
        guard case .value(let seconds) = self.seconds(text.trimmedWhitespace, bare: bare), range.contains(seconds) else {
            throw .usage("\(what) takes \(allowed(range, bare: bare)), not '\(text)'")
        }
        return seconds
    }

    /// `a time from 0 to 60 s (1.5, 1.5s, 500ms, 0:30)`: what `parse` accepts, for messages.
    public static func allowed(_ range: ClosedRange<Double>, bare: BareUnit = .seconds) -> String {
        let examples = bare == .minutes ? forms(bare: .minutes) : range.upperBound < 60 ? "1.5, 1.5s, 500ms, 0:30" : forms()
        return "a time from \(text(range.lowerBound)) to \(text(range.upperBound)) (\(examples))"
    }

    /// `0`, `1 s`, `1.5 s`, `10 min`, `24 h`: a bound in a message.
    public static func text(_ seconds: Double) -> String {
        if seconds == 0 { return "0" }
        if seconds >= 3600 && seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(NumberText.format(seconds / 3600)) h" }
        if seconds >= 60 && seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(NumberText.format(seconds / 60)) min" }
        return "\(NumberText.format(seconds)) s"
    }

    // MARK: - Forms

    /// `M:SS`, `H:MM:SS`, the last part with an optional fraction (`1:30.5`).
    private static func clock(_ bytes: [UInt8]) -> NumberText.Reading<Double> {
        let parts = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return .notANumber }
        var total = 0.0
        for (position, part) in parts.enumerated() {
            let isFirst = position == 0
            let isLast = position == parts.count - 1
            var whole = part[...]
            var fraction: ArraySlice<UInt8> = []
            if isLast, let dot = part.firstIndex(of: UInt8(ascii: ".")) {
                whole = part[..<dot]
                fraction = part[dot...]
                guard fraction.count > 1, fraction.dropFirst().allSatisfy(isDigit) else { return .notANumber }
            }
            guard isFirst || whole.count == 2 else { return .notANumber }
            switch NumberText.wholeValue(String(decoding: whole, as: UTF8.self)) {
            case .value(let value):
                guard isFirst || value < 60 else { return .notANumber }
                total = total * 60 + Double(value)
            case .tooLarge: return .tooLarge
            case .notANumber: return .notANumber
            }
            if !fraction.isEmpty, case .value(let part) = NumberText.decimalValue(String(decoding: fraction, as: UTF8.self)) {
                total += part
            }
            if total > maximumSeconds { return .tooLarge }
        }
        return .value(total)
    }

    /// The units, in the order they must come (each at most once), and their length in seconds.
    private static let units: [(name: String, seconds: Double)] = [("h", 3600), ("min", 60), ("m", 60), ("s", 1), ("ms", 0.001)]

    /// `1h30m`, `90s`, `500ms`, `1.5min`.
    private static func withUnits(_ bytes: [UInt8]) -> NumberText.Reading<Double> {
        var total = 0.0
        var lastRank = -1
        var index = 0
        while index < bytes.count {
            let numberStart = index
            while index < bytes.count, isDigit(bytes[index]) || bytes[index] == UInt8(ascii: ".") { index += 1 }
            let unitStart = index
            while index < bytes.count, isLetter(bytes[index]) { index += 1 }
            guard unitStart > numberStart, index > unitStart else { return .notANumber }
            let unitName = String(decoding: bytes[unitStart..<index], as: UTF8.self).lowercased()
            // `m` and `min` are one unit (rank 1); ranks must rise: h, then m, then s, then ms.
            guard let unit = units.firstIndex(where: { $0.name == unitName }) else { return .notANumber }
            let rank = unit >= 2 ? unit - 1 : unit
            guard rank > lastRank else { return .notANumber }
            lastRank = rank
            switch NumberText.decimalValue(String(decoding: bytes[numberStart..<unitStart], as: UTF8.self)) {
            // Milliseconds are divided (exact for whole ones: 500ms is 0.5 s), the others multiplied.
            case .value(let value): total += unitName == "ms" ? value / 1000 : value * units[unit].seconds
            case .tooLarge: return .tooLarge
            case .notANumber: return .notANumber
            }
            if total > maximumSeconds { return .tooLarge }
        }
        return .value(total)
    }

    private static func scaled(_ reading: NumberText.Reading<Double>, by unit: Double) -> NumberText.Reading<Double> {
        if case .value(let value) = reading { return .value(value * unit) }
        return reading
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }
}
