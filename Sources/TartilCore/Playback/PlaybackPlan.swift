/// One thing the player plays, in order: an ayah's recitation, the basmala before a surah, or a pause.
public struct PlanItem: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable, Codable {
        /// The ayah's own recitation.
        case ayah
        /// The basmala before ayah 1 of a surah, recited from the reciter's file for 1:1 (`PlayFiles.basmala`), or
        /// for a reciter of one file per surah from that surah's own recording (`AyahRef.basmalaPart(ofSurah:)`).
        case basmala
        /// Silence after a recitation, for memorisation (`--pause`): `round(seconds × rate)` frames at the rate of
        /// the recitation it follows, or `round(K × its frames)` for a multiple.
        case pause(PauseLength)
        /// Silence between two cycles of the range (`--cycle-pause`), at the rate of the recitation before it.
        case cyclePause(seconds: Double)
    }

    public let kind: Kind
    /// The ayah this item belongs to: the one recited, the one the basmala introduces (ayah 1 of its surah),
    /// or the one the pause follows.
    public let ayah: AyahRef
    /// Which repetition of the ayah this is (1 when `--repeat` is not used).
    public let repetition: Int
    /// The *group* this item belongs to, counted from 1: one run of an ayah with its basmala, repeats and pauses.
    /// `next` and `prev` move by groups.
    public let group: Int
    /// Which cycle of the range (`--repeat-range`) this is, from 1.
    public let cycle: Int
    /// With `--stepped`, the new ayah of the step this item reviews; nil for a new ayah (and without `--stepped`).
    public let reviewOf: AyahRef?
    /// How the reciter's recordings are cut into files: where a basmala is recited from.
    public let files: FileLayout

    public init(
        kind: Kind, ayah: AyahRef, repetition: Int = 1, group: Int = 1, cycle: Int = 1, reviewOf: AyahRef? = nil, files: FileLayout = .ayah
    ) {
        self.kind = kind
        self.ayah = ayah
        self.repetition = repetition
        self.group = group
        self.cycle = cycle
        self.reviewOf = reviewOf
        self.files = files
    }

    /// The file to decode: the ayah's own; for a basmala 1:1 (one file per ayah) or the basmala part of the
    /// surah's own recording (one file per surah); none for a pause.
    public var file: AyahRef? {
        switch kind {
        case .ayah: ayah
        case .basmala: PlayFiles.basmala(ofSurah: ayah.surah, files: files)
        case .pause, .cyclePause: nil
        }
    }

    /// True for the silences (`--pause`, `--cycle-pause`).
    public var isPause: Bool { file == nil }

    /// The ayah the journal records for this item: the one recited, or with `--stepped` during a review, the new
    /// ayah being memorised.
    public var memorised: AyahRef { reviewOf ?? ayah }

    public var description: String {
        let review = reviewOf.map { " (review for \($0))" } ?? ""
        return switch kind {
        case .ayah: (repetition > 1 ? "\(ayah) (×\(repetition))" : "\(ayah)") + review
        case .basmala: "basmala before \(ayah)" + review
        case .pause(let length): "pause \(length) after \(ayah)"
        case .cyclePause(let seconds): "pause \(NumberText.format(seconds)) s after cycle \(cycle)"
        }
    }
}

/// What plays, in what order: the requested ayat laid out as items. Where playback is, and what is fetched
/// ahead, is the playback machine's (`PlaybackMachine`).
///
/// ```swift
/// let plan = try PlaybackPlan(ayat: Array(try AyahRange(AyahRef(112, 1), AyahRef(112, 4))), options: .init())
/// plan.items.first                        // basmala before 112:1
/// plan.group(containing: 1)               // 0..<2: 112:1 with its basmala
/// ```
/// Layout, for each cycle of the range (`--repeat-range`, with `--cycle-pause` between cycles): each ayah in the
/// order requested (or the steps of `--stepped`), as a group: its basmala before ayah 1 of a surah, then its
/// recitation `--repeat` times, each followed by its `--pause`. `next` and `prev` move by groups. The scrubber
/// spans the items of the current surah in the current cycle (`surahSpan`). A count of `inf` is laid out once:
/// the playback machine loops over it.
public struct PlaybackPlan: Sendable, Hashable {
    /// Items with a file fetched ahead of the one being written (whose file is always wanted too).
    public static let queueAhead = 3
    /// `prev` restarts the current ayah when playback is further into it than this; otherwise it goes back one.
    public static let restartThresholdSeconds = 1.5
    /// The most items a plan may have: a million (a whole Qur'an of 6236 ayat repeated 99 times is 617,364
    /// recitations). Larger plans are refused; `inf` loops without laying anything out.
    public static let maximumItems = 1_000_000

