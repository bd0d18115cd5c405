/// One thing the player plays, in order: an ayah's recitation, the basmala before a surah, or a pause.
public struct PlanItem: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The ayah's own recitation.
        case ayah
        /// The basmala before ayah 1 of a surah, recited from the reciter's file for 1:1.
        case basmala
        /// Silence after a recitation, for memorisation (`--pause`): round(seconds × rate) frames at the rate of
        /// the recitation it follows.
        case pause(seconds: Double)
    }

    public let kind: Kind
    /// The ayah this item belongs to: the one recited, the one the basmala introduces (ayah 1 of its surah),
    /// or the one the pause follows. Items of one ayah form its *group*: `next` and `prev` move by groups.
    public let ayah: AyahRef
    /// Which repetition of the ayah this is (1 when `--repeat` is not used).
    public let repetition: Int

    public init(kind: Kind, ayah: AyahRef, repetition: Int = 1) {
        self.kind = kind
        self.ayah = ayah
        self.repetition = repetition
    }

    /// The file to decode: the ayah's own, 1:1 for a basmala, none for a pause.
    public var file: AyahRef? {
        switch kind {
        case .ayah: ayah
        case .basmala: AyahRef(unchecked: 1, 1)
        case .pause: nil
        }
    }

    public var description: String {
        switch kind {
        case .ayah: repetition > 1 ? "\(ayah) (×\(repetition))" : "\(ayah)"
        case .basmala: "basmala before \(ayah)"
        case .pause(let seconds): "pause \(seconds) s after \(ayah)"
        }
    }
}

/// How a plan is laid out from the requested ayat.
public struct PlaybackOptions: Sendable, Hashable {
    /// Whether the basmala is recited before ayah 1 of each surah (never before 1, whose first ayah is the
    /// basmala, nor before 9, which has none).
    public enum Basmala: String, Sendable, Hashable, CaseIterable {
        case auto, off
    }

    public var basmala: Basmala
    /// Times each ayah is recited in a row (1…99).
    public var repeatCount: Int
    /// Silence after each recitation, in seconds (0 for none).
    public var pauseSeconds: Double

    public init(basmala: Basmala = .auto, repeatCount: Int = 1, pauseSeconds: Double = 0) {
        self.basmala = basmala
        self.repeatCount = repeatCount
        self.pauseSeconds = pauseSeconds
    }
}

/// What plays, in what order, and where playback is: a pure state machine the player runs.
///
/// ```swift
/// var plan = PlaybackPlan(ayat: Array(try AyahRange(AyahRef(112, 1), AyahRef(112, 4))), options: .init())
/// plan.items.first   // basmala before 112:1
/// plan.filesAhead()  // [1:1, 112:1, 112:2, 112:3]: the current item's file and the next three
/// plan.advance()
/// ```
/// `next` and `prev` move by ayah groups (an ayah with its basmala, repeats and pauses). The scrubber spans the
/// items of the current surah (`surahSpan`).
public struct PlaybackPlan: Sendable, Hashable {
    /// Items fetched ahead of the one playing (the current item's file is always wanted too).
    public static let queueAhead = 3
    /// `prev` restarts the current ayah when playback is further into it than this; otherwise it goes back one.
    public static let restartThresholdSeconds = 1.5

    public let items: [PlanItem]
    /// The item playing; `items.count` once the plan has finished.
    public private(set) var current: Int = 0

    public init(ayat: [AyahRef], options: PlaybackOptions) {
        var items: [PlanItem] = []
        for ayah in ayat {
            if ayah.ayah == 1 && options.basmala == .auto && ayah.surah != 1 && ayah.surah != 9 {
                items.append(PlanItem(kind: .basmala, ayah: ayah))
            }
            for repetition in 1...max(1, options.repeatCount) {
                items.append(PlanItem(kind: .ayah, ayah: ayah, repetition: repetition))
                if options.pauseSeconds > 0 {
                    items.append(PlanItem(kind: .pause(seconds: options.pauseSeconds), ayah: ayah, repetition: repetition))
                }
            }
        }
        self.items = items
    }

    public var isFinished: Bool { current >= items.count }
    public var currentItem: PlanItem? { isFinished ? nil : items[current] }

    /// Moves to the next item (or to the end).
    public mutating func advance() { current = min(items.count, current + 1) }

    /// Moves to item `index` (`items.count` ends the plan).
    public mutating func jump(to index: Int) { current = max(0, min(items.count, index)) }

    /// The files wanted now: the current item's and those of the next `queueAhead` items with a file, in play
    /// order, without repeats.
    public func filesAhead() -> [AyahRef] {
        var files: [AyahRef] = []
        var fileItems = 0
        var index = current
        while index < items.count && fileItems <= Self.queueAhead {
            if let file = items[index].file {
                fileItems += 1
                if !files.contains(file) { files.append(file) }
            }
            index += 1
        }
        return files
    }

    /// The first item with a file after `index`: what to open ahead for a gapless hand-over (nil at the end).
    public func nextFileItem(after index: Int) -> Int? {
        var next = index + 1
        while next < items.count {
            if items[next].file != nil { return next }
            next += 1
        }
        return nil
    }

    // MARK: - Groups and spans

    /// The items of the group (one ayah with its basmala, repeats and pauses) that `index` belongs to.
    public func group(containing index: Int) -> Range<Int> {
        precondition(items.indices.contains(index), "item \(index) is not in the plan")
        let ayah = items[index].ayah
        var start = index
        while start > 0 && items[start - 1].ayah == ayah { start -= 1 }
        var end = index + 1
        while end < items.count && items[end].ayah == ayah { end += 1 }
        return start..<end
    }

    /// The items of `index`'s surah in this plan: what the scrubber spans.
    public func surahSpan(containing index: Int) -> Range<Int> {
        precondition(items.indices.contains(index), "item \(index) is not in the plan")
        let surah = items[index].ayah.surah
        var start = index
        while start > 0 && items[start - 1].ayah.surah == surah { start -= 1 }
        var end = index + 1
        while end < items.count && items[end].ayah.surah == surah { end += 1 }
        return start..<end
    }

    /// Where `next` goes: the start of the following group, or `items.count` (the end) from the last one.
    public func nextTarget() -> Int {
        guard !isFinished else { return items.count }
        return group(containing: current).upperBound
    }

    /// Where `prev` goes, `secondsIntoGroup` into the current group: its start when further in than
    /// `restartThresholdSeconds` (or when it is the first), else the start of the group before. After the end it
    /// goes to the start of the last group.
    public func previousTarget(secondsIntoGroup: Double) -> Int {
        guard !items.isEmpty else { return 0 }
        guard !isFinished else { return group(containing: items.count - 1).lowerBound }
        let start = group(containing: current).lowerBound
        if secondsIntoGroup > Self.restartThresholdSeconds || start == 0 { return start }
        return group(containing: start - 1).lowerBound
    }

    /// The first item of `ayah`'s group (its basmala, when it has one), or nil when the plan does not play it.
    public func firstItem(of ayah: AyahRef) -> Int? {
        items.firstIndex { $0.ayah == ayah }
    }

    /// The requested ayat in play order, once each, as a range text for messages (`36:1-83`, `112:1-114:6`).
    public var rangeDescription: String {
        guard let first = items.first?.ayah, let last = items.last?.ayah else { return "nothing" }
        if first == last { return "\(first)" }
        return first.surah == last.surah ? "\(first)-\(last.ayah)" : "\(first)-\(last)"
    }
}
