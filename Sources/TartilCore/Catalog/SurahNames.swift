import Glibc

/// Finds surahs by name, forgivingly: case, hyphens, apostrophes, the article (`al-`, `an-`, …), doubled vowels
/// and a final `h` do not matter, so `yasin`, `Ya-Sin` and `Yaseen` all name surah 36, and `al-mulk`, `Al Mulk`
/// and `mulk` name surah 67. English names work too (`the cow`, `cow`).
public enum SurahNames {
    /// The outcome of looking a name up.
    public enum Match: Sendable, Equatable {
        case found(Surah)
        /// The name fits several surahs (`the dawn` is 89 Al-Fajr and 113 Al-Falaq).
        case ambiguous([Surah])
        /// No surah has this name; `suggestions` are the closest names, best first.
        case notFound(suggestions: [Surah])
    }

    /// Looks up `name`.
    public static func match(_ name: String) -> Match {
        // No name is this long; longer text is not looked up (keys and edit distances grow with its length).
        guard name.utf8.count <= longestName else { return .notFound(suggestions: []) }
        var candidates: Set<Int> = []
        for key in keys(for: name) {
            candidates.formUnion(index[key] ?? [])
        }
        let surahs = candidates.sorted().map { Catalog.surahs[$0 - 1] }
        switch surahs.count {
        case 1: return .found(surahs[0])
        case 0: return .notFound(suggestions: suggestions(for: name))
        default: return .ambiguous(surahs)
        }
    }

    /// The most bytes a name is read from (the longest name in the catalog has 30 or so).
    static let longestName = 64

    // MARK: - Normalization

    /// Words that may start a name and can be left out: articles of transliterated names (`Al-`, `An-`,
    /// `Ash-`, …), `Aal-i-` of Aal-i-Imraan (so `imran` works), English `The`, and `surah`.
    private static let articles: Set<String> = [
        "al", "an", "ar", "as", "ash", "at", "ad", "adh", "az", "aal", "i", "the", "surah", "surat", "sura",
    ]

    /// The lookup keys of a name: its normalized form, and the same without a leading article.
    static func keys(for name: String) -> [String] {
        let words = name.lowercased()
            .split(whereSeparator: { $0 == "-" || $0 == " " || $0 == "_" || $0 == "." })
            .map(String.init)
        guard !words.isEmpty else { return [] }
        var keys = [normalize(words.joined())]
        var rest = words[...]
        while rest.count > 1, let head = rest.first, articles.contains(head) {
            rest = rest.dropFirst()
            keys.append(normalize(rest.joined()))
        }
        return keys.filter { !$0.isEmpty }
    }

    /// Letters only, doubled vowels and spelling variants folded (`ee`→`i`, `oo`/`ou`→`u`), final `h` after a
    /// vowel dropped (`baqarah`→`baqara`).
    static func normalize(_ text: String) -> String {
        var letters = String(text.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) }.map(Character.init))
        for (from, to) in [("ee", "i"), ("oo", "u"), ("ou", "u"), ("aa", "a"), ("ii", "i"), ("uu", "u")] {
            letters = letters.replacingEvery(from, with: to)
        }
        if letters.count > 3, letters.hasSuffix("h"),
            let beforeLast = letters.dropLast().last, "aeiou".contains(beforeLast)
        {
            letters.removeLast()
        }
        return letters
    }

    /// Normalized key → the surahs it names.
    private static let index: [String: Set<Int>] = {
        var index: [String: Set<Int>] = [:]
        for surah in Catalog.surahs {
            for name in [surah.nameTransliterated, surah.nameEnglish] {
                for key in keys(for: name) { index[key, default: []].insert(surah.number) }
            }
        }
        return index
    }()

    // MARK: - Suggestions

    /// Up to three surahs whose names are within a small edit distance of `name`, closest first.
    private static func suggestions(for name: String) -> [Surah] {
        guard let typed = keys(for: name).last, !typed.isEmpty else { return [] }
        let allowed = max(1, typed.count / 3)
        var best: [Int: Int] = [:]
        for (key, numbers) in index where abs(key.count - typed.count) <= allowed {
            let distance = EditDistance.between(typed, key)
            guard distance <= allowed else { continue }
            for number in numbers { best[number] = min(best[number] ?? .max, distance) }
        }
        return best.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(3).map { Catalog.surahs[$0.key - 1] }
    }
}
