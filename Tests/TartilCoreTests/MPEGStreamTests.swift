import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// The frame walker that refuses, before anything is kept, a download that is not one whole MPEG layer III stream.
@Suite struct MPEGStreamTests {
    static let names = ["fixture/001001.mp3", "fixture/001005.mp3", "fixture/112001.mp3", "fixture/112004.mp3"]

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/" + name)))
    }

    @Test(arguments: names)
    func wholeFilesAreOneStream(name: String) throws {
        #expect(MPEGStream.problem(in: try Self.fixture(name)) == nil)
    }

    /// The frame index of each fixture: its audio frames (the Info frame not among them) give, with the LAME
    /// tag's delays, exactly the sample count mpg123 decoded when the fixtures were made; byte ranges of frames
    /// are whole frames, back to back, the same whether the index was made from an array or from memory the
    /// caller holds, and the offsets found from the index's checkpoints are those a walk of every frame gives.
    @Test(arguments: names)
    func frameIndexCountsTheAudioFrames(name: String) throws {
        let bytes = try Self.fixture(name)
        let index = try MPEGStream.frameIndex(of: bytes).get()
        let rows = try ManifestRow.read(TestPaths.fixtures + "/fixture")
        let row = try #require(rows.first { $0.file == String(name.dropFirst("fixture/".count)) })
        if let xing = index.xing {
            let samples = MPEGHead.gaplessSamples(
                audioFrames: index.count, samplesPerFrame: index.samplesPerFrame, delay: xing.encoderDelay ?? 0,
                padding: xing.encoderPadding ?? 0)
            #expect(samples == row.samples)
            #expect(index.gaplessTrimStart == MPEGHead.decoderDelay + (xing.encoderDelay ?? 0))
        } else {
            // No Info frame: mpg123 trims nothing, every frame's samples are decoded.
            #expect(index.count * index.samplesPerFrame == row.samples)
            #expect(index.gaplessTrimStart == 0)
        }
        #expect(index.sampleRate == row.sampleRate)
        let whole = try #require(index.byteRange(frames: 0...(index.count - 1), in: bytes))
        #expect(whole.upperBound == index.end - 1)
        // Every frame, walked one after another from the first audio frame.
        var offset = whole.lowerBound
        for frame in 0..<index.count {
            let range = try #require(index.byteRange(frames: frame...frame, in: bytes))
            #expect(range.lowerBound == offset)
            #expect(MPEGHead.Frame(bytes[range.lowerBound], bytes[range.lowerBound + 1], bytes[range.lowerBound + 2], bytes[range.lowerBound + 3])?.bytes == range.count)
            offset = range.upperBound + 1
        }
        #expect(offset == index.end)
        #expect(index.byteRange(frames: 0...index.count, in: bytes) == nil)
        #expect(index.offset(of: index.count, in: bytes) == index.end && index.offset(of: -1, in: bytes) == nil)
        let mapped = bytes.withUnsafeBytes { buffer in
            (try? MPEGStream.frameIndex(of: buffer).get(), (0..<index.count).map { index.offset(of: $0, in: buffer) })
        }
        #expect(mapped.0 == index)
        #expect(mapped.1 == (0..<index.count).map { index.offset(of: $0, in: bytes) })
        #expect(throws: TartilError.self) { try MPEGStream.frameIndex(of: bytes + [1, 2, 3]).get() }
    }

    /// The walk tells where it is, frame by frame, so that a caller can let go of the pages behind it.
    @Test func theWalkTellsHowFarItHasCome() throws {
        let bytes = try Self.fixture("fixture/112001.mp3")
        var passed: [Int] = []
        let index = try bytes.withUnsafeBytes { buffer in try MPEGStream.frameIndex(of: buffer, passing: { passed.append($0) }).get() }
        #expect(passed == passed.sorted() && passed.count == index.count + (index.xing == nil ? 0 : 1))
        #expect(passed.last.map { $0 < index.end } == true)
        var problemPassed = 0
        #expect(bytes.withUnsafeBytes { MPEGStream.problem(in: $0, passing: { _ in problemPassed += 1 }) } == nil)
        #expect(problemPassed == passed.count)
    }

    /// (what is done to the file, the start of the reason)
    static let damages: [(String, @Sendable ([UInt8]) -> [UInt8], String)] = [
        ("bytes appended", { $0 + [UInt8](repeating: 0x55, count: 2000) }, "2000 bytes after the last MPEG audio frame"),
        ("one byte appended", { $0 + [0] }, "1 bytes after the last MPEG audio frame"),
        ("the last bytes cut", { Array($0.dropLast(10)) }, "the last MPEG audio frame"),
        ("an HTML page", { _ in Array("<!DOCTYPE html><html><body>404</body></html>".utf8) }, "it does not start with an MPEG audio frame"),
        ("another file after it", { $0 + Array("OggS".utf8) + [UInt8](repeating: 7, count: 300) }, "304 bytes after the last MPEG audio frame"),
        ("empty", { _ in [] }, "no MPEG audio frame"),
    ]

    @Test(arguments: damages.indices)
    func damagedFilesAreRefused(row: Int) throws {
        let (what, damage, reason) = Self.damages[row]
        let problem = MPEGStream.problem(in: damage(try Self.fixture("fixture/112001.mp3")))
        #expect(problem?.hasPrefix(reason) == true || problem?.contains(reason) == true, "\(what): \(String(describing: problem))")
    }

    /// An ID3v1 tag at the end is allowed; a layer II stream is not an MP3.
    @Test func tagsAndLayers() throws {
        var tagged = try Self.fixture("fixture/112002.mp3")
        if MPEGStream.problem(in: tagged + [0x54, 0x41, 0x47] + [UInt8](repeating: 0x20, count: 125)) != nil {
            Issue.record("an ID3v1 tag after the stream is refused")
        }
        // Turn every frame header's layer bits into layer II (the lengths then no longer walk): refused either way.
        var index = 0
        while index + 1 < tagged.count {
            if tagged[index] == 0xFF, tagged[index + 1] & 0xE6 == 0xE2 { tagged[index + 1] = (tagged[index + 1] & ~0x06) | 0x04 }
            index += 1
        }
        #expect(MPEGStream.problem(in: tagged) != nil)
    }
}
