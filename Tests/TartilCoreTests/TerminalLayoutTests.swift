import Testing

@testable import TartilCore

/// Text and fields laid out for a terminal's width (`TextWrap`, `FieldLine`, `LiveLine`, the key help, the
/// prefetch bar): pure, so every width runs without a terminal. Widths are columns as `TerminalText` counts them,
/// so Arabic with its harakat and East Asian wide characters are in the tables.
@Suite struct TextWrapTests {
    /// The words of `lines`, in order.
    static func words(_ lines: [String]) -> [Substring] { lines.flatMap { $0.split(separator: " ") } }

    struct Case: Sendable, CustomTestStringConvertible {
        let text: String
        let width: Int
        var indent = 0
        var hangingIndent: Int? = nil
        var pieces = TextWrap.Pieces.words
        let expected: [String]
        var testDescription: String { "\(width) columns: \(text.prefix(30))" }
    }

    @Test(arguments: [
        Case(
            text: "Play ayat gaplessly, fetching each ahead.", width: 80,
            expected: ["Play ayat gaplessly, fetching each ahead."]),
        Case(
            text: "Play ayat gaplessly, fetching each ahead.", width: 20, hangingIndent: 2,
            expected: ["Play ayat gaplessly,", "  fetching each", "  ahead."]),
        Case(
            text: "Play ayat gaplessly, fetching each ahead.", width: 40, indent: 6,
            expected: ["      Play ayat gaplessly, fetching each", "      ahead."]),
        // Spaces as written between words on a line; none at a break.
        Case(text: "one.  Two  three", width: 80, expected: ["one.  Two  three"]),
        Case(text: "one.  Two  three", width: 9, expected: ["one.  Two", "three"]),
        // Paragraphs, an empty one an empty line.
        Case(text: "a b\n\nc", width: 40, expected: ["a b", "", "c"]),
        Case(text: "", width: 40, expected: [""]),
        // Columns, not characters or bytes: harakat take none, each of these wide characters two.
        Case(text: "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ", width: 10, expected: ["بِسْمِ اللَّهِ", "الرَّحْمَٰنِ", "الرَّحِيمِ"]),
        Case(text: "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ", width: 40, expected: ["بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ"]),
        Case(text: "語語語 語語 🌙", width: 7, expected: ["語語語", "語語 🌙"]),
        Case(text: "語語語 語語 🌙", width: 6, expected: ["語語語", "語語", "🌙"]),
        // A word too wide for the room after the indent is out-dented, by as little as lets it fit.
        Case(
            text: "The journal (default: $XDG_DATA_HOME/tartil/journal.sqlite).", width: 40, indent: 6,
            expected: ["      The journal (default:", "  $XDG_DATA_HOME/tartil/journal.sqlite)."]),
        // Only a word wider than the whole width is broken: after a slash within the line, else at its end.
        Case(
            text: "see $XDG_RUNTIME_DIR/tartil/control.sock now", width: 20,
            expected: ["see", "$XDG_RUNTIME_DIR/", "tartil/control.sock", "now"]),
        Case(text: "abcdefghijkl", width: 5, expected: ["abcde", "fghij", "kl"]),
        // Usage lines: a bracketed option stays whole when it fits, and is broken into its words when not.
        Case(
            text: "tartil play [<ref>...] [--reciter <id>] [--from <time>]", width: 30, indent: 7,
            pieces: .groups,
            expected: ["       tartil play [<ref>...]", "       [--reciter <id>]", "       [--from <time>]"]),
        Case(
            text: "tartil -c \"<command>; <command>\" [--output <alsa|wav:path>]", width: 29, indent: 7,
            pieces: .groups,
            expected: [
                "       tartil -c", "       \"<command>; <command>\"", "       [--output", "       <alsa|wav:path>]",
            ]),
        // Fields two spaces apart stay together; one wider than the line goes by its words.
        Case(
            text: "keys: space/p pause  ←/→ -/+5 s  ↓/↑ -/+60 s", width: 25, hangingIndent: 6, pieces: .fields,
            expected: ["keys: space/p pause", "      ←/→ -/+5 s", "      ↓/↑ -/+60 s"]),
        Case(text: "a b c d e f g h  i", width: 6, pieces: .fields, expected: ["a b c", "d e f", "g h  i"]),
        // A number keeps its unit on its line (closing punctuation after the unit included); a pair wider than
        // the line is two words; a number before a word that is no unit is not kept with it.
        Case(text: "575.7 MiB in 1.924 s), 16 at once", width: 14, expected: ["575.7 MiB in", "1.924 s), 16", "at once"]),
        Case(text: "waited 12 ms", width: 9, expected: ["waited", "12 ms"]),
        Case(text: "12345 MiB", width: 6, expected: ["12345", "MiB"]),
        Case(text: "ayah 12 skipped", width: 8, expected: ["ayah 12", "skipped"]),
        Case(text: "5 s", width: 3, pieces: .groups, expected: ["5 s"]),
    ])
    func wraps(_ test: Case) {
        let lines = TextWrap.lines(
            test.text, width: test.width, indent: test.indent, hangingIndent: test.hangingIndent, pieces: test.pieces)
        #expect(lines == test.expected)
    }

