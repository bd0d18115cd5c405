import Foundation
import TestSupport
import Testing

@testable import TartilCore

@Suite struct CatalogTests {
    @Test func surahsAndAyatAddUp() {
        #expect(Catalog.surahs.count == 114)
        #expect(Catalog.surahs.reduce(0) { $0 + $1.ayahCount } == 6236)
        #expect(Catalog.surahs.map(\.number) == Array(1...114))
        var global = 1
        for surah in Catalog.surahs {
            #expect(surah.firstGlobalAyah == global, "surah \(surah.number)")
            global += surah.ayahCount
        }
    }

    @Test func namesAreTanzils() throws {
        let baqara = try Catalog.surah(2)
        #expect(baqara.nameTransliterated == "Al-Baqara")
        #expect(baqara.nameEnglish == "The Cow")
        #expect(baqara.nameArabic == "البقرة")
        #expect(baqara.ayahCount == 286)
        #expect(baqara.revelationPlace == .medinan)
        #expect(try Catalog.surah(36).nameTransliterated == "Yaseen")
        #expect(try Catalog.surah(114).ayahCount == 6)
    }

    @Test func divisionsStartWhereTanzilSays() throws {
        #expect(Catalog.juzStarts.count == 30)
        #expect(Catalog.hizbQuarterStarts.count == 240)
        #expect(Catalog.hizbStarts.count == 60)
        #expect(Catalog.pageStarts.count == 604)
        #expect(Catalog.juzStarts[1] == (try AyahRef(2, 142)))
        #expect(Catalog.juzStarts[29] == (try AyahRef(78, 1)))
        #expect(Catalog.hizbStarts[1] == (try AyahRef(2, 75)))
        #expect(Catalog.pageStarts[1] == (try AyahRef(2, 1)))
        #expect(Catalog.pageStarts[603] == (try AyahRef(112, 1)))
        let juz30 = try Catalog.juz(30)
        #expect(juz30.first == (try AyahRef(78, 1)))
        #expect(juz30.last == (try AyahRef(114, 6)))
        #expect(juz30.count == 564)
        let juz1 = try Catalog.juz(1)
        #expect(juz1.last == (try AyahRef(2, 141)))
        #expect(try Catalog.page(1).count == 7)
        #expect(try Catalog.hizb(60).last == (try AyahRef(114, 6)))
    }

    @Test func everyDivisionTilesTheWholeQuran() throws {
        for (count, range) in [
            (30, { (n: Int) throws(TartilError) in try Catalog.juz(n) }),
            (60, { (n: Int) throws(TartilError) in try Catalog.hizb(n) }),
            (604, { (n: Int) throws(TartilError) in try Catalog.page(n) }),
        ] {
            var next = 1
            for number in 1...count {
                let division = try range(number)
                #expect(division.first.global == next)
                next = division.last.global + 1
            }
            #expect(next == 6237)
        }
    }

    @Test func globalNumbersRoundTripForEveryAyah() throws {
        var global = 1
        for surah in Catalog.surahs {
            for ayah in 1...surah.ayahCount {
                let reference = try AyahRef(surah.number, ayah)
                #expect(reference.global == global)
                #expect(try AyahRef(global: global) == reference)
                global += 1
            }
        }
        #expect(try AyahRef(global: 262) == (try AyahRef(2, 255)))
        #expect(try AyahRef(global: 6222) == (try AyahRef(112, 1)))
    }

    @Test func containingDivisionIsFoundByBinarySearch() throws {
        #expect(Catalog.juz(containing: try AyahRef(2, 141)) == 1)
        #expect(Catalog.juz(containing: try AyahRef(2, 142)) == 2)
        #expect(Catalog.juz(containing: try AyahRef(114, 6)) == 30)
        #expect(Catalog.page(containing: try AyahRef(1, 7)) == 1)
        #expect(Catalog.page(containing: try AyahRef(36, 1)) == 440)
        #expect(Catalog.hizbQuarter(containing: try AyahRef(1, 1)) == 1)
    }

    @Test func ayahRefFormatsAndOrders() throws {
        let ayah = try AyahRef(36, 1)
        #expect(ayah.description == "36:1")
        #expect(ayah.fileStem == "036001")
        #expect(try AyahRef(2, 255) < ayah)
        #expect(try AyahRef(114, 6).next == nil)
        #expect(try AyahRef(1, 7).next == (try AyahRef(2, 1)))
    }

    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)")) func generatedCatalogMatchesTheMetadata() throws {
        let real = try #require(TestPaths.sharedReal)
        let data = try Data(contentsOf: URL(fileURLWithPath: real + "/quran-metadata.json"))
        let metadata = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let surahs = try #require(metadata["surahs"] as? [[String: Any]])
        for (index, entry) in surahs.enumerated() {
            let surah = Catalog.surahs[index]
            #expect(surah.ayahCount == entry["ayah_count"] as? Int)
            #expect(surah.nameTransliterated == entry["name_transliterated"] as? String)
            #expect(surah.nameArabic == entry["name_arabic"] as? String)
        }
        let pages = try #require(metadata["page_starts"] as? [[String: Int]])
        #expect(pages.map { "\($0["surah"]!):\($0["ayah"]!)" } == Catalog.pageStarts.map(\.description))
    }
}
