import Foundation
import TestSupport
import Testing

@testable import TartilAudio

@Suite struct Mpg123DecoderTests {
    static let fixtureDirectory = TestPaths.fixtures + "/fixture"

    /// Every fixture decodes to the sample count and format mpg123 reported when it was made.
    @Test func fixturesDecodeToMpg123sSampleCounts() throws {
        let decoder = try Mpg123Decoder()
        for row in try ManifestRow.read(Self.fixtureDirectory) {
            let decoded = try decoder.countSamples("\(Self.fixtureDirectory)/\(row.file)")
            #expect(decoded.samples == row.samples, "\(row.file)")
            #expect(decoded.format.sampleRate == row.sampleRate, "\(row.file)")
        }
    }

    /// The PCM itself is byte-for-byte what the mpg123 program decodes (gapless trimming on in both).
    @Test(arguments: ["001001.mp3", "001005.mp3", "001006.mp3", "001007.mp3", "112004.mp3"])
    func pcmEqualsTheMpg123ProgramsDecode(file: String) throws {
        guard let mpg123 = ["/usr/bin/mpg123", "/usr/local/bin/mpg123"].first(where: FileManager.default.isExecutableFile) else {
            print("skipped: the mpg123 program is not installed (tools/install-deps installs it)")
            return
        }
        let path = "\(Self.fixtureDirectory)/\(file)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: mpg123)
        process.arguments = ["-q", "-s", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let reference = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()

        let decoder = try Mpg123Decoder()
        try decoder.open(path)
        var pcm = Data()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try decoder.read(into: buffer)
            if count == 0 { break }
            pcm.append(buffer.bindMemory(to: UInt8.self).baseAddress!, count: count)
        }
        #expect(pcm.count == reference.count)
        #expect(pcm == reference)
    }

    /// The real recordings cover MPEG-1/2/2.5, mono and stereo, ID3v2 of many sizes, ID3v1, and Info/LAME tags
    /// with zero delay: every file's count must equal the manifest's (from the mpg123 program).
    @Test(arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary", "minshawi-mujawwad", "ali-alhudhaifi"])
    func realRecordingsDecodeToTheManifestsCounts(reciter: String) throws {
        guard let real = TestPaths.sharedReal else {
            print("skipped: ../shared/real is absent")
            return
        }
        let directory = "\(real)/audio/\(reciter)"
        let decoder = try Mpg123Decoder()
        let rows = try ManifestRow.read(directory)
        #expect(!rows.isEmpty)
        for row in rows {
            let decoded = try decoder.countSamples("\(directory)/\(row.file)")
            #expect(decoded.samples == row.samples, "\(reciter)/\(row.file)")
            #expect(decoded.format.sampleRate == row.sampleRate, "\(reciter)/\(row.file)")
        }
    }

    @Test func somethingThatIsNotAudioIsRefused() throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let html = directory + "/error.mp3"
        try Data("<html><body>404 Not Found</body></html>\n".utf8).write(to: URL(fileURLWithPath: html))
        let empty = directory + "/empty.mp3"
        try Data().write(to: URL(fileURLWithPath: empty))
        let decoder = try Mpg123Decoder()
        for path in [html, empty, directory + "/missing.mp3"] {
            #expect(throws: AudioError.self) { try decoder.countSamples(path) }
        }
        // The decoder is still usable after a failure.
        #expect(try decoder.countSamples("\(Self.fixtureDirectory)/001007.mp3").samples > 0)
    }

    @Test func libraryVersionsAreReported() {
        #expect(AudioLibrary.versionDescription.contains("mpg123"))
        #expect(AudioLibrary.versionDescription.contains("ALSA"))
    }
}
