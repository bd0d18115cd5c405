import Foundation
import TestSupport
import Testing

/// A program run on a pseudo-terminal of a given size by tools/pty-drive, driven by its steps (`wait:`,
/// `send:`, `screen:`, `match:`, `snap:`…), and what the terminal showed: the bytes written, and the screen as a
/// terminal of that size draws them (rows, snapshots, and how many times a line ran past the last column).
struct TerminalDrive {
    static let driver = TestPaths.repository + "/tools/pty-drive"

    let status: Int
    let output: String
    let modes: [String: String]
    /// The output after each `mark:LABEL` step.
    let after: [String: String]
    /// The screen's rows at each `snap:LABEL` step.
    let screens: [String: [String]]
    /// The screen's rows at the end, and before them the rows that scrolled off the top.
    let screen: [String]
    let lines: [String]
    /// Lines that ran past the last column (the terminal wrapped them).
    let overflows: Int

    /// Runs `command` on a terminal `columns` wide with `home` as its home and XDG directories.
    static func run(_ steps: [String], columns: Int = 80, command: [String], home: String) throws -> TerminalDrive {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", driver, "--cols", "\(columns)"] + steps + ["--"] + command
        process.environment = [
            "HOME": home, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data", "XDG_CACHE_HOME": home + "/xdg-cache",
            "TARTIL_RECITER": "fixture", "TERM": "xterm", "SWIFT_BACKTRACE": "enable=no", "PS1": "$ ",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        let text = object["output"] as? String ?? ""
        return TerminalDrive(
            status: object["status"] as? Int ?? -999, output: text, modes: object["modes"] as? [String: String] ?? [:],
            after: (object["marks"] as? [String: Int] ?? [:]).mapValues {
                String(decoding: Data(text.utf8).dropFirst($0), as: UTF8.self)
            },
            screens: object["screens"] as? [String: [String]] ?? [:], screen: object["screen"] as? [String] ?? [],
            lines: object["lines"] as? [String] ?? [], overflows: object["overflows"] as? Int ?? -1)
    }

    /// The fields of a line laid out two spaces apart (`playing  112:2  0:05 / 0:20`).
    static func fields(_ row: String) -> [String] {
        row.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether each field of `row` is a whole one of `patterns` (regular expressions, each matching a whole
    /// field), in their order; a pattern may be passed over (its field left out), none used twice.
    static func fieldsMatch(_ row: String, _ patterns: [String]) -> Bool {
        var next = patterns.startIndex
        for field in fields(row) {
            guard
                let found = patterns[next...].firstIndex(where: {
                    field.range(of: "^(\($0))$", options: .regularExpression) != nil
                })
            else { return false }
            next = found + 1
        }
        return true
    }
}
