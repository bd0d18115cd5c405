import TartilSession
import TartilCore
import TartilSystem

/// Where a command's output goes: standard output for results, standard error for messages and progress.
/// Tests give closures that collect the text; the executable writes to file descriptors 1 and 2.
public struct Console: Sendable {
    public let writeOut: @Sendable (String) -> Void
    public let writeError: @Sendable (String) -> Void
    /// Whether standard error is a terminal (progress lines are drawn there).
    public let errorIsTerminal: Bool
    /// Whether standard output is a terminal (`status` draws its bar there).
    public let outputIsTerminal: Bool
    /// The file descriptor of standard output, for commands that stream bytes (`journal export`).
    public let outputDescriptor: Int32
    /// The width of the terminal at a descriptor, or nil when it is not one.
    public let columnsOf: @Sendable (Int32) -> Int?

    public init(
        writeOut: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void,
        errorIsTerminal: Bool = false, outputIsTerminal: Bool = false, outputDescriptor: Int32 = 1,
        columns: @escaping @Sendable (Int32) -> Int? = { _ in nil }
    ) {
        self.outputDescriptor = outputDescriptor
        self.columnsOf = columns
        self.writeOut = writeOut
        self.writeError = writeError
        self.errorIsTerminal = errorIsTerminal
        self.outputIsTerminal = outputIsTerminal
    }

    /// Prints a line of results.
    public func line(_ text: String = "") { writeOut(text + "\n") }

    /// A line of prose: on a terminal, wrapped at words to its width (the first line at the spaces it starts
    /// with, later lines two more); to a pipe or a file, one line, as `line` prints it.
    public func paragraph(_ text: String) {
        guard let width = columns() else { return line(text) }
        for wrapped in TextWrap.keepingIndent(text, width: width) { line(wrapped) }
    }
    /// Prints a JSON value on one line.
    public func json(_ value: JSONValue) { writeOut(value.rendered() + "\n") }
    /// Prints a message line on standard error: on a terminal, wrapped at words to its width (later lines
    /// indented two spaces more than the first).
    public func note(_ text: String) {
        guard let width = errorColumns(), TerminalText.columns(text) > width else { return writeError(text + "\n") }
        writeError(TextWrap.keepingIndent(text, width: width).joined(separator: "\n") + "\n")
    }

    /// The width of standard output's terminal, or nil when it is not one.
    public func columns() -> Int? { columnsOf(outputDescriptor) }

    /// The width of standard error's terminal (where progress is drawn), or nil when it is not one.
    public func errorColumns() -> Int? { columnsOf(2) }

    /// Writes all of `text` to `descriptor` through the system-call funnel (partial writes and EINTR are
    /// retried). A failure (EPIPE and friends: the reader is gone) leaves nothing more to do.
    public static func writeAll(_ descriptor: Int32, _ text: String) {
        _ = try? SystemCall.writeAll(descriptor, text)
    }
}
