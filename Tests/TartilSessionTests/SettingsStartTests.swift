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
