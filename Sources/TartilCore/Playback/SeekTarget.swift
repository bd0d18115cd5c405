/// Where a `seek` goes. Times are within the current surah's part of the plan (the scrubber's span).
///
/// | text | target |
/// |---|---|
/// | `3:20`, `1:02:03`, `95`, `95.5s`, `2m`, `1h5m` | that time into the surah (any form `DurationText` reads) |
/// | `+30`, `-10`, `+1:30`, `-500ms` | forwards or back from where playback is |
/// | `45%` | that share of the surah |
/// | `2:255`, `36:1`, `ayah 3:20`, `yasin:12` | the start of that ayah (its basmala for ayah 1) |
///
/// `M:SS` (two digits of seconds, below 60) reads as a time, so `3:20` is 3 min 20 s; for ayah 3:20 write
/// `ayah 3:20`.
public enum SeekTarget: Sendable, Hashable {
    case time(seconds: Double)
    case offset(seconds: Double)
    case fraction(Double)
    case ayah(AyahRef)

    public static let forms = "a time (3:20, 1:02:03, 95, 95.5s, 2m), +TIME or -TIME (+30, -1:00, -500ms), a share (45%), or an ayah (2:255, ayah 3:20)"

    /// The longest time a target can name: 100 hours, longer than any recitation of the whole Qur'an.
    public static let maximumSeconds = Int(DurationText.maximumSeconds)

    public static func parse(_ text: String) throws(TartilError) -> SeekTarget {
        let trimmed = text.trimmedWhitespace
        guard !trimmed.isEmpty else { throw .usage("seek needs a target: \(forms)") }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("ayah ") || lower.hasPrefix("ayah:") {
            return .ayah(try singleAyah(String(trimmed.dropFirst(5)), original: trimmed))
        }
        if let sign = trimmed.first, sign == "+" || sign == "-" {
            guard let seconds = try time(trimmed.dropFirst(), original: trimmed) else {
                throw .usage("'\(trimmed)' is not a time to move by: write + or - and a time (+30, -10, +1:30, -500ms, +2m)")
            }
            return .offset(seconds: sign == "-" ? -seconds : seconds)
        }
        if trimmed.hasSuffix("%") {
            guard let percent = NumberText.decimal(trimmed.dropLast(), in: 0...100) else {
                throw .usage("'\(trimmed)' is not a share of the surah: write 0% to 100%")
            }
            return .fraction(percent / 100)
        }
        if let seconds = try time(trimmed[...], original: trimmed) { return .time(seconds: seconds) }
        if trimmed.contains(":") || trimmed.contains(where: \.isLetter) {
            return .ayah(try singleAyah(trimmed, original: trimmed))
        }
        throw .usage("'\(trimmed)' is not a seek target: use \(forms)")
    }

    /// A time in seconds, in any form `DurationText` reads (`95`, `95.5s`, `2m`, `M:SS`, `H:MM:SS`); nil for
    /// anything else. A time longer than `maximumSeconds` is a usage error.
    static func time(_ text: Substring, original: String) throws(TartilError) -> Double? {
        switch DurationText.seconds(text) {
        case .value(let seconds): return seconds
        case .tooLarge:
            throw .usage("'\(original)' is longer than any recitation: times go up to \(maximumSeconds / 3600):00:00 (\(maximumSeconds) s)")
        case .notANumber: return nil
        }
    }

    private static func singleAyah(_ text: String, original: String) throws(TartilError) -> AyahRef {
        let references = try ReferenceParser.parse([text])
        guard references.count == 1, let reference = references.first, reference.range.first == reference.range.last else {
            throw .usage("'\(original)' names more than one ayah: seek goes to one ayah (2:255, ayah 3:20)")
        }
        return reference.range.first
    }
}
