/// What the first bytes of an MP3 file say about its length: the ID3v2 tag's size, the first MPEG audio frame's
/// header (version, layer, bitrate, sample rate, samples per frame) and, when that frame is a Xing or Info frame,
/// its frame count and the LAME tag's encoder delay and padding. Parsed from any prefix of a file (a ranged
/// request's first bytes, or a whole file); whatever lies past the prefix is nil. Never traps, on any input.
///
/// ```swift
/// let head = MPEGHead.parse(firstBytes)            // id3v2Bytes 44, frame: MPEG-2 layer III 32 kbps 22050 Hz …
/// head.frame?.samplesPerFrame                      // 576
/// ```
public struct MPEGHead: Sendable, Hashable {
    /// One MPEG audio frame header (the 4 bytes that start every frame).
    public struct Frame: Sendable, Hashable {
        public enum Version: Sendable, Hashable {
            case mpeg1, mpeg2, mpeg25
        }

        public let version: Version
        /// 1, 2 or 3.
        public let layer: Int
        /// Bits per second (free-format streams are not read: their frames have no length in the header).
        public let bitrate: Int
        public let sampleRate: Int
        public let channels: Int
        public let hasPadding: Bool
        /// True when a 16-bit CRC follows the header.
        public let isProtected: Bool

        /// PCM frames one MPEG frame decodes to.
        public var samplesPerFrame: Int {
            switch (layer, version) {
            case (1, _): 384
            case (2, _), (3, .mpeg1): 1152
            default: 576
            }
        }

        /// Bytes of layer III side information after the header (and its CRC).
        public var sideInfoBytes: Int { version == .mpeg1 ? (channels == 1 ? 17 : 32) : (channels == 1 ? 9 : 17) }

        /// Bytes of a layer III frame left for main data (the bit reservoir's share of the stream): its length
        /// less the header, the CRC and the side information.
        public var mainDataBytes: Int { max(0, bytes - 4 - (isProtected ? 2 : 0) - sideInfoBytes) }

        /// How far back a layer III frame's main data may start, in bytes of the main data before it
        /// (`main_data_begin`: 9 bits in MPEG-1, 8 in MPEG-2 and 2.5).
        public var maximumBackstep: Int { version == .mpeg1 ? 511 : 255 }

        /// This frame's length in bytes, header included.
        public var bytes: Int {
            if layer == 1 { return (12 * bitrate / sampleRate + (hasPadding ? 1 : 0)) * 4 }
            return samplesPerFrame / 8 * bitrate / sampleRate + (hasPadding ? 1 : 0)
        }

        /// The mean length of this stream's frames in bytes (padding makes up the fraction) is
        /// `meanBytesNumerator / meanBytesDenominator`.
        var meanBytesNumerator: Int { samplesPerFrame * bitrate }
        var meanBytesDenominator: Int { 8 * sampleRate }

