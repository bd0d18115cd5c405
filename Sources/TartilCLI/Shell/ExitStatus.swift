import TartilAudio
import TartilCache
import TartilCore
import TartilSQLite

/// The one place where errors become text on standard error and exit codes.
///
/// | code | meaning |
/// |---|---|
/// | 0 | success |
/// | 1 | failure (a file could not be read, a download failed, …) |
/// | 64 | usage error: a bad command line or bad input; nothing was changed |
/// | 130 | interrupted by Ctrl-C (SIGINT) or SIGTERM |
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let interrupted: Int32 = 130

    /// Prints `error` for a person and returns the exit code it maps to; `line` is the script line the error
    /// came from (commands on standard input), said first: `Error: line 3: …`.
    static func report(_ error: any Error, command: CommandSpec?, console: Console, line: Int? = nil) -> Int32 {
        let (code, message) = describe(error)
        var text = "Error: \(line.map { "line \($0): " } ?? "")\(message)\n"
        if code == usage {
            let usageCommand = (error as? UsageError)?.command ?? command
            if let usageCommand, usageCommand.run != nil {
                text += "Usage: \(usageCommand.usage)\n  See 'tartil help \(usageCommand.name)'.\n"
            } else {
                text += "  See 'tartil help'.\n"
            }
        }
        if code == interrupted { text = "Interrupted: \(line.map { "line \($0): " } ?? "")\(message)\n" }
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
            switch error.code {
            case .usage: return (usage, error.description)
            case .interrupted: return (interrupted, error.description)
            default: return (failure, error.description)
            }
        case let error as AudioError:
            return (failure, error.message)
        case let error as CacheError:
            return (failure, error.message)
        case let error as SQLiteError:
            return (failure, error.description)
        default:
            return (failure, "\(error)")
        }
    }
}
