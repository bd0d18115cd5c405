/// What the keys do while `tartil play` runs on a terminal (mpv's habits), in one table: the key reader, the
/// `?` help line, `play --help` and the README all come from it.
///
/// | key | does |
/// |---|---|
/// | space, `p` | pause / resume |
/// | ← → | back / forward 5 s |
/// | ↓ ↑ | back / forward 60 s |
/// | `<` `>` | previous / next ayah |
/// | `l` | A-B loop: mark A, then B (the loop starts), then clear it |
/// | `r` | repeat this ayah for ever / stop repeating it |
/// | `[` `]` | slower / faster by 0.05 |
/// | `9` `0` | quieter / louder by 5 % |
/// | `b` | bookmark where playback is |
/// | `w` | mark the ayah being recited weak (a mistake: it comes back in the next days' hifz revision) |
/// | `q` | quit, saving the position |
/// | `?` | this help (above the live line when it is too long for it) |
public enum PlayerKeys {
    /// What a key asks for.
    public enum Action: Sendable, Hashable {
        /// A playback command, carried out like the prompt's (its position is durable when it returns).
        case command(PlaybackMachine.Command)
        /// A bookmark where playback is (like `bookmark` with no ayah).
        case bookmark
        /// Mark the ayah being recited weak (`hifz mark weak` with no ayah).
        case markWeak
        /// Repeat each ayah for ever (`set repeat inf`), or back to once when it already does.
        case toggleRepeat
        /// Show the key help.
        case help
        /// Speed moved by this many steps of 0.05 (`PlaybackSpeed.stepped`: held within 0.5…2).
        case speed(steps: Int)
    }

    /// One row of the table: the keys (as the help shows them), what they do, and the keys themselves.
    public struct Binding: Sendable, Hashable {
        public let label: String
        public let help: String
        public let keys: [Key: Action]
    }

    /// Seconds moved by ← and →.
    public static let shortSeek = 5.0
    /// Seconds moved by ↓ and ↑.
    public static let longSeek = 60.0

    public static let bindings: [Binding] = [
        Binding(
            label: "space/p", help: "pause",
            keys: [.character(" "): .command(.toggle), .character("p"): .command(.toggle)]),
        Binding(
            label: "←/→", help: "-/+5 s",
            keys: [
                .left: .command(.seek(.offset(seconds: -shortSeek))),
                .right: .command(.seek(.offset(seconds: shortSeek))),
            ]),
        Binding(
            label: "↓/↑", help: "-/+60 s",
            keys: [
                .down: .command(.seek(.offset(seconds: -longSeek))), .up: .command(.seek(.offset(seconds: longSeek))),
            ]),
        Binding(
            label: "</>", help: "prev/next ayah",
            keys: [.character("<"): .command(.previous), .character(">"): .command(.next)]),
        Binding(label: "l", help: "loop A/B/off", keys: [.character("l"): .command(.markLoop)]),
        Binding(label: "r", help: "repeat ayah", keys: [.character("r"): .toggleRepeat]),
        Binding(
            label: "[/]", help: "-/+0.05 speed",
            keys: [.character("["): .speed(steps: -1), .character("]"): .speed(steps: 1)]),
        Binding(
            label: "9/0", help: "-/+5% volume",
            keys: [
                .character("9"): .command(.setVolume(.by(-PlaybackVolume.step))),
                .character("0"): .command(.setVolume(.by(PlaybackVolume.step))),
            ]),
        Binding(label: "b", help: "bookmark", keys: [.character("b"): .bookmark]),
        Binding(label: "w", help: "weak", keys: [.character("w"): .markWeak]),
        Binding(label: "q", help: "quit", keys: [.character("q"): .command(.quit)]),
        Binding(label: "?", help: "keys", keys: [.character("?"): .help]),
    ]

    /// What `key` does, or nil for a key that does nothing.
    public static func action(for key: Key) -> Action? {
        for binding in bindings {
            if let action = binding.keys[key] { return action }
        }
        return nil
    }

    /// The one-line help `?` shows: `keys: space/p pause  ←/→ -/+5 s  ↓/↑ -/+60 s  </> prev/next ayah  b bookmark  q quit  ? keys`.
    public static let helpLine = "keys: " + bindings.map { "\($0.label) \($0.help)" }.joined(separator: "  ")

    /// The key help for a terminal `width` columns wide, as lines to print above the live line: broken between
    /// two keys (`r repeat ayah` is never split), the later lines under the first key; nil when `helpLine`
    /// fits on the live line itself.
    public static func helpLines(width: Int) -> [String]? {
        LiveLine.linesAbove(notice: helpLine, width: width, hangingIndent: "keys: ".count)
    }
}
