/// Splits a line of commands (`-c "play 1; wait"`, a REPL line, a script line) into commands and words, the way
/// a shell would for the simple cases: white space separates words, `;` separates commands, single and double
/// quotes group words, a backslash escapes the next character, and `#` at the start of a word begins a comment
/// (but `#262`, a global ayah number, is a word).
public enum CommandLineSplitter {
    /// The longest line taken, in bytes: far more than any command needs, and short enough that no line can
    /// keep tartil busy (longer lines are refused whole, before anything in them runs).
    public static let maximumLineBytes = 65_536

    /// The error for a line of `bytes` bytes, over the limit.
    public static func tooLong(bytes: Int) -> CommandLineError {
        CommandLineError("the line is \(bytes) bytes long; lines may have at most \(maximumLineBytes) bytes (split it into several)")
    }

    /// The commands of `line`, each as its words. Empty commands are dropped.
    public static func split(_ line: String) throws(CommandLineError) -> [[String]] {
        guard line.utf8.count <= maximumLineBytes else { throw tooLong(bytes: line.utf8.count) }
        var commands: [[String]] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        let characters = Array(line)
        for (position, character) in characters.enumerated() {
            if escaped {
                word.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\" && open == "\"" {
                    escaped = true
                } else {
                    word.append(character)
                }
                continue
            }
            switch character {
            case "\\":
                escaped = true
                inWord = true
            case "'", "\"":
                quote = character
                inWord = true
            case " ", "\t", "\n", "\r":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case ";":
                if inWord { words.append(word) }
                word = ""
                inWord = false
                if !words.isEmpty { commands.append(words) }
                words = []
            case "#" where !inWord && !(position + 1 < characters.count && characters[position + 1].isASCII && characters[position + 1].isNumber):
                // `#` starts a comment, except before a digit: `#262` is a global ayah number.
                if !words.isEmpty { commands.append(words) }
                return commands
            default:
                word.append(character)
                inWord = true
            }
        }
        if quote != nil { throw CommandLineError("unterminated \(quote == "'" ? "single" : "double") quote") }
        if escaped { throw CommandLineError("a backslash ends the line") }
        if inWord { words.append(word) }
        if !words.isEmpty { commands.append(words) }
        return commands
    }
}

/// A command line that could not be split (an open quote).
public struct CommandLineError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
