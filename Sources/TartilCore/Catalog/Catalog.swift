/// The Qur'an's structure: 114 surahs, 6236 ayat, and where each juz, hizb, hizb quarter and page starts.
///
/// Generated from Tanzil's metadata (CC-BY) by `tools/gen-catalog`; see `CatalogData.swift`.
public enum Catalog {
    /// Number of surahs (114).
    public static let surahCount = 114
    /// Number of ayat (6236).
    public static let totalAyat = 6236
    /// Number of juz (30).
    public static let juzCount = 30
    /// Number of hizb (60), two per juz.
    public static let hizbCount = 60
    /// Number of hizb quarters (240).
    public static let hizbQuarterCount = 240
    /// Number of pages of the Madani mushaf (604).
    public static let pageCount = 604

    /// The 114 surahs in order; `surahs[n - 1]` is surah n.
    public static let surahs: [Surah] = generatedSurahs

    /// First ayah of each juz; `juzStarts[n - 1]` starts juz n.
    public static let juzStarts: [AyahRef] = generatedJuzStarts.map { AyahRef(unchecked: $0.0, $0.1) }
    /// First ayah of each hizb quarter.
    public static let hizbQuarterStarts: [AyahRef] = generatedHizbQuarterStarts.map { AyahRef(unchecked: $0.0, $0.1) }
    /// First ayah of each hizb (every fourth quarter).
    public static let hizbStarts: [AyahRef] = stride(from: 0, to: hizbQuarterCount, by: 4).map { hizbQuarterStarts[$0] }
    /// First ayah of each page.
    public static let pageStarts: [AyahRef] = generatedPageStarts.map { AyahRef(unchecked: $0.0, $0.1) }

    /// Surah `number`, or a usage error naming the allowed numbers.
    public static func surah(_ number: Int) throws(TartilError) -> Surah {
        guard number >= 1 else {
            throw .usage("surah \(number) does not exist: surahs are numbered 1-\(surahCount)")
        }
        guard number <= surahCount else {
            throw .usage("there are \(surahCount) surahs, so there is no surah \(number)")
        }
        return surahs[number - 1]
    }

    /// Juz `number` (1…30) as a range of ayat.
    public static func juz(_ number: Int) throws(TartilError) -> AyahRange {
        try division(number, starts: juzStarts, singular: "juz", plural: "juz")
    }

    /// Hizb `number` (1…60) as a range of ayat.
    public static func hizb(_ number: Int) throws(TartilError) -> AyahRange {
        try division(number, starts: hizbStarts, singular: "hizb", plural: "hizb")
    }

    /// Page `number` (1…604) as a range of ayat.
    public static func page(_ number: Int) throws(TartilError) -> AyahRange {
        try division(number, starts: pageStarts, singular: "page", plural: "pages")
    }

    /// Division n runs from its start to the ayah before division n+1 starts (or to 114:6).
    private static func division(_ number: Int, starts: [AyahRef], singular: String, plural: String)
        throws(TartilError) -> AyahRange
    {
        guard (1...starts.count).contains(number) else {
            throw .usage("there are \(starts.count) \(plural), numbered 1-\(starts.count), so there is no \(singular) \(number)")
        }
        let first = starts[number - 1]
        let lastGlobal = number < starts.count ? starts[number].global - 1 : totalAyat
        return AyahRange(unchecked: first, try AyahRef(global: lastGlobal))
    }

    /// The juz (1…30) an ayah belongs to.
    public static func juz(containing ayah: AyahRef) -> Int { index(of: ayah, in: juzStarts) }
    /// The page (1…604) an ayah is on.
    public static func page(containing ayah: AyahRef) -> Int { index(of: ayah, in: pageStarts) }
    /// The hizb quarter (1…240) an ayah belongs to.
    public static func hizbQuarter(containing ayah: AyahRef) -> Int { index(of: ayah, in: hizbQuarterStarts) }

    /// 1-based number of the last start at or before `ayah`.
    private static func index(of ayah: AyahRef, in starts: [AyahRef]) -> Int {
        lastIndex(in: starts, atOrBefore: ayah) + 1
    }

    /// Global number of each surah's first ayah, in order (for finding the surah of a global number).
    static let surahFirstGlobalAyat: [Int] = surahs.map(\.firstGlobalAyah)

    /// Index of the last element of `sorted` that is at or before `value` (binary search); `sorted[0]` must be.
    static func lastIndex<Element: Comparable>(in sorted: [Element], atOrBefore value: Element) -> Int {
        var low = 0
        var high = sorted.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sorted[middle] <= value { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
