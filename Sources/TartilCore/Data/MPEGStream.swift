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
        if case .problem(let problem) = walk(bytes, onFrame: { _ in }) { return problem }
        return nil
    }

    /// Where each audio frame of a whole stream starts, for cutting it into byte ranges that decode alone.
    public struct FrameIndex: Sendable, Hashable {
        /// The byte offset of each audio frame in the file, in order; the Xing or Info frame (which holds no audio:
        /// mpg123 reads it as a tag) is not one of them.
        public let offsets: [Int]
        /// One past the last audio frame's last byte (where an APEv2 or ID3v1 tag, or the file, ends).
        public let end: Int
        public let samplesPerFrame: Int
        public let sampleRate: Int
        /// The first frame's Xing or Info tag, when it has one.
        public let xing: MPEGHead.XingTag?

        /// PCM frames mpg123 cuts from the start of the whole file's decode with gapless trimming on: the decoder
        /// delay and the LAME tag's encoder delay, when a Xing or Info frame gives the frame count; else none.
        /// Sample s of the whole decode is sample s + `gaplessTrimStart` of the frames decoded one after another.
        public var gaplessTrimStart: Int {
            guard let xing, xing.frames != nil else { return 0 }
            return MPEGHead.decoderDelay + (xing.encoderDelay ?? 0)
        }

        /// The bytes of audio frames `frames` (indices into `offsets`), first and last byte inclusive.
        public func byteRange(frames: ClosedRange<Int>) -> ClosedRange<Int> {
            let last = frames.upperBound + 1 < offsets.count ? offsets[frames.upperBound + 1] - 1 : end - 1
            return offsets[frames.lowerBound]...last
        }
    }

    /// The frame index of `bytes` (a whole file), or why it is not one whole MPEG layer III stream.
    public static func frameIndex(of bytes: [UInt8]) -> Result<FrameIndex, TartilError> {
        var offsets: [Int] = []
        offsets.reserveCapacity(bytes.count / 96)
        switch walk(bytes, onFrame: { offsets.append($0) }) {
        case .problem(let problem):
            return .failure(TartilError(.invalidData, problem))
        case .stream(let end, let first):
            let head = MPEGHead.parse(Array(bytes.prefix(min(bytes.count, (offsets.first ?? 0) + 4096))))
            var xing: MPEGHead.XingTag?
            if let tag = head.xing, head.frameOffset == offsets.first {
                xing = tag
                offsets.removeFirst()
            }
            guard !offsets.isEmpty else { return .failure(TartilError(.invalidData, "no MPEG audio frame after the Xing or Info frame")) }
            return .success(FrameIndex(offsets: offsets, end: end, samplesPerFrame: first.samplesPerFrame, sampleRate: first.sampleRate, xing: xing))
        }
    }

    private enum Walk {
        case problem(String)
        /// A whole stream: where its last frame ends, and its first frame.
        case stream(end: Int, first: MPEGHead.Frame)
    }

    /// Walks the frame headers of `bytes`, calling `onFrame` with each frame's offset.
    private static func walk(_ bytes: [UInt8], onFrame: (Int) -> Void) -> Walk {
        let start = MPEGHead.parse(bytes).id3v2Bytes
        guard start < bytes.count else { return .problem("no MPEG audio frame after the ID3v2 tag") }
        var end = bytes.count
        // An ID3v1 tag (128 bytes, "TAG") and, before it, an APEv2 tag ("APETAGEX" footer) may end the file.
        if end - 128 >= start, bytes[end - 128] == 0x54, bytes[end - 127] == 0x41, bytes[end - 126] == 0x47 { end -= 128 }
        if end - 32 >= start, Array(bytes[(end - 32)..<(end - 24)]) == Array("APETAGEX".utf8) {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[end - 20 + $1]) << (8 * $1) }
            let hasHeader = bytes[end - 9] & 0x80 != 0
            let total = size + (hasHeader ? 32 : 0)
            guard size >= 32, total <= end - start else { return .problem("an APEv2 tag whose size (\(size) bytes) does not fit in the file") }
            end -= total
        }
        guard let first = frame(bytes, at: start, end: end) else {
            return .problem(
                start == 0 && bytes.count >= 4
                    ? "it does not start with an MPEG audio frame or an ID3v2 tag (first bytes \(hex(bytes.prefix(4))))"
                    : "no MPEG audio frame right after the ID3v2 tag (at byte \(start))")
        }
        guard first.layer == 3 else { return .problem("MPEG layer \(first.layer) audio, not layer III (MP3)") }
        var position = start
        var frames = 0
        while position < end {
            guard let next = frame(bytes, at: position, end: end) else {
                return .problem(
                    frames == 0
                        ? "no MPEG audio frame at byte \(position)"
                        : "\(end - position) bytes after the last MPEG audio frame (at byte \(position)) are not audio")
            }
            guard next.version == first.version, next.layer == first.layer, next.sampleRate == first.sampleRate else {
                return .problem("the frame at byte \(position) is another stream (\(next.sampleRate) Hz, layer \(next.layer)) than the first (\(first.sampleRate) Hz)")
            }
            guard position + next.bytes <= end else {
                return .problem("the last MPEG audio frame (at byte \(position)) is cut short: \(end - position) of its \(next.bytes) bytes")
            }
            onFrame(position)
            position += next.bytes
            frames += 1
        }
        return .stream(end: end, first: first)
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
