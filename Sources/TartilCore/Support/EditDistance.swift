/// How far apart two words are, for "did you mean …?" suggestions.
public enum EditDistance {
    /// The optimal-string-alignment distance between `a` and `b`, counted in bytes of UTF-8: insertions,
    /// deletions, substitutions and swaps of two neighbours (`stauts` is one from `status`) cost 1 each.
    public static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}

/// "Did you mean …?" for a word that names nothing: the candidates within the distance its length allows, closest
/// first. Short words allow one edit, longer ones one per four letters (at most three), so `speed` never
/// suggests `seek` (two edits) and a long typo still finds its word.
public enum Suggestion {
    /// The largest distance a suggestion for `word` may be.
    public static func allowedDistance(for word: String) -> Int { max(1, min(3, word.utf8.count / 4)) }

    /// The closest `limit` candidates within the allowed distance (none for a word longer than 64 bytes).
    public static func closest(to word: String, among candidates: [String], limit: Int = 3) -> [String] {
        guard word.utf8.count <= 64 else { return [] }
        let allowed = allowedDistance(for: word)
        return candidates
            .map { ($0, EditDistance.between(word.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= allowed && $0.1 > 0 }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            .prefix(limit).map(\.0)
    }

    /// `; did you mean X?` / `; did you mean X, Y?`, or nothing.
    public static func hint(for word: String, among candidates: [String]) -> String {
        let close = closest(to: word, among: candidates)
        return close.isEmpty ? "" : "; did you mean \(close.joined(separator: ", "))?"
    }

    /// The usage error for `value` where `what` takes one of `choices`: `--format takes text, json, ndjson or csv,
    /// not 'jsn'; did you mean json?` (the hint only within the allowed distance).
    public static func unknownValue(_ value: String, for what: String, among choices: [String]) -> TartilError {
        .usage("\(what) takes \(list(choices)), not '\(value.prefix(80))'" + hint(for: value, among: choices))
    }

    /// `a`, `a or b`, `a, b or c`.
    public static func list(_ words: [String]) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words.last!
    }
}
