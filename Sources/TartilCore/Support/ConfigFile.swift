/// The config file, `$XDG_CONFIG_HOME/tartil/config`, in mpv.conf's style: one `option=value` per line, with the
/// command line's own long option names (without `--`), `#` comments and blank lines. A later line for the same
/// option wins. The command line beats the environment, which beats this file, which beats the defaults.
///
/// ```
/// # ~/.config/tartil/config
/// reciter=ibrahim-alakhdar
/// output=silent
/// speed=1.25
/// ```
public struct ConfigFile: Sendable, Hashable {
    /// One setting, with the line it came from (for messages).
    public struct Entry: Sendable, Hashable {
        public let value: String
        public let line: Int
    }

    /// The options the file may set, as the command line spells them.
    public static let keys = [
        "reciter", "output", "device", "speed", "volume", "basmala", "mirrors", "tables", "cache-dir", "journal", "socket", "mpris", "ca-bundle",
        "connect-timeout", "stall-timeout",
    ]
    /// The largest file read: a config is a few lines.
    public static let maximumBytes = 64 << 10

    /// Where it was read from.
    public let file: String
    public let entries: [String: Entry]

    public init(file: String, entries: [String: Entry] = [:]) {
        self.file = file
        self.entries = entries
    }

    /// The value set for `key`, if any.
    public func value(_ key: String) -> String? { entries[key]?.value }

    /// `file:line`, where `key` was set.
    public func location(_ key: String) -> String { "\(file):\(entries[key]?.line ?? 0)" }

    /// Parses and checks `text`: every line a comment, blank, or `option=value` with a known option and a value
    /// that option takes. Errors are usage errors naming `file:line` and what is allowed.
    public static func parse(_ text: String, file: String) throws(TartilError) -> ConfigFile {
        guard text.utf8.count <= maximumBytes else {
            throw .usage("\(file): \(text.utf8.count) bytes is too long for a config file (at most \(maximumBytes))")
        }
        var entries: [String: Entry] = [:]
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = index + 1
            let trimmed = raw.trimmingCharacters(in: " \t\r")
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw .usage("\(file):\(line): expected option=value (reciter=ibrahim-alakhdar), not '\(trimmed.prefix(80))'")
            }
            var key = trimmed[..<equals].trimmingCharacters(in: " \t")
            if key.hasPrefix("--") { key = String(key.dropFirst(2)) }
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: " \t")
            guard keys.contains(key) else {
                throw .usage("\(file):\(line): unknown option '\(key.prefix(80))'\(Suggestion.hint(for: key, among: keys)) (options: \(keys.joined(separator: ", ")))")
            }
            guard !value.isEmpty else { throw .usage("\(file):\(line): \(key) needs a value") }
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .usage("\(file):\(line): \(key) has a control character in its value")
            }
            do {
                try check(key, value)
            } catch {
                throw .usage("\(file):\(line): \(error.message)")
            }
            entries[key] = Entry(value: value, line: line)
        }
        return ConfigFile(file: file, entries: entries)
    }

    /// Checks the values whose rules live in TartilCore (the others are checked where they are used).
    static func check(_ key: String, _ value: String) throws(TartilError) {
        switch key {
        case "speed": _ = try PlaybackSpeed.parse(value, for: "speed")
        case "volume": _ = try PlaybackVolume.parse(value, relative: false, for: "volume")
        case "basmala":
            guard PlaybackOptions.Basmala(rawValue: value) != nil else {
                throw Suggestion.unknownValue(value, for: "basmala", among: PlaybackOptions.Basmala.allCases.map(\.rawValue))
            }
        case "mpris":
            guard switchValue(value) != nil else { throw Suggestion.unknownValue(value, for: "mpris", among: ["yes", "no"]) }
        case "reciter":
            guard value.utf8.count <= 64 else { throw .usage("reciter: at most 64 characters") }
        case "connect-timeout": _ = try DownloadLimits().with(connectTimeout: (value, key), stallTimeout: nil)
        case "stall-timeout": _ = try DownloadLimits().with(connectTimeout: nil, stallTimeout: (value, key))
        default: break
        }
    }

    /// `yes`/`on`/`true`/`1` or `no`/`off`/`false`/`0`; nil for anything else.
    public static func switchValue(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "yes", "on", "true", "1": true
        case "no", "off", "false", "0": false
        default: nil
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self[...]
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String { self[...].trimmingCharacters(in: set) }
}
