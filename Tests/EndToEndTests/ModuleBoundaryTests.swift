import Foundation
import TestSupport
import Testing

/// Each C library is reached by exactly one Swift module, and only TartilNet touches the network.
@Suite struct ModuleBoundaryTests {
    /// Module name → the text of its Swift sources.
    func sources() throws -> [String: [(file: String, text: String)]] {
        let root = TestPaths.repository + "/Sources"
        var result: [String: [(String, String)]] = [:]
        for module in try FileManager.default.contentsOfDirectory(atPath: root) {
            guard let files = FileManager.default.enumerator(atPath: "\(root)/\(module)") else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: "\(root)/\(module)/\(file)", encoding: .utf8)
                result[module, default: []].append(("\(module)/\(file)", text))
            }
        }
        return result
    }

    @Test func eachCModuleHasOneOwner() throws {
        let owners = [
            "CCurl": "TartilNet", "CMpg123": "TartilAudio", "CALSA": "TartilAudio", "CSQLite": "TartilSQLite",
            "CCrypto": "TartilCache", "CEdit": "TartilShell", "CSystem": "TartilCache", "CSonic": "TartilAudio",
            "CSdBus": "TartilMPRIS",
        ]
        var importers: [String: Set<String>] = [:]
        for (module, files) in try sources() {
            for (_, text) in files {
                for line in text.split(separator: "\n") where line.hasPrefix("import C") {
                    let name = String(line.dropFirst("import ".count)).trimmingCharacters(in: .whitespaces)
                    importers[name, default: []].insert(module)
                }
            }
        }
        for (library, owner) in owners {
            #expect(importers[library] == [owner], "\(library) is imported by \(importers[library] ?? [])")
        }
        #expect(Set(importers.keys).isSubset(of: Set(owners.keys)), "unexpected C modules: \(importers.keys)")
    }

    /// tartil links no Foundation and no libdispatch: no module imports Foundation, any of its parts
    /// (FoundationEssentials and the rest) or Dispatch, whose conformance records would lengthen every runtime
    /// conformance lookup and whose code and relocations every start would pay for. (Tests may use them; the
    /// executable may not.)
    @Test func noModuleImportsFoundation() throws {
        for (_, files) in try sources() {
            for (file, text) in files {
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.contains(" import ") {
                    #expect(!line.contains("Foundation") && !line.contains("Dispatch"), "\(file): \(line)")
                }
            }
        }
    }

    /// The network fence: no module but TartilNet imports CCurl or FoundationNetworking or uses URLSession.
    @Test func onlyTartilNetReachesTheNetwork() throws {
        for (module, files) in try sources() where module != "TartilNet" {
            for (file, text) in files {
                #expect(!text.contains("import CCurl"), "\(file) imports CCurl")
                #expect(!text.contains("import FoundationNetworking"), "\(file) imports FoundationNetworking")
                #expect(!text.contains("URLSession"), "\(file) uses URLSession")
            }
        }
    }

    /// The module arrows of ARCHITECTURE.md: what each module may import of the project's own. The engine
    /// (player, downloads, cache, journal, SQLite) is reached by the front ends only through the session.
    static let arrows: [String: Set<String>] = [
        "TartilCore": [],
        "TartilSystem": ["TartilCore"],
        "TartilSQLite": ["CSQLite"],
        "TartilJournal": ["TartilCore", "TartilSystem", "TartilSQLite"],
        "TartilCache": ["TartilCore", "TartilSystem", "TartilSQLite", "CCrypto", "CSystem"],
        "TartilNet": ["TartilCore", "TartilSystem", "TartilCache", "CCurl"],
        "TartilAudio": ["TartilCore", "TartilSystem", "CMpg123", "CALSA", "CSonic"],
        "TartilPlayer": ["TartilCore", "TartilSystem", "TartilAudio", "TartilNet", "TartilCache"],
        "TartilSession": ["TartilCore", "TartilSystem", "TartilPlayer", "TartilAudio", "TartilNet", "TartilCache", "TartilJournal"],
        "TartilControl": ["TartilCore", "TartilSystem", "TartilSession"],
        "TartilMPRIS": ["TartilCore", "TartilSystem", "TartilSession", "CSdBus"],
        "TartilCLI": ["TartilCore", "TartilSystem", "TartilSession", "TartilControl", "TartilMPRIS"],
        "TartilShell": ["TartilCLI", "TartilCore", "TartilSystem", "TartilSession", "TartilControl", "TartilMPRIS", "CEdit"],
        "tartil": ["TartilShell"],
    ]

    /// The project's modules a Swift file imports (`import X`, `@testable import X`, `@_exported import X`).
    static func projectImports(_ text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { continue }
            guard words[..<index].allSatisfy({ $0.hasPrefix("@") }) else { continue }
            let name = words[index + 1]
            if name.hasPrefix("Tartil") || name == "tartil" || name.hasPrefix("C") && name.count > 1 && name.dropFirst().first!.isUppercase {
                names.insert(name)
            }
        }
        return names
    }

    @Test func everyModuleImportsOnlyWhatItsArrowsAllow() throws {
        let sources = try sources()
        #expect(Set(sources.keys).subtracting(Self.arrows.keys).allSatisfy { $0.hasPrefix("C") }, "a module without arrows: \(sources.keys.sorted())")
        for (module, files) in sources where !module.hasPrefix("C") {
            let allowed = try #require(Self.arrows[module], "\(module) has no arrows")
            for (file, text) in files {
                let extra = Self.projectImports(text).subtracting(allowed).subtracting([module])
                #expect(extra.isEmpty, "\(file) imports \(extra.sorted()), which \(module) may not (it may import \(allowed.sorted()))")
            }
        }
    }

    @Test func theArrowRuleCatchesAForbiddenImport() {
        #expect(Self.projectImports("import TartilCore\n@testable import TartilPlayer\nimport Glibc\n") == ["TartilCore", "TartilPlayer"])
        #expect(Self.projectImports("// import TartilNet in a comment\n") == [])
    }

    // MARK: - One system-call funnel, one clock

    /// What only TartilSystem may write, and what to use instead. A hand-written EINTR check or a raw `errno`
    /// read elsewhere bypasses the funnel (`SystemCall.retrying`, its thrown `Errno`, `Errno.current`); a clock
    /// read elsewhere bypasses the injected `TartilClock`, so a manual clock in a test would not reach it.
    static let systemOnly: [(name: String, isClock: Bool, what: String)] = [
        ("EINTR", false, "handles EINTR itself (retry through SystemCall.retrying)"),
        ("errno", false, "reads errno itself (catch the Errno SystemCall throws, or use Errno.current)"),
        ("Date()", true, "reads the wall clock with Date() (use the injected clock's wallMilliseconds)"),
        ("DispatchTime", true, "reads DispatchTime (use the injected clock's now)"),
        ("ContinuousClock", true, "uses ContinuousClock (use the injected clock's now and sleep)"),
        ("clock_gettime", true, "calls clock_gettime (use the injected clock)"),
        ("gettimeofday", true, "calls gettimeofday (use the injected clock's wallMilliseconds)"),
    ]

    /// Whether `code` holds `name` as a whole identifier (`errno`, not `Errno` or `my_errno`).
    static func mentions(_ code: String, _ name: String) -> Bool {
        func isIdentifier(_ character: Character?) -> Bool {
            character.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false
        }
        var searched = code[...]
        while let found = searched.range(of: name) {
            let before = found.lowerBound == code.startIndex ? nil : code[code.index(before: found.lowerBound)]
            let after = found.upperBound == code.endIndex ? nil : code[found.upperBound]
            if !isIdentifier(before) && (name.hasSuffix(")") || !isIdentifier(after)) { return true }
            searched = code[found.upperBound...]
        }
        return false
    }

    /// Files outside TartilSystem allowed to read a clock of their own, each with its reason (EINTR and errno
    /// have no exceptions).
    static let ownClockAllowed: Set<String> = []

    /// The code of each line of a Swift file, comments left out (`//` to the end of the line, `/* … */`).
    static func codeLines(_ text: String) -> [String] {
        var lines: [String] = []
        var inBlockComment = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var code = ""
            var rest = Substring(line)
            while !rest.isEmpty {
                if inBlockComment {
                    guard let end = rest.range(of: "*/") else { rest = ""; break }
                    rest = rest[end.upperBound...]
                    inBlockComment = false
                } else if let start = rest.range(of: "/*"),
                    rest.range(of: "//").map({ start.lowerBound < $0.lowerBound }) ?? true
                {
                    code += rest[..<start.lowerBound]
                    rest = rest[start.upperBound...]
                    inBlockComment = true
                } else {
                    code += rest.range(of: "//").map { rest[..<$0.lowerBound] } ?? rest
                    rest = ""
                }
            }
            lines.append(code)
        }
        return lines
    }

    /// The uses of `systemOnly` in a Swift file's code (comments left out), as `line N: what`.
    static func systemOnlyUses(in text: String, clocksAllowed: Bool = false) -> [String] {
        var uses: [String] = []
        for (number, code) in codeLines(text).enumerated() {
            for (name, isClock, what) in systemOnly where !(isClock && clocksAllowed) && mentions(code, name) {
                uses.append("line \(number + 1): \(what)")
            }
        }
        return uses
    }

    /// Outside TartilSystem (and the C shims), no module handles EINTR or errno itself or keeps a clock of its
    /// own (issue 22, items 4 and 5).
    @Test func systemCallsAndClocksGoThroughTartilSystem() throws {
        var seenAllowed: Set<String> = []
        for (module, files) in try sources() where module != "TartilSystem" && !module.hasPrefix("C") {
            for (file, text) in files {
                let allowed = Self.ownClockAllowed.contains(file)
                if allowed { seenAllowed.insert(file) }
                for use in Self.systemOnlyUses(in: text, clocksAllowed: allowed) {
                    Issue.record("Sources/\(file) \(use)")
                }
            }
        }
        #expect(seenAllowed == Self.ownClockAllowed, "an allowed file is gone: remove it from ownClockAllowed")
    }

    @Test func theFunnelRuleCatchesAViolation() {
        let planted = """
            // errno and EINTR in a comment, and Date() too
            if count < 0 && errno == EINTR { continue }
            let now = Date() /* ContinuousClock in a comment */
            let code = Errno.current  // the funnel's own names
            """
        #expect(Self.systemOnlyUses(in: planted) == [
            "line 2: handles EINTR itself (retry through SystemCall.retrying)",
            "line 2: reads errno itself (catch the Errno SystemCall throws, or use Errno.current)",
            "line 3: reads the wall clock with Date() (use the injected clock's wallMilliseconds)",
        ])
        #expect(Self.systemOnlyUses(in: "let t = DispatchTime.now()", clocksAllowed: true).isEmpty)
        #expect(Self.systemOnlyUses(in: "while true {} // EINTR").isEmpty)
        let lookAlikes = "let my_errno = 0; let e = Errno.interrupted; let d = Date(timeIntervalSince1970: 0)"
        #expect(Self.systemOnlyUses(in: lookAlikes).isEmpty)
    }

    // MARK: - Signal handlers

    /// The signal handlers in a Swift file (closures of type `@convention(c) (Int32) -> Void`, assigned or
    /// returned) whose first statement is not `SystemCall.keepingErrno { … }`, as `line N`.
    static func handlersNotKeepingErrno(in text: String) -> [String] {
        let lines = codeLines(text)
        guard lines.contains(where: { $0.contains("@convention(c) (Int32) -> Void") }) else { return [] }
        var found: [String] = []
        for (number, code) in lines.enumerated()
        where code.range(of: #"(@convention\(c\) \(Int32\) -> Void = |return )\{ (_|\w+) in\s*$"#, options: .regularExpression) != nil {
            let next = lines[(number + 1)...].first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            if !next.trimmingCharacters(in: .whitespaces).hasPrefix("SystemCall.keepingErrno") { found.append("line \(number + 1)") }
        }
        return found
    }

    /// A signal handler puts `errno` back (issue 23, item 16): the code it interrupted may be between a failed
    /// call and its read of `errno`, and the handler's own `write(2)` to the self-pipe would change it.
    @Test func signalHandlersKeepErrno() throws {
        var handlers = 0
        for (_, files) in try sources() {
            for (file, text) in files {
                handlers += text.components(separatedBy: "@convention(c) (Int32) -> Void").count - 1
                for line in Self.handlersNotKeepingErrno(in: text) {
                    Issue.record("Sources/\(file) \(line): a signal handler that does not start with SystemCall.keepingErrno")
                }
            }
        }
        #expect(handlers >= 2, "the scan found the handlers (Interrupt, RawTerminal)")
        #expect(Self.handlersNotKeepingErrno(in: "let h: @convention(c) (Int32) -> Void = { _ in\n    _ = write(fd, &b, 1)\n}") == ["line 1"])
        #expect(Self.handlersNotKeepingErrno(in: "let h: @convention(c) (Int32) -> Void = { _ in\n    // why\n    SystemCall.keepingErrno {\n") == [])
    }

    // MARK: - One bounded parser for numbers

    /// The files that turn text into numbers: the bounded parser itself, and the JSON lexer (whose numbers are
    /// bounded where they are used, through `NumberText.whole(_:in:)`).
    static let numberParsers: Set<String> = ["TartilCore/Support/NumberText.swift", "TartilCore/Support/JSONNode.swift"]

    /// The numeric types whose initialisers read text (`Int("12")`, `Double(text)`, `UInt32(hex, radix: 16)`).
    static let numberTypes = ["Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "CInt", "CLong"]

    /// Text read as a number by a failable initialiser, outside the bounded parser: `Int(text)` used as an
    /// optional (`?? 0`, `if let`, `guard let`, a condition's `, let`), a `radix:`, or `compactMap(Int.init)`. The
    /// non-failable conversions between numbers (`Int(someDouble)`) and `Int(exactly:)` are not text.
    static func rawNumberReadings(in text: String) -> [String] {
        var uses: [String] = []
        let lines = codeLines(text)
        for (number, code) in lines.enumerated() where code.contains("Int") || code.contains("Double") || code.contains("Float") || code.contains("CLong") {
            var previous: String {
                lines[..<number].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.trimmingCharacters(in: .whitespaces) ?? ""
            }
            for type in numberTypes where code.contains(type + "(") || code.contains(type + ".init") {
                if code.contains("compactMap(\(type).init)") || code.contains("compactMap { \(type)($0) }") {
                    uses.append("line \(number + 1): reads text with \(type).init (use NumberText)")
                }
                var searched = code[...]
                while let found = searched.range(of: type + "(") {
                    searched = code[found.upperBound...]
                    let before = code[..<found.lowerBound]
                    if let last = before.last, last.isLetter || last.isNumber || last == "_" || last == "." { continue }
                    // The argument list, to its matching parenthesis (on this line).
                    var depth = 1
                    var end = found.upperBound
                    while end < code.endIndex, depth > 0 {
                        if code[end] == "(" { depth += 1 } else if code[end] == ")" { depth -= 1 }
                        if depth > 0 { end = code.index(after: end) }
                    }
                    let arguments = code[found.upperBound..<end]
                    if arguments.hasPrefix("exactly:") || arguments.hasPrefix("truncatingIfNeeded:") || arguments.hasPrefix("clamping:") { continue }
                    let after = end < code.endIndex ? code[code.index(after: end)...].trimmingCharacters(in: .whitespaces) : ""
                    let binding = before.range(of: #"(^|\b(if|guard|while)|,)\s*(let|var)\s+\w+\s*(:\s*\w+\s*)?=\s*$"#, options: .regularExpression) != nil
                    let continued = before.range(of: #"^\s*(let|var)\s+\w+\s*=\s*$"#, options: .regularExpression) != nil
                        && previous.hasSuffix(",")  // `, let x = Int(…)` continued on the next line
                    let conditionalBinding = binding && (before.range(of: #"\b(if|guard|while)\b|,"#, options: .regularExpression) != nil)
                    if arguments.contains("radix:") || after.hasPrefix("??") || conditionalBinding || continued {
                        uses.append("line \(number + 1): reads text with \(type)(\(arguments.prefix(40))) (use NumberText, the bounded parser)")
                    }
                }
            }
        }
        return uses
    }

    /// Every number read from a file, the network or a person goes through the bounded parser (`NumberText`):
    /// a raw `Int(text)` takes `+5`, reads 20 digits as nil without saying why, and a value it returns may
    /// trap later (issue 23, item 12).
    @Test func numbersAreReadOnlyByTheBoundedParser() throws {
        for (module, files) in try sources() where !module.hasPrefix("C") {
            for (file, text) in files where !Self.numberParsers.contains(file) {
                for use in Self.rawNumberReadings(in: text) { Issue.record("Sources/\(file) \(use)") }
            }
        }
    }

    @Test func theNumberRuleCatchesARawReading() {
        let planted = """
            guard parts.count == 3, let start = Int(parts[0]), let end = Int(parts[1]) else { return nil }
            probe.status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            if let value = Double(text), value.isFinite { }
            let code = UInt32(hex, radix: 16)
            let numbers = words.compactMap(Int.init)
            guard ready,
                let total = Int64(parts[2])
            // Int(text) ?? 0 in a comment
            let whole = Int(seconds.rounded()); let exact = Int(exactly: value) ?? 0
            let rate = Double(bytes) / seconds; let index = Int32(offset + 1)
            """
        #expect(Self.rawNumberReadings(in: planted).map { $0.prefix(8) } == [
            "line 1: ", "line 1: ", "line 2: ", "line 3: ", "line 4: ", "line 5: ", "line 7: ",
        ])
    }

    /// The command line parses arguments and renders results; everything else is the session's and the engine's.
    @Test func theCommandLineIsASmallShareOfTheSources() throws {
        let sources = try sources()
        func lines(_ module: String) -> Int { (sources[module] ?? []).reduce(0) { $0 + $1.text.split(separator: "\n", omittingEmptySubsequences: false).count } }
        let total = sources.keys.reduce(0) { $0 + lines($1) }
        let share = Double(lines("TartilCLI")) / Double(total)
        #expect(share < 0.15, "TartilCLI has \(lines("TartilCLI")) of \(total) lines (\(Int(share * 100))%)")
    }
}

