/// The scrubber bar: `[=====|====|===>-----|-----]`, the part of the surah heard, and a tick where each ayah
/// starts when there is room for every tick with a gap between them; when not, every 2nd, 5th, 10th, 20th… ayah
/// gets one (the fewest left out that keep a gap). The head is `>` playing, `‖` paused.
public struct ScrubberBar: Sendable, Hashable {
    public var positionSeconds: Double
    public var durationSeconds: Double
    /// When each ayah (its group) starts, in seconds from the surah's start; the first gets no tick.
    public var ayahStarts: [Double]
    public var paused: Bool

    public init(positionSeconds: Double, durationSeconds: Double, ayahStarts: [Double], paused: Bool) {
        self.positionSeconds = positionSeconds
        self.durationSeconds = durationSeconds
        self.ayahStarts = ayahStarts
        self.paused = paused
    }

    /// The strides tried, in order: a tick for every ayah, then every 2nd, 5th…
    static let strides = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

    /// The bar `inner` columns wide between its brackets (so `inner + 2` columns in all).
    public func rendered(inner width: Int) -> String {
        let width = max(1, width)
        guard durationSeconds > 0 else { return "[" + String(repeating: "-", count: width) + "]" }
        func column(_ seconds: Double) -> Int { min(width - 1, max(0, Int(seconds * Double(width) / durationSeconds))) }
        let head = column(positionSeconds)
        var cells = (0..<width).map { $0 < head ? Character("=") : Character("-") }
        for tick in ticks(inner: width) { cells[tick] = "|" }
        cells[head] = paused ? "‖" : ">"
        return "[" + String(cells) + "]"
    }

    /// The columns that get a tick in a bar `inner` columns wide.
    public func ticks(inner width: Int) -> [Int] {
        guard durationSeconds > 0, width > 0 else { return [] }
        func column(_ seconds: Double) -> Int { min(width - 1, max(0, Int(seconds * Double(width) / durationSeconds))) }
        for stride in Self.strides {
            let columns = ayahStarts.indices.filter { $0 > 0 && $0 % stride == 0 }.map { column(ayahStarts[$0]) }
            // Room: each tick in a column of its own, with at least one column between two ticks.
            if zip(columns, columns.dropFirst()).allSatisfy({ $1 - $0 >= 2 }) { return columns }
        }
        return []
    }
}
