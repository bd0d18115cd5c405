import CEdit
import TartilCLI
import Glibc
import TartilCore
import TartilSystem

/// Reads command lines: with libedit (line editing and a history file) when standard input is a terminal,
/// plain lines otherwise (and at a terminal where libedit cannot be loaded).
final class LineReader: LineSource {
    /// Whether lines are read with libedit.
    private let interactive: Bool
    private let historyFile: String?
    /// Bytes read from standard input but not yet returned as lines (non-interactive mode).
    private var pending: [UInt8] = []
    /// How many bytes at the start of `pending` are known to hold no newline (each byte is looked at once).
    private var scanned = 0
    /// Bytes of an over-long line dropped so far (nil: not in one). Such a line is never held in memory whole.
    private var dropped: Int?
    private var reachedEnd = false
    /// Whether other threads' output is printed above the line being typed (see `PromptOutput`).
    private let printsAbove: Bool

    /// One line of input; a line longer than `CommandLineSplitter.maximumLineBytes` comes as `tooLong` with its
    /// length (its bytes were dropped).
    typealias Line = LineInput

    init(interactive: Bool, historyFile: String?) {
        self.interactive = interactive && cedit_load() == 0
        self.historyFile = historyFile
        printsAbove = self.interactive && PromptOutput.install(interruptDescriptor: Interrupt.wakeDescriptor)
        if self.interactive, let historyFile {
            try? FileSystem.createDirectories(Path.parent(historyFile))
            _ = cedit_read_history(historyFile)
        }
    }

    /// The next line without its newline, or nil at the end of input or when interrupted (check
    /// `Interrupt.isPending`).
    func next(prompt: String) -> Line? {
        guard interactive else { return nextPlainLine() }
        if printsAbove { PromptOutput.setAtPrompt(true) }
        let read = cedit_readline(prompt)
        if printsAbove { PromptOutput.setAtPrompt(false) }
        guard let raw = read else { return nil }
        defer { free(raw) }
        let line = String(cString: raw)
        if !line.trimmedWhitespace.isEmpty {
            cedit_add_history(line)
            if let historyFile { _ = cedit_write_history(historyFile) }
        }
        return .text(line)
    }

    /// Reads standard input with read(2) rather than stdio, so that an interrupt (Ctrl-C, SIGTERM: EINTR with the
    /// interrupt pending) ends the wait instead of being retried or leaving the stream in an error state; any
    /// other signal's EINTR is retried (`SystemCall.retrying(stoppingWhen:)`).
    private func nextPlainLine() -> Line? {
        let limit = CommandLineSplitter.maximumLineBytes
        while true {
            if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                defer {
                    pending.removeSubrange(...newline)
                    scanned = 0
                    dropped = nil
                }
                if let dropped { return .tooLong(bytes: dropped + newline) }
                return newline > limit ? .tooLong(bytes: newline) : .text(String(decoding: pending[..<newline], as: UTF8.self))
            }
            scanned = pending.count
            if pending.count > limit {
                dropped = (dropped ?? 0) + pending.count
                pending.removeAll(keepingCapacity: true)
                scanned = 0
            }
            if reachedEnd {
                defer {
                    pending.removeAll()
                    scanned = 0
                    dropped = nil
                }
                if let dropped { return .tooLong(bytes: dropped + pending.count) }
                guard !pending.isEmpty else { return nil }
                return .text(String(decoding: pending, as: UTF8.self))
            }
            // Wait for input or an interrupt, whichever comes first.
            var descriptors = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            if Interrupt.wakeDescriptor >= 0 {
                descriptors.append(pollfd(fd: Interrupt.wakeDescriptor, events: Int16(POLLIN), revents: 0))
            }
            // A failed poll (not an interrupt) is left to the read below to report.
            _ = try? SystemCall.retrying(stoppingWhen: { Interrupt.isPending }) {
                poll(&descriptors, nfds_t(descriptors.count), -1)
            }
            if Interrupt.isPending { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(Errno) in
                    try SystemCall.retrying(stoppingWhen: { Interrupt.isPending }) {
                        Glibc.read(0, bytes.baseAddress, bytes.count)
                    }
                }
            }
            switch result {
            case .success(0): reachedEnd = true
            case .success(let count): pending.append(contentsOf: buffer[..<count])
            case .failure(.interrupted): return nil
            case .failure: reachedEnd = true
            }
        }
    }
}

@available(*, unavailable) extension LineReader: Sendable {}