        /// Reads a header, or nil when `bytes` are not one (no sync, a reserved version, layer, bitrate or rate,
        /// or free format).
        public init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
            guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
            switch (b1 >> 3) & 3 {
            case 0: version = .mpeg25
            case 2: version = .mpeg2
            case 3: version = .mpeg1
            default: return nil
            }
            switch (b1 >> 1) & 3 {
            case 1: layer = 3
            case 2: layer = 2
            case 3: layer = 1
            default: return nil
            }
            let bitrateIndex = Int(b2 >> 4)
            let rateIndex = Int((b2 >> 2) & 3)
            guard bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
            let kbps: [Int]
            switch (version, layer) {
            case (.mpeg1, 1): kbps = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (.mpeg1, 2): kbps = [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (.mpeg1, _): kbps = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (_, 1): kbps = [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            default: kbps = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
            bitrate = kbps[bitrateIndex - 1] * 1000
            let rates = [44100, 48000, 32000]
            let divisor = version == .mpeg1 ? 1 : version == .mpeg2 ? 2 : 4
            sampleRate = rates[rateIndex] / divisor
            hasPadding = (b2 >> 1) & 1 == 1
            channels = b3 >> 6 == 3 ? 1 : 2
            isProtected = b1 & 1 == 0
        }
    }

    /// A Xing (VBR) or Info (CBR) frame: the first frame of a LAME-style file, holding no audio.
    public struct XingTag: Sendable, Hashable {
        /// "Info": written for constant bitrate.
        public let isInfo: Bool
        /// Audio frames after this one, if given.
        public let frames: Int?
        /// Bytes of the stream from this frame on, if given.
        public let streamBytes: Int?
        /// The LAME tag's encoder delay and padding (PCM frames), when the frame holds that tag.
        public let encoderDelay: Int?
        public let encoderPadding: Int?
    }

    /// Bytes of ID3v2 tags before the audio (0 without), footer included; known from the first 10 bytes.
    public let id3v2Bytes: Int
    /// Where the first frame starts, when it lies in the bytes read.
    public let frameOffset: Int?
    public let frame: Frame?
    /// The first frame's Xing or Info tag, when it has one (nil also when the bytes read end before it).
    public let xing: XingTag?
    /// The first frame that holds audio: the one after a Xing or Info frame (whose own bitrate is often another,
    /// chosen to fit the tag), or the first frame; nil when the bytes read end before it.
    public let audioFrame: Frame?
    /// Bytes after the audio (a 128-byte ID3v1 tag); known only when the bytes read are the whole file.
    public let trailerBytes: Int?

    /// The decoder delay mpg123 removes (with the encoder's) when a file has a Xing or Info frame count.
    public static let decoderDelay = 529

    /// Reads what `bytes` (a file's first bytes; with `isWholeFile`, all of them) tell. A frame is taken only
    /// where its header is valid and, when the bytes reach that far, the next frame's header too, so a stray
    /// 0xFF in a tag's padding is not mistaken for audio.
    public static func parse(_ bytes: [UInt8], isWholeFile: Bool = false) -> MPEGHead {
        let id3v2 = id3v2Bytes(bytes)
        let offset = id3v2
        var trailer: Int?
        if isWholeFile {
            let tail = bytes.count - 128
            trailer = tail >= id3v2 && bytes[tail] == 0x54 && bytes[tail + 1] == 0x41 && bytes[tail + 2] == 0x47 ? 128 : 0
        }
        // The first frame: at the tag's end, or (junk before it) the first place two valid frames follow each
        // other, within 4 KiB.
        var found: (Int, Frame)?
        var position = offset
        while position + 4 <= bytes.count, position <= offset + 4096 {
            if let frame = Frame(bytes[position], bytes[position + 1], bytes[position + 2], bytes[position + 3]) {
                let next = position + frame.bytes
                if next + 4 > bytes.count {
                    found = (position, frame)  // the next header is past what was read: take this one
                    break
                }
                if let following = Frame(bytes[next], bytes[next + 1], bytes[next + 2], bytes[next + 3]),
                    following.version == frame.version, following.layer == frame.layer, following.sampleRate == frame.sampleRate
                {
                    found = (position, frame)
                    break
                }
            }
            position += 1
        }
        guard let (start, frame) = found else {
            return MPEGHead(id3v2Bytes: id3v2, frameOffset: nil, frame: nil, xing: nil, audioFrame: nil, trailerBytes: trailer)
        }
        let xing = xingTag(bytes, frameAt: start, frame)
        var audioFrame: Frame? = frame
        if xing != nil {
            let next = start + frame.bytes
            audioFrame = next + 4 <= bytes.count ? Frame(bytes[next], bytes[next + 1], bytes[next + 2], bytes[next + 3]) : nil
        }
        return MPEGHead(id3v2Bytes: id3v2, frameOffset: start, frame: frame, xing: xing, audioFrame: audioFrame, trailerBytes: trailer)
    }

    /// The bytes of the ID3v2 tags at the start of `bytes` (a file's first bytes, or all of them), footers included:
    /// only the tags' 10-byte headers are read. Several tags may follow each other (rare, but seen); at most 16 are
    /// passed over.
    static func id3v2Bytes<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int where Bytes.Index == Int {
        let base = bytes.startIndex
        var offset = 0
        var id3v2 = 0
        for _ in 0..<16 {
            guard offset + 10 <= bytes.count else { break }
            let at = base + offset
            guard bytes[at] == 0x49, bytes[at + 1] == 0x44, bytes[at + 2] == 0x33, bytes[at + 3] != 0xFF, bytes[at + 4] != 0xFF,
                bytes[(at + 6)...(at + 9)].allSatisfy({ $0 < 0x80 })
            else { break }
            let size = bytes[(at + 6)...(at + 9)].reduce(0) { $0 << 7 | Int($1) }
            let footer = bytes[at + 5] & 0x10 != 0 ? 10 : 0
            offset += 10 + size + footer
            id3v2 = offset
        }
        return id3v2
    }

    /// The Xing or Info tag of the frame at `start`, if it holds one (after its side information, as mpg123 looks).
    private static func xingTag(_ bytes: [UInt8], frameAt start: Int, _ frame: Frame) -> XingTag? {
        guard frame.layer == 3 else { return nil }
        let sideInfo = frame.sideInfoBytes
        let end = min(bytes.count, start + frame.bytes)
        func word(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= end else { return nil }
            return bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        for tagStart in [start + 4 + sideInfo, start + 6 + sideInfo] {
            guard let magic = word(tagStart) else { continue }
            let isInfo = magic == 0x496E_666F  // "Info"
            guard isInfo || magic == 0x5869_6E67 else { continue }  // "Xing"
            guard let flags = word(tagStart + 4) else { return nil }
            var field = tagStart + 8
            var frames: Int?
            var streamBytes: Int?
            if flags & 1 != 0 {
                frames = word(field)
                field += 4
            }
            if flags & 2 != 0 {
                streamBytes = word(field)
                field += 4
            }
            if flags & 4 != 0 { field += 100 }
            if flags & 8 != 0 { field += 4 }
            // The LAME tag: a 9-byte encoder name, then at +21 three bytes of 12-bit delay and padding.
            var delay: Int?
            var padding: Int?
            let lame = field + 21
            if lame + 3 <= end, bytes[field..<(field + 4)].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                let packed = Int(bytes[lame]) << 16 | Int(bytes[lame + 1]) << 8 | Int(bytes[lame + 2])
                delay = packed >> 12
                padding = packed & 0xFFF
            }
            return XingTag(isInfo: isInfo, frames: frames, streamBytes: streamBytes, encoderDelay: delay, encoderPadding: padding)
        }
        return nil
    }

    /// The gapless sample count mpg123 decodes from `audioFrames` frames after a Xing or Info frame whose frame
    /// count it read, with the LAME tag's `delay` and `padding`: the decoder delay and the encoder's are cut at the
    /// start, the padding (less the decoder delay) at the end.
    public static func gaplessSamples(audioFrames: Int, samplesPerFrame: Int, delay: Int, padding: Int) -> Int {
        let all = audioFrames * samplesPerFrame
        return max(0, min(all, all - padding + decoderDelay) - delay - decoderDelay)
    }
}

/// An ayah file's length worked out without decoding it: from its size (a ranged request's `Content-Range`) and
/// what MPEG headers tell, exactly as mpg123 would count with gapless trimming on — to within one frame for a
/// constant-bitrate file, exact when the file's own Xing or Info frame count is in the bytes read.
///
/// `reference` is the head of a whole file of the same reciter already here (it gives what a file's first bytes
/// may not: the frame header when a large tag hides it, and a trailing ID3v1 tag); `head` is what the file's own
/// first bytes showed, if any were read.
///
/// ```swift
/// let reference = MPEGHead.parse(firstFileBytes, isWholeFile: true)
/// LengthEstimate.samples(fileBytes: 27080, head: MPEGHead.parse(first1024), reference: reference)  // (147503, 22050)
/// ```
public enum LengthEstimate {
    /// The estimate, or nil when no frame header is known (neither the file's bytes nor the reference have one)
    /// or the size is smaller than the tags.
    public static func samples(fileBytes: Int, head: MPEGHead?, reference: MPEGHead?) -> (samples: Int, rate: Int)? {
        guard fileBytes > 0, fileBytes <= 1 << 40 else { return nil }
        // The file's own first frame and tag where its first bytes show them; the reference's otherwise.
        let own = head?.frame != nil
        guard let first = own ? head?.frame : reference?.frame else { return nil }
        let xing = own ? head?.xing : reference?.xing
        let spf = first.samplesPerFrame
        let delay = xing?.encoderDelay ?? 0
        let padding = xing?.encoderPadding ?? 0
        // A Xing or Info frame count read from the file itself is what mpg123 goes by.
        if own, let frames = xing?.frames {
            return (MPEGHead.gaplessSamples(audioFrames: frames, samplesPerFrame: spf, delay: delay, padding: padding), first.sampleRate)
        }
        // Where the audio frames start: after the tags and the Xing or Info frame (the reference's, when the
        // file's own are past the bytes read: only its ID3v2 size is then the file's own).
        guard let frame = (own ? head?.audioFrame : nil) ?? reference?.audioFrame ?? (xing == nil ? first : nil) else { return nil }
        let audioStart: Int
        if own, let offset = head?.frameOffset {
            audioStart = offset + (xing == nil ? 0 : first.bytes)
        } else {
            guard let reference, let offset = reference.frameOffset, let referenceFirst = reference.frame else { return nil }
            audioStart = (head?.id3v2Bytes ?? reference.id3v2Bytes) + (offset - reference.id3v2Bytes)
                + (reference.xing == nil ? 0 : referenceFirst.bytes)
        }
        let audioBytes = fileBytes - audioStart - (reference?.trailerBytes ?? 0)
        guard audioBytes > 0, frame.sampleRate == first.sampleRate else { return nil }
        // Frames in the audio bytes, to the nearest whole: bytes over the mean frame length (padding makes up
        // its fraction in a constant-bitrate stream; a variable one's mean comes from the reference's tag).
        var meanFrameBytes = Double(frame.meanBytesNumerator) / Double(frame.meanBytesDenominator)
        if let tag = reference?.xing, !tag.isInfo, let frames = tag.frames, let bytes = tag.streamBytes, frames > 0, bytes > 0 {
            meanFrameBytes = Double(bytes) / Double(frames + 1)
        }
        let frames = Int((Double(audioBytes) / meanFrameBytes).rounded())
        guard xing?.frames != nil else { return (frames * spf, first.sampleRate) }
        return (MPEGHead.gaplessSamples(audioFrames: frames, samplesPerFrame: spf, delay: delay, padding: padding), first.sampleRate)
    }
}
