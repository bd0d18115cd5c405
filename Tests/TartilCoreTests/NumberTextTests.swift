import TestSupport
import Testing

@testable import TartilCore

@Suite struct NumberTextTests {
    @Test(arguments: [
        ("0", NumberText.Reading<Int>.value(0)),
        ("7", .value(7)),
        ("007", .value(7)),
        ("123456789012345678", .value(123_456_789_012_345_678)),
        ("000000000000000000000000001", .value(1)),
        ("1234567890123456789", .tooLarge),
        ("99999999999999999999999999999999", .tooLarge),
        ("", .notANumber),
        ("-1", .notANumber),
        ("+1", .notANumber),
        (" 1", .notANumber),
        ("1 ", .notANumber),
        ("1e3", .notANumber),
        ("1_000", .notANumber),
        ("١٢", .notANumber),  // Arabic-Indic digits are not ASCII digits
        ("0x10", .notANumber),
    ])
    func wholeValue(text: String, reading: NumberText.Reading<Int>) {
        #expect(NumberText.wholeValue(text) == reading)
        #expect(NumberText.wholeValue(bytes: Array(text.utf8)) == reading, "bytes read as the text does")
    }

    @Test(arguments: [
        ("0", NumberText.Reading<Double>.value(0)),
        ("1.5", .value(1.5)),
        (".5", .value(0.5)),
        ("5.", .value(5)),
        ("0.3333", .value(0.3333)),
        ("12345678901234567.25", .value(12345678901234567.25)),
        ("0." + String(repeating: "0", count: 200) + "1", .value(0)),
        ("1234567890123456789.0", .tooLarge),
        (".", .notANumber),
        ("", .notANumber),
        ("1.2.3", .notANumber),
        ("1e30", .notANumber),
        ("nan", .notANumber),
        ("inf", .notANumber),
        ("-0.5", .notANumber),
        ("0x1p3", .notANumber),
    ])
    func decimalValue(text: String, reading: NumberText.Reading<Double>) {
        #expect(NumberText.decimalValue(text) == reading)
    }

    @Test func rangesAreCheckedAndNamed() {
        #expect(throws: TartilError.usage("--jobs takes a whole number from 1 to 64, not '65'")) {
            try NumberText.whole("65", in: 1...64, for: "--jobs")
        }
        #expect(throws: TartilError.usage("--jobs takes a whole number from 1 to 64, not '99999999999999999999'")) {
            try NumberText.whole("99999999999999999999", in: 1...64, for: "--jobs")
        }
        #expect(throws: TartilError.usage("--pause takes a number from 0 to 60, not '1e30'")) {
            try NumberText.decimal("1e30", in: 0...60, for: "--pause")
        }
        #expect(throws: TartilError.usage("--pause takes a number from 0 to 0.5, not '0.75'")) {
            try NumberText.decimal("0.75", in: 0...0.5, for: "--pause")
        }
        #expect(NumberText.whole("64", in: 1...64) == 64)
        #expect(NumberText.decimal("60", in: 0...60) == 60)
    }

    /// Seeded random text never traps, and what is accepted is within its range.
    @Test func randomTextNeverTraps() {
        var generator = SeededRandom(seed: 0x7a2711)
        let alphabet = Array("0123456789.+-e:%sx ٠") + ["\u{0}"]
        for _ in 0..<20_000 {
            let text = String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            if let value = NumberText.whole(text, in: 0...1_000) { #expect((0...1_000).contains(value)) }
            if let value = NumberText.decimal(text, in: 0...60) { #expect((0...60).contains(value)) }
            _ = try? SeekTarget.parse(text)
        }
    }
}
