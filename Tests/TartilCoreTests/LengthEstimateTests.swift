import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// `MPEGHead` and `LengthEstimate`: headers by table, mpg123's gapless arithmetic, and how close the estimate is
/// on the fixtures and on the real recordings (`tools/bench/estimate` prints the figures).
@Suite struct LengthEstimateTests {
    // MARK: - Headers

    struct HeaderCase: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let expected: (version: MPEGHead.Frame.Version, layer: Int, bitrate: Int, rate: Int, channels: Int, spf: Int, frameBytes: Int)?
        var testDescription: String { bytes.map { String($0, radix: 16) }.joined(separator: " ") }
    }

    static let headers: [HeaderCase] = [
        // MPEG-1 layer III 128 kbps 44.1 kHz stereo, no padding: 417 bytes; with padding 418.
        HeaderCase(bytes: [0xFF, 0xFB, 0x90, 0x44], expected: (.mpeg1, 3, 128_000, 44100, 2, 1152, 417)),
        HeaderCase(bytes: [0xFF, 0xFB, 0x92, 0x44], expected: (.mpeg1, 3, 128_000, 44100, 2, 1152, 418)),
        // MPEG-2 layer III 32 kbps 22.05 kHz mono: 104 bytes (the quranstatic set).
        HeaderCase(bytes: [0xFF, 0xF3, 0x40, 0xC4], expected: (.mpeg2, 3, 32_000, 22050, 1, 576, 104)),
        // MPEG-2.5 layer III 32 kbps 11.025 kHz stereo: 208 bytes.
        HeaderCase(bytes: [0xFF, 0xE3, 0x40, 0x44], expected: (.mpeg25, 3, 32_000, 11025, 2, 576, 208)),
        // MPEG-1 layer II 192 kbps 48 kHz: 576 bytes; layer I 32 kbps 32 kHz: 48 bytes.
        HeaderCase(bytes: [0xFF, 0xFD, 0xA4, 0x00], expected: (.mpeg1, 2, 192_000, 48000, 2, 1152, 576)),
        HeaderCase(bytes: [0xFF, 0xFF, 0x18, 0x00], expected: (.mpeg1, 1, 32_000, 32000, 2, 384, 48)),
        // Not headers: no sync, reserved version, reserved layer, free format, bad bitrate, reserved rate.
        HeaderCase(bytes: [0xFE, 0xFB, 0x90, 0x44], expected: nil),
        HeaderCase(bytes: [0xFF, 0xEB, 0x90, 0x44], expected: nil),
        HeaderCase(bytes: [0xFF, 0xF9, 0x90, 0x44], expected: nil),
        HeaderCase(bytes: [0xFF, 0xFB, 0x00, 0x44], expected: nil),
        HeaderCase(bytes: [0xFF, 0xFB, 0xF0, 0x44], expected: nil),
        HeaderCase(bytes: [0xFF, 0xFB, 0x9C, 0x44], expected: nil),
    ]

    @Test(arguments: headers)
    func frameHeaders(_ example: HeaderCase) {
        let frame = MPEGHead.Frame(example.bytes[0], example.bytes[1], example.bytes[2], example.bytes[3])
        guard let expected = example.expected else {
            #expect(frame == nil)
            return
        }
        guard let frame else {
            Issue.record("not read as a header")
            return
        }
        #expect(frame.version == expected.version)
        #expect(frame.layer == expected.layer)
        #expect(frame.bitrate == expected.bitrate)
        #expect(frame.sampleRate == expected.rate)
        #expect(frame.channels == expected.channels)
        #expect(frame.samplesPerFrame == expected.spf)
        #expect(frame.bytes == expected.frameBytes)
    }

    /// mpg123's trimming: the decoder delay (529) and the encoder delay at the start; the padding beyond the
    /// decoder delay at the end (so with padding under 529 nothing is cut at the end).
    @Test(arguments: [
        (242, 576, 0, 0, 242 * 576 - 529),
        (100, 1152, 576, 1200, 100 * 1152 - 576 - 1200),
        (100, 1152, 576, 300, 100 * 1152 - 576 - 529),
        (0, 1152, 576, 1200, 0),
        (1, 576, 2000, 0, 0),
    ])
    func gaplessArithmetic(frames: Int, spf: Int, delay: Int, padding: Int, expected: Int) {
        #expect(MPEGHead.gaplessSamples(audioFrames: frames, samplesPerFrame: spf, delay: delay, padding: padding) == expected)
    }

    /// A synthetic stream: an ID3v2 tag, an Info frame with a LAME tag, then CBR frames; and an ID3v1 tag.
    static func stream(id3: Int, audioFrames: Int, info: Bool, delay: Int = 0, padding: Int = 0, id3v1: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        if id3 > 0 {
            let size = id3 - 10
            bytes += [0x49, 0x44, 0x33, 4, 0, 0, UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
            bytes += [UInt8](repeating: 0, count: size)
        }
        // MPEG-2 layer III 32 kbps 22050 Hz mono: 104 bytes, 105 with padding; padding spreads the 0.49 bytes.
        var carry = 0
        func frame(_ body: [UInt8]) {
            carry += 72 * 32000 % 22050
            let padded = carry >= 22050
            if padded { carry -= 22050 }
            let size = 104 + (padded ? 1 : 0)
            var frame: [UInt8] = [0xFF, 0xF3, padded ? 0x42 : 0x40, 0xC4] + body
            frame += [UInt8](repeating: 0x55, count: max(0, size - frame.count))
            bytes += frame.prefix(size)
        }
        if info {
            var tag = [UInt8](repeating: 0, count: 9) + Array("Info".utf8) + [0, 0, 0, 1]
            tag += [UInt8(audioFrames >> 24), UInt8(audioFrames >> 16 & 0xFF), UInt8(audioFrames >> 8 & 0xFF), UInt8(audioFrames & 0xFF)]
            tag += Array("LAME3.100".utf8) + [UInt8](repeating: 0, count: 12)
            tag += [UInt8(delay >> 4), UInt8((delay & 0xF) << 4 | padding >> 8), UInt8(padding & 0xFF)]
            frame(tag)
        }
        for _ in 0..<audioFrames { frame([]) }
        if id3v1 { bytes += Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125) }
        return bytes
    }

    @Test func parsesTagsAndInfoFrames() {
        let bytes = Self.stream(id3: 44, audioFrames: 242, info: true, delay: 576, padding: 1000, id3v1: true)
        let head = MPEGHead.parse(bytes, isWholeFile: true)
        #expect(head.id3v2Bytes == 44)
        #expect(head.frameOffset == 44)
        #expect(head.frame?.sampleRate == 22050)
        #expect(head.xing == MPEGHead.XingTag(isInfo: true, frames: 242, streamBytes: nil, encoderDelay: 576, encoderPadding: 1000))
        #expect(head.trailerBytes == 128)
        // Only the first bytes: the tag's size is known, the trailer is not.
        let prefix = MPEGHead.parse(Array(bytes.prefix(10)))
        #expect(prefix.id3v2Bytes == 44)
        #expect(prefix.frame == nil)
        #expect(prefix.trailerBytes == nil)
    }

    /// Size alone, with another file of the stream as the reference, lands on the exact count (CBR, whole frames);
    /// the file's own Info frame count is exact too.
    @Test(arguments: [1, 2, 7, 100, 242, 1001, 5000])
    func estimatesFromSize(frames: Int) {
        let reference = MPEGHead.parse(Self.stream(id3: 44, audioFrames: 300, info: true, id3v1: true), isWholeFile: true)
        let file = Self.stream(id3: 44, audioFrames: frames, info: true, id3v1: true)
        let exact = frames * 576 - 529 < 0 ? 0 : frames * 576 - 529
        #expect(LengthEstimate.samples(fileBytes: file.count, head: nil, reference: reference)?.samples == max(0, exact))
        #expect(LengthEstimate.samples(fileBytes: file.count, head: MPEGHead.parse(Array(file.prefix(1024))), reference: reference)?.samples == max(0, exact))
        // A tagless CBR stream: whole frames, nothing trimmed.
        let plainReference = MPEGHead.parse(Self.stream(id3: 0, audioFrames: 300, info: false), isWholeFile: true)
        let plain = Self.stream(id3: 0, audioFrames: frames, info: false)
        #expect(LengthEstimate.samples(fileBytes: plain.count, head: nil, reference: plainReference)?.samples == frames * 576)
        // An ID3v2 tag of another size, seen in the file's first bytes, is allowed for.
        let tagged = Self.stream(id3: 2000, audioFrames: frames, info: false)
        #expect(LengthEstimate.samples(fileBytes: tagged.count, head: MPEGHead.parse(Array(tagged.prefix(16))), reference: plainReference)?.samples == frames * 576)
    }

    @Test func noEstimateWithoutAFrameOrBytes() {
        #expect(LengthEstimate.samples(fileBytes: 1000, head: nil, reference: nil) == nil)
        #expect(LengthEstimate.samples(fileBytes: 1000, head: MPEGHead.parse(Array("<html>".utf8)), reference: nil) == nil)
        let reference = MPEGHead.parse(Self.stream(id3: 44, audioFrames: 10, info: true), isWholeFile: true)
        #expect(LengthEstimate.samples(fileBytes: 20, head: nil, reference: reference) == nil)
        #expect(LengthEstimate.samples(fileBytes: 0, head: nil, reference: reference) == nil)
    }

    // MARK: - Measured on real files

    /// Error of the estimate against mpg123's count, over a set of files.
    struct Errors: CustomStringConvertible {
        var count = 0
        var missing = 0
        var worstMilliseconds = 0.0
        var totalMilliseconds = 0.0
        var exact = 0
        /// The largest error in MPEG frames (576 samples below 32 kHz, 1152 from 32 kHz: layer III).
        var worstFrames = 0.0
        mutating func add(estimate: (samples: Int, rate: Int)?, samples: Int, rate: Int) {
            guard let estimate, estimate.rate == rate else {
                missing += 1
                return
            }
            count += 1
            let error = abs(Double(estimate.samples - samples)) * 1000 / Double(rate)
            worstFrames = max(worstFrames, abs(Double(estimate.samples - samples)) / (rate >= 32000 ? 1152 : 576))
            if estimate.samples == samples { exact += 1 }
            worstMilliseconds = max(worstMilliseconds, error)
            totalMilliseconds += error
        }
        var meanMilliseconds: Double { count == 0 ? 0 : totalMilliseconds / Double(count) }
        var description: String {
            String(format: "%5d files  exact %5d  worst %7.2f ms (%.2f frames)  mean %6.2f ms", count, exact, worstMilliseconds, worstFrames, meanMilliseconds)
                + (missing > 0 ? "  no estimate \(missing)" : "")
        }
    }

    /// Size-only and size-plus-first-1-KiB estimates for each file of a manifest folder, with the folder's first
    /// ayah file (whole) as the reference.
    static func measure(folder: String) throws -> (sizeOnly: Errors, withHead: Errors) {
        let rows = try ManifestRow.read(folder).filter { $0.ayah > 0 }
        let first = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + rows[0].file))
        let reference = MPEGHead.parse(Array(first), isWholeFile: true)
        var sizeOnly = Errors()
        var withHead = Errors()
        for row in rows {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + row.file)))
            sizeOnly.add(estimate: LengthEstimate.samples(fileBytes: row.bytes, head: nil, reference: reference), samples: row.samples, rate: row.sampleRate)
            let head = MPEGHead.parse(Array(bytes.prefix(1024)))
            withHead.add(estimate: LengthEstimate.samples(fileBytes: row.bytes, head: head, reference: reference), samples: row.samples, rate: row.sampleRate)
        }
        return (sizeOnly, withHead)
    }

    /// Size-only estimates for every file of a whole-Qur'an manifest (`../shared/real/full/<id>.csv`), with the
    /// reciter's 001001.mp3 from `../shared/real/audio/` as the reference.
    static func measureFull(reciter: String, real: String) throws -> Errors {
        let first = try Data(contentsOf: URL(fileURLWithPath: real + "/audio/\(reciter)/001001.mp3"))
        let reference = MPEGHead.parse(Array(first), isWholeFile: true)
        let text = try String(contentsOfFile: real + "/full/\(reciter).csv", encoding: .utf8)
        var errors = Errors()
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(separator: ",")
            guard fields.count == 8, let bytes = Int(fields[3]), let rate = Int(fields[5]), let samples = Int(fields[7]) else { continue }
            errors.add(estimate: LengthEstimate.samples(fileBytes: bytes, head: nil, reference: reference), samples: samples, rate: rate)
        }
        return errors
    }

    /// The fixtures (LAME, CBR and VBR, several rates, one with an ID3v2 tag): with the file's first 1 KiB every
    /// estimate is within one frame; from the size alone, those of the reference's format are.
    @Test func fixturesWithinOneFrame() throws {
        let (sizeOnly, withHead) = try Self.measure(folder: TestPaths.fixtures + "/fixture")
        #expect(withHead.missing == 0)
        #expect(withHead.worstFrames <= 1, "\(withHead)")
        #expect(sizeOnly.worstFrames <= 1, "\(sizeOnly)")
    }

    /// The real recordings: each CBR file within one frame of mpg123's count, from its size alone.
    @Test(.enabled(if: TestPaths.sharedReal != nil, "needs ../shared/real"))
    func realRecordingsWithinOneFrame() throws {
        let real = TestPaths.sharedReal!
        for reciter in ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary", "minshawi-mujawwad", "ali-alhudhaifi"] {
            let (sizeOnly, withHead) = try Self.measure(folder: real + "/audio/" + reciter)
            #expect(sizeOnly.missing == 0 && withHead.missing == 0, "\(reciter)")
            #expect(withHead.worstFrames <= 1, "\(reciter) with the first 1 KiB: \(withHead)")
            if reciter != "minshawi-mujawwad" {  // its ID3v2 tags differ from file to file (219-1975 bytes)
                #expect(sizeOnly.worstFrames <= 1, "\(reciter) from the size: \(sizeOnly)")
            }
        }
    }

    /// The figures `tools/bench/estimate` prints (`TARTIL_BENCH_ESTIMATE=1`): per reciter, worst and mean error.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TARTIL_BENCH_ESTIMATE"] == "1" && TestPaths.sharedReal != nil))
    func printFigures() throws {
        let real = TestPaths.sharedReal!
        var lines = ["estimate error against mpg123's gapless count (reference: the reciter's 001001.mp3)"]
        let fixtures = try Self.measure(folder: TestPaths.fixtures + "/fixture")
        lines.append("fixtures                 size only        \(fixtures.sizeOnly)")
        lines.append("fixtures                 size + 1 KiB     \(fixtures.withHead)")
        for reciter in ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary", "minshawi-mujawwad", "ali-alhudhaifi"] {
            let (sizeOnly, withHead) = try Self.measure(folder: real + "/audio/" + reciter)
            lines.append("\(reciter.padding(toLength: 24, withPad: " ", startingAt: 0)) size only        \(sizeOnly)")
            lines.append("\(reciter.padding(toLength: 24, withPad: " ", startingAt: 0)) size + 1 KiB     \(withHead)")
        }
        for reciter in ["ibrahim-alakhdar", "ahmed-allhdan", "emad-al-mansary"] {
            let full = try Self.measureFull(reciter: reciter, real: real)
            lines.append("\(reciter.padding(toLength: 24, withPad: " ", startingAt: 0)) whole Qur'an, size only  \(full)")
        }
        print(lines.joined(separator: "\n"))
    }
}
