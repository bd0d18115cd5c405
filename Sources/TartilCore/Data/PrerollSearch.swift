/// Where the byte range of a part of a surah file may start, in frames before the frame that holds its first
/// sample ("preroll"), in the order `table build` tries them (`SurahTableBuilder`): the first whose own decode
/// gives exactly the whole decode's samples is the part's range.
///
/// Two things decide what a range needs before it. The bit reservoir: a frame's main data may begin in the frames
/// before it (up to 511 bytes back in MPEG-1, 255 in MPEG-2 and 2.5), and the frame before the part's first frame
/// must decode whole too (its output overlaps the first's). `MPEGStream.FrameIndex.reservoirReach` counts
/// these frames from the headers: 3 to 10 in the files measured (MPEG-1 at 32-48 kbit/s and 32-48 kHz, mono and
/// stereo, lame CBR and VBR; MPEG-2 and 2.5 at 32 kbit/s), but 86 at 8 kbit/s and 24 kHz in MPEG-2 stereo. And
/// past the reservoir's reach a start may still decode a few dozen samples 1 off the whole decode (a rounding
/// that depends on the audio): in the lame MPEG-1 files every start from the reach on is exact, or every other
/// one; in one real MPEG-2 recording (`ibrahim-alakhdar`) exact starts come up to 25 frames past it (29 frames
/// in all), and then irregularly (29, 37, 38, 41, … frames back for one ayah).
///
/// So every preroll is tried from 0 (the shortest range wins) to `linearFrames` or, where the reservoir reaches
/// further, to the reservoir's reach and a margin; past that the preroll doubles, and the last candidate is the
/// stream's first frame, whose range always decodes exactly as the whole file does (the same bytes from the same
/// start). So no part fails for want of a start, and a part that needs a long preroll costs a few decodes more,
/// not one for each frame.
///
/// ```swift
/// PrerollSearch.candidates(firstFrame: 2, reach: 1)        // [0, 1, 2]
/// PrerollSearch.candidates(firstFrame: 1000, reach: 9)     // [0, 1, …, 64, 128, 256, 512, 1000]
/// ```
public enum PrerollSearch {
    /// Every preroll up to this many frames is tried (the reach of the reservoir allowing).
    public static let linearFrames = 64
    /// Frames past the reservoir's reach also tried one by one: twice the synthesis filter's turn (4 frames in
    /// MPEG-1, 8 in MPEG-2 and 2.5).
    public static let margin = 16

    /// The prerolls to try for a part whose first sample is in frame `firstFrame` (at most that many: a range
    /// starts at the stream's first audio frame at the earliest), given `reach`
    /// (`MPEGStream.FrameIndex.reservoirReach`): strictly increasing, from 0 to `firstFrame`.
    public static func candidates(firstFrame: Int, reach: Int) -> [Int] {
        guard firstFrame > 0 else { return [0] }
        let linear = min(firstFrame, max(linearFrames, reach + margin))
        var candidates = Array(0...linear)
        var next = linear * 2
        while next < firstFrame {
            candidates.append(next)
            next *= 2
        }
        if candidates.last != firstFrame { candidates.append(firstFrame) }
        return candidates
    }
}
