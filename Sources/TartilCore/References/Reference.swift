/// One reference as the user wrote it, resolved to a run of ayat.
public struct Reference: Sendable, Hashable, CustomStringConvertible {
    /// What the user wrote (`juz 30`, `yasin:1-12`, `#262`).
    public let text: String
    /// The ayat it stands for.
    public let range: AyahRange

    public init(text: String, range: AyahRange) {
        self.text = text
        self.range = range
    }

    public var description: String { text }
}

/// The one reference grammar every command uses. A list is separated by spaces or commas; each item is one of:
///
/// | form | meaning |
/// |---|---|
/// | `36`, `yasin`, `al-mulk`, `the cow` | a whole surah (number or name) |
/// | `78-114` | whole surahs 78 to 114 |
/// | `2:255` | one ayah |
/// | `36:1-12`, `yasin:1-12` | ayat of one surah |
/// | `2:284-3:5` | a run across surahs |
/// | `juz 30`, `juz 1-3`, `hizb 5`, `page 1-3` | divisions of the mushaf (`juz30` works too) |
/// | `#262`, `#262-270` | global ayah numbers 1…6236 |
///
/// Every error is a usage error naming the bad item and what is allowed.
public enum ReferenceParser {
    /// A one-line summary of the grammar, for error messages and help.
    public static let grammarSummary =
        "a reference is a surah (36, yasin, al-mulk), surahs (78-114), an ayah (2:255), ayat (36:1-12, 2:284-3:5), "
        + "juz N, hizb N, page N (each also N-M) or a global ayah number (#262, #1-#7)"

    /// The surah `text` names: a number 1-114 or a name (`36`, `yasin`, `al-mulk`), as in references. For
    /// options that take one surah (`--surah`); a usage error names the bad value and what is allowed.
    public static func surah(named text: String) throws(TartilError) -> Surah {
        let trimmed = Substring(text.trimmedWhitespace)
        guard !trimmed.isEmpty else { throw .usage("a surah is missing: use a number 1-\(Catalog.surahCount) or a name") }
        return try surah(trimmed)
    }

