/// What a hifz play heard in full, part by part, from the player's events: an ayah counts as heard in a part
/// when every one of its recitations in that part (each repetition, each stepped review, each cycle) was heard from
/// its start to its end, in the order played.
///
/// An item counts when playing moves on from it to a later one by itself. A seek (`next`, `prev`, `seek`, an A-B
/// loop's jump back) counts none of the items it passes over or leaves, nor the item it lands in when it lands past
/// that item's start. An ayah whose file could not be had is not heard. The item the plan ends on counts when the
/// play finishes. Pauses and the basmala are not needed.
///
/// Pure: the session feeds it events in order and writes the `hifz-heard` events it gives back.
public struct HifzListening: Sendable {
    public let plan: PlaybackPlan
    /// The kind of each of the plan's parts.
    public let kinds: [HifzPart]
    public let day: HifzDay
    var heardItems: [Bool]
    var current: Int?
    /// The item `current` was entered past its start.
    var currentBroken = false
    /// Items passed by playing on, not yet counted: a seek right after the item event takes them back.
    var pending: Range<Int>?
    var failed: Set<AyahRef> = []
    /// How many ayat of each part were last reported heard.
    var reported: [Int]

    public init(plan: PlaybackPlan, kinds: [HifzPart], day: HifzDay) {
        precondition(plan.parts.count == kinds.count, "one kind for each part")
        self.plan = plan
        self.kinds = kinds
        self.day = day
        heardItems = [Bool](repeating: false, count: plan.items.count)
        reported = [Int](repeating: 0, count: kinds.count)
    }

    /// What a part heard, to record.
    public struct Heard: Sendable, Hashable {
        public let part: HifzPart
        /// Global numbers, in mushaf order.
        public let ayat: [Int]
    }

    /// Takes one player event; gives back the parts that playing has now left with more heard than reported.
    public mutating func on(_ event: PlayerEvent) -> [Heard] {
        switch event {
        case .item(let index, _):
            let reports = commit()
            if let current, index > current {
                pending = (currentBroken ? current + 1 : current)..<index
            }
            current = index
            currentBroken = false
            return reports
        case .position(let position):
            if position.reason == .seek {
                pending = nil
                if position.offsetSamples > 0 { currentBroken = true }
                return []
            }
            let reports = commit()
            // Playback ended with the item being heard heard to its end (the plan's end, or a `--stop-after`
            // boundary).
            if position.reason == .end, let current, !currentBroken, current < heardItems.count { heardItems[current] = true }
            return reports
        case .error(_, let ayah):
            if let ayah { failed.insert(ayah) }
            return commit()
        case .end(let state, _):
            _ = commit()
            if case .finished = state, let current, current == plan.items.count - 1, !currentBroken { heardItems[current] = true }
            return finish()
        default:
            return commit()
        }
    }

    /// Every part with more heard than reported (at the end of a play, however it ended).
    public mutating func finish() -> [Heard] {
        _ = commit()
        return reports(before: plan.items.count + 1)
    }

    /// Counts the items passed by playing on (no seek came after them), and reports the parts playing has left.
    mutating func commit() -> [Heard] {
        guard let range = pending else { return [] }
        for index in range where index >= 0 && index < heardItems.count { heardItems[index] = true }
        pending = nil
        return reports(before: current ?? 0)
    }

    /// Reports for the parts that end at or before `index`.
    mutating func reports(before index: Int) -> [Heard] {
        var result: [Heard] = []
        for (number, part) in plan.parts.enumerated() where part.items.upperBound <= index || index > plan.items.count {
            let ayat = heardAyat(of: number)
            guard ayat.count > reported[number] else { continue }
            reported[number] = ayat.count
            result.append(Heard(part: kinds[number], ayat: ayat))
        }
        return result
    }

    /// The ayat of part `number` every recitation of which was heard.
    public func heardAyat(of number: Int) -> [Int] {
        let part = plan.parts[number]
        var complete: [AyahRef: Bool] = [:]
        for index in part.items where plan.items[index].kind == .ayah {
            let ayah = plan.items[index].ayah
            complete[ayah] = (complete[ayah] ?? true) && heardItems[index] && !failed.contains(ayah)
        }
        return complete.filter(\.value).map(\.key.global).sorted()
    }
}
