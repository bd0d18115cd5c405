import TestSupport
import Testing

@testable import TartilCore

/// The key decoder, the key table and the live line's layout: pure, so every case runs without a terminal.
@Suite struct KeyDecoderTests {
    static let esc: UInt8 = 0x1B

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(arguments: [
        ("q", [Key.character("q")]),
        (" p", [.character(" "), .character("p")]),
        ("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D", [.up, .down, .right, .left]),
        ("\u{1B}OA\u{1B}OB\u{1B}OC\u{1B}OD", [.up, .down, .right, .left]),
        ("\u{1B}[1C", [.right]),
        ("\u{1B}[1;5C", []),  // Ctrl-Right: not bound
        ("\u{1B}[5~x", [.character("x")]),  // Page Up, then x
        ("\u{1B}[15;2~<", [.character("<")]),  // F5 with Shift
        ("\u{1B}xq", [.character("q")]),  // Alt-x passed over
        ("\u{1B}\u{1B}[C", [.right]),  // a lone Esc, then →
        ("\u{1B}[\u{1B}[D", [.left]),  // a broken sequence, then ←
        ("\u{1B}O\u{1B}OA", [.up]),
        ("\u{1B}OZ>", [.character(">")]),
        ("\r\n\t\u{7F}\u{03}", []),  // control bytes do nothing
        ("يس b", [.character(" "), .character("b")]),  // the bytes of Arabic letters are passed over
        ("~", [.character("~")]),
    ])
    func decodes(input: String, expected: [Key]) {
        var decoder = KeyDecoder()
        #expect(decoder.feed(Self.bytes(input)) == expected, "\(input.debugDescription)")
    }

    /// A sequence split anywhere across reads decodes as it does whole.
    @Test func aSequenceSplitAcrossReadsIsCompleted() {
        let whole = Self.bytes("a\u{1B}[Cb\u{1B}OD\u{1B}[1;5A>")
        var reference = KeyDecoder()
        let expected = reference.feed(whole)
        #expect(expected == [.character("a"), .right, .character("b"), .left, .character(">")])
        for split in 0...whole.count {
            var decoder = KeyDecoder()
            let keys = decoder.feed(whole[..<split]) + decoder.feed(whole[split...])
            #expect(keys == expected, "split at \(split)")
        }
    }

    @Test func idleDropsALoneEscape() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([Self.esc]) == [])
        #expect(decoder.isPending)
        decoder.idle()
        #expect(!decoder.isPending)
        #expect(decoder.feed(Self.bytes("[C")) == [.character("["), .character("C")])
    }

    @Test func anOverlongSequenceIsAbandonedToItsEnd() {
        var decoder = KeyDecoder()
        let long = "\u{1B}[" + String(repeating: "1;", count: 100) + "Cq"
        #expect(decoder.feed(Self.bytes(long)) == [.character("q")])
        #expect(!decoder.isPending)
    }

    /// Random bytes in random reads: never a crash, never a hang (each byte is looked at once), the held state
    /// bounded, only keys the decoder knows, and the same keys however the bytes were split.
    @Test func fuzzRandomBytes() {
        var random = SeededRandom(seed: 0x6B65_7973)
        let alphabet: [UInt8] = [0x1B, 0x1B, 0x5B, 0x4F, 0x41, 0x42, 0x43, 0x44, 0x31, 0x3B, 0x7E, 0x20, 0x71, 0x3C]
        for round in 0..<2_000 {
            let count = Int.random(in: 0...64, using: &random)
            let bytes: [UInt8] = (0..<count).map { _ in
                Bool.random(using: &random)
                    ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            var whole = KeyDecoder()
            let expected = whole.feed(bytes)
            var pieces = KeyDecoder()
            var keys: [Key] = []
            var rest = bytes[...]
            while !rest.isEmpty {
                let size = Int.random(in: 1...max(1, rest.count), using: &random)
                keys += pieces.feed(rest.prefix(size))
                rest = rest.dropFirst(size)
                if case .csi(let parameters) = pieces.phase {
                    #expect(parameters.count <= KeyDecoder.maximumParameters)
                }
            }
            #expect(keys == expected, "round \(round): \(bytes)")
            #expect(keys.count <= bytes.count)
            for key in keys {
                if case .character(let character) = key {
                    #expect(character.isASCII && !character.asciiValue!.isControl)
                }
            }
        }
    }
}

private extension UInt8 {
    var isControl: Bool { self < 0x20 || self == 0x7F }
}

