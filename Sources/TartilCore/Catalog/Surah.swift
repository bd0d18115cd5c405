/// One of the 114 surahs, with Tanzil's names and counts.
public struct Surah: Sendable, Hashable, Identifiable {
    /// Where the surah was revealed.
    public enum RevelationPlace: String, Sendable, Hashable {
        case meccan = "Meccan"
        case medinan = "Medinan"
    }

    /// 1…114.
    public let number: Int
    public let ayahCount: Int
    /// Global number (1…6236) of the surah's first ayah.
    public let firstGlobalAyah: Int
    public let nameArabic: String
    /// Tanzil's transliteration, e.g. `Al-Baqara`, `Yaseen`.
    public let nameTransliterated: String
    public let nameEnglish: String
    public let revelationPlace: RevelationPlace
    public let revelationOrder: Int

    public var id: Int { number }

    /// `2 (Al-Baqara)`: how messages name a surah.
    public var label: String { "\(number) (\(nameTransliterated))" }

    /// The surah's first ayah.
    public var firstAyah: AyahRef { AyahRef(unchecked: number, 1) }
    /// The surah's last ayah.
    public var lastAyah: AyahRef { AyahRef(unchecked: number, ayahCount) }
    /// All of the surah's ayat.
    public var range: AyahRange { AyahRange(unchecked: firstAyah, lastAyah) }
}
