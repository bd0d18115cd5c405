/// Lays out the line `tartil play` redraws on a terminal, for the terminal's width: the facts
/// (`playing`, `36:12`, `3:20 / 21:45`, then the cycle, the loop, stop-after, sleep, the speed and the volume when
/// they are set), the scrubber bar in the room left, then the surah's name; or, for a few seconds, a notice alone
/// (a refused key's message, a bookmark). The fields are laid out by `FieldLine`: in that order of importance,
/// each whole or not at all, so a narrow terminal loses the name first, then the bar, then the last facts, and
/// no fact is ever cut. The result is at most `width - 1` columns, so it never wraps (a wrapped line leaves a copy
/// behind at every redraw). A notice too long for it is printed above it instead (`linesAbove`).
public enum LiveLine {
    /// The narrowest bar worth drawing, between its brackets.
    public static let minimumBar = 8

    /// The line for a terminal `width` columns wide: `facts` are the fields of the status, most important
    /// first; a notice that does not fit is shortened between two words, with `…`.
    public static func render(facts: [String], name: String, bar: ScrubberBar?, notice: String? = nil, width: Int)
        -> String
    {
        let room = max(0, width - 1)
        if let notice { return TextWrap.shortened(notice, columns: room) }
        var fields = facts.enumerated().map { FieldLine.Field.text($0.element, importance: $0.offset) }
        if let bar {
            fields.append(.elastic(minimum: minimumBar + 2, importance: facts.count) { bar.rendered(inner: $0 - 2) })
        }
        if !name.isEmpty { fields.append(.text(name, importance: facts.count + 1)) }
        return FieldLine.render(fields, room: room)
    }

    /// A notice too long for the live line at `width` (more than `width - 1` columns), as lines to print above
    /// it, broken between words (fields two spaces apart stay together when they fit), at most `width - 1`
    /// columns each, the later ones indented by `hangingIndent`; nil when the notice fits on the line.
    public static func linesAbove(notice: String, width: Int, hangingIndent: Int = 2) -> [String]? {
        let room = max(1, width - 1)
        guard TerminalText.columns(notice) > room else { return nil }
        return TextWrap.lines(notice, width: room, hangingIndent: hangingIndent, pieces: .fields)
    }
}