@Suite struct PlayerKeysTests {
    @Test(arguments: [
        (Key.character(" "), PlayerKeys.Action.command(.toggle)),
        (.character("p"), .command(.toggle)),
        (.left, .command(.seek(.offset(seconds: -5)))),
        (.right, .command(.seek(.offset(seconds: 5)))),
        (.down, .command(.seek(.offset(seconds: -60)))),
        (.up, .command(.seek(.offset(seconds: 60)))),
        (.character("<"), .command(.previous)),
        (.character(">"), .command(.next)),
        (.character("b"), .bookmark),
        (.character("q"), .command(.quit)),
        (.character("?"), .help),
    ])
    func bound(key: Key, action: PlayerKeys.Action) {
        #expect(PlayerKeys.action(for: key) == action)
    }

    @Test func otherKeysDoNothing() {
        for key in [Key.character("x"), .character("Q"), .character("P"), .character("1")] {
            #expect(PlayerKeys.action(for: key) == nil)
        }
    }

    @Test func helpNamesEveryKey() {
        #expect(
            PlayerKeys.helpLine
                == "keys: space/p pause  ←/→ -/+5 s  ↓/↑ -/+60 s  </> prev/next ayah  l loop A/B/off  r repeat ayah  [/] -/+0.05 speed  9/0 -/+5% volume  b bookmark  w weak  q quit  ? keys")
        // No key is in two rows.
        let all = PlayerKeys.bindings.flatMap { $0.keys.keys }
        #expect(Set(all).count == all.count)
    }
}

@Suite struct LiveLineTests {
    @Test(arguments: [
        ("abc", 3), ("", 0), ("Al-Fātiḥah", 10), ("يسٓ", 2), ("الفاتحة", 7), ("\u{1B}", 0), ("語", 2), ("‖>", 2),
    ])
    func columns(text: String, expected: Int) {
        #expect(TerminalText.columns(text) == expected)
    }

    @Test func fittedCutsOnCharacters() {
        #expect(TerminalText.fitted("playing  1:1", width: 6) == "playi")
        #expect(TerminalText.fitted("سورة الفاتحة", width: 5) == "سورة")
        #expect(TerminalText.fitted("a語b", width: 3) == "a")
        #expect(TerminalText.fitted("abc", width: 0) == "")
    }

    static let bar = ScrubberBar(positionSeconds: 5, durationSeconds: 20, ayahStarts: [0, 4, 8, 12, 16], paused: false)

    @Test func barGetsATickPerAyahWhenThereIsRoom() {
        #expect(Self.bar.rendered(inner: 20) == "[====|>--|---|---|---]")
        #expect(Self.bar.ticks(inner: 20) == [4, 8, 12, 16])
        var paused = Self.bar
        paused.paused = true
        #expect(paused.rendered(inner: 10) == "[==‖-|-|-|-]")
    }

    @Test(arguments: [(83, 200, 1), (83, 120, 2), (83, 64, 5), (83, 20, 10), (286, 100, 10), (7, 8, 2)])
    func fewerTicksEvenlyWhenNarrow(ayat: Int, width: Int, stride: Int) {
        let bar = ScrubberBar(
            positionSeconds: 0, durationSeconds: Double(ayat), ayahStarts: (0..<ayat).map(Double.init), paused: false)
        let ticks = bar.ticks(inner: width)
        #expect(ticks.count == (ayat - 1) / stride, "stride \(stride)")
        #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $1 - $0 >= 2 })
    }

    @Test(arguments: [10, 20, 30, 40, 80, 200])
    func theLineNeverWraps(width: Int) {
        let line = LiveLine.render(facts: ["playing", "112:2", "0:05 / 0:20"], name: "Al-Ikhlāṣ", bar: Self.bar, width: width)
        #expect(TerminalText.columns(line) <= width - 1, "\(line)")
        if width >= 80 { #expect(line.hasSuffix("  Al-Ikhlāṣ") && line.contains("[")) }
        if width == 40 { #expect(line.contains("[") && !line.contains("Ikhl")) }
        let notice = LiveLine.render(
            facts: ["paused", "112:4"], name: "", bar: Self.bar, notice: "112:4 is the last ayah", width: width)
        #expect(TerminalText.columns(notice) <= width - 1)
        if width >= 30 { #expect(notice == "112:4 is the last ayah", "a notice is shown alone") }
    }

    @Test func aWideLineUsesTheWholeWidth() {
        let line = LiveLine.render(facts: ["playing", "1:1", "0:01 / 0:20"], name: "Al-Fatihah", bar: Self.bar, width: 80)
        #expect(TerminalText.columns(line) == 79)
    }
}