    /// The ayat asked for, in order.
    public let ayat: [AyahRef]
    public let options: PlaybackOptions
    public let items: [PlanItem]
    /// How the reciter's recordings are cut into files (`PlanItem.files`).
    public let files: FileLayout

    /// One run of ayat laid out with its own options: a plan has one, a hifz session one per part (sabaq, sabqi,
    /// manzil), played in order.
    public struct Part: Sendable, Hashable {
        public let ayat: [AyahRef]
        public let options: PlaybackOptions
        /// The first item of the part and the end of its items, in the plan.
        public let items: Range<Int>

        public init(ayat: [AyahRef], options: PlaybackOptions, items: Range<Int> = 0..<0) {
            self.ayat = ayat
            self.options = options
            self.items = items
        }
    }

    /// The parts, in order (one for a plan laid out from one set of options).
    public let parts: [Part]
    /// True when each part's options are fixed (a hifz session's come from its plan): `set` is refused.
    public let optionsFixed: Bool

    /// Lays out `ayat` with `options` for a reciter whose recordings are cut into `files`; a usage error when that
    /// would be more than `maximumItems` items.
    public init(ayat: [AyahRef], options: PlaybackOptions, files: FileLayout = .ayah) throws(TartilError) {
        try self.init(parts: [Part(ayat: ayat, options: options)], files: files)
    }

    /// Lays out each part with its own options, one after the other (groups counted on across parts, cycles within
    /// each); `ayat` is every part's ayat in order and `options` the first part's. Changing the options while it
    /// plays (`set`) is for a plan of one part whose options are not `fixed`.
    public init(parts: [Part], files: FileLayout = .ayah, fixed: Bool = false) throws(TartilError) {
        self.files = files
        optionsFixed = fixed || parts.count > 1
        var items: [PlanItem] = []
        var group = 0
        var laid: [Part] = []
        for part in parts {
            let first = items.count
            try Self.layOut(part.ayat, options: part.options, files: files, group: &group, into: &items)
            laid.append(Part(ayat: part.ayat, options: part.options, items: first..<items.count))
        }
        self.parts = laid
        self.ayat = parts.flatMap(\.ayat)
        self.options = parts.first?.options ?? PlaybackOptions()
        self.items = items
    }

    /// The same parts laid out for recordings cut into `files`.
    public func laidOut(for files: FileLayout) throws(TartilError) -> PlaybackPlan {
        try PlaybackPlan(parts: parts, files: files, fixed: optionsFixed)
    }

    /// The part item `index` belongs to.
    public func part(containing index: Int) -> Int? { parts.firstIndex { $0.items.contains(index) } }

