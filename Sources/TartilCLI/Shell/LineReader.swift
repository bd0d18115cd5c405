import CEdit
import Foundation

/// Reads command lines: with libedit (line editing and a history file) when standard input is a terminal,
/// plain lines otherwise.
final class LineReader {
    private let interactive: Bool
    private let historyFile: String?

    init(interactive: Bool, historyFile: String?) {
        self.interactive = interactive
        self.historyFile = historyFile
        if interactive, let historyFile {
            try? FileManager.default.createDirectory(
                atPath: (historyFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = read_history(historyFile)
        }
    }

    /// The next line without its newline, or nil at the end of input.
    func next(prompt: String) -> String? {
        guard interactive else { return Swift.readLine(strippingNewline: true) }
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        let line = String(cString: raw)
        if !line.trimmingCharacters(in: .whitespaces).isEmpty {
            add_history(line)
            if let historyFile { _ = write_history(historyFile) }
        }
        return line
    }
}

@available(*, unavailable) extension LineReader: Sendable {}
