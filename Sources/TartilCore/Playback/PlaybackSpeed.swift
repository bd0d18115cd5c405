/// How fast recitation plays, pitch preserved: 0.5× to 2× in steps of 0.05 (`--speed`, `speed X`, the `[` and `]`
/// keys). The one place speeds are parsed, checked and stepped; values are kept on the 0.05 grid (as whole
/// twentieths), so stepping up and down never drifts.
///
/// ```swift
/// try PlaybackSpeed.parse("1.25", for: "--speed")           // 1.25
/// PlaybackSpeed.stepped(1.95, by: 1)                         // 2.0 (clamped)
/// try PlaybackSpeed.parse("1.23", for: "--speed")
/// // TartilError.usage("--speed takes a number from 0.5 to 2 in steps of 0.05, not '1.23'")
/// ```
public enum PlaybackSpeed {
    /// The recording as it is: nothing is stretched.
    public static let normal = 1.0
    /// The slowest and fastest speeds.
    public static let range: ClosedRange<Double> = 0.5...2.0
    /// The step between speeds (and what `[` and `]` move by).
    public static let step = 0.05
    /// Steps in 1×: speeds are whole twentieths, divided (not multiplied by 0.05) so that 23 steps are the same
    /// Double as the literal 1.15.
    static let stepsPerUnit = 20.0

    /// `from 0.5 to 2 in steps of 0.05` (or up to `maximum`), for messages.
    public static func allowed(maximum: Double = range.upperBound) -> String {
        "from \(NumberText.format(range.lowerBound)) to \(NumberText.format(min(maximum, range.upperBound))) in steps of \(NumberText.format(step))"
    }

    /// Reads a speed typed by a person: `1.25` (or `1.25x`), checked against the range (up to `maximum`) and the
    /// 0.05 grid. `what` names the option or command in the message.
    public static func parse<S: StringProtocol>(
        _ text: S, maximum: Double = range.upperBound, for what: String
    ) throws(TartilError) -> Double {
        var digits = Substring(text)
        if digits.hasSuffix("x") || digits.hasSuffix("×") { digits = digits.dropLast() }
        guard case .value(let value) = NumberText.decimalValue(digits), let speed = onGrid(value),
            speed >= range.lowerBound, speed <= min(maximum, range.upperBound)
        else {
            throw .usage("\(what) takes a number \(allowed(maximum: maximum)), not '\(text)'")
        }
        return speed
    }

    /// `speed` when it is a speed tartil plays (in the range, up to `maximum`, on the grid); a usage error saying
    /// what is allowed otherwise.
    public static func checked(_ speed: Double, maximum: Double = range.upperBound, for what: String) throws(TartilError) -> Double {
        guard let snapped = onGrid(speed), snapped >= range.lowerBound, snapped <= min(maximum, range.upperBound) else {
            throw .usage("\(what) takes a number \(allowed(maximum: maximum)), not '\(text(speed))'")
        }
        return snapped
    }

    /// `speed` moved by `steps` steps of 0.05 and held within the range (up to `maximum`): what `[` and `]` do.
    public static func stepped(_ speed: Double, by steps: Int, maximum: Double = range.upperBound) -> Double {
        let twentieths = Int((speed * stepsPerUnit).rounded()) + steps
        let low = Int((range.lowerBound * stepsPerUnit).rounded())
        let high = Int((min(maximum, range.upperBound) * stepsPerUnit + 1e-9).rounded(.down))
        return Double(min(max(twentieths, low), max(low, high))) / stepsPerUnit
    }

    /// `1.25`, `0.5`, `2`: a speed as the user would write it.
    public static func text(_ speed: Double) -> String {
        // Beyond any speed (1e308 in a file): shown as the Double it is, never converted (Int(1e310) traps).
        guard speed.isFinite, abs(speed) < 1e6 else { return "\(speed)" }
        let hundredths = Int((speed * 100).rounded())
        guard abs(speed * 100 - Double(hundredths)) < 1e-6, abs(hundredths) < 1_000_000 else { return "\(speed)" }
        let fraction = hundredths % 100
        return "\(hundredths / 100)" + (fraction == 0 ? "" : fraction % 10 == 0 ? ".\(fraction / 10)" : fraction < 10 ? ".0\(fraction)" : ".\(fraction)")
    }

    /// The grid value `value` is (within rounding: 1.15 typed is 1.15 kept), or nil when it is between steps.
    private static func onGrid(_ value: Double) -> Double? {
        guard value.isFinite, abs(value) < 1e6 else { return nil }
        let twentieths = (value * stepsPerUnit).rounded()
        guard abs(value * stepsPerUnit - twentieths) < 1e-6 else { return nil }
        return twentieths / stepsPerUnit
    }
}
