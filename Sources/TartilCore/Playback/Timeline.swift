/// A place in a plan: `offset` samples into item `index`, counted at that item's own sample rate. The end of the
/// plan is `(items.count, 0)`.
public struct PlanPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var index: Int
    public var offset: Int

    public init(index: Int, offset: Int = 0) {
        self.index = index
        self.offset = offset
    }

    public static func < (a: PlanPosition, b: PlanPosition) -> Bool { (a.index, a.offset) < (b.index, b.offset) }
    public var description: String { "item \(index) +\(offset)" }
}

/// The time axis of a plan, sample-exact: each item's length in PCM frames at its own sample rate, with prefix
/// sums so that a time finds its item and offset by binary search. Lengths come from the reciter table before any
/// file is downloaded; an unpinned ayah's length is an estimate (marked) until its file is opened.
///
/// Two measures run along it:
/// - *plan samples*: each item's frames, added up. They place the output's write head and what the device still
///   holds (both in frames), and they are exact.
/// - *seconds*: each item's frames over its own rate, added up. Times typed by people (`seek 3:20`) and the
///   scrubber use them, so a plan whose files differ in rate still shows the right time. Within a run of items
///   of one rate a time names sample `round(t × rate)` of the run exactly.
///
/// ```swift
/// let timeline = Timeline(lengths: [.init(samples: 44100, rate: 22050), .init(samples: 22050, rate: 22050)])
/// timeline.position(atSample: 50000)            // item 1 +5900
/// timeline.position(atSeconds: 2.5, from: 0)    // item 1 +11025
/// ```
public struct Timeline: Sendable, Hashable {
    /// One item's length.
    public struct Length: Sendable, Hashable {
        public let samples: Int
        /// The item's sample rate in Hz (a pause counts at the rate of the recitation it follows).
        public let rate: Int
        /// True until the file has been measured (an unpinned ayah's length is guessed).
        public let isEstimated: Bool

        public init(samples: Int, rate: Int, isEstimated: Bool = false) {
            precondition(rate > 0, "a length needs a sample rate")
            self.samples = max(0, samples)
            self.rate = rate
            self.isEstimated = isEstimated
        }

        public var seconds: Double { Double(samples) / Double(rate) }
    }

    public private(set) var lengths: [Length]
    /// `starts[i]` is the first plan sample of item i; `starts[count]` is the total.
    public private(set) var starts: [Int]
    /// `startSeconds[i]` is when item i starts; `startSeconds[count]` is the plan's length in seconds.
    public private(set) var startSeconds: [Double]

    public init(lengths: [Length]) {
        self.lengths = lengths
        starts = []
        startSeconds = []
        recomputeStarts()
    }

    private mutating func recomputeStarts() {
        var starts = [Int]()
        var seconds = [Double]()
        starts.reserveCapacity(lengths.count + 1)
        seconds.reserveCapacity(lengths.count + 1)
        var total = 0
        var totalSeconds = 0.0
        for length in lengths {
            starts.append(total)
            seconds.append(totalSeconds)
            total += length.samples
            totalSeconds += length.seconds
        }
        starts.append(total)
        seconds.append(totalSeconds)
        self.starts = starts
        self.startSeconds = seconds
    }

    public var count: Int { lengths.count }
    public var totalSamples: Int { starts[lengths.count] }
    /// The end of the plan.
    public var end: PlanPosition { PlanPosition(index: count) }

    /// First plan sample of item `index` (`count` gives the total).
    public func start(of index: Int) -> Int { starts[index] }

    /// The plan sample of a position.
    public func sample(at position: PlanPosition) -> Int { starts[position.index] + position.offset }

    /// The frames of items `range`.
    public func samples(in range: Range<Int>) -> Int { starts[range.upperBound] - starts[range.lowerBound] }

    /// How long items `range` last.
    public func seconds(in range: Range<Int>) -> Double { startSeconds[range.upperBound] - startSeconds[range.lowerBound] }

    /// When a position is, from the start of the plan.
    public func seconds(at position: PlanPosition) -> Double {
        guard position.index < count else { return startSeconds[count] }
        return startSeconds[position.index] + Double(position.offset) / Double(lengths[position.index].rate)
    }

    /// True when any of `range`'s lengths is an estimate.
    public func isEstimated(in range: Range<Int>) -> Bool { lengths[range].contains { $0.isEstimated } }

    /// The item holding plan sample `sample` and the offset into it. Samples before 0 give the start; at or past
    /// the total the answer is the end. Empty items are passed over.
    public func position(atSample sample: Int) -> PlanPosition {
        if sample <= 0 { return PlanPosition(index: firstNonEmpty(from: 0)) }
        if sample >= totalSamples { return end }
        // The last start ≤ sample whose item is not empty.
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= sample { low = middle } else { high = middle - 1 }
        }
        return PlanPosition(index: low, offset: sample - starts[low])
    }

    private func firstNonEmpty(from index: Int) -> Int {
        var index = index
        while index < count && lengths[index].samples == 0 { index += 1 }
        return index
    }

    /// The position `seconds` after the start of item `from`, or nil when that is at or past the end of the plan.
    /// Across items of one rate it is sample `round(seconds × rate)` counted from `from`'s start, exactly.
    public func position(atSeconds seconds: Double, from first: Int) -> PlanPosition? {
        guard seconds >= 0 else { return PlanPosition(index: firstNonEmpty(from: first)) }
        let rate = first < count ? lengths[first].rate : 1
        var uniform = true
        var index = first
        var elapsed = 0.0
        while index < count {
            let length = lengths[index]
            uniform = uniform && length.rate == rate
            if uniform {
                let target = Int((seconds * Double(rate)).rounded()) - (starts[index] - starts[first])
                if target < length.samples { return PlanPosition(index: index, offset: max(0, target)) }
            } else if seconds - elapsed < length.seconds {
                let offset = Int(((seconds - elapsed) * Double(length.rate)).rounded())
                if offset < length.samples { return PlanPosition(index: index, offset: max(0, offset)) }
            }
            elapsed += length.seconds
            index += 1
        }
        return nil
    }

    /// The position at `share` (0…1) of items `range`, or nil when that is the end of the plan. Within one rate it
    /// is sample `round(share × frames)` of the range, exactly.
    public func position(atShare share: Double, of range: Range<Int>) -> PlanPosition? {
        guard !range.isEmpty else { return nil }
        let rate = lengths[range.lowerBound].rate
        if lengths[range].allSatisfy({ $0.rate == rate }) {
            let sample = starts[range.lowerBound] + Int((share * Double(samples(in: range))).rounded())
            let position = position(atSample: sample)
            return position.index >= count ? nil : position
        }
        return position(atSeconds: share * seconds(in: range), from: range.lowerBound)
    }

    /// Replaces item `index`'s length (an estimate measured, or a file whose length differs from its table).
    public mutating func setLength(_ length: Length, of index: Int) {
        setLengths([(index, length)])
    }

    /// Replaces several items' lengths at once (the prefix sums are worked out once).
    public mutating func setLengths(_ changes: [(Int, Length)]) {
        var changed = false
        for (index, length) in changes where lengths[index] != length {
            lengths[index] = length
            changed = true
        }
        if changed { recomputeStarts() }
    }
}
