/// Text laid out in lines of at most a given number of columns, as a terminal shows them (`TerminalText`: an
/// Arabic letter with its harakat is one column, an East Asian wide character two), broken only between words:
/// help pages, the key help, a notice too long for the live line.
///
/// A line never passes the width, and a word is never broken when it fits on a line: one too wide for the room
/// after the indent is out-dented, by as little as lets it fit. Only a word wider than the whole width is broken,
/// after a `/`, `-`, `|`, `,` or `=` inside it when one falls within the line (a path, an option), else where
/// the line ends.
///
/// ```swift
/// TextWrap.lines("Play ayat gaplessly, fetching each ahead.", width: 20, hangingIndent: 2)
/// // ["Play ayat gaplessly,", "  fetching each", "  ahead."]
/// TextWrap.entry(label: "--reciter <id>", help: "The reciter.", width: 40)
/// // ["  --reciter <id>", "      The reciter."]: too narrow for two columns
/// ```
public enum TextWrap {
    /// What is kept together on one line when it fits (and broken into its words when it does not).
    public enum Pieces: Sendable, Hashable {
        /// Words: runs of characters between spaces; a number and the unit after it (`1.924 s`, `575.7 MiB`) are
        /// one piece, so no line ends between them (when the pair is wider than a whole line, it is two words).
        case words
        /// Words, and a group in brackets or quotes (`[--reciter <id>]`, `"<command>; ..."`) as one piece: for
        /// usage lines.
        case groups
        /// Runs separated by two spaces or more, a single space joining (`space/p pause  ←/→ -/+5 s`): for
        /// lists of fields.
        case fields
    }

