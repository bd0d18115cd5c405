import Foundation
import TartilCore
import TestSupport
import Testing

@testable import TartilCLI

/// Runs `program` with `arguments` in a private environment (`isolatedEnvironment`), `tartil` first on PATH.
private func runProgram(_ program: String, _ arguments: [String], directory: String) throws -> RunResult {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var environment = isolatedEnvironment(home: directory)
    environment["PATH"] = (TestPaths.executable as NSString).deletingLastPathComponent + ":" + (environment["PATH"] ?? "")
    environment["MANWIDTH"] = "80"
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let group = DispatchGroup()
    nonisolated(unsafe) var errorData = Data()
    DispatchQueue.global().async(group: group) { errorData = errors.fileHandleForReading.readDataToEndOfFile() }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return RunResult(status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
                     stderr: String(decoding: errorData, as: UTF8.self))
}

private func program(_ name: String) -> String? {
    ["/usr/bin/", "/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The completion scripts and the man page, generated from the command table.
@Suite struct CompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func scriptsMatchTheirGoldens(shell: String) throws {
        try HelpTests().checkGolden("completions-script-\(shell)", try #require(Completions.script(for: shell, .standard)))
    }

    /// The committed tartil.1 is the generator's output (TARTIL_UPDATE_GOLDEN=1 rewrites it).
    @Test func committedManPageIsTheGeneratorsOutput() throws {
        let path = TestPaths.repository + "/tartil.1"
        let text = ManPage.render(.standard)
        if ProcessInfo.processInfo.environment["TARTIL_UPDATE_GOLDEN"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "tartil.1 is stale: run tartil manpage > tartil.1")
    }

    @Test func everyVisibleCommandIsInTheManPageAndTheScripts() {
        let page = ManPage.render(.standard)
        let bash = Completions.bash(.standard)
        let fish = Completions.fish(.standard)
        for command in Completions.visible(.standard) {
            #expect(page.contains(".SS \"tartil \(ManPage.escape(command.name))"), "\(command.name) missing from the man page")
            #expect(bash.contains("\"\(command.name)\")"), "\(command.name) missing from bash")
            #expect(fish.contains("-a \(command.path.last!) -d"), "\(command.name) missing from fish")
        }
    }

    @Test(arguments: [
        ("auto|off", ["auto", "off"]), ("alsa|wav:path|null|silent", ["alsa", "wav:", "null", "silent"]),
        ("ndjson|csv", ["ndjson", "csv"]), ("n|inf", ["inf"]), ("time|off", ["off"]), ("reciters|surahs", ["reciters", "surahs"]),
    ])
    func valueNamesListTheirLiteralWords(valueName: String, words: [String]) {
        #expect(Completions.kind(ofValue: ["--x"], valueName: valueName) == .words(words))
    }

    @Test func kindsOfValues() {
        #expect(Completions.kind(ofValue: ["--reciter"], valueName: "id") == .reciters)
        #expect(Completions.kind(ofValue: ["--mirrors"], valueName: "file") == .files)
        #expect(Completions.kind(ofValue: ["--tables"], valueName: "dir") == .directories)
        #expect(Completions.kind(ofValue: ["--device"], valueName: "name") == .none)
        #expect(Completions.kind(ofValue: ["--pause"], valueName: "A B [n|inf] | off") == .none)
    }

    /// A value name listing alternatives always offers something.
    @Test func everyAlternativeValueNameOffersWords() {
        for command in CommandTable.standard.commands {
            for option in command.options {
                guard let valueName = option.valueName, valueName.contains("|"), !valueName.contains(" ") else { continue }
                let kind = Completions.kind(of: option)
                #expect(kind != .none && kind != .words([]), "\(command.name) \(option.names.last!) <\(valueName)> offers nothing")
            }
        }
    }

    /// An option name takes a value everywhere or nowhere, so the scripts can skip option values by name alone.
    @Test func optionNamesTakeValuesConsistently() {
        var takesValue: [String: Bool] = [:]
        for command in CommandTable.standard.commands {
            for option in command.options {
                for name in option.names {
                    let value = option.valueName != nil && option.optionalValuePrefix == nil
                    #expect(takesValue[name].map { $0 == value } ?? true, "\(name) is a flag in one command, valued in another")
                    takesValue[name] = value
                }
            }
        }
    }

    /// Every offered surah word names its surah.
    @Test func surahWordsNameTheirSurahs() {
        for surah in Catalog.surahs {
            let word = Completions.surahWord(surah)
            #expect(!word.contains(" ") && !word.contains("'"))
            #expect(SurahNames.match(word) == .found(surah), "\(word) does not name surah \(surah.number)")
        }
    }

    @Test(.enabled(if: program("bash") != nil)) func bashScriptParses() throws { try checkParses("bash") }
    @Test(.enabled(if: program("zsh") != nil)) func zshScriptParses() throws { try checkParses("zsh") }
    @Test(.enabled(if: program("fish") != nil)) func fishScriptParses() throws { try checkParses("fish") }

    /// `shell -n` on the script for `shell`.
    func checkParses(_ shell: String) throws {
        let path = try #require(program(shell))
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #require(Completions.script(for: shell, .standard)).write(toFile: directory + "/script", atomically: true, encoding: .utf8)
        let result = try runProgram(path, ["-n", directory + "/script"], directory: directory)
        #expect(result.status == 0, "\(shell) -n: \(result.stderr)")
    }

    /// Completion queries answered by the bash script, as bash calls it (COMP_WORDS, COMP_CWORD → COMPREPLY).
    @Test(.enabled(if: program("bash") != nil), arguments: [
        (["tartil", "pre"], ["prev", "prefetch"]),
        (["tartil", "cache", ""], ["ls", "du", "verify", "choose", "pin", "unpin", "import"]),
        (["tartil", "journal", "export", "--format", ""], ["ndjson", "json", "csv"]),
        (["tartil", "play", "36", "--basmala", ""], ["auto", "off"]),
        (["tartil", "play", "--output", "s"], ["silent"]),
        (["tartil", "play", "--reciter", "ibrahim"], ["ibrahim-alakhdar", "ibrahim-alakhdar-gapless"]),
        (["tartil", "--json", "resolve", "yase"], ["yaseen"]),
        (["tartil", "set", "rep"], ["repeat", "repeat-range"]),
        (["tartil", "completions", "f"], ["fish"]),
        (["tartil", "table", "build", "x", "--so"], ["--source", "--socket"]),
        (["tartil", "surahs", "--mi"], ["--mirrors"]),
    ])
    func bashAnswersCompletionQueries(words: [String], expected: [String]) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Completions.bash(.standard).write(toFile: directory + "/tartil.bash", atomically: true, encoding: .utf8)
        let script = """
            source ./tartil.bash
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
            _tartil
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runProgram(program("bash")!, ["-c", script, "bash"] + words, directory: directory)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map(String.init) == expected)
    }

    /// zsh runs the same function through bashcompinit, which calls it in sh emulation; zsh then filters the
    /// words by what was typed, so here the expected word need only be among them.
    @Test(.enabled(if: program("zsh") != nil), arguments: [
        (["tartil", "cache", ""], "verify"),
        (["tartil", "play", "36", "--basmala", ""], "off"),
        (["tartil", "play", "--reciter", "ibrahim"], "ibrahim-alakhdar"),
        (["tartil", "resolve", "yase"], "yaseen"),
    ])
    func zshAnswersCompletionQueries(words: [String], expected: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Completions.zsh(.standard).write(toFile: directory + "/tartil.zsh", atomically: true, encoding: .utf8)
        let script = """
            source ./tartil.zsh
            query() { emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tartil; printf '%s\n' "${COMPREPLY[@]}"; }
            query "$@"
            """
        let result = try runProgram(program("zsh")!, ["-f", "-c", script, "zsh"] + words, directory: directory)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").contains { $0 == expected }, "\(result.stdout)")
    }

    /// fish answers from its own `complete` lines (`complete -C`).
    @Test(.enabled(if: program("fish") != nil), arguments: [
        ("tartil pre", ["prefetch", "prev"]),
        ("tartil journal export --format ", ["csv", "json", "ndjson"]),
        ("tartil play --reciter ibrahim", ["ibrahim-alakhdar", "ibrahim-alakhdar-gapless"]),
    ])
    func fishAnswersCompletionQueries(line: String, expected: [String]) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Completions.fish(.standard).write(toFile: directory + "/tartil.fish", atomically: true, encoding: .utf8)
        let result = try runProgram(program("fish")!, ["-c", "source ./tartil.fish; complete -C '\(line)'"], directory: directory)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) } == expected)
    }

    @Test(.enabled(if: program("man") != nil)) func manPageRendersWithoutWarnings() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try ManPage.render(.standard).write(toFile: directory + "/tartil.1", atomically: true, encoding: .utf8)
        let result = try runProgram(program("man")!, ["--warnings", "-l", directory + "/tartil.1"], directory: directory)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "man --warnings: \(result.stderr)")
        #expect(result.stdout.contains("EXIT STATUS") && result.stdout.contains("tartil prefetch"))
        #expect(!ManPage.render(.standard).unicodeScalars.contains { !$0.isASCII }, "roff source should be ASCII")
    }

    @Test func completionsCommandPrintsScriptsAndLists() throws {
        let bash = try runTartil(["completions", "bash"])
        #expect(bash.status == 0 && bash.stdout == Completions.bash(.standard))
        let surahs = try runTartil(["completions", "--list", "surahs"])
        #expect(surahs.stdout.split(separator: "\n").count == 114)
        let reciters = try runTartil(["completions", "--list", "reciters"])
        #expect(reciters.stdout.split(separator: "\n").contains("ibrahim-alakhdar"))
        let bad = try runTartil(["completions", "tcsh"])
        #expect(bad.status == 64 && bad.stderr.contains("bash, zsh or fish") && bad.stdout.isEmpty)
        let man = try runTartil(["manpage"])
        #expect(man.status == 0 && man.stdout == ManPage.render(.standard))
    }
}

/// Tab at the prompt: `Completions.prompt`, from the same table.
@Suite struct PromptCompletionTests {
    @Test(arguments: [
        ("pre", Completions.PromptAnswer.words(["prev", "prefetch"])),
        ("", .words(Completions.nextWords(after: [], .standard))),
        ("cache v", .words(["verify"])),
        ("journal export --format c", .words(["csv"])),
        ("play 36 --basmala ", .words(["auto", "off"])),
        ("play --reciter ib", .words(["ibrahim-alakhdar"])),
        ("play 36 --rep", .words(["--repeat", "--repeat-range"])),
        ("status; resolve yase", .words(["yaseen"])),
        ("set stepped", .words(["stepped"])),
        ("help table b", .words(["bookmark", "bookmarks"])),
        ("help cac", .words(["cache"])),
        ("--json surahs al-ba", .words(["al-baqara", "al-balad", "al-bayyina"])),
        ("table build ", .files),
        ("play --mirrors ", .files),
        ("seek 3", .words([])),
        ("bookmark n", .words(["note", "nooh"])),
    ])
    func answers(line: String, expected: Completions.PromptAnswer) {
        let answer = Completions.prompt(line: line, cursor: line.count, table: .standard, reciters: { ["ibrahim-alakhdar", "alafasy-128"] })
        #expect(answer == expected, "\(line)")
    }

    @Test func theCursorBoundsTheWord() {
        let answer = Completions.prompt(line: "pre 36", cursor: 3, table: .standard, reciters: { [] })
        #expect(answer == .words(["prev", "prefetch"]))
    }

    @Test func recitersAreAskedOnlyWhenWanted() {
        nonisolated(unsafe) var asked = 0
        _ = Completions.prompt(line: "play 36 --basmala ", cursor: 18, table: .standard, reciters: { asked += 1; return [] })
        #expect(asked == 0)
    }

    /// Any line and cursor: no crash, and every word offered starts with the word being completed.
    @Test func seededLinesNeverCrash() {
        var random = SeededRandom(seed: 15)
        let pieces = ["play", "cache", " ", "--reciter", "-o", ";", "36", "\t", "ب", "'", "--", "set", "x", "help"]
        for _ in 0..<2000 {
            var line = ""
            for _ in 0..<random.below(8) { line += pieces[random.below(pieces.count)] }
            let cursor = random.below(line.count + 1)
            if case .words(let words) = Completions.prompt(line: line, cursor: cursor, table: .standard, reciters: { ["r"] }) {
                let before = String(line.prefix(cursor))
                let current = before.last.map { $0 == " " || $0 == "\t" || $0 == ";" } ?? true ? "" :
                    String(before.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ";" }).last ?? "")
                for word in words { #expect(word.hasPrefix(current), "\(line) at \(cursor): \(word)") }
            }
        }
    }
}

/// Tab at the real prompt (libedit on a pseudo-terminal, driven by tools/pty-drive).
@Suite struct PromptTabTests {
    @Test(.enabled(if: program("python3") != nil)) func tabCompletesCommandsOptionsAndReciters() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: program("python3")!)
        process.arguments = [
            TestPaths.repository + "/tools/pty-drive", "wait:tartil>", "send:pref\\t", "wait:etch ",
            "send:--rec\\t", "wait:iter ", "send:ibrahim-alakhdar-g\\t", "wait:apless ", "send:\\x15help cac\\t", "wait:he ",
            "send:\\n", "wait:SUBCOMMANDS", "send:quit\\n", "--", TestPaths.executable,
        ]
        var environment = isolatedEnvironment(home: home)
        environment["TERM"] = "xterm"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let screen = object["output"] as? String ?? ""
        #expect(object["status"] as? Int == 0, "\(screen)")
        // libedit writes only what Tab added: "pref" + "etch ", "--rec" + "iter ", ... and `help cache` ran.
        for piece in ["pref", "etch ", "--rec", "iter ", "ibrahim-alakhdar-g", "apless ", "help cac", "he ", "OVERVIEW: Inspect, verify"] {
            #expect(screen.contains(piece), "\(piece) not on the screen: \(screen)")
        }
    }
}