    /// Parses command-line arguments (each may hold several items) into references, in the order given.
    public static func parse(_ arguments: [String]) throws(TartilError) -> [Reference] {
        let tokens = arguments.flatMap { argument in
            argument.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).map(String.init)
        }
        guard !tokens.isEmpty else { throw .usage("no reference given: \(grammarSummary)") }
        var references: [Reference] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if let division = Division(keywordOf: token) {
                let attached = String(token.dropFirst(division.keywordLength(in: token)))
                    .trimmingLeading(where: { $0 == ":" || $0 == "=" })
                let spec: String
                let text: String
                if attached.isEmpty {
                    guard index + 1 < tokens.count else {
                        throw .usage("'\(token)' needs a number: \(division.allowedText)")
                    }
                    spec = tokens[index + 1]
                    text = "\(token) \(spec)"
                    index += 2
                } else {
                    spec = attached
                    text = token
                    index += 1
                }
                references.append(Reference(text: text, range: try withContext(text) { () throws(TartilError) in
                    try division.range(spec)
                }))
            } else if let first = token.first, first.isLetter {
                let (reference, used) = try parseName(tokens, from: index)
                references.append(reference)
                index += used
            } else {
                references.append(Reference(text: token, range: try withContext(token) { () throws(TartilError) in
                    try parseItem(token)
                }))
                index += 1
            }
        }
        return references
    }

    /// Every ayah of `references`, in order, each once (the first time it appears).
    /// Linear in the references and the ayat they name once: a line of thousands of whole-Qur'an ranges costs
    /// one pass of global numbers each, not thousands of hashed ayat.
    public static func uniqueAyat(of references: [Reference]) -> [AyahRef] {
        var seen = [Bool](repeating: false, count: Catalog.totalAyat + 1)
        var ayat: [AyahRef] = []
        for reference in references {
            for global in reference.range.first.global...reference.range.last.global where !seen[global] {
                seen[global] = true
                if let ayah = try? AyahRef(global: global) { ayat.append(ayah) }
            }
        }
        return ayat
    }

    // MARK: - Items

    /// A name may span several tokens (`al mulk`, `ali imran`, `the cow:1-5`): the longest run that names a
    /// surah wins.
    private static func parseName(_ tokens: [String], from start: Int) throws(TartilError) -> (Reference, Int) {
        let longest = min(tokens.count - start, 4)
        if longest > 1 {
            for length in stride(from: longest, to: 1, by: -1) {
                let words = tokens[start..<(start + length)]
                // Only the last word may carry the `:ayah` part; keywords are never swallowed into a name.
                if words.dropLast().contains(where: { $0.contains(":") || Division(keywordOf: $0) != nil }) {
                    continue
                }
                let text = words.joined(separator: " ")
                let name = text.prefix(while: { $0 != ":" })
                if case .notFound = SurahNames.match(String(name)) { continue }
                let range = try withContext(text) { () throws(TartilError) in try parseItem(text) }
                return (Reference(text: text, range: range), length)
            }
        }
        let text = tokens[start]
        let range = try withContext(text) { () throws(TartilError) in try parseItem(text) }
        return (Reference(text: text, range: range), 1)
    }

    /// One item without a division keyword.
    static func parseItem(_ text: String) throws(TartilError) -> AyahRange {
        if text.hasPrefix("#") { return try parseGlobal(text) }
        guard let colon = text.firstIndex(of: ":") else {
            // `36`, `78-114` or a name (which may itself contain hyphens, so names are tried first).
            if let dash = text.firstIndex(of: "-"), isDigits(text[..<dash]), isDigits(text[text.index(after: dash)...]) {
                let first = try surahNumber(text[..<dash])
                let last = try surahNumber(text[text.index(after: dash)...])
                return try AyahRange(try Catalog.surah(first).firstAyah, try Catalog.surah(last).lastAyah)
            }
            return try surah(text[...]).range
        }
        let surah = try surah(text[..<colon])
        let rest = text[text.index(after: colon)...]
        guard let dash = rest.firstIndex(of: "-") else {
            let ayah = try AyahRef(surah.number, try ayahNumber(rest, in: surah))
            return AyahRange(unchecked: ayah, ayah)
        }
        let first = try AyahRef(surah.number, try ayahNumber(rest[..<dash], in: surah))
        let end = rest[rest.index(after: dash)...]
        let last: AyahRef
        if let endColon = end.firstIndex(of: ":") {
            let endSurah = try self.surah(end[..<endColon])
            last = try AyahRef(endSurah.number, try ayahNumber(end[end.index(after: endColon)...], in: endSurah))
        } else {
            last = try AyahRef(surah.number, try ayahNumber(end, in: surah))
        }
        return try AyahRange(first, last)
    }

    private static func parseGlobal(_ text: String) throws(TartilError) -> AyahRange {
        let body = text.dropFirst()
        let parts = body.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw syntaxError(text) }
        let numbers = try parts.map { (part: Substring) throws(TartilError) -> Int in
            let digits = part.hasPrefix("#") ? part.dropFirst() : part
            guard isDigits(digits) else { throw syntaxError(text) }
            guard let value = NumberText.whole(digits, in: 0...999_999_999) else {
                throw .usage("there are \(Catalog.totalAyat) ayat, numbered #1-#\(Catalog.totalAyat), so there is no #\(digits)")
            }
            return value
        }
        let first = try AyahRef(global: numbers[0])
        let last = numbers.count == 2 ? try AyahRef(global: numbers[1]) : first
        return try AyahRange(first, last)
    }

    // MARK: - Pieces

    /// A surah by number or name.
    private static func surah(_ text: Substring) throws(TartilError) -> Surah {
        if text.isEmpty { throw .usage("a surah is missing before ':': \(grammarSummary)") }
        if isDigits(text) { return try Catalog.surah(try surahNumber(text)) }
        guard let first = text.first, first.isLetter else { throw syntaxError(String(text)) }
        switch SurahNames.match(String(text)) {
        case .found(let surah):
            return surah
        case .ambiguous(let surahs):
            let options = surahs.map(\.label).joined(separator: " or ")
            throw .usage("'\(text)' could be surah \(options): use the number")
        case .notFound(let suggestions):
            // A misspelt division (`jzu 30`) is suggested like a surah name.
            let words = suggestions.map(\.label) + Suggestion.closest(to: String(text), among: ["juz", "hizb", "page", "para"])
            let hint = words.isEmpty ? "" : "; did you mean \(words.joined(separator: ", "))?"
            throw .usage("no surah is named '\(text)'\(hint) (use a number 1-\(Catalog.surahCount) or a name; `tartil surahs` lists them)")
        }
    }

    private static func surahNumber(_ text: Substring) throws(TartilError) -> Int {
        guard let value = NumberText.whole(text, in: 0...999_999_999) else {
            throw .usage("there are \(Catalog.surahCount) surahs, so there is no surah \(text)")
        }
        return value
    }

    private static func ayahNumber(_ text: Substring, in surah: Surah) throws(TartilError) -> Int {
        guard !text.isEmpty else {
            throw .usage("an ayah number is missing: surah \(surah.label) has ayat 1-\(surah.ayahCount)")
        }
        guard isDigits(text) else {
            throw .usage("'\(text)' is not an ayah number: surah \(surah.label) has ayat 1-\(surah.ayahCount)")
        }
        guard let value = NumberText.whole(text, in: 0...999_999_999) else {
            throw .usage("surah \(surah.label) has \(surah.ayahCount) ayat, so there is no ayah \(surah.number):\(text)")
        }
        return value
    }

    static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func syntaxError(_ text: String) -> TartilError {
        .usage("'\(text)' is not a reference: \(grammarSummary)")
    }

    /// Prefixes an error with the item it came from, unless the message already quotes it.
    private static func withContext<T>(_ text: String, _ body: () throws(TartilError) -> T) throws(TartilError) -> T {
        do {
            return try body()
        } catch {
            if error.message.hasPrefix("'\(text)'") { throw error }
            throw TartilError(error.code, "'\(text)': \(error.message)", cause: error.cause)
        }
    }
}

