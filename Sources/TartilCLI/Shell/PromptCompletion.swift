import TartilSession
import CEdit
import Glibc
import TartilCore

/// Tab at the prompt: libedit asks `Completions.prompt` (through the CEdit shim) for the words that complete the
/// word before the cursor.
enum PromptCompletion {
    /// Set once, before the first line is read; used on the thread in readline.
    nonisolated(unsafe) private static var answer: ((String, Int) -> Completions.PromptAnswer)?

    /// Installs Tab completion from `table`; reciter ids come from the mirrors file `settings` name, read when
    /// first wanted. Does nothing when libedit lacks the hooks.
    static func install(table: CommandTable, settings: Settings) {
        nonisolated(unsafe) var reciters: [String]?
        answer = { line, cursor in
            Completions.prompt(line: line, cursor: cursor, table: table, reciters: {
                if let reciters { return reciters }
                let ids = (try? settings.mirrorsFile()).flatMap {
                    try? ReciterLibrary(mirrorsFile: $0.path, tableDirectories: settings.tableDirectories)
                }?.reciters.map(\.id.rawValue) ?? []
                reciters = ids
                return ids
            })
        }
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
