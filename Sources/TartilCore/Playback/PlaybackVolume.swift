/// How loud tartil plays, in percent of the recording's own level: 0 (silent) to 150 (`--volume`, `volume N`,
/// `volume +5`, the `9` and `0` keys). 100 is the decode as it is. The one place volumes are parsed, checked and
/// stepped.
///
/// ```swift
/// try PlaybackVolume.parse("80", for: "volume")        // .to(80)
/// try PlaybackVolume.parse("-5", for: "volume")        // .by(-5)
/// try PlaybackVolume.Change.by(10).applied(to: 145)    // 150 (a relative change stops at the ends)
/// ```
public enum PlaybackVolume {
    /// The recording's own level.
    public static let normal = 100
    public static let range: ClosedRange<Int> = 0...150
    /// What `9` and `0` move by.
    public static let step = 5

    /// A change of volume: to a level, or by some points (held within the range).
    public enum Change: Sendable, Hashable {
        case to(Int)
        case by(Int)

        /// The level this change makes from `current`: an absolute level must be in the range (a usage error
        /// naming it otherwise); a relative one stops at 0 and 150.
        public func applied(to current: Int, for what: String = "volume") throws(TartilError) -> Int {
            switch self {
            case .to(let level):
                guard range.contains(level) else { throw .usage("\(what) takes \(PlaybackVolume.allowed), not '\(level)'") }
                return level
            case .by(let points):
                return PlaybackVolume.stepped(current, by: points)
            }
        }
    }

    /// `a whole number from 0 to 150 (percent), or +N/-N to change it`, for messages.
    public static let allowed = "a whole number from \(range.lowerBound) to \(range.upperBound) (percent)"

    /// Reads `80`, `+5` or `-5` (`80%` too); `relative` says whether `+N`/`-N` are allowed (not for `--volume`).
    public static func parse<S: StringProtocol>(_ text: S, relative: Bool = true, for what: String) throws(TartilError) -> Change {
        var digits = Substring(text)
        if digits.hasSuffix("%") { digits = digits.dropLast() }
        var sign = 0
        if relative, let first = digits.first, first == "+" || first == "-" {
            sign = first == "+" ? 1 : -1
            digits = digits.dropFirst()
        }
        guard let value = NumberText.whole(digits, in: range) else {
            throw .usage("\(what) takes \(allowed)\(relative ? ", or +N/-N to change it" : ""), not '\(text)'")
        }
        return sign == 0 ? .to(value) : .by(sign * value)
    }

    /// `level` moved by `points` and held within the range: what `9` and `0` (and `volume +5`) do.
    public static func stepped(_ level: Int, by points: Int) -> Int {
        let bounded = max(-range.upperBound, min(range.upperBound, points))
        return min(range.upperBound, max(range.lowerBound, level + bounded))
    }
}
