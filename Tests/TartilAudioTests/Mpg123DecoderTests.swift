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

    static let mpg123Program = ["/usr/bin/mpg123", "/usr/local/bin/mpg123"].first(where: FileManager.default.isExecutableFile)

    /// The PCM itself is byte-for-byte what the mpg123 program decodes (gapless trimming on in both).
    @Test(
        .enabled(if: mpg123Program != nil, "needs the mpg123 program (tools/install-deps installs it)"),
        arguments: ["001001.mp3", "001005.mp3", "001006.mp3", "001007.mp3", "112004.mp3"])
    func pcmEqualsTheMpg123ProgramsDecode(file: String) throws {
        let mpg123 = try #require(Self.mpg123Program)
        let path = "\(Self.fixtureDirectory)/\(file)"
        let process = ChildProcess()
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
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real (the real recordings beside the checkout)"), arguments: ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary", "minshawi-mujawwad", "ali-alhudhaifi"])
    func realRecordingsDecodeToTheManifestsCounts(reciter: String) throws {
        let real = try #require(TestPaths.sharedReal)
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

    /// An APEv2 tag (header, items, footer) as taggers append it at the end of a file.
    static func apeTag(_ items: [(String, String)]) -> Data {
        func uint32(_ value: Int) -> Data { withUnsafeBytes(of: UInt32(value).littleEndian) { Data($0) } }
        var body = Data()
        for (key, value) in items {
            body += uint32(value.utf8.count) + uint32(0) + Data(key.utf8) + Data([0]) + Data(value.utf8)
        }
        func frame(isHeader: Bool) -> Data {
            let flags = 1 << 31 | (isHeader ? 1 << 29 : 0)  // "has a header", "this is the header"
            return Data("APETAGEX".utf8) + uint32(2000) + uint32(body.count + 32) + uint32(items.count) + uint32(flags) + Data(count: 8)
        }
        return frame(isHeader: true) + body + frame(isHeader: false)
    }

    /// Taggers append APEv2 tags (and ID3v1 after them): the audio must decode to the same PCM, from a file and
    /// from memory (as the player decodes).
    @Test(arguments: ["112001.mp3", "001005.mp3", "001006.mp3"])
    func anAPETagAtTheEndChangesNothing(file: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = try Data(contentsOf: URL(fileURLWithPath: "\(Self.fixtureDirectory)/\(file)"))
        // 001006 ends with an ID3v1 tag: the APE tag goes before it, where taggers put it.
        let hasID3v1 = original.count > 128 && original[original.count - 128..<original.count - 125] == Data("TAG".utf8)
        let audio = hasID3v1 ? original.prefix(original.count - 128) : original
        let tag = Self.apeTag([("Title", "Al-Ikhlas"), ("Artist", "Fixture"), ("Comment", String(repeating: "x", count: 600))])
        let tagged = audio + tag + (hasID3v1 ? original.suffix(128) : Data())
        let path = directory + "/tagged.mp3"
        try tagged.write(to: URL(fileURLWithPath: path))

        func pcm(_ decoder: Mpg123Decoder) throws -> Data {
            var out = Data()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count = try decoder.read(into: buffer)
                if count == 0 { break }
                out.append(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            }
            return out
        }
        let decoder = try Mpg123Decoder()
        try decoder.open("\(Self.fixtureDirectory)/\(file)")
        let reference = try pcm(decoder)
        try decoder.open(path)
        #expect(try pcm(decoder) == reference, "\(file) from the file")
        try decoder.open(bytes: [UInt8](tagged), name: "tagged.mp3")
        #expect(try pcm(decoder) == reference, "\(file) from memory")
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
