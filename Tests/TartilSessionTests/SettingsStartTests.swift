import Foundation
import TartilSystem
import Testing

@testable import TartilSession

/// What a play checks on every start, made cheap: the CA bundle's PEM marker is searched in the file's bytes.
struct SettingsStartTests {
    @Test(arguments: [
        ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", true),
        ("# a comment\n-----BEGIN CERTIFICATE-----", true),
        ("----BEGIN CERTIFICATE-----", false),
        ("-----BEGIN CERTIFICATE----", false),
        ("-----BEGIN PRIVATE KEY-----\n", false),
        ("", false),
        ("-", false),
        ("------BEGIN CERTIFICATE-----", true),
    ])
    func thePEMMarkerIsFoundWhereverItIsAndNowhereElse(text: String, holds: Bool) {
        #expect(Settings.holdsPEMCertificate(Array(text.utf8)) == holds)
        // The same answer as the search in a String that it replaced, with bytes that are not UTF-8 around it.
        let wrapped = [0xFF, 0x00] + Array(text.utf8) + [0xC3]
        #expect(Settings.holdsPEMCertificate(wrapped) == holds)
    }
}

/// The environment as settings read it: given variables (the first of a name wins, as getenv(3) has it), or the
/// process's own, read when asked.
struct EnvironmentTests {
    @Test func givenVariablesAndTheProcesssOwn() {
        let given: Environment = ["HOME": "/home/a", "TARTIL_RECITER": "x", "HOME": "/home/b"]
        #expect(given["HOME"] == "/home/a" && given["TARTIL_RECITER"] == "x" && given["NOT_SET"] == nil)
        #expect(Environment([(name: "EMPTY", value: "")])["EMPTY"] == "")
        #expect(Environment.process["PATH"] == ProcessInfo.processInfo.environment["PATH"])
        #expect(Environment.process["TARTIL_SURELY_NOT_SET_\(getpid())"] == nil)
        let settings = Settings(environment: ["HOME": "/nonexistent-home", "XDG_CACHE_HOME": "relative/cache"], bundledDataDirectory: nil)
        #expect(settings.cacheDirectory == "/nonexistent-home/.cache/tartil", "a relative XDG directory is ignored")
    }
}
