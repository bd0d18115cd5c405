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

    /// The same for a whole file mapped into memory; `passing` is told each frame's offset as the walk reaches it
    /// (so that the pages behind it of a large file can be let go).
    public static func problem(in bytes: UnsafeRawBufferPointer, passing: (Int) -> Void = { _ in }) -> String? {
        if case .problem(let problem) = walk(bytes, onFrame: passing) { return problem }
        return nil
    }

    /// Where the audio frames of a whole stream start, for cutting it into byte ranges that decode alone.
    ///
    /// Small whatever the file's size: it holds the offset of every `checkpointStride`-th frame only (an eighth of
    /// a byte a frame), and finds the others by walking the frame headers from the checkpoint before them in the
    /// bytes the index was made from.
    public struct FrameIndex: Sendable, Hashable {
        /// Audio frames in the file; the Xing or Info frame (which holds no audio: mpg123 reads it as a tag) is not
        /// one of them.
        public let count: Int
        /// The byte offsets of audio frames 0, `checkpointStride`, 2 · `checkpointStride`, …
        let checkpoints: [Int]
        static let checkpointStride = 64
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

        /// The byte offset of audio frame `frame` (0 ..< `count`; `count` gives `end`) in `bytes`, which must be the
        /// bytes the index was made from; nil when `frame` is out of range or the bytes are not those (a frame
        /// header is not where one should be).
        public func offset<Bytes: RandomAccessCollection<UInt8>>(of frame: Int, in bytes: Bytes) -> Int? where Bytes.Index == Int {
            guard frame >= 0, frame <= count else { return nil }
            if frame == count { return end }
            var position = checkpoints[frame / Self.checkpointStride]
            for _ in 0..<(frame % Self.checkpointStride) {
                guard let next = MPEGStream.frame(bytes, at: position, end: end) else { return nil }
                position += next.bytes
            }
            return position
        }

        /// How many frames before audio frame `frame` a decode must start for the bit reservoir of `frame`, and of
        /// the frame before it, to be whole whatever their `main_data_begin`: the frame before it, and as many
        /// before that as hold the most main data a frame may reach back for (511 bytes in MPEG-1, 255 in MPEG-2
        /// and 2.5), counted from their headers; at most `frame` (the stream's start). At low bitrates in MPEG-2
        /// a frame holds little main data (24 bytes at 8 kbit/s and 24 kHz, 17 of them side information in stereo),
        /// so this can be a hundred frames and more. Nil when `bytes` are not the index's.
        public func reservoirReach<Bytes: RandomAccessCollection<UInt8>>(before frame: Int, in bytes: Bytes) -> Int? where Bytes.Index == Int {
            guard frame >= 1, frame < count else { return frame == 0 ? 0 : nil }
            // Main data is at least a byte a frame (a layer III frame is longer than its header, CRC and side
            // information), so 511 frames before the frame before it are always enough.
            let from = max(0, frame - 1 - 511)
            guard var position = offset(of: from, in: bytes) else { return nil }
            var mainData: [Int] = []
            var backstep = 0
            for _ in from..<(frame - 1) {
                guard let header = MPEGStream.frame(bytes, at: position, end: end) else { return nil }
                mainData.append(header.mainDataBytes)
                backstep = header.maximumBackstep
                position += header.bytes
            }
            var held = 0
            var reach = 1
            for bytes in mainData.reversed() where held < backstep {
                held += bytes
                reach += 1
            }
            return reach
        }

        /// The bytes of audio frames `frames` (indices in 0 ..< `count`), first and last byte inclusive, in `bytes`
        /// (the bytes the index was made from; nil as for `offset`).
        public func byteRange<Bytes: RandomAccessCollection<UInt8>>(
            frames: ClosedRange<Int>, in bytes: Bytes
        ) -> ClosedRange<Int>? where Bytes.Index == Int {
            guard frames.upperBound < count, let first = offset(of: frames.lowerBound, in: bytes),
                let next = offset(of: frames.upperBound + 1, in: bytes), next > first
            else { return nil }
            return first...(next - 1)
        }
    }

    /// The frame index of `bytes` (a whole file), or why it is not one whole MPEG layer III stream.
    public static func frameIndex(of bytes: [UInt8]) -> Result<FrameIndex, TartilError> {
        index(bytes, passing: { _ in })
    }

    /// The same for a whole file mapped into memory; `passing` as for `problem(in:passing:)`.
    public static func frameIndex(of bytes: UnsafeRawBufferPointer, passing: (Int) -> Void = { _ in }) -> Result<FrameIndex, TartilError> {
        index(bytes, passing: passing)
    }

    private static func index<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, passing: (Int) -> Void
    ) -> Result<FrameIndex, TartilError> where Bytes.Index == Int {
        let stride = FrameIndex.checkpointStride
        // The offsets of frames 0, 64, 128, … and of frames 1, 65, 129, …: the checkpoints when the first frame is
        // a Xing or Info frame (known once the walk is over).
        var fromFirst: [Int] = []
        var fromSecond: [Int] = []
        var count = 0
        let walked = walk(bytes, onFrame: { offset in
            passing(offset)
            if count % stride == 0 { fromFirst.append(offset) } else if count % stride == 1 { fromSecond.append(offset) }
            count += 1
        })
        switch walked {
        case .problem(let problem):
            return .failure(TartilError(.invalidData, problem))
        case .stream(let end, let first):
            let start = fromFirst[0]
            let head = MPEGHead.parse(Array(bytes.prefix(min(bytes.count, start + 4096))))
            var checkpoints = fromFirst
            var xing: MPEGHead.XingTag?
            if let tag = head.xing, head.frameOffset == start {
                xing = tag
                count -= 1
                checkpoints = fromSecond
            }
            guard count > 0 else { return .failure(TartilError(.invalidData, "no MPEG audio frame after the Xing or Info frame")) }
            return .success(FrameIndex(
                count: count, checkpoints: checkpoints, end: end, samplesPerFrame: first.samplesPerFrame, sampleRate: first.sampleRate,
                xing: xing))
        }
    }

    private enum Walk {
        case problem(String)
        /// A whole stream: where its last frame ends, and its first frame.
        case stream(end: Int, first: MPEGHead.Frame)
    }

    /// Walks the frame headers of `bytes`, calling `onFrame` with each frame's offset (from the collection's
    /// start, like every offset here).
    private static func walk<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, onFrame: (Int) -> Void) -> Walk where Bytes.Index == Int {
        let base = bytes.startIndex
        let start = MPEGHead.id3v2Bytes(bytes)
        guard start < bytes.count else { return .problem("no MPEG audio frame after the ID3v2 tag") }
        var end = bytes.count
        // An ID3v1 tag (128 bytes, "TAG") and, before it, an APEv2 tag ("APETAGEX" footer) may end the file.
        if end - 128 >= start, bytes[base + end - 128] == 0x54, bytes[base + end - 127] == 0x41, bytes[base + end - 126] == 0x47 {
            end -= 128
        }
        if end - 32 >= start, bytes[(base + end - 32)..<(base + end - 24)].elementsEqual("APETAGEX".utf8) {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[base + end - 20 + $1]) << (8 * $1) }
            let hasHeader = bytes[base + end - 9] & 0x80 != 0
            let total = size + (hasHeader ? 32 : 0)
            guard size >= 32, total <= end - start else { return .problem("an APEv2 tag whose size (\(size) bytes) does not fit in the file") }
            end -= total
        }
        guard let first = frame(bytes, at: start, end: end) else {
            return .problem(
                start == 0 && bytes.count >= 4
                    ? "it does not start with an MPEG audio frame or an ID3v2 tag (first bytes \(hex(Array(bytes.prefix(4)))))"
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

    /// The frame header at `position` (from the collection's start), when the 4 bytes there before `end` are one.
    private static func frame<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at position: Int, end: Int) -> MPEGHead.Frame? where Bytes.Index == Int {
        guard position >= 0, position + 4 <= end, end <= bytes.count else { return nil }
        let at = bytes.startIndex + position
        return MPEGHead.Frame(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3])
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined(separator: " ")
    }
}