    /// Appends the items of `ayat` laid out with `options` to `items`, numbering groups on from `group`.
    static func layOut(
        _ ayat: [AyahRef], options: PlaybackOptions, files: FileLayout, group: inout Int, into items: inout [PlanItem]
    ) throws(TartilError) {
        let each = options.repeatEach.count ?? 1
        let cycles = options.repeatRange.count ?? 1
        let pauses = !options.pause.isNone
        var tooLong = false
        for cycle in 1...cycles {
            if cycle > 1 && options.cyclePauseSeconds > 0, let last = items.last {
                items.append(PlanItem(kind: .cyclePause(seconds: options.cyclePauseSeconds), ayah: last.ayah, group: group, cycle: cycle - 1, files: files))
            }
            Self.forEachRecitation(of: ayat, stepped: options.stepped) { ayah, reviewOf in
                group += 1
                if PlayFiles.hasBasmala(before: ayah, options.basmala) {
                    items.append(PlanItem(kind: .basmala, ayah: ayah, group: group, cycle: cycle, reviewOf: reviewOf, files: files))
                }
                for repetition in 1...(reviewOf == nil ? each : 1) {
                    items.append(PlanItem(kind: .ayah, ayah: ayah, repetition: repetition, group: group, cycle: cycle, reviewOf: reviewOf, files: files))
                    if pauses {
                        items.append(PlanItem(kind: .pause(options.pause), ayah: ayah, repetition: repetition, group: group, cycle: cycle, reviewOf: reviewOf, files: files))
                    }
                }
                tooLong = items.count > Self.maximumItems
                return !tooLong
            }
            if tooLong { break }
        }
        if options.repeatRange == .forever && options.cyclePauseSeconds > 0, let last = items.last {
            items.append(PlanItem(kind: .cyclePause(seconds: options.cyclePauseSeconds), ayah: last.ayah, group: group, cycle: 1, files: files))
        }
        if tooLong {
            throw .usage("""
                that is too much to lay out: more than \(Self.maximumItems) recitations and pauses \
                (\(Plural.count(ayat.count, "ayah"))\(options.summary.isEmpty ? "" : " with " + options.summary)); \
                use fewer repeats, a --stepped window, or inf
                """)
        }
    }

    /// Calls `body` with each recitation of the requested ayat in order, and the new ayah a stepped review is
    /// for (nil for a new ayah); stops when `body` returns false.
    static func forEachRecitation(of ayat: [AyahRef], stepped: Stepped?, _ body: (AyahRef, AyahRef?) -> Bool) {
        guard let stepped else {
            for ayah in ayat where !body(ayah, nil) { return }
            return
        }
        for (index, ayah) in ayat.enumerated() {
            guard body(ayah, nil) else { return }
            let first = stepped.window.map { max(0, index - $0 + 1) } ?? 0
            guard index - first >= 1 else { continue }
            for review in ayat[first...index] where !body(review, ayah) { return }
        }
    }

    // MARK: - Groups and spans

    /// The items of the group (one run of an ayah with its basmala, repeats and pauses) that `index` belongs to.
    public func group(containing index: Int) -> Range<Int> {
        precondition(items.indices.contains(index), "item \(index) is not in the plan")
        let group = items[index].group
        var start = index
        while start > 0 && items[start - 1].group == group { start -= 1 }
        var end = index + 1
        while end < items.count && items[end].group == group { end += 1 }
        return start..<end
    }

    /// The items of `index`'s surah in this cycle of the plan: what the scrubber spans.
    public func surahSpan(containing index: Int) -> Range<Int> {
        precondition(items.indices.contains(index), "item \(index) is not in the plan")
        let (surah, cycle) = (items[index].ayah.surah, items[index].cycle)
        var start = index
        while start > 0 && items[start - 1].ayah.surah == surah && items[start - 1].cycle == cycle { start -= 1 }
        var end = index + 1
        while end < items.count && items[end].ayah.surah == surah && items[end].cycle == cycle { end += 1 }
        return start..<end
    }

    /// The first item of `ayah`'s group (its basmala, when it has one), or nil when the plan does not play it.
    /// Near item `index`, it is the ayah's first group in `index`'s cycle that recites it as a new ayah (not a
    /// stepped review), else its first group there, else its first anywhere.
    public func firstItem(of ayah: AyahRef, near index: Int? = nil) -> Int? {
        if let index, items.indices.contains(index) {
            let cycle = items[index].cycle
            let inCycle = items.indices.filter { items[$0].cycle == cycle && items[$0].ayah == ayah && !items[$0].isPause }
            if let new = inCycle.first(where: { items[$0].reviewOf == nil }) { return group(containing: new).lowerBound }
            if let any = inCycle.first { return group(containing: any).lowerBound }
        }
        return items.firstIndex { $0.ayah == ayah && !$0.isPause }.map { group(containing: $0).lowerBound }
    }

    /// The requested ayat in play order, once each, as a range text for messages (`36:1-83`, `112:1-114:6`).
    public var rangeDescription: String {
        guard let first = ayat.first, let last = ayat.last else { return "nothing" }
        if first == last { return "\(first)" }
        return first.surah == last.surah ? "\(first)-\(last.ayah)" : "\(first)-\(last)"
    }
}
