/// Text measured and cut the way a terminal shows it: one column per character (a grapheme cluster, so an Arabic
/// letter with its harakat is one), two for East Asian wide characters and most emoji, none for control
/// characters. Never by bytes: a cut never splits a character.
public enum TerminalText {
    /// The columns `text` takes.
    public static func columns(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    /// The columns one character takes: 0, 1 or 2.
    public static func columns(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        return isWide(value) ? 2 : 1
    }

    /// The longest start of `text` that fits in `columns` columns.
    public static func prefix(_ text: String, columns limit: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = columns(of: text[index])
            guard used + width <= limit else { break }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// A line that will not wrap on a terminal `width` columns wide: cut to `width - 1` columns (the last column
    /// is left free, as a terminal may wrap when a line fills it).
    public static func fitted(_ text: String, width: Int) -> String {
        prefix(text, columns: max(0, width - 1))
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
