import TartilSession
import TartilCore

/// The one place where errors become text on standard error and exit codes.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | failure (a file could not be read, a download failed, …) |
/// | 64 | usage error: a bad command line or bad input; nothing was changed |
/// | 130 | interrupted by Ctrl-C (SIGINT) or SIGTERM |
public enum ExitStatus {
    public static let success = ExitCode.success
    public static let failure = ExitCode.failure
    public static let usage = ExitCode.usage
    public static let interrupted = ExitCode.interrupted

    /// Prints `error` for a person and returns the exit code it maps to; `line` is the script line the error
    /// came from (commands on standard input), said first: `Error: line 3: …`.
    static func report(_ error: any Error, command: CommandSpec?, console: Console, line: Int? = nil) -> Int32 {
        let (code, described) = describe(error)
        let message = described.controlCharactersShown  // a server's or a file's bytes may be quoted in it
        var text = "Error: \(line.map { "line \($0): " } ?? "")\(message)\n"
        if code == usage {
            let usageCommand = (error as? UsageError)?.command ?? command?.syntax
            if let usageCommand, !usageCommand.isGroup {
                text += "Usage: \(usageCommand.usage)\n  See 'tartil help \(usageCommand.name)'.\n"
            } else {
                text += "  See 'tartil help'.\n"
            }
        }
        if code == interrupted { text = "Interrupted: \(line.map { "line \($0): " } ?? "")\(message)\n" }
        if let width = console.errorColumns() {
            // On a terminal, wrapped at words (later lines of a message under its text, after two spaces).
            text = TextWrap.keepingIndent(String(text.dropLast()), width: width).joined(separator: "\n") + "\n"
        }
        console.writeError(text)
        return code
    }

    /// The exit code and message for an error.
    static func describe(_ error: any Error) -> (Int32, String) {
        switch error {
        case let error as UsageError:
            return (usage, error.message)
        case let error as CommandLineError:
            return (usage, error.message)
        case let error as TartilError:
            return (ExitCode.of(error), error.description)
        default:
            return (failure, "\(error)")
        }
    }
}
