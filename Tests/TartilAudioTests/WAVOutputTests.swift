import Foundation
import TestSupport
import Testing

@testable import TartilAudio

/// WAV files of every size: RIFF up to 4 GiB, RF64 (EBU Tech 3306) past it, never a 32-bit size that wrapped
/// (issue 23, item 14). The header is rewritten in place: a RIFF file's JUNK chunk is where RF64's ds64 goes.
@Suite struct WAVOutputTests {
    static let mono = PCMFormat(sampleRate: 22050, channels: 1)
    static let stereo = PCMFormat(sampleRate: 44100, channels: 2)
    static let soxi = FileManager.default.isExecutableFile(atPath: "/usr/bin/soxi")

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<4).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
    static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
    static func text(_ bytes: [UInt8], at offset: Int) -> String { String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) }

    @Test(arguments: [0, 2, 44100 * 60, WAVHeader.largestRIFFData - 1, WAVHeader.largestRIFFData])
    func aFileUpTo4GiBIsRIFFWithAJunkChunk(dataBytes: Int) {
        let header = WAVHeader.file(format: Self.mono, dataBytes: dataBytes)
        #expect(header.count == WAVHeader.fileBytes)
        #expect(Self.text(header, at: 0) == "RIFF" && Self.text(header, at: 8) == "WAVE")
        #expect(Self.uint32(header, at: 4) == UInt64(dataBytes + 72))
        #expect(Self.text(header, at: 12) == "JUNK" && Self.uint32(header, at: 16) == 28 && header[20..<48].allSatisfy { $0 == 0 })
        #expect(Self.text(header, at: 48) == "fmt " && Self.uint32(header, at: 52) == 16)
        #expect(Self.uint32(header, at: 60) == 22050 && Self.uint32(header, at: 64) == 44100)
        #expect(Self.text(header, at: 72) == "data" && Self.uint32(header, at: 76) == UInt64(dataBytes))
    }

    @Test(arguments: [WAVHeader.largestRIFFData + 2, 1 << 32, (1 << 32) + 4, 5 << 30, 1 << 40])
    func aFilePast4GiBIsRF64(dataBytes: Int) {
        let header = WAVHeader.file(format: Self.stereo, dataBytes: dataBytes)
        #expect(header.count == WAVHeader.fileBytes)
        #expect(Self.text(header, at: 0) == "RF64" && Self.uint32(header, at: 4) == 0xFFFF_FFFF && Self.text(header, at: 8) == "WAVE")
        #expect(Self.text(header, at: 12) == "ds64" && Self.uint32(header, at: 16) == 28)
        #expect(Self.uint64(header, at: 20) == UInt64(dataBytes + 72), "the RIFF size, 64-bit")
        #expect(Self.uint64(header, at: 28) == UInt64(dataBytes), "the data size, 64-bit")
        #expect(Self.uint64(header, at: 36) == UInt64(dataBytes / 4), "the sample count (frames)")
        #expect(Self.uint32(header, at: 44) == 0, "no table")
        #expect(Self.text(header, at: 48) == "fmt " && Self.uint32(header, at: 60) == 44100)
        #expect(Self.text(header, at: 72) == "data" && Self.uint32(header, at: 76) == 0xFFFF_FFFF)
    }

    @Test func aStreamSaysItsLengthIsUnknown() {
        let header = WAVHeader.stream(format: Self.mono)
        #expect(header.count == 44 && Self.text(header, at: 0) == "RIFF" && Self.uint32(header, at: 4) == 0xFFFF_FFFF)
        #expect(Self.text(header, at: 12) == "fmt " && Self.text(header, at: 36) == "data" && Self.uint32(header, at: 40) == 0xFFFF_FFFF - 36)
    }

    /// A real file through `WAVOutput`: a little PCM, then a hole of silence that takes it past 4 GiB (no disk
    /// space used), then a little more. sox reads its length back when it is installed.
    @Test(arguments: [false, true])
    func aRenderPast4GiBIsWrittenAsRF64(large: Bool) throws {
        let directory = NSTemporaryDirectory() + "tartil-wav-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/out.wav"
        let output = try WAVOutput(path: path)
        try output.configure(Self.stereo)
        let tone = (0..<4410).flatMap { index -> [UInt8] in
            let sample = Int16(sin(Double(index) * 0.06) * 8000)
            return [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)] + [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
        }
        try tone.withUnsafeBytes { try output.write($0) }
        let hole = large ? (1 << 32) + 4 * 44100 : 4 * 44100
        try output.skip(bytes: hole)
        try tone.withUnsafeBytes { try output.write($0) }
        try output.finish()
        let dataBytes = 2 * tone.count + hole
        var status = stat()
        #expect(stat(path, &status) == 0 && Int(status.st_size) == WAVHeader.fileBytes + dataBytes)
        let header = Array(try FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: WAVHeader.fileBytes) ?? Data())
        #expect(header == WAVHeader.file(format: Self.stereo, dataBytes: dataBytes))
        #expect(Self.text(header, at: 0) == (large ? "RF64" : "RIFF"))
        #expect(Self.text(header, at: 12) == (large ? "ds64" : "JUNK"))
        // sox reads an RF64 file's length right, but only by reading all 4 GiB of it (about 2 minutes here):
        // that check runs with TARTIL_SOX_RF64=1; the RIFF one always.
        if Self.soxi && (!large || ProcessInfo.processInfo.environment["TARTIL_SOX_RF64"] == "1") {
            let samples = try Self.run("/usr/bin/soxi", ["-s", path])
            #expect(samples.trimmingCharacters(in: .whitespacesAndNewlines) == String(dataBytes / 4), "sox reads the length from the header")
            let channels = try Self.run("/usr/bin/soxi", ["-c", path])
            #expect(channels.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        }
    }

    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output
    }
}