    static let prose = [
        "Files come from the verified cache; the current ayah and the next three are downloaded at top priority "
            + "when they are not there, and playback shows \"buffering\" until they arrive.",
        "While it plays, tartil serves the control socket ($XDG_RUNTIME_DIR/tartil/control.sock; --socket).",
        "سورة الفاتحة: بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ، الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ",
        "東京の 図書館で 読んだ 本 🌙 and some words after them, 語語語語語 語語",
        "keys: space/p pause  ←/→ -/+5 s  ↓/↑ -/+60 s  </> prev/next ayah  b bookmark  q quit  ? keys",
    ]

    /// At every width no line passes it and every word is there, in order, whole (none of these words is wider
    /// than 40 columns); at 12 and 8 only words wider than the width are broken.
    @Test(arguments: [80, 40, 30, 20, 12, 8])
    func linesFitAndKeepEveryWord(width: Int) {
        for text in Self.prose {
            for (indent, hanging, pieces) in [(0, 0, TextWrap.Pieces.words), (2, 6, .groups), (0, 6, .fields)] {
                let lines = TextWrap.lines(text, width: width, indent: indent, hangingIndent: hanging, pieces: pieces)
                for line in lines { #expect(TerminalText.columns(line) <= width, "\(width): '\(line)'") }
                for line in lines { #expect(!line.hasSuffix(" "), "no trailing space: '\(line)'") }
                let original = text.split(separator: " ")
                if original.allSatisfy({ TerminalText.columns($0) <= width }) {
                    #expect(Self.words(lines) == original, "\(width) columns")
                } else {
                    #expect(Self.words(lines).joined() == original.joined(), "\(width) columns: nothing lost")
                }
            }
        }
    }

    @Test func indentsNeverLeaveALineWithoutRoom() {
        #expect(TextWrap.lines("a b", width: 4, indent: 10) == ["   a", "   b"])
        #expect(TextWrap.lines("abc", width: 0) == ["a", "b", "c"])
    }
}

@Suite struct HelpEntryTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let label: String
        let help: String
        let width: Int
        let expected: [String]
        var testDescription: String { "\(label) at \(width)" }
    }

    static let column = String(repeating: " ", count: 26)

