import Foundation
import TestSupport
import Testing

/// `tools/install`, the README's way onto the PATH: the installed executable finds its data beside it (not in
/// the checkout), and the man page and completions it installs are the generated ones.
@Suite struct InstallTests {
    func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test func theInstalledTartilRunsFromItsPrefixWithItsDataManPageAndCompletions() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let prefix = directory + "/prefix"
        var environment = isolatedEnvironment(home: directory + "/home")
        let install = try run(
            "/usr/bin/env", ["bash", TestPaths.repository + "/tools/install", "--prefix", prefix, "--binary", TestPaths.executable],
            environment: environment)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stdout.contains("installed tartil in \(prefix)/bin"))
        #expect(install.stdout.contains("is not on your PATH"))
        for file in [
            "bin/tartil", "share/tartil/mirrors.json", "share/tartil/reciter-tables/ibrahim-alakhdar.tsv", "share/man/man1/tartil.1",
            "share/bash-completion/completions/tartil", "share/fish/vendor_completions.d/tartil.fish",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) is installed")
        }
        #expect(
            try String(contentsOfFile: prefix + "/share/man/man1/tartil.1", encoding: .utf8)
                == String(contentsOfFile: TestPaths.repository + "/tartil.1", encoding: .utf8))
        // On the PATH, outside the checkout: the reciters come from the installed mirrors.json and tables.
        environment["PATH"] = prefix + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        let reciters = try run("/usr/bin/env", ["tartil", "reciters", "--format", "csv"], environment: environment)
        #expect(reciters.status == 0, "\(reciters.stderr)")
        #expect(reciters.stdout.contains("ibrahim-alakhdar"))
        let completion = try run("/usr/bin/env", ["bash", "-n", prefix + "/share/bash-completion/completions/tartil"], environment: environment)
        #expect(completion.status == 0, "\(completion.stderr)")
        // A bad argument changes nothing and says what is allowed.
        let bad = try run("/usr/bin/env", ["bash", TestPaths.repository + "/tools/install", "--prefix"], environment: environment)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--prefix needs a directory"))
    }
}
