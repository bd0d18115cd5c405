/// The time axis of a plan, sample-exact: each item's length in PCM frames at one sample rate, with prefix
/// sums so that a time finds its item and offset by binary search. Lengths come from the reciter table before any
/// file is downloaded; an unpinned ayah's length is an estimate (marked) until its file is opened.
///
/// ```swift
/// let timeline = Timeline(sampleRate: 22050, lengths: [.init(samples: 44100), .init(samples: 22050)])
/// timeline.locate(50000)   // (index: 1, offset: 5900)
/// timeline.sample(atSeconds: 2.5) // 55125
/// ```
public struct Timeline: Sendable, Hashable {
    /// One item's length.
    public struct Length: Sendable, Hashable {
        public let samples: Int
        /// True until the file has been measured (an unpinned ayah's length is guessed).
        public let isEstimated: Bool

        public init(samples: Int, isEstimated: Bool = false) {
            self.samples = max(0, samples)
            self.isEstimated = isEstimated
        }
    }

    public let sampleRate: Int
    public private(set) var lengths: [Length]
    /// `starts[i]` is the first sample of item i; `starts[lengths.count]` is the total.
    public private(set) var starts: [Int]

    public init(sampleRate: Int, lengths: [Length]) {
        precondition(sampleRate > 0, "a timeline needs a sample rate")
        self.sampleRate = sampleRate
        self.lengths = lengths
        starts = []
        recomputeStarts()
    }

    private mutating func recomputeStarts() {
        var starts = [Int]()
        starts.reserveCapacity(lengths.count + 1)
        var total = 0
        for length in lengths {
            starts.append(total)
            total += length.samples
        }
        starts.append(total)
        self.starts = starts
    }

    public var count: Int { lengths.count }
    public var totalSamples: Int { starts[lengths.count] }

    /// First sample of item `index` (`count` gives the total).
    public func start(of index: Int) -> Int { starts[index] }

    /// The samples of items `range`, from the first sample of its first item.
    public func samples(in range: Range<Int>) -> Int { starts[range.upperBound] - starts[range.lowerBound] }

    /// True when any of `range`'s lengths is an estimate.
    public func isEstimated(in range: Range<Int>) -> Bool { lengths[range].contains { $0.isEstimated } }

    /// The item holding `sample` and the offset into it. Samples before 0 give item 0; at or past the total the
    /// answer is `(count, 0)`: the end. Empty items are passed over.
    public func locate(_ sample: Int) -> (index: Int, offset: Int) {
        if sample < 0 { return (0, 0) }
        if sample >= totalSamples { return (count, 0) }
        // The last start ≤ sample whose item is not empty.
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= sample { low = middle } else { high = middle - 1 }
        }
        return (low, sample - starts[low])
    }

    /// `round(seconds × rate)`: the sample a time names.
    public func sample(atSeconds seconds: Double) -> Int { Int((seconds * Double(sampleRate)).rounded()) }

    /// The time of `sample`.
    public func seconds(atSample sample: Int) -> Double { Double(sample) / Double(sampleRate) }

    /// Replaces item `index`'s length (an estimate measured, or a file whose length differs from its table).
    public mutating func setLength(_ length: Length, of index: Int) {
        guard lengths[index] != length else { return }
        lengths[index] = length
        recomputeStarts()
    }
}
