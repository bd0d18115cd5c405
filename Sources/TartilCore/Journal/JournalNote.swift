/// What a note (a bookmark's `--note`, a note edit, a session's note) may hold, wherever it comes from: typed,
/// merged from another journal or synced. The README promises no control characters, so a note holds none of:
///
/// - C0 controls U+0000-U+001F (tab, new line, escape…) and DEL U+007F;
/// - C1 controls U+0080-U+009F (U+009B is a terminal's CSI, as `ESC [` is);
/// - bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, which reorder the text
///   after them up to the end of the paragraph (the "Trojan Source" trick: a note that reads differently from
///   what it holds, and that spills into the columns printed after it);
/// - the line and paragraph separators U+2028 and U+2029 (a new line by another name).
///
/// The bidirectional *marks* U+200E (LRM), U+200F (RLM) and U+061C (ALM) are allowed: they reorder nothing
/// beyond the neutral characters next to them, they cannot run past the end of the note, and a note that mixes
/// Arabic and Latin text (a surah's name in both) legitimately holds them, from Arabic keyboards and copied text.
///
/// An empty note is no note: `normalized` gives nil for it, and every output shows it as none (JSON `null`, an
/// empty CSV field, nothing in text).
///
/// Pure; the journal's merge check refuses the same characters in SQL (`sqlPattern`).
public enum JournalNote {
    /// Whether `scalar` is refused in a note.
    @inlinable
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (value >= 0x7F && value <= 0x9F) || (value >= 0x202A && value <= 0x202E)
            || (value >= 0x2066 && value <= 0x2069) || value == 0x2028 || value == 0x2029
    }

    /// Why `text` is not a note, naming the first refused character and where it is, or nil when it is one.
    /// (Its length is checked apart, against `JournalLimits.noteBytes`.)
    public static func problem(_ text: String) -> String? {
        for (index, scalar) in text.unicodeScalars.enumerated() where isRefused(scalar) {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return "it has the control character \(code) (\(kind(scalar))) at character \(index + 1); a note takes text without control characters (tabs, new lines, escapes, C1 controls) or bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069)"
        }
        return nil
    }

    /// `text` with every refused character replaced by a space: for notes tartil makes itself (a session's end
    /// with an error message from a server), which must never be refused by another device's merge.
    public static func cleaned(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isRefused) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { result.append(isRefused(scalar) ? " " : scalar) }
        return String(result)
    }

    /// nil for an empty note, the note otherwise.
    public static func normalized(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// An SQLite `GLOB` pattern (an SQL expression) that matches a text holding a refused character: the
    /// merge check's form of `isRefused`.
    public static let sqlPattern =
        "('*[' || char(1) || '-' || char(31) || char(127) || '-' || char(159) || char(8232) || char(8233) || char(8234) || '-' || char(8238) || char(8294) || '-' || char(8297) || ']*')"

    static func kind(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x09: "a tab"
        case 0x0A, 0x0D: "a line break"
        case 0x1B: "an escape"
        case 0x7F: "delete"
        case 0x80...0x9F: "a C1 control"
        case 0x2028, 0x2029: "a line or paragraph separator"
        case 0x202A...0x202E: "a bidirectional embedding or override"
        case 0x2066...0x2069: "a bidirectional isolate"
        default: "a C0 control"
        }
    }
}