    @Test(arguments: [
        Case(
            label: "--reciter <id>", help: "The reciter [env: TARTIL_RECITER].", width: 80,
            expected: ["  --reciter <id>          The reciter [env: TARTIL_RECITER]."]),
        // The help wraps under itself (a hanging indent).
        Case(
            label: "--streams <n>",
            help: "Requests in flight to a server over HTTP/2, all on one connection when the server allows that many.",
            width: 80,
            expected: [
                "  --streams <n>           Requests in flight to a server over HTTP/2, all on one",
                column + "connection when the server allows that many.",
            ]),
        // A label too long for its column has a line of its own.
        Case(
            label: "--format <text|json|ndjson>", help: "The output format.", width: 80,
            expected: ["  --format <text|json|ndjson>", column + "The output format."]),
        Case(
            label: "--reciter x, --reciter=", help: "one space", width: 80,
            expected: ["  --reciter x, --reciter= one space"]),
        Case(
            label: "--reciter x, --reciter=x", help: "own line", width: 80,
            expected: ["  --reciter x, --reciter=x", column + "own line"]),
        // Too narrow for two columns: the help goes under the label.
        Case(
            label: "--reciter <id>", help: "The reciter [env: TARTIL_RECITER].", width: 40,
            expected: ["  --reciter <id>", "      The reciter [env: TARTIL_RECITER]."]),
        Case(
            label: "--streams <n>",
            help: "Requests in flight to a server over HTTP/2, all on one connection when the server allows that many.",
            width: 40,
            expected: [
                "  --streams <n>", "      Requests in flight to a server", "      over HTTP/2, all on one connection",
                "      when the server allows that many.",
            ]),
        Case(
            label: "--output <alsa|wav:path|null|silent>", help: "Where the sound goes.", width: 30,
            expected: ["  --output", "   <alsa|wav:path|null|silent>", "      Where the sound goes."]),  // out-dented
        // Columns, not characters: the help starts at column 26 after a wide or an Arabic label too.
        Case(
            label: "語語語", help: "three wide characters", width: 80,
            expected: ["  語語語" + String(repeating: " ", count: 18) + "three wide characters"]),
        Case(
            label: "الْفَاتِحَة", help: "Al-Fatihah", width: 80,
            expected: ["  الْفَاتِحَة" + String(repeating: " ", count: 17) + "Al-Fatihah"]),
        Case(label: "--events", help: "", width: 80, expected: ["  --events"]),
    ])
    func laysOut(_ test: Case) {
        let lines = TextWrap.entry(label: test.label, help: test.help, width: test.width)
        #expect(lines == test.expected)
        for line in lines { #expect(TerminalText.columns(line) <= test.width) }
    }

    @Test(arguments: [80, 56, 55, 40, 30, 20])
    func twoColumnsOnlyWithRoomForTheHelp(width: Int) {
        let lines = TextWrap.entry(label: "--jobs <n>", help: "Connections per server, 1-64 (default 8).", width: width)
        #expect(lines[0].hasPrefix("  --jobs <n>   ") == (width >= 56), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("      Connections") } == (width < 56), "\(lines)")
        for line in lines { #expect(TerminalText.columns(line) <= width) }
    }
}

@Suite struct ShortenedTests {
    @Test(arguments: [
        ("112:4 is the last ayah", 40, "112:4 is the last ayah"),
        ("repeating this ayah until you move on (r again: off)", 30, "repeating this ayah until you…"),
        ("repeating this ayah until you move on (r again: off)", 29, "repeating this ayah until…"),
        ("الرَّحْمَٰنِ الرَّحِيمِ", 10, "الرَّحْمَٰنِ…"),
        ("語語語 語語", 8, "語語語…"),
        ("supercalifragilistic", 10, "supercali…"),
        ("abc", 1, "…"),
        ("abc", 0, ""),
    ])
    func shortensBetweenWords(text: String, columns: Int, expected: String) {
        let shortened = TextWrap.shortened(text, columns: columns)
        #expect(shortened == expected)
        #expect(TerminalText.columns(shortened) <= columns)
    }
}

@Suite struct FieldLineTests {
    static func text(_ text: String, _ importance: Int) -> FieldLine.Field { .text(text, importance: importance) }
    static func bar(_ minimum: Int, _ maximum: Int = .max, _ importance: Int) -> FieldLine.Field {
        .elastic(minimum: minimum, maximum: maximum, importance: importance) { String(repeating: "=", count: $0) }
    }

    /// The live line's fields: facts, the bar, the name.
    static let live = [
        text("playing", 0), text("36:12", 1), text("3:20 / 21:45", 2), text("loop 1:05-1:12", 3), text("1.25×", 4),
        bar(10, .max, 5), text("Ya-Sin", 6),
    ]

    @Test(arguments: [
        (80, "playing  36:12  3:20 / 21:45  loop 1:05-1:12  1.25×  " + String(repeating: "=", count: 19) + "  Ya-Sin"),
        (65, "playing  36:12  3:20 / 21:45  loop 1:05-1:12  1.25×  " + String(repeating: "=", count: 12)),
        (60, "playing  36:12  3:20 / 21:45  loop 1:05-1:12  1.25×  Ya-Sin"),  // no room for the bar: the name fits
        (40, "playing  36:12  3:20 / 21:45  1.25×"),  // no room for the loop: the speed after it still fits
        (30, "playing  36:12  3:20 / 21:45"),
        (20, "playing  36:12"),
        (10, "playing"),
        (6, "36:12"),
        (4, ""),
    ])
    func keepsWholeFieldsInOrderOfImportance(room: Int, expected: String) {
        let line = FieldLine.render(Self.live, room: room)
        #expect(line == expected)
        #expect(TerminalText.columns(line) <= room)
    }

    @Test(arguments: [
        // (minimum, maximum, importance) per field, the room, the widths.
        ([(4, 4, 0), (5, 5, 1)], 11, [4, 5] as [Int?]),
        ([(4, 4, 0), (5, 5, 1)], 10, [4, nil]),
        ([(4, 4, 1), (5, 5, 0)], 10, [nil, 5]),  // importance, not order, decides
        ([(7, 26, 2), (10, 10, 0), (8, 8, 1)], 80, [26, 10, 8]),  // the bar grows to its greatest
        ([(7, 26, 2), (10, 10, 0), (8, 8, 1)], 39, [17, 10, 8]),  // and takes the room left
        ([(7, 26, 2), (10, 10, 0), (8, 8, 1)], 28, [nil, 10, 8]),
        ([(7, 26, 2), (10, 10, 0), (8, 8, 1)], 29, [7, 10, 8]),
    ])
    func widths(fields: [(Int, Int, Int)], room: Int, expected: [Int?]) {
        let fields = fields.map { Self.bar($0.0, $0.1, $0.2) }
        #expect(FieldLine.widths(fields, room: room) == expected)
    }

    @Test func emptyTextIsLeftOutAndTakesNoSeparator() {
        #expect(FieldLine.widths([Self.text("", 0), Self.text("abc", 1)], room: 3) == [nil, 3])
        #expect(FieldLine.render([Self.text("", 0), Self.text("abc", 1)], room: 3) == "abc")
    }

    @Test func countsColumnsOfArabicAndWideText() {
        let fields = [Self.text("الْفَاتِحَة", 0), Self.text("語語語", 1), Self.text("ok", 2)]
        #expect(FieldLine.render(fields, room: 19) == "الْفَاتِحَة  語語語  ok")
        #expect(FieldLine.render(fields, room: 18) == "الْفَاتِحَة  語語語")
        #expect(FieldLine.render(fields, room: 14) == "الْفَاتِحَة  ok")
    }
}

@Suite struct LiveLineLayoutTests {
    static let bar = ScrubberBar(positionSeconds: 5, durationSeconds: 20, ayahStarts: [0, 4, 8, 12, 16], paused: false)
    static let facts = [
        "playing", "36:12 ×2", "3:20 / ~21:45", "cycle 2/3", "loop 1:05-1:12 ×2", "stop after 5 ayat",
        "sleep 19:58", "1.25×", "vol 80%",
    ]

    /// Every field shown is whole, in order, and the line is at most width - 1 columns.
    @Test(arguments: [200, 80, 60, 40, 30, 20, 12, 8, 2])
    func dropsWholeFieldsWhenNarrow(width: Int) {
        let line = LiveLine.render(facts: Self.facts, name: "Ya-Sin", bar: Self.bar, width: width)
        #expect(TerminalText.columns(line) <= max(0, width - 1), "\(line)")
        let shown = line.components(separatedBy: "  ").filter { !$0.isEmpty }
        let all = Self.facts + ["Ya-Sin"]
        var next = all.startIndex
        for field in shown where !field.hasPrefix("[") {
            let found = all[next...].firstIndex(of: field)
            #expect(found != nil, "\(width) columns: '\(field)' is not a whole field, or out of order: \(line)")
            next = (found ?? next) + 1
        }
        if width >= 8 { #expect(line.hasPrefix("playing")) }
        if width >= 40 { #expect(line.hasPrefix("playing  36:12 ×2  3:20 / ~21:45")) }
        if width == 200 { #expect(line.hasSuffix("]  Ya-Sin") && line.contains("  vol 80%  [")) }
        if width == 80 { #expect(!line.contains("Ya-Sin") && TerminalText.columns(line) <= 79) }
    }

    @Test(arguments: [80, 40, 30])
    func aNoticeThatFitsIsShownAloneAndALongOneGoesAbove(width: Int) throws {
        let short = "112:4 is the last ayah"
        #expect(LiveLine.render(facts: Self.facts, name: "", bar: nil, notice: short, width: width) == short)
        #expect(LiveLine.linesAbove(notice: short, width: width) == nil)
        let long = "repeating this ayah until you move on (r again: off)"
        let onLine = LiveLine.render(facts: Self.facts, name: "", bar: nil, notice: long, width: width)
        #expect(TerminalText.columns(onLine) <= width - 1)
        if TerminalText.columns(long) > width - 1 {
            #expect(
                onLine.hasSuffix("…") && long.hasPrefix(onLine.dropLast() + " "), "shortened between words: \(onLine)")
            let above = try #require(LiveLine.linesAbove(notice: long, width: width))
            #expect(above.count > 1)
            for line in above { #expect(TerminalText.columns(line) <= width - 1) }
            #expect(TextWrapTests.words(above) == long.split(separator: " "), "all of it")
        } else {
            #expect(onLine == long)
            #expect(LiveLine.linesAbove(notice: long, width: width) == nil)
        }
    }
}

@Suite struct KeyHelpLayoutTests {
    static let bindings = PlayerKeys.bindings.map { "\($0.label) \($0.help)" }

    /// All of the key help, broken only between two keys, at most width - 1 columns a line.
    @Test(arguments: [80, 40, 30, 25])
    func keyHelpWrapsBetweenKeys(width: Int) throws {
        let lines = try #require(PlayerKeys.helpLines(width: width))
        #expect(lines.count > 1)
        for line in lines { #expect(TerminalText.columns(line) <= width - 1, "\(width): \(line)") }
        #expect(lines[0].hasPrefix("keys: space/p pause"))
        for line in lines.dropFirst() { #expect(line.hasPrefix("      ") && !line.hasPrefix("       ")) }
        let fields = lines.flatMap { $0.trimmingPrefix("keys: ").split(separator: "  ") }.map {
            String($0.drop { $0 == " " })
        }
        #expect(fields == Self.bindings, "every key, none split")
    }

    @Test func keyHelpOnOneLineWhenItFits() {
        #expect(PlayerKeys.helpLines(width: 200) == nil)
        #expect(PlayerKeys.helpLines(width: TerminalText.columns(PlayerKeys.helpLine) + 1) == nil)
        #expect(PlayerKeys.helpLines(width: TerminalText.columns(PlayerKeys.helpLine)) != nil)
    }
}

@Suite struct ProgressBarTests {
    @Test(arguments: [
        (0, 11, 5, "[-----]"), (5, 11, 10, "[####------]"), (11, 11, 4, "[####]"), (0, 0, 3, "[###]"),
        (12, 11, 4, "[####]"), (3, 6, 24, "[############------------]"),
    ])
    func rendered(done: Int, total: Int, inner: Int, expected: String) {
        #expect(ProgressBar.rendered(done: done, total: total, inner: inner) == expected)
    }

    /// At most 24 columns between the brackets, at least 5, else no bar.
    @Test(arguments: [(80, 24), (37, 24), (30, 17), (20, 7), (18, 5), (17, nil), (9, nil)] as [(Int, Int?)])
    func theFieldShrinksToTheRoom(room: Int, inner: Int?) {
        let line = FieldLine.render(
            [ProgressBar.field(done: 3, total: 6, importance: 1), .text("3/6 files", importance: 0)], room: room)
        let bar = inner.map { ProgressBar.rendered(done: 3, total: 6, inner: $0) + "  " } ?? ""
        #expect(line == bar + "3/6 files")
    }
}
