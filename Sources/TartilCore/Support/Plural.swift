/// Singular and plural in messages: `1 surah`, `2 surahs`, `1 ayah`, `2 ayat`. Every count printed next to a noun
/// goes through here.
///
/// ```swift
/// Plural.count(1, "ayah")            // "1 ayah"
/// Plural.count(2, "ayah")            // "2 ayat"
/// Plural.count(1234, "byte", number: "1,234")  // "1,234 bytes"
/// ```
public enum Plural {
    /// Nouns whose plural is not the singular with `s`.
    static let irregular = ["ayah": "ayat", "entry": "entries", "was": "were", "has": "have", "is": "are"]

    /// `noun` as it goes with `count`: `ayah` for 1, `ayat` for any other count.
    public static func word(_ count: Int, _ noun: String) -> String {
        guard count != 1 else { return noun }
        return irregular[noun] ?? noun + "s"
    }

    /// `count` and `noun` as they go together; `number` is how the count is written when not plainly (`1,234`).
    public static func count(_ count: Int, _ noun: String, number: String? = nil) -> String {
        "\(number ?? String(count)) \(word(count, noun))"
    }
}
