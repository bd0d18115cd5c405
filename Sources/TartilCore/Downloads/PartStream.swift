/// Which bytes of one body belong to each of several parts of a surah's file (ayat's byte ranges, in file order;
/// neighbours may overlap by the frames a part needs before it), when the parts are cut from one transfer: a
/// request for their whole span (`range`) from a server that honours it (206), sends more (a wider 206), or
/// ignores it and sends the whole file from byte 0 (200). Each part is complete as soon as the body has passed
/// its last byte, so it can be checked and stored while the body goes on; the body can stop once the last part
/// is whole. Pure, so that any cutting of the body into chunks is tested to give exactly each window.
///
/// ```swift
/// var stream = PartStream(windows: [0...39, 30...79], keptOfLast: 0)
/// stream.range                          // 0...79: what to ask for
/// _ = stream.start(at: 0)               // true (a 200: the file from its start)
/// stream.on(chunk: 50)                  // [.append(0, 0..<40), .complete(0), .append(1, 30..<50)], not finished
/// stream.on(chunk: 50)                  // [.append(1, 0..<30), .complete(1)], finished
/// ```
public struct PartStream: Sendable, Hashable {
    /// What to do with a chunk of the body: append its `bytes` to part `part`, or take part `part` as whole.
    public enum Action: Sendable, Hashable {
        case append(part: Int, bytes: Range<Int>)
        case complete(part: Int)
    }

    /// Each part's bytes of the file, in file order (lower bounds increasing).
    public let windows: [ClosedRange<Int>]
    /// How many bytes of each part are kept so far. Only the last part may start with some (a partial file it
    /// continues); the others are cut from their first byte.
    public private(set) var kept: [Int]
    /// Where in the file the next body byte is (set by `start(at:)`).
    public private(set) var bodyOffset = 0

    /// `windows`: the parts in file order; `keptOfLast`: the bytes of the last one already kept (resumed).
    /// The windows must be non-empty, each lower bound above the previous one's, and `keptOfLast` below the last
    /// window's size.
    public init(windows: [ClosedRange<Int>], keptOfLast: Int) {
        precondition(!windows.isEmpty && zip(windows, windows.dropFirst()).allSatisfy { $0.lowerBound < $1.lowerBound })
        precondition(keptOfLast >= 0 && keptOfLast < windows.last!.count)
        self.windows = windows
        kept = Array(repeating: 0, count: windows.count)
        kept[windows.count - 1] = keptOfLast
    }

    /// The bytes of the file to ask for: from the first byte not kept to the end of the part that ends last.
    public var range: ClosedRange<Int> {
        let first = windows.count == 1 ? windows[0].lowerBound + kept[0] : windows[0].lowerBound
        return first...windows.map(\.upperBound).max()!
    }

    /// Whether every part is whole.
    public var isFinished: Bool { zip(windows, kept).allSatisfy { $0.count == $1 } }

    /// The body starts at byte `offset` of the file (0 for a 200, a 206's `Content-Range` start): false when that
    /// is past a byte still wanted, so the body cannot give the parts.
    public mutating func start(at offset: Int) -> Bool {
        bodyOffset = offset
        return offset <= range.lowerBound
    }

    /// The next `count` bytes of the body: what goes to which part, in part order, and which parts are whole
    /// after it; then whether every part is (the body can stop).
    public mutating func on(chunk count: Int) -> (actions: [Action], finished: Bool) {
        var actions: [Action] = []
        for index in windows.indices where kept[index] < windows[index].count {
            // Parts are in file order: none after one that starts past this chunk has bytes in it.
            if windows[index].lowerBound + kept[index] >= bodyOffset + count { break }
            let (keep, complete) = WindowCut.cut(chunk: count, bodyOffset: bodyOffset, window: windows[index], kept: kept[index])
            if !keep.isEmpty {
                actions.append(.append(part: index, bytes: keep))
                kept[index] += keep.count
            }
            if complete { actions.append(.complete(part: index)) }
        }
        bodyOffset += count
        return (actions, isFinished)
    }
}
