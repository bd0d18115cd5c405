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
            "CCrypto": "TartilCache", "CEdit": "TartilCLI", "CSystem": "TartilCache", "CSonic": "TartilAudio",
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
}
