import CEdit
import Glibc
import TartilCLI
import TartilCore
import TartilSession

/// Tab at the prompt: libedit asks `Completions.prompt` (through the CEdit shim) for the words that complete the
/// word before the cursor.
enum PromptCompletion {
    /// Set once, before the first line is read; used on the thread in readline.
    nonisolated(unsafe) private static var answer: ((String, Int) -> PromptCompletionAnswer)?

    /// Installs Tab completion from `runner`'s command table; reciter ids come from the mirrors file `settings`
    /// name, read when first wanted. Does nothing when libedit lacks the hooks.
    static func install(runner: CommandRunner, settings: Settings) {
        answer = { line, cursor in runner.promptCompletions(line: line, cursor: cursor, settings: settings) }
        _ = cedit_set_completion(complete)
    }

    /// libedit's callback: the line and the cursor (counted in characters as libedit counts them: Unicode
    /// scalars) to newline-separated candidates from malloc, or NULL for file names.
    private static let complete: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { line, end in
        guard let line, let answer = PromptCompletion.answer else { return strdup("") }
        let text = String(cString: line)
        let before = String(String.UnicodeScalarView(text.unicodeScalars.prefix(max(0, Int(end)))))
        switch answer(text, before.count) {
        case .files: return nil
        case .words(let words): return strdup(words.joined(separator: "\n"))
        }
    }
}
