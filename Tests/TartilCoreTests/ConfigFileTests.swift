import Testing

@testable import TartilCore

/// The config file: mpv.conf's style, the command line's option names, errors with their line.
@Suite struct ConfigFileTests {
    @Test func readsSettingsCommentsAndBlankLines() throws {
        let text = "# tartil\n\nreciter = ibrahim-alakhdar\n  output=silent  \n--speed=1.25\nvolume=80\nreciter=akhdar\r\nmpris=no\n"
        let config = try ConfigFile.parse(text, file: "config")
        #expect(config.value("reciter") == "akhdar", "a later line wins")
        #expect(config.location("reciter") == "config:7")
        #expect(config.value("output") == "silent" && config.value("speed") == "1.25" && config.value("volume") == "80")
        #expect(config.value("mpris").flatMap(ConfigFile.switchValue) == false)
        #expect(config.value("device") == nil)
    }

    @Test(arguments: [
        ("reciter\n", "config:1: expected option=value"),
        ("# ok\nsped=2\n", "config:2: unknown option 'sped'; did you mean speed?"),
        ("speed=3\n", "config:1: speed takes a number from 0.5 to 2"),
        ("volume=+5\n", "config:1: volume takes"),
        ("basmala=of\n", "config:1: basmala takes auto or off, not 'of'; did you mean off?"),
        ("mpris=maybe\n", "config:1: mpris takes yes or no"),
        ("device=\n", "config:1: device needs a value"),
        ("reciter=a\u{1B}b\n", "config:1: reciter has a control character"),
    ])
    func aWrongLineIsAUsageErrorNamingIt(text: String, message: String) {
        do {
            _ = try ConfigFile.parse(text, file: "config")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .usage && error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func aHugeFileIsRefused() {
        #expect(throws: TartilError.self) { try ConfigFile.parse(String(repeating: "# x\n", count: 20_000), file: "config") }
    }
}
