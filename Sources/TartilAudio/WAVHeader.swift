/// The header of the WAV files tartil writes (16-bit PCM), at any size.
///
/// A RIFF file's sizes are 32-bit, so a WAV of more than 4 GiB cannot say its length: such a file is written as
/// RF64 (EBU Tech 3306), whose `ds64` chunk holds 64-bit sizes while the 32-bit ones read 0xFFFFFFFF. The
/// header is the same length either way, so it is rewritten in place once the length is known, as ffmpeg's
/// `-rf64 auto` does: a file starts with a `JUNK` chunk of the `ds64` chunk's size, which stays `JUNK` in a
/// RIFF file (readers skip it) and becomes `ds64` in an RF64 one.
///
/// ```
/// RIFF <72 + data> WAVE  JUNK <28> (28 zero bytes)         fmt <16> …  data <data>          ≤ 4 GiB
/// RF64 FFFFFFFF   WAVE  ds64 <28> riff64 data64 frames64 0  fmt <16> …  data FFFFFFFF        > 4 GiB
/// ```
///
/// A stream (a pipe, `/dev/stdout`) cannot be rewritten: it gets the classic 44-byte header with the streaming
/// convention's "unknown length" sizes (RIFF size 0xFFFFFFFF), and readers read it to its end.
public enum WAVHeader {
    /// The length of `file(format:dataBytes:)`'s header: where the PCM starts in a file tartil wrote.
    public static let fileBytes = 80
    /// The length of `stream(format:)`'s header.
    public static let streamBytes = 44
    /// The most PCM a RIFF (not RF64) file holds: its RIFF size, the data plus 72 bytes of header, fits in 32 bits.
    public static let largestRIFFData = 0xFFFF_FFFF - (fileBytes - 8)
    /// The size a 32-bit field reads in an RF64 file, and the "unknown length" of a stream.
    static let unknown32: UInt32 = 0xFFFF_FFFF

    /// The header of a file holding `dataBytes` of PCM (RIFF with a JUNK chunk, or RF64 past `largestRIFFData`).
    public static func file(format: PCMFormat, dataBytes: Int) -> [UInt8] {
        var bytes = Writer()
        let riffSize = UInt64(fileBytes - 8) + UInt64(max(0, dataBytes))
        if dataBytes <= largestRIFFData {
            bytes.text("RIFF")
            bytes.uint32(UInt32(riffSize))
            bytes.text("WAVE")
            bytes.text("JUNK")
            bytes.uint32(28)
            bytes.zeros(28)
        } else {
            bytes.text("RF64")
            bytes.uint32(unknown32)
            bytes.text("WAVE")
            bytes.text("ds64")
            bytes.uint32(28)
            bytes.uint64(riffSize)
            bytes.uint64(UInt64(dataBytes))
            bytes.uint64(UInt64(dataBytes / format.frameBytes))  // the sample count (frames)
            bytes.uint32(0)  // no table of other chunks' sizes
        }
        bytes.format(format)
        bytes.text("data")
        bytes.uint32(dataBytes <= largestRIFFData ? UInt32(dataBytes) : unknown32)
        return bytes.bytes
    }

    /// The header of a stream, whose length is not known: sizes that say "unknown" (RIFF 0xFFFFFFFF).
    public static func stream(format: PCMFormat) -> [UInt8] {
        var bytes = Writer()
        bytes.text("RIFF")
        bytes.uint32(unknown32)
        bytes.text("WAVE")
        bytes.format(format)
        bytes.text("data")
        bytes.uint32(unknown32 - UInt32(streamBytes - 8))
        return bytes.bytes
    }

    /// Little-endian fields, in order.
    private struct Writer {
        var bytes: [UInt8] = []

        mutating func text(_ value: StaticString) {
            bytes += UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount)
        }
        mutating func uint16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        mutating func uint32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        mutating func uint64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        mutating func zeros(_ count: Int) { bytes += repeatElement(0, count: count) }

        /// The `fmt ` chunk of 16-bit PCM.
        mutating func format(_ format: PCMFormat) {
            text("fmt ")
            uint32(16)
            uint16(1)  // PCM
            uint16(UInt16(clamping: format.channels))
            uint32(UInt32(clamping: format.sampleRate))
            uint32(UInt32(clamping: format.sampleRate * format.frameBytes))
            uint16(UInt16(clamping: format.frameBytes))
            uint16(16)
        }
    }
}
