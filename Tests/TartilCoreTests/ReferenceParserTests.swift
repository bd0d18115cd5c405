import Testing

@testable import TartilCore

@Suite struct ReferenceParserTests {
    /// Parses `arguments` into "first-last" strings per reference.
    func ranges(_ arguments: [String]) throws -> [String] {
        try ReferenceParser.parse(arguments).map { "\($0.range.first)-\($0.range.last)" }
    }

    @Test(arguments: [
        ("36", "36:1-36:83"),
        ("036", "36:1-36:83"),
        ("36:1-12", "36:1-36:12"),
        ("2:255", "2:255-2:255"),
        ("2:255-260", "2:255-2:260"),
        ("2:284-3:5", "2:284-3:5"),
        ("78-114", "78:1-114:6"),
        ("114-114", "114:1-114:6"),
        ("juz 30", "78:1-114:6"),
        ("juz30", "78:1-114:6"),
        ("JUZ 1-2", "1:1-2:252"),
        ("para 30", "78:1-114:6"),
        ("hizb 1", "1:1-2:74"),
        ("page 1", "1:1-1:7"),
        ("page 1-3", "1:1-2:16"),
        ("page 604", "112:1-114:6"),
        ("#262", "2:255-2:255"),
        ("#1-7", "1:1-1:7"),
        ("#1-#7", "1:1-1:7"),
        ("#6236", "114:6-114:6"),
        ("yasin", "36:1-36:83"),
        ("Ya-Sin", "36:1-36:83"),
        ("Yaseen", "36:1-36:83"),
        ("al-mulk", "67:1-67:30"),
        ("Al Mulk", "67:1-67:30"),
        ("mulk", "67:1-67:30"),
        ("AL-MULK", "67:1-67:30"),
        ("baqarah", "2:1-2:286"),
        ("al-fatihah", "1:1-1:7"),
        ("fatiha", "1:1-1:7"),
        ("ali imran", "3:1-3:200"),
        ("al-imran", "3:1-3:200"),
        ("an-nas", "114:1-114:6"),
        ("ikhlas", "112:1-112:4"),
        ("the cow", "2:1-2:286"),
        ("kahf", "18:1-18:110"),
        ("rahman", "55:1-55:78"),
        ("yasin:1-12", "36:1-36:12"),
        ("al-baqara:255", "2:255-2:255"),
        ("baqara:284-imran:5", "2:284-3:5"),
        ("2:284-al-imran:5", "2:284-3:5"),
        ("the cow:255", "2:255-2:255"),
    ])
    func validReference(text: String, expected: String) throws {
        #expect(try ranges([text]) == [expected])
    }

    @Test func listsAreSeparatedBySpacesOrCommas() throws {
        #expect(try ranges(["1,36", "67"]) == ["1:1-1:7", "36:1-36:83", "67:1-67:30"])
        #expect(try ranges(["1 36 67"]) == ["1:1-1:7", "36:1-36:83", "67:1-67:30"])
        #expect(try ranges(["juz", "30", "2:255"]) == ["78:1-114:6", "2:255-2:255"])
        #expect(try ranges(["mulk", "yasin"]) == ["67:1-67:30", "36:1-36:83"])
        #expect(try ranges(["al", "mulk", "page", "1"]) == ["67:1-67:30", "1:1-1:7"])
    }

    @Test func referencesKeepTheTextAsWritten() throws {
        let references = try ReferenceParser.parse(["juz", "30", "the cow:255", "#262"])
        #expect(references.map(\.text) == ["juz 30", "the cow:255", "#262"])
    }

    @Test func uniqueAyatKeepsFirstOccurrenceOrder() throws {
        let references = try ReferenceParser.parse(["2:3-4", "2:1-3"])
        #expect(ReferenceParser.uniqueAyat(of: references).map(\.description) == ["2:3", "2:4", "2:1", "2:2"])
    }

    @Test func rangesDescribeThemselvesCompactly() throws {
        #expect(try ReferenceParser.parse(["36"])[0].range.description == "36")
        #expect(try ReferenceParser.parse(["78-114"])[0].range.description == "78-114")
        #expect(try ReferenceParser.parse(["2:255-260"])[0].range.description == "2:255-260")
        #expect(try ReferenceParser.parse(["2:284-3:5"])[0].range.description == "2:284-3:5")
        #expect(try ReferenceParser.parse(["#262"])[0].range.description == "2:255")
    }

