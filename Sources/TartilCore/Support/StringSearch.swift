extension StringProtocol {
    /// Where `target` first occurs in this text, compared by UTF-8 bytes (an empty target is at the start); nil
    /// when it does not occur. tartil searches ASCII keys, placeholders and paths, for which this is what
    /// `firstRange(of:)` finds; unlike it, this needs no `_StringProcessing` (the regex library that the standard
    /// searching lives in, whose 400 protocol conformances would lengthen every runtime conformance lookup).
    @inlinable
    public func firstRange(ofText target: String) -> Range<Index>? {
        let text = utf8
        let needle = Array(target.utf8)
        guard let first = needle.first else { return startIndex..<startIndex }
        var start = text.startIndex
        while start != text.endIndex {
            if text[start] == first {
                var here = text.index(after: start)
                var matched = 1
                while matched < needle.count, here != text.endIndex, text[here] == needle[matched] {
                    matched += 1
                    here = text.index(after: here)
                }
                if matched == needle.count { return start..<here }
            }
            start = text.index(after: start)
        }
        return nil
    }

    /// Whether `target` occurs in this text, compared by UTF-8 bytes (see `firstRange(ofText:)`).
    @inlinable
    public func contains(text target: String) -> Bool { firstRange(ofText: target) != nil }
}

extension String {
    /// The text with control characters (all but line feeds and tabs, and DEL and the C1 range too) shown as
    /// `\u{1b}`: what a message shows of text it did not write itself (a server's reply, a file's bytes), so that
    /// a terminal never takes any of it as a command.
    public var controlCharactersShown: String {
        let isControl = { (scalar: Unicode.Scalar) in
            (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
        }
        guard unicodeScalars.contains(where: isControl) else { return self }
        var shown = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if isControl(scalar) { shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars) } else { shown.append(scalar) }
        }
        return String(shown)
    }
}
