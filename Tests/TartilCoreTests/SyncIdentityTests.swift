import Testing

@testable import TartilCore

/// `SyncIdentity`: what this device's events in another file, compared with the journal's by identity, say
/// about the journal (in step, restored from an older copy, or sharing its id with a copy), and what `journal
/// sync` does with the file at its own name.
@Suite struct SyncIdentityTests {
    typealias Comparison = SyncIdentity.Comparison

    static let verdicts: [(label: String, comparison: Comparison, expected: SyncIdentity.Verdict)] = [
        ("nothing of this device in the file", Comparison(journalOnly: 0, fileOnly: 0, fileOnlyFollowJournal: true), .inStep),
        ("the file is behind the journal", Comparison(journalOnly: 12, fileOnly: 0, fileOnlyFollowJournal: true), .inStep),
        ("the same events", Comparison(journalOnly: 0, fileOnly: 0, fileOnlyFollowJournal: false), .inStep),
        ("restored: the file has later events of this device", Comparison(journalOnly: 0, fileOnly: 5, fileOnlyFollowJournal: true), .restored),
        ("a fresh journal (none of its own) meets its old snapshot", Comparison(journalOnly: 0, fileOnly: 40, fileOnlyFollowJournal: true), .restored),
        ("both sides have events the other lacks", Comparison(journalOnly: 1, fileOnly: 1, fileOnlyFollowJournal: true), .shared),
        ("restored, then used before syncing", Comparison(journalOnly: 3, fileOnly: 9, fileOnlyFollowJournal: true), .shared),
        ("the file's extra events come before the journal's last", Comparison(journalOnly: 0, fileOnly: 2, fileOnlyFollowJournal: false), .shared),
        ("two extra events at one sequence number", Comparison(journalOnly: 0, fileOnly: 2, fileOnlyFollowJournal: false), .shared),
    ]

    @Test(arguments: verdicts.indices)
    func verdict(row: Int) {
        let (label, comparison, expected) = Self.verdicts[row]
        #expect(SyncIdentity.verdict(comparison) == expected, "\(label)")
    }

    static let actions: [(label: String, file: SyncIdentity.OwnFile, expected: SyncIdentity.OwnFileAction)] = [
        ("nothing there", .absent, .write),
        ("this device's snapshot", .ownJournal, .mergeThenWrite),
        ("another device's journal under this device's name", .otherDevice(deviceID: "3f2a"), .mergeThenWrite),
        ("an empty file holds nothing", .unusable(reason: "empty", bytes: 0), .write),
        ("a partial copy", .unusable(reason: "cut short", bytes: 8192), .moveAside(reason: "cut short")),
        ("a newer version's journal", .unusable(reason: "newer", bytes: 65536), .moveAside(reason: "newer")),
        ("garbage", .unusable(reason: "not a database", bytes: 100), .moveAside(reason: "not a database")),
    ]

    @Test(arguments: actions.indices)
    func ownFileAction(row: Int) {
        let (label, file, expected) = Self.actions[row]
        #expect(SyncIdentity.action(for: file) == expected, "\(label)")
    }

    /// Seeded property: a verdict never lets a file's events of this device in unless they only extend the
    /// journal (nothing lost, nothing taken as this device's that another journal wrote), and "in step" is
    /// exactly "nothing the journal lacks".
    @Test func verdictsKeepEveryEventAndTakeNoStrangersAsOwn() {
        var random = SplitMix(seed: 0x5EED_0009)
        for _ in 0..<10_000 {
            let comparison = Comparison(
                journalOnly: Int(random.next() % 4), fileOnly: Int(random.next() % 4), fileOnlyFollowJournal: random.next() % 2 == 0)
            let verdict = SyncIdentity.verdict(comparison)
            #expect((verdict == .inStep) == (comparison.fileOnly == 0))
            if verdict == .restored { #expect(comparison.journalOnly == 0 && comparison.fileOnlyFollowJournal) }
        }
    }

    @Test func anAsideFileIsSkippedWithWhatToDo() {
        let name = SyncIdentity.asideName(deviceID: "9c1e", timeMs: 1_700_000_000_000)
        #expect(name == "9c1e.aside-1700000000000.tartil-journal-aside")
        guard case .skip(let reason) = SyncFolder.decide(.init(name: name, kind: .regular, size: 4096), ownDeviceID: "9c1e") else {
            Issue.record("an aside file must be skipped")
            return
        }
        #expect(reason.contains("moved aside") && reason.contains("journal merge"))
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}

/// `JournalNote`: what a note may hold, and the CSV formula guard.
@Suite struct JournalNoteTests {
    static let refused: [(text: String, code: String)] = [
        ("a\tb", "U+0009"), ("line\nbreak", "U+000A"), ("\u{1B}[31m", "U+001B"), ("del\u{7F}", "U+007F"),
        ("c1 \u{80}", "U+0080"), ("csi \u{9B}2J", "U+009B"), ("apc \u{9F}", "U+009F"),
        ("lre \u{202A}x", "U+202A"), ("rlo \u{202E}txt.exe", "U+202E"), ("lri \u{2066}", "U+2066"), ("pdi \u{2069}", "U+2069"),
        ("ls \u{2028}", "U+2028"), ("ps \u{2029}", "U+2029"),
    ]

    @Test(arguments: refused.indices)
    func refusedCharacters(row: Int) {
        let (text, code) = Self.refused[row]
        let problem = JournalNote.problem(text)
        #expect(problem?.contains(code) == true, "\(text.debugDescription): \(problem ?? "accepted")")
        #expect(JournalNote.problem(JournalNote.cleaned(text)) == nil)
    }

    static let accepted = [
        "Ayat al-Kursi", "آية الكرسي", "Yasin \u{200F}يس\u{200F}", "mixed \u{200E}LRM\u{200E} and \u{061C}ALM", "emoji 📖", "= a formula is fine in the journal",
        "\u{A0}no-break space", "",
    ]

    @Test(arguments: accepted)
    func acceptedNotes(text: String) {
        #expect(JournalNote.problem(text) == nil, "\(text.debugDescription)")
        #expect(JournalNote.cleaned(text) == text)
    }

    @Test func anEmptyNoteIsNone() {
        #expect(JournalNote.normalized("") == nil)
        #expect(JournalNote.normalized(nil) == nil)
        #expect(JournalNote.normalized("x") == "x")
    }

    @Test func formulaGuard() {
        for first in ["=", "+", "-", "@", "\t", "\r"] { #expect(CSVRule.needsFormulaGuard(first.utf8.first!), "\(first.debugDescription)") }
        for first in ["a", "1", " ", "'", "\"", "آ"] { #expect(!CSVRule.needsFormulaGuard(first.utf8.first!), "\(first.debugDescription)") }
    }
}
