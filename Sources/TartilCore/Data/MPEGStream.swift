/// Whether a whole file is one MPEG audio stream of the kind an ayah file is: ID3v2 tags (any number, at the
/// start), then MPEG layer III frames back to back from the first byte after the tags to the last byte before an
/// optional APEv2 tag and ID3v1 tag, every frame with the first one's version and sample rate. Anything else —
/// bytes appended after the last frame, bytes between frames, a truncated last frame, another layer or another
/// format (an HTML page, Ogg, WAV) — is refused, before the file is kept. A walk over the frame headers only (each
/// frame's length comes from its header), so it is cheap enough for every download. Never traps, on any input.
///
/// Checked against the 570 real recordings beside the checkout and every fixture: all are whole streams.
///
/// ```swift
/// MPEGStream.problem(in: bytes)            // nil: one whole stream
/// MPEGStream.problem(in: bytes + [0, 1])   // "2 bytes after the last MPEG audio frame (at byte 13580) are not audio"
/// ```
public enum MPEGStream {
    /// Why `bytes` (a whole file) is not one whole MPEG layer III stream, or nil when it is.
    public static func problem(in bytes: [UInt8]) -> String? {
        let start = MPEGHead.parse(bytes).id3v2Bytes
        guard start < bytes.count else { return "no MPEG audio frame after the ID3v2 tag" }
        var end = bytes.count
        // An ID3v1 tag (128 bytes, "TAG") and, before it, an APEv2 tag ("APETAGEX" footer) may end the file.
        if end - 128 >= start, bytes[end - 128] == 0x54, bytes[end - 127] == 0x41, bytes[end - 126] == 0x47 { end -= 128 }
        if end - 32 >= start, Array(bytes[(end - 32)..<(end - 24)]) == Array("APETAGEX".utf8) {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[end - 20 + $1]) << (8 * $1) }
            let hasHeader = bytes[end - 9] & 0x80 != 0
            let total = size + (hasHeader ? 32 : 0)
            guard size >= 32, total <= end - start else { return "an APEv2 tag whose size (\(size) bytes) does not fit in the file" }
            end -= total
        }
        guard let first = frame(bytes, at: start, end: end) else {
            return start == 0 && bytes.count >= 4
                ? "it does not start with an MPEG audio frame or an ID3v2 tag (first bytes \(hex(bytes.prefix(4))))"
                : "no MPEG audio frame right after the ID3v2 tag (at byte \(start))"
        }
        guard first.layer == 3 else { return "MPEG layer \(first.layer) audio, not layer III (MP3)" }
        var position = start
        var frames = 0
        while position < end {
            guard let next = frame(bytes, at: position, end: end) else {
                return frames == 0
                    ? "no MPEG audio frame at byte \(position)"
                    : "\(end - position) bytes after the last MPEG audio frame (at byte \(position)) are not audio"
            }
            guard next.version == first.version, next.layer == first.layer, next.sampleRate == first.sampleRate else {
                return "the frame at byte \(position) is another stream (\(next.sampleRate) Hz, layer \(next.layer)) than the first (\(first.sampleRate) Hz)"
            }
            guard position + next.bytes <= end else {
                return "the last MPEG audio frame (at byte \(position)) is cut short: \(end - position) of its \(next.bytes) bytes"
            }
            position += next.bytes
            frames += 1
        }
        return nil
    }

    private static func frame(_ bytes: [UInt8], at position: Int, end: Int) -> MPEGHead.Frame? {
        guard position >= 0, position + 4 <= end else { return nil }
        return MPEGHead.Frame(bytes[position], bytes[position + 1], bytes[position + 2], bytes[position + 3])
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined(separator: " ")
    }
}