    /// Every invalid reference is a usage error whose message names the problem and what is allowed.
    @Test(arguments: [
        ("2:300", "'2:300': surah 2 (Al-Baqara) has 286 ayat, so there is no ayah 2:300"),
        ("115", "'115': there are 114 surahs, so there is no surah 115"),
        ("0", "'0': surah 0 does not exist: surahs are numbered 1-114"),
        ("3:5-3:2", "'3:5-3:2': range runs backwards: 3:5 comes after 3:2 (write the earlier ayah first)"),
        ("3:5-2", "'3:5-2': range runs backwards: 3:5 comes after 3:2 (write the earlier ayah first)"),
        ("3:1-2:5", "'3:1-2:5': range runs backwards: 3:1 comes after 2:5 (write the earlier ayah first)"),
        ("114-78", "'114-78': range runs backwards: 114:1 comes after 78:40 (write the earlier ayah first)"),
        ("2:0", "'2:0': ayah 2:0 does not exist: ayat are numbered from 1"),
        ("1:8", "'1:8': surah 1 (Al-Faatiha) has 7 ayat, so there is no ayah 1:8"),
        ("36:84", "'36:84': surah 36 (Yaseen) has 83 ayat, so there is no ayah 36:84"),
        ("2:255-300", "'2:255-300': surah 2 (Al-Baqara) has 286 ayat, so there is no ayah 2:300"),
        ("2:284-3:201", "'2:284-3:201': surah 3 (Aal-i-Imraan) has 200 ayat, so there is no ayah 3:201"),
        ("2:", "'2:': an ayah number is missing: surah 2 (Al-Baqara) has ayat 1-286"),
        (":5", "':5': a surah is missing before ':': \(ReferenceParser.grammarSummary)"),
        ("2:x", "'2:x': 'x' is not an ayah number: surah 2 (Al-Baqara) has ayat 1-286"),
        ("2:5:6", "'2:5:6': '5:6' is not an ayah number: surah 2 (Al-Baqara) has ayat 1-286"),
        ("2:5-", "'2:5-': an ayah number is missing: surah 2 (Al-Baqara) has ayat 1-286"),
        ("2:-5", "'2:-5': an ayah number is missing: surah 2 (Al-Baqara) has ayat 1-286"),
        ("999999999999", "'999999999999': there are 114 surahs, so there is no surah 999999999999"),
        ("2:99999999999", "'2:99999999999': surah 2 (Al-Baqara) has 286 ayat, so there is no ayah 2:99999999999"),
        ("juz 31", "'juz 31': there are 30 juz, numbered 1-30, so there is no juz 31"),
        ("juz 0", "'juz 0': there are 30 juz, numbered 1-30, so there is no juz 0"),
        ("juz 3-1", "'juz 3-1': range runs backwards: juz 3 comes after juz 1"),
        ("juz x", "'juz x': 'x' is not a juz number: juz takes a number 1-30 or a range such as juz 1-2"),
        ("juz", "'juz' needs a number: juz takes a number 1-30 or a range such as juz 1-2"),
        ("page 605", "'page 605': there are 604 pages, numbered 1-604, so there is no page 605"),
        ("page 0", "'page 0': there are 604 pages, numbered 1-604, so there is no page 0"),
        ("hizb 61", "'hizb 61': there are 60 hizb, numbered 1-60, so there is no hizb 61"),
        ("#0", "'#0': there are 6236 ayat, numbered #1-#6236, so there is no #0"),
        ("#6237", "'#6237': there are 6236 ayat, numbered #1-#6236, so there is no #6237"),
        ("#", "'#' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("#abc", "'#abc' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("#5-3", "'#5-3': range runs backwards: 1:5 comes after 1:3 (write the earlier ayah first)"),
        ("#1-2-3", "'#1-2-3' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("+5", "'+5' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("-5", "'-5' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("2.5", "'2.5' is not a reference: \(ReferenceParser.grammarSummary)"),
        ("xyzzy", "'xyzzy': no surah is named 'xyzzy' (use a number 1-114 or a name; `tartil surahs` lists them)"),
        ("yasim", "'yasim': no surah is named 'yasim'; did you mean 36 (Yaseen)? (use a number 1-114 or a name; `tartil surahs` lists them)"),
        ("the dawn", "'the dawn' could be surah 89 (Al-Fajr) or 113 (Al-Falaq): use the number"),
        ("yasin:84", "'yasin:84': surah 36 (Yaseen) has 83 ayat, so there is no ayah 36:84"),
        ("mulk:1-yasin:2", "'mulk:1-yasin:2': range runs backwards: 67:1 comes after 36:2 (write the earlier ayah first)"),
    ])
    func invalidReference(text: String, message: String) {
        #expect(throws: TartilError.usage(message)) { try ReferenceParser.parse([text]) }
    }

    @Test func emptyInputIsAnError() {
        let expected = TartilError.usage("no reference given: \(ReferenceParser.grammarSummary)")
        #expect(throws: expected) { try ReferenceParser.parse([]) }
        #expect(throws: expected) { try ReferenceParser.parse(["", " , "]) }
    }

    @Test func errorsAreUsageErrors() {
        do {
            _ = try ReferenceParser.parse(["1", "2:300"])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .usage)
        }
    }
}

@Suite struct SurahNamesTests {
    @Test func everySurahIsFoundByItsOwnNames() {
        for surah in Catalog.surahs {
            #expect(SurahNames.match(surah.nameTransliterated) == .found(surah), "\(surah.nameTransliterated)")
            #expect(SurahNames.match(surah.nameTransliterated.uppercased()) == .found(surah))
        }
    }

    @Test func englishNamesThatAreSharedAreAmbiguous() {
        guard case .ambiguous(let surahs) = SurahNames.match("The Dawn") else {
            Issue.record("The Dawn should be ambiguous")
            return
        }
        #expect(surahs.map(\.number) == [89, 113])
    }

    @Test func normalizationFoldsSpellings() {
        #expect(SurahNames.normalize("Yaseen") == SurahNames.normalize("yasin"))
        #expect(SurahNames.normalize("Baqarah") == SurahNames.normalize("baqara"))
        #expect(SurahNames.normalize("Yousuf") == SurahNames.normalize("yusuf"))
    }

    @Test func editDistanceCountsEdits() {
        #expect(EditDistance.between("kitten", "sitting") == 3)
        #expect(EditDistance.between("", "abc") == 3)
        #expect(EditDistance.between("same", "same") == 0)
    }
}
