/// A day of a memorisation journey: a local calendar date, as a count of days since 1970-01-01.
///
/// Which day a moment belongs to is the listener's: local time, less the plan's start of day (someone who begins
/// after Fajr at 04:30 still counts 01:00 as the day before). The front end finds the local time's offset from
/// UTC; the arithmetic here is pure.
public struct HifzDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let number: Int

    public init(number: Int) { self.number = number }

    /// The day `timeMs` (UTC milliseconds) falls on, `offsetSeconds` east of UTC, for a day that starts
    /// `dayStartMinutes` after midnight.
    public init(timeMs: Int64, offsetSeconds: Int, dayStartMinutes: Int) {
        let local = Int(timeMs / 1000) + offsetSeconds - dayStartMinutes * 60
        number = Int((Double(local) / 86_400).rounded(.down))
    }

    /// `2026-12-03` (years 1970-9999); nil for anything else.
    public init?(text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = NumberText.whole(text.prefix(4), in: 1970...9999),
            let month = NumberText.whole(text.dropFirst(5).prefix(2), in: 1...12),
            let day = NumberText.whole(text.dropFirst(8), in: 1...Self.daysIn(month: month, year: year))
        else { return nil }
        number = Self.days(year: year, month: month, day: day)
    }

    /// `2026-12-03`.
    public var description: String {
        let (year, month, day) = civil
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    /// Year, month and day (the proleptic Gregorian calendar).
    public var civil: (year: Int, month: Int, day: Int) {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day `count` days later (earlier when negative).
    public func adding(_ count: Int) -> HifzDay { HifzDay(number: number + count) }

    public static func < (lhs: HifzDay, rhs: HifzDay) -> Bool { lhs.number < rhs.number }

    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
