/// Lays out the line `tartil play` redraws on a terminal, for the terminal's width: the facts
/// (`playing  36:12  3:20 / 21:45`), the scrubber bar in the room left, then the surah's name; or, for a few
/// seconds, a notice alone (a refused key's message, a bookmark, the key help), so that as much of it as the
/// width allows is seen. The result is at most
/// `width - 1` columns, so it never wraps (a wrapped line leaves a copy behind at every redraw).
public enum LiveLine {
    /// The narrowest bar worth drawing, between its brackets.
    public static let minimumBar = 8

    /// The line for a terminal `width` columns wide.
    public static func render(facts: String, name: String, bar: ScrubberBar?, notice: String? = nil, width: Int)
        -> String
    {
        let room = max(0, width - 1)
        if let notice { return TerminalText.prefix(notice, columns: room) }
        let factsWidth = TerminalText.columns(facts)
        let nameWidth = name.isEmpty ? 0 : TerminalText.columns(name) + 2
        if let bar {
            // facts, two spaces, [bar], then the name when it fits beside a bar of the least width.
            let withName = room - factsWidth - 2 - 2 - nameWidth
            if withName >= minimumBar {
                return facts + "  " + bar.rendered(inner: withName) + (name.isEmpty ? "" : "  " + name)
            }
            let withoutName = room - factsWidth - 2 - 2
            if withoutName >= minimumBar { return facts + "  " + bar.rendered(inner: withoutName) }
        }
        return TerminalText.prefix(name.isEmpty ? facts : facts + "  " + name, columns: room)
    }
}
