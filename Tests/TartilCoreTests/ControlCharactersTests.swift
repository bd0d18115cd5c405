import Testing

@testable import TartilCore

/// What a message quotes of bytes it did not write (a server's reply, a file) never reaches a terminal as a
/// control sequence: control characters are shown as `\u{…}`, line feeds and tabs are kept.
@Suite struct ControlCharactersTests {
    @Test(arguments: [
        ("plain text, عربي", "plain text, عربي"),
        ("\u{1B}[2J cleared", "\\u{1b}[2J cleared"),
        ("a\u{0}b\u{7F}c\u{9B}d", "a\\u{0}b\\u{7f}c\\u{9b}d"),
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),
        ("\r", "\\u{d}"),
    ])
    func controlCharactersAreShownNotSent(text: String, shown: String) {
        #expect(text.controlCharactersShown == shown)
    }

    /// JSON that starts with a byte no JSON text has names the byte, not a character made of it.
    @Test(arguments: [([UInt8(0x1B), 0x5B, 0x32, 0x4A], "unexpected byte 0x1b"), ([0x00], "unexpected byte 0x0"), ([0xD9, 0x84], "unexpected byte 0xd9"), ([0x3F], "unexpected character '?'")])
    func aByteThatStartsNoJSONIsNamed(bytes: [UInt8], message: String) {
        #expect(throws: (any Error).self) { try JSONNode.parse(bytes) }
        do { _ = try JSONNode.parse(bytes) } catch { #expect("\(error)".contains(message), "\(error)") }
    }
}