// MARK: - Divisions

/// `juz`, `hizb` and `page`: numbered divisions of the mushaf, each with its own range of numbers.
private enum Division {
    case juz, hizb, page

    /// Recognizes `juz`, `juz30`, `juz:30`, `para` (the South Asian name for a juz), `hizb`, `page`.
    init?(keywordOf token: String) {
        let lower = token.lowercased()
        for (keyword, division) in Self.keywords where lower.hasPrefix(keyword) {
            let rest = lower.dropFirst(keyword.count)
            if rest.isEmpty || rest.first == ":" || rest.first == "=" || rest.first!.isNumber {
                self = division
                return
            }
        }
        return nil
    }

    private static let keywords: [(String, Division)] = [
        ("juz", .juz), ("para", .juz), ("hizb", .hizb), ("page", .page),
    ]

    func keywordLength(in token: String) -> Int {
        let lower = token.lowercased()
        return Self.keywords.first { lower.hasPrefix($0.0) && $0.1 == self }!.0.count
    }

    var count: Int {
        switch self {
        case .juz: Catalog.juzCount
        case .hizb: Catalog.hizbCount
        case .page: Catalog.pageCount
        }
    }

    var name: String {
        switch self {
        case .juz: "juz"
        case .hizb: "hizb"
        case .page: "page"
        }
    }

    var pluralName: String { self == .page ? "pages" : name }

    var allowedText: String { "\(name) takes a number 1-\(count) or a range such as \(name) 1-2" }

    func range(_ spec: String) throws(TartilError) -> AyahRange {
        let parts = spec.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ ReferenceParser.isDigits($0) }) else {
            throw .usage("'\(spec)' is not a \(name) number: \(allowedText)")
        }
        let numbers = try parts.map { (part: Substring) throws(TartilError) -> Int in
            guard let value = NumberText.whole(part, in: 0...999_999_999) else {
                throw .usage("there are \(count) \(pluralName), numbered 1-\(count), so there is no \(name) \(part)")
            }
            return value
        }
        let first = try divisionRange(numbers[0])
        guard numbers.count == 2 else { return first }
        guard numbers[1] >= numbers[0] else {
            throw .usage("range runs backwards: \(name) \(numbers[0]) comes after \(name) \(numbers[1])")
        }
        return AyahRange(unchecked: first.first, try divisionRange(numbers[1]).last)
    }

    private func divisionRange(_ number: Int) throws(TartilError) -> AyahRange {
        switch self {
        case .juz: try Catalog.juz(number)
        case .hizb: try Catalog.hizb(number)
        case .page: try Catalog.page(number)
        }
    }
}

extension String {
    fileprivate func trimmingLeading(where predicate: (Character) -> Bool) -> String {
        String(drop(while: predicate))
    }
}
