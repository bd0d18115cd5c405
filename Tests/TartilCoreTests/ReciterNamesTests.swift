import Testing

@testable import TartilCore

/// Forgiving reciter names and "did you mean", for every word a person types.
@Suite struct ReciterNamesTests {
    static let list: MirrorList = {
        let reciters = [
            ("alafasy-128", "Mishary Rashid Alafasy"), ("alafasy-64", "Mishary Rashid Alafasy"),
            ("husary-128", "Mahmoud Khalil Al-Husary"), ("ibrahim-alakhdar", "Ibrahim Al-Akhdar"),
            ("minshawi-murattal-128", "Mohamed Siddiq al-Minshawi"), ("emad-al-mansary", "Emad Al-Mansary"),
            ("emad-al-mansary-gapless", "Emad Al-Mansary (gapless surah files)"),
        ].map { #"{"id": "\#($0.0)", "name": "\#($0.1)", "style": "murattal", "mirrors": [{"name": "m", "url": "https://example.org/\#($0.0)/{surah3}{ayah3}.mp3"}]}"# }
        let json = #"{"version": 1, "reciters": ["# + reciters.joined(separator: ", ") + "]}"
        return try! MirrorList.parse(bytes: Array(json.utf8), file: "m.json")
    }()

    @Test(arguments: [
        ("ibrahim-alakhdar", "ibrahim-alakhdar"), ("Ibrahim-Alakhdar", "ibrahim-alakhdar"), ("ALAFASY-128", "alafasy-128"),
        ("ibr", "ibrahim-alakhdar"), ("akhdar", "ibrahim-alakhdar"), ("Ibrahim Al-Akhdar", "ibrahim-alakhdar"),
        ("husary", "husary-128"), ("minshawi", "minshawi-murattal-128"), ("khalil", "husary-128"),
        // A name that fits a reciter and its variants means the reciter; the variant is had by its own words.
        ("emad", "emad-al-mansary"), ("mansary", "emad-al-mansary"), ("Emad Al-Mansary", "emad-al-mansary"),
        ("emad-al-mansary-g", "emad-al-mansary-gapless"), ("gapless", "emad-al-mansary-gapless"), ("mansary gapless", "emad-al-mansary-gapless"),
    ])
    func aNameSelectsTheOneReciterItFits(typed: String, id: String) throws {
        #expect(try Self.list.reciter(named: typed).id.rawValue == id)
    }

    @Test(arguments: [
        ("alafasy", "could be 2 reciters; did you mean alafasy-128, alafasy-64?"),
        ("mishary", "could be 2 reciters; did you mean alafasy-128, alafasy-64?"),
        ("ibrahim-alakhdr", "no reciter 'ibrahim-alakhdr' in mirrors.json; did you mean ibrahim-alakhdar?"),
        ("husray-128", "did you mean husary-128?"),
        ("qwerty", "no reciter 'qwerty' in mirrors.json (`tartil reciters` lists them)"),
        ("", "the reciter is empty"),
    ])
    func aNameThatFitsNoneOrManySaysWhich(typed: String, message: String) {
        #expect(throws: TartilError.self) { try Self.list.reciter(named: typed) }
        do {
            _ = try Self.list.reciter(named: typed)
        } catch {
            #expect(error.code == .usage && error.message.contains(message), "\(error.message)")
        }
    }

    @Test func anIdFromAFileMustBeExact() throws {
        #expect(throws: TartilError.self) { try Self.list.reciter(try ReciterID("ibr")) }
        #expect(try Self.list.reciter(try ReciterID("husary-128")).id.rawValue == "husary-128")
    }

    @Test func suggestionsStayWithinTheDistanceTheWordAllows() {
        #expect(EditDistance.between("stauts", "status") == 1, "a swap of neighbours is one edit")
        #expect(EditDistance.between("speed", "seek") == 2)
        #expect(Suggestion.closest(to: "speed", among: ["seek", "stop"]).isEmpty, "two edits is too far for five letters")
        #expect(Suggestion.closest(to: "stauts", among: ["status", "stop", "seek"]) == ["status"])
        #expect(Suggestion.closest(to: "prefech", among: ["prefetch", "play"]) == ["prefetch"])
        #expect(Suggestion.closest(to: "bookmrks", among: ["bookmarks", "bookmark"]) == ["bookmarks", "bookmark"])
        #expect(Suggestion.closest(to: "--repaet", among: ["--repeat", "--reciter"]) == ["--repeat"])
        #expect(Suggestion.hint(for: "x", among: ["y"]) == "; did you mean y?")
        #expect(Suggestion.hint(for: String(repeating: "a", count: 65), among: ["a"]).isEmpty)
        for word in ["a", "ab", "abcd", "abcdefgh", "abcdefghijkl", String(repeating: "z", count: 40)] {
            #expect(Suggestion.allowedDistance(for: word) == max(1, min(3, word.count / 4)))
        }
    }
}