    /// `text` in lines of at most `width` columns: the first line starts after `indent` spaces, the others
    /// after `hangingIndent` (default: `indent`). A line break in `text` starts a new paragraph (an empty one
    /// is an empty line). Spaces between two pieces on one line are kept as written; at a break they go.
    public static func lines(
        _ text: String, width: Int, indent: Int = 0, hangingIndent: Int? = nil, pieces: Pieces = .words
    ) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var filler = Filler(
                width: width, firstIndent: fitted(indent, width), indent: fitted(hangingIndent ?? indent, width))
            for piece in split(paragraph, into: pieces) { filler.place(piece, as: pieces) }
            lines += filler.finished()
        }
        return lines
    }

    /// Each line of `text` wrapped to `width` at words under its own text: its first line at the spaces it starts
    /// with, the lines it wraps onto two spaces further in (a message, an indented line of a listing).
    public static func keepingIndent(_ text: String, width: Int) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            let indent = line.prefix(while: { $0 == " " }).count
            return lines(String(line.dropFirst(indent)), width: width, indent: indent, hangingIndent: indent + 2)
        }
    }

    /// A label and its help in two columns, as help pages list options (`--reciter <id>   The reciter.`):
    /// the label after `indent` spaces, the help from `column` on, its later lines under its first (a hanging
    /// indent). A label too long for its column gets a line of its own. When fewer than `minimumHelp` columns
    /// would be left for the help, the help goes under the label, after `stackedIndent` spaces.
    public static func entry(
        label: String, help: String, width: Int, indent: Int = 2, column: Int = 26, stackedIndent: Int = 6,
        minimumHelp: Int = 30
    ) -> [String] {
        let width = max(1, width)
        let labelLines = lines(label, width: width, indent: indent, hangingIndent: indent + 2, pieces: .groups)
        guard help.contains(where: { $0 != " " }) else { return labelLines }
        guard width - column >= minimumHelp else {
            return labelLines + lines(help, width: width, indent: stackedIndent)
        }
        let helpLines = lines(help, width: width, indent: column)
        let labelWidth = TerminalText.columns(label)
        guard labelLines.count == 1, indent + labelWidth + 1 <= column else { return labelLines + helpLines }
        let first =
            String(repeating: " ", count: indent) + label + String(repeating: " ", count: column - indent - labelWidth)
            + helpLines[0].dropFirst(column)
        return [first] + helpLines.dropFirst()
    }

    /// `text` if it fits in `columns` columns; else its longest start that ends between two words and leaves
    /// room for `…` after it (a single word too long for that is cut where the room ends).
    public static func shortened(_ text: String, columns: Int) -> String {
        guard TerminalText.columns(text) > columns else { return text }
        guard columns > 1 else { return columns == 1 ? "…" : "" }
        let room = columns - 1
        var kept = ""
        for piece in split(Substring(text), into: .words) {
            let next = (kept.isEmpty ? "" : kept + String(repeating: " ", count: piece.gap)) + piece.text
            guard TerminalText.columns(next) <= room else { break }
            kept = next
        }
        if kept.isEmpty { kept = TerminalText.prefix(text, columns: room) }
        return kept + "…"
    }

    // MARK: - Pieces

    /// A piece of text and the spaces written before it.
    struct Piece: Equatable {
        var gap: Int
        var text: Substring
        var columns: Int { TerminalText.columns(text) }
    }

    /// Characters after which a word too long for a line may be broken.
    static let breaksAfter: Set<Character> = ["/", "-", "|", ",", "="]

    /// Units that stay on the line of the number before them (`Pieces.words`).
    static let units: Set<Substring> = [
        "s", "ms", "µs", "min", "h", "B", "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "%", "Hz", "kHz", "dB",
    ]

    /// Whether `text` ends with a digit and `rest` starts with a unit (followed by a space, the end, or
    /// punctuation closing it: `s)`, `MiB,`).
    static func isNumberThenUnit(_ text: Substring, _ rest: Substring) -> Bool {
        guard let last = text.last, last.isASCII, last.isNumber else { return false }
        let word = rest.prefix(while: { $0 != " " })
        let unit = word.prefix(while: { !")],.;:".contains($0) })
        return units.contains(unit)
    }

    /// `text` in pieces of `kind`; `joiningUnits: false` keeps a number and its unit apart (a pair too wide for a
    /// line).
    static func split(_ text: Substring, into kind: Pieces, joiningUnits: Bool = true) -> [Piece] {
        var pieces: [Piece] = []
        var gap = 0
        var start: Substring.Index?
        var depth = 0
        var quoted = false
        var index = text.startIndex
        func end(at index: Substring.Index) {
            if let from = start { pieces.append(Piece(gap: pieces.isEmpty ? 0 : gap, text: text[from..<index])) }
            start = nil
            gap = 0
        }
        while index < text.endIndex {
            let character = text[index]
            if character == " " {
                var spaces = 0
                var next = index
                while next < text.endIndex && text[next] == " " {
                    spaces += 1
                    next = text.index(after: next)
                }
                let joins =
                    start != nil && next < text.endIndex
                    && (kind == .groups && (depth > 0 || quoted) || kind == .fields && spaces == 1
                        || kind == .words && joiningUnits && spaces == 1 && isNumberThenUnit(text[start!..<index], text[next...]))
                if !joins {
                    end(at: index)
                    gap = spaces
                }
                index = next
                continue
            }
            if start == nil { start = index }
            if kind == .groups {
                switch character {
                case "[", "<", "(": depth += 1
                case "]", ">", ")": depth = max(0, depth - 1)
                case "\"": quoted.toggle()
                default: break
                }
            }
            index = text.index(after: index)
        }
        end(at: text.endIndex)
        return pieces
    }

    /// An indent that leaves at least one column of a line.
    static func fitted(_ indent: Int, _ width: Int) -> Int { max(0, min(indent, width - 1)) }

    // MARK: - Filling lines

    /// Lines filled greedily, piece by piece.
    struct Filler {
        let width: Int
        let firstIndent: Int
        let indent: Int
        private(set) var lines: [String] = []
        private var line: String
        private var used: Int
        private var isEmpty = true

        init(width: Int, firstIndent: Int, indent: Int) {
            self.width = width
            self.firstIndent = firstIndent
            self.indent = indent
            line = String(repeating: " ", count: firstIndent)
            used = firstIndent
        }

        mutating func place(_ piece: Piece, as kind: Pieces) {
            let columns = piece.columns
            if isEmpty ? used + columns <= width : used + piece.gap + columns <= width {
                append(piece, columns: columns)
                return
            }
            if !isEmpty && indent + columns <= width {
                newLine()
                append(piece, columns: columns)
                return
            }
            // Wider than a whole line: its words, then, or the word in parts.
            if kind != .words || piece.text.contains(" ") {
                for (number, word) in TextWrap.split(piece.text, into: .words, joiningUnits: false).enumerated() {
                    place(Piece(gap: number == 0 ? piece.gap : word.gap, text: word.text), as: .words)
                }
                return
            }
            if !isEmpty { newLine() }
            if columns <= width {
                // Out-dented, by as little as lets it fit whole.
                line = String(repeating: " ", count: width - columns)
                used = width - columns
                append(piece, columns: columns)
                return
            }
            var rest = piece.text
            while TerminalText.columns(rest) > width - used {
                let cut = Self.cut(rest, columns: width - used)
                append(Piece(gap: 0, text: rest[..<cut]), columns: TerminalText.columns(rest[..<cut]))
                newLine()
                rest = rest[cut...]
            }
            append(Piece(gap: 0, text: rest), columns: TerminalText.columns(rest))
        }

        /// Where to break a word too long for `columns`: after the last break character within them, else
        /// after as many characters as fit (at least one).
        static func cut(_ word: Substring, columns: Int) -> Substring.Index {
            var used = 0
            var fits = word.startIndex
            var soft: Substring.Index?
            for index in word.indices {
                used += TerminalText.columns(of: word[index])
                guard used <= columns else { break }
                fits = word.index(after: index)
                if TextWrap.breaksAfter.contains(word[index]) && fits < word.endIndex { soft = fits }
            }
            if let soft { return soft }
            return fits > word.startIndex ? fits : word.index(after: word.startIndex)
        }

        private mutating func append(_ piece: Piece, columns: Int) {
            if !isEmpty {
                line += String(repeating: " ", count: piece.gap)
                used += piece.gap
            }
            line += piece.text
            used += columns
            isEmpty = false
        }

        private mutating func newLine() {
            lines.append(line)
            line = String(repeating: " ", count: indent)
            used = indent
            isEmpty = true
        }

        /// The lines, the last one included; a paragraph with no text is one empty line.
        func finished() -> [String] {
            if isEmpty { return lines.isEmpty ? [""] : lines }
            return lines + [line]
        }
    }
}
