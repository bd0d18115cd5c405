/// Which bytes of a body belong to a window of the file (an ayah's byte range of a surah's file) when the server
/// ignored the range request and sends the whole file: the transfer keeps those and stops once the window is
/// whole. Pure, so that any cutting of the body into chunks is tested to give exactly the window.
///
/// ```swift
/// WindowCut.cut(chunk: 100, bodyOffset: 0, window: 30...59, kept: 0)    // keep 30..<60, complete
/// WindowCut.cut(chunk: 100, bodyOffset: 0, window: 130...159, kept: 0)  // keep nothing yet
/// ```
public enum WindowCut {
    /// The part of a body chunk of `chunk` bytes, which starts `bodyOffset` bytes into the body, that is in
    /// `window`, given `kept` bytes of the window kept before it; and whether the window is whole after it.
    public static func cut(chunk: Int, bodyOffset: Int, window: ClosedRange<Int>, kept: Int) -> (keep: Range<Int>, complete: Bool) {
        let wanted = window.count - kept
        guard wanted > 0 else { return (0..<0, true) }
        let start = max(0, window.lowerBound + kept - bodyOffset)
        guard start < chunk else { return (0..<0, false) }
        let end = min(chunk, start + wanted)
        return (start..<end, end - start == wanted)
    }
}
