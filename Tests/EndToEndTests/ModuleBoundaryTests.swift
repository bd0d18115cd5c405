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

    /// The command line parses arguments and renders results; everything else is the session's and the engine's.
    @Test func theCommandLineIsASmallShareOfTheSources() throws {
        let sources = try sources()
        func lines(_ module: String) -> Int { (sources[module] ?? []).reduce(0) { $0 + $1.text.split(separator: "\n", omittingEmptySubsequences: false).count } }
        let total = sources.keys.reduce(0) { $0 + lines($1) }
        let share = Double(lines("TartilCLI")) / Double(total)
        #expect(share < 0.15, "TartilCLI has \(lines("TartilCLI")) of \(total) lines (\(Int(share * 100))%)")
    }
}

