import CCurl
import Testing

@testable import TartilCache
@testable import TartilNet

@Suite struct NetworkLibraryTests {
    /// The minimum is stated once (CCurl.h) and is the first libcurl with CURLOPT_PROTOCOLS_STR.
    @Test func theMinimumVersionIsTheFirstWithProtocolsAsAString() {
        #expect(NetworkLibrary.minimumVersion == "7.85.0")
        #expect(ccurl_version_supported(0x07_55_00) == 1)
        #expect(ccurl_version_supported(0x07_58_01) == 1)
        #expect(ccurl_version_supported(0x08_00_00) == 1)
        #expect(ccurl_version_supported(0x07_54_00) == 0)
        #expect(ccurl_version_supported(0x07_44_00) == 0)
    }

    /// An option libcurl refuses (as one older than 7.85 refuses CURLOPT_PROTOCOLS_STR) is an error that names
    /// the option and libcurl's reason, never ignored.
    @Test func anOptionLibcurlRefusesIsAnErrorNamingIt() throws {
        try NetworkLibrary.load()
        let handle = try #require(ccurl_easy_init())
        defer { ccurl_easy_cleanup(handle) }
        try Transfer.set(handle, CURLOPT_PROTOCOLS_STR, "CURLOPT_PROTOCOLS_STR", "http,https")
        do {
            try Transfer.set(handle, CURLoption(rawValue: 10_999), "CURLOPT_FROM_THE_FUTURE", "x")
            Issue.record("an unknown option was accepted")
        } catch {
            #expect(error.message.contains("curl_easy_setopt(CURLOPT_FROM_THE_FUTURE) failed"), "\(error)")
        }
    }
}
