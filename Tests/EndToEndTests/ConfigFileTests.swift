import Foundation
import TestSupport
import Testing

/// The config file through the real binary: it sets defaults below the environment and the command line, and a
/// wrong line stops every command with its line number.
@Suite struct ConfigFileEndToEndTests {
    @Test func commandLineBeatsEnvironmentBeatsConfigFile() throws {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/config/tartil", withIntermediateDirectories: true)
        try "# mine\nreciter = emad\n".write(toFile: home + "/config/tartil/config", atomically: true, encoding: .utf8)
        let fromConfig = try runTartil(["resolve", "112:1", "--json"], home: home)
        #expect(fromConfig.status == 0, "\(fromConfig.stderr)")
        #expect(fromConfig.stdout.contains("\"reciter\":\"emad-al-mansary\""))
        let fromEnvironment = try runTartil(["resolve", "112:1", "--json"], environment: ["TARTIL_RECITER": "ibrahim-alakhdar"], home: home)
        #expect(fromEnvironment.stdout.contains("\"reciter\":\"ibrahim-alakhdar\""))
        let fromOption = try runTartil(
            ["resolve", "112:1", "--json", "--reciter", "ahmed-allhdan"], environment: ["TARTIL_RECITER": "ibrahim-alakhdar"], home: home)
        #expect(fromOption.stdout.contains("\"reciter\":\"ahmed-allhdan\""))
        let version = try runTartil(["version"], home: home)
        #expect(version.stdout.contains("reciter  emad (\(home)/config/tartil/config:2)"), "\(version.stdout)")

        try "reciter=emad\nsped=2\n".write(toFile: home + "/config/tartil/config", atomically: true, encoding: .utf8)
        let broken = try runTartil(["surahs", "1"], home: home)
        #expect(broken.status == 64)
        #expect(broken.stderr.contains("\(home)/config/tartil/config:2: unknown option 'sped'; did you mean speed?"))
        let missing = try runTartil(["surahs", "1"], environment: ["TARTIL_CONFIG": home + "/nope"], home: home)
        #expect(missing.status == 64 && missing.stderr.contains("TARTIL_CONFIG names \(home)/nope, which does not exist"))
    }
}
