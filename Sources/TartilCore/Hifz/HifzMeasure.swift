/// How much of the Qur'an a set of ayat is, in pages of the Madinah mushaf (604 pages, 15 lines each).
///
/// The catalog knows where each page starts, not where each line does, so an ayah counts as its page's share:
/// a page of n ayat gives each 1/n of a page (Ayat al-Kursi's page has 2:255-257, a third each; 2:282 fills a
/// page alone). A line is 1/15 of a page. Amounts are kept in millionths of a page, whole numbers, so that every
/// device adds them up to the same result.
public enum HifzMeasure {
    /// Millionths of a page in a page.
    public static let page = 1_000_000
    /// Millionths of a page in a line (a page has 15).
    public static let line = page / 15
    /// Pages in an average juz (604 / 30), in millionths.
    public static let juz = 604 * page / 30

    /// Each ayah's share of its page in millionths of a page, by global number (index 0 unused).
    public static let weights: [Int] = {
        var weights = [Int](repeating: 0, count: Catalog.totalAyat + 1)
        let starts = Catalog.pageStarts.map(\.global) + [Catalog.totalAyat + 1]
        for page in 0..<Catalog.pageCount {
            let count = starts[page + 1] - starts[page]
            for global in starts[page]..<starts[page + 1] { weights[global] = Self.page / count }
        }
        return weights
    }()

    /// Each juz's total of `weights`, by juz number (index 0 unused).
    static let juzTotals: [Int] = {
        var totals = [Int](repeating: 0, count: Catalog.juzCount + 1)
        let starts = Catalog.juzStarts.map(\.global) + [Catalog.totalAyat + 1]
        for juz in 0..<Catalog.juzCount {
            totals[juz + 1] = (starts[juz]..<starts[juz + 1]).reduce(0) { $0 + weights[$1] }
        }
        return totals
    }()

    /// The juz of each ayah, by global number.
    static let juzOf: [Int] = {
        var juzOf = [Int](repeating: 0, count: Catalog.totalAyat + 1)
        let starts = Catalog.juzStarts.map(\.global) + [Catalog.totalAyat + 1]
        for juz in 0..<Catalog.juzCount {
            for global in starts[juz]..<starts[juz + 1] { juzOf[global] = juz + 1 }
        }
        return juzOf
    }()

    /// The pages `globals` make up, in millionths.
    public static func weight<S: Sequence<Int>>(of globals: S) -> Int { globals.reduce(0) { $0 + weights[$1] } }

    /// The juz `globals` make up: each juz's share that they cover, added (a whole juz is exactly 1).
    public static func juzShare<S: Sequence<Int>>(of globals: S) -> Double {
        var covered = [Int](repeating: 0, count: Catalog.juzCount + 1)
        for global in globals { covered[juzOf[global]] += weights[global] }
        return (1...Catalog.juzCount).reduce(0.0) { $0 + Double(covered[$1]) / Double(juzTotals[$1]) }
    }

    /// `weight` in pages, for printing (`1.5`, `0.33`, `12`).
    public static func pages(_ weight: Int) -> Double { Double(weight) / Double(page) }
}

/// Ayat as the reference grammar writes them, and back.
public enum HifzAyatText {
    /// `globals` (any order) as references in mushaf order, runs joined: `78:1-5, 112-114`; empty for none.
    public static func text<S: Sequence<Int>>(_ globals: S) -> String { text(inOrder: Array(Set(globals)).sorted()) }

    /// `globals` as references in the order given, runs of consecutive ayat joined: `113:4-5, 112:1`.
    public static func text(inOrder sorted: [Int]) -> String {
        var runs: [String] = []
        var index = 0
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count && sorted[end + 1] == sorted[end] + 1 { end += 1 }
            if let first = try? AyahRef(global: sorted[index]), let last = try? AyahRef(global: sorted[end]) {
                runs.append(AyahRange(unchecked: first, last).description)
            }
            index = end + 1
        }
        return runs.joined(separator: ", ")
    }

    /// The ayat of references (`78:1-5, 112-114`, `juz 30`), in the order written, each once; empty text is none.
    public static func globals(_ text: String) throws(TartilError) -> [Int] {
        guard !text.trimmedWhitespace.isEmpty, text.trimmedWhitespace.lowercased() != "none" else { return [] }
        return ReferenceParser.uniqueAyat(of: try ReferenceParser.parse([text])).map(\.global)
    }
}
