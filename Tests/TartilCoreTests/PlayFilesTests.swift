import TestSupport
import Testing

@testable import TartilCore

/// `PlayFiles` is the one answer to "which files does playing this need", shared by the plan, prefetch, eviction
/// and `cache ls`: a table of cases, and a seeded property that it is exactly the files the plan plays.
@Suite struct PlayFilesTests {
    static func ayah(_ surah: Int, _ ayah: Int) -> AyahRef { AyahRef(unchecked: surah, ayah) }

    @Test(arguments: [
        // (ayat, basmala, files needed in order)
        ("112:1-4", PlaybackOptions.Basmala.auto, "1:1 112:1 112:2 112:3 112:4"),
        ("112:1-4", .off, "112:1 112:2 112:3 112:4"),
        ("112:2-4", .auto, "112:2 112:3 112:4"),  // no ayah 1: no basmala
        ("1:1-7", .auto, "1:1 1:2 1:3 1:4 1:5 1:6 1:7"),  // surah 1's first ayah is the basmala
        ("9:1-3", .auto, "9:1 9:2 9:3"),  // surah 9 has none
        ("113:1 114:1", .auto, "1:1 113:1 114:1"),  // once, though two surahs need it
        ("1:1 112:1", .auto, "1:1 112:1"),
        ("112:1 1:1", .auto, "1:1 112:1"),
    ])
    func theFilesPlayingNeeds(ayat text: String, basmala: PlaybackOptions.Basmala, expected: String) throws {
        let ayat = try ReferenceParser.uniqueAyat(of: ReferenceParser.parse(text.split(separator: " ").map(String.init)))
        #expect(PlayFiles.needed(for: ayat, basmala: basmala).map(\.description).joined(separator: " ") == expected)
    }

    @Test func aSurahIsCompleteOnlyWithItsBasmala() {
        let ayat36 = Set((1...83).map { Self.ayah(36, $0) })
        #expect(PlayFiles.missing(fromSurah: 36, cached: ayat36) == [PlayFiles.basmala])
        #expect(PlayFiles.missing(fromSurah: 36, cached: ayat36, basmala: .off).isEmpty)
        #expect(PlayFiles.missing(fromSurah: 36, cached: ayat36.union([PlayFiles.basmala])).isEmpty)
        #expect(PlayFiles.needed(forSurah: 36).count == 84)
        #expect(PlayFiles.needed(forSurah: 1).count == 7)
        #expect(PlayFiles.needed(forSurah: 9).count == 129)
        #expect(PlayFiles.missing(fromSurah: 9, cached: Set((1...129).map { Self.ayah(9, $0) })).isEmpty)
        #expect(PlayFiles.kept(for: [Self.ayah(36, 1)]) == [Self.ayah(36, 1), PlayFiles.basmala])
        #expect(PlayFiles.kept(for: [Self.ayah(36, 2)]) == [Self.ayah(36, 2)])
    }

    /// For random requests and layouts, the files `needed` names are exactly the files the plan's items play.
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func neededIsWhatThePlanPlays(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for _ in 0..<200 {
            var ayat: [AyahRef] = []
            for _ in 0..<(1 + random.below(6)) {
                let surah = 1 + random.below(114)
                let count = Catalog.surahs[surah - 1].ayahCount
                let first = random.below(3) == 0 ? 1 : 1 + random.below(count)
                let last = min(count, first + random.below(4))
                ayat += (first...last).map { Self.ayah(surah, $0) }
            }
            ayat = ayat.reduce(into: [AyahRef]()) { if !$0.contains($1) { $0.append($1) } }
            let options = PlaybackOptions(
                basmala: random.below(2) == 0 ? .auto : .off, repeatEach: .times(1 + random.below(3)),
                stepped: random.below(3) == 0 ? Stepped(window: nil) : nil)
            let plan = try PlaybackPlan(ayat: ayat, options: options)
            let played = plan.items.compactMap(\.file)
            var seen = Set<AyahRef>()
            let inOrder = played.filter { seen.insert($0).inserted }
            #expect(PlayFiles.needed(for: ayat, basmala: options.basmala) == inOrder, "\(ayat) \(options.summary)")
        }
    }
}
