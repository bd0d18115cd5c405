extension PlaybackMachine {
    // MARK: - Commands

    /// Carries out a command; a usage error when it cannot be, and then nothing changed. An ended machine takes
    /// no more commands (nothing happens).
    public mutating func on(_ command: Command) throws(TartilError) -> [Action] {
        guard let writer = writesFile else { return try carryOut(command) }
        let before = self
        let actions = try carryOut(command)
        if let reason = endlessReason(), before.endlessReason() == nil {
            self = before
            throw .usage("\(writer) writes a file, which must end: \(reason)")
        }
        return actions
    }

    /// Why playback as it is now would never end (`PlaybackOptions.endlessReason`), or nil.
    func endlessReason() -> String? {
        var endlessLoop: String?
        if case .on(let loop) = looping, loop.passesLeft == nil { endlessLoop = "'loop A B 5', or --loop 'A-B 5'" }
        return plan.options.endlessReason(endlessLoop: endlessLoop, timer: sleepTimer != nil, stopAfter: sleepTimer != nil || boundary != nil)
    }

    private mutating func carryOut(_ command: Command) throws(TartilError) -> [Action] {
        var actions: [Action] = []
        if case .ended = phase { return actions }
        switch command {
        case .pause:
            pause(&actions)
        case .resume:
            resume(&actions)
        case .toggle:
            if case .paused = phase { resume(&actions) } else { pause(&actions) }
        case .stop, .quit:
            stop(command == .quit ? .quit : .stop, &actions)
        case .seek(let seek):
            move(to: try target(of: seek), &actions)
        case .setSpeed(let new):
            speed = try PlaybackSpeed.checked(new, maximum: maximumSpeed, for: "speed")
            actions.append(.setSpeed(speed))
        case .setVolume(let change):
            volume = try change.applied(to: volume)
            actions.append(.setVolume(volume))
        case .next:
            guard !plan.items.isEmpty else { throw .usage("nothing is playing") }
            let group = plan.group(containing: min(heard.index, plan.items.count - 1))
            guard hasNext else {
                throw .usage("\(plan.items[group.lowerBound].ayah) is the last ayah of what is playing (\(plan.rangeDescription))")
            }
            move(to: PlanPosition(index: group.upperBound), &actions)
        case .previous:
            guard !plan.items.isEmpty else { throw .usage("nothing is playing") }
            let index = min(heard.index, plan.items.count - 1)
            let groupStart = plan.group(containing: index).lowerBound
            let into = timeline.seconds(at: heard) - timeline.startSeconds[groupStart]
            let target = into > PlaybackPlan.restartThresholdSeconds || groupStart == 0
                ? groupStart : plan.group(containing: groupStart - 1).lowerBound
            move(to: PlanPosition(index: target), &actions)
        case .set(let setting):
            guard !plan.optionsFixed else {
                throw .usage("set: this plan plays its parts each with its own options (a hifz session: change them with 'tartil hifz plan')")
            }
            let options = plan.options.with(setting)
            guard options != plan.options else { return actions }
            replan(try PlaybackPlan(ayat: plan.ayat, options: options, files: plan.files), &actions)
        case .loop(let request):
            guard let request else {
                looping = .off
                return actions
            }
            let newLoop: Loop
            if request.hasTimes, let span = heardSurahSpan, awaitsLengths(span) {
                // Placed on estimates for now (the whole surah when they are too short), and again when known.
                newLoop = (try? resolve(request))
                    ?? Loop(start: PlanPosition(index: span.lowerBound), endIndex: span.upperBound - 1, endOffset: nil, passesLeft: request.passes)
                timesOnEstimates.loop = request
            } else {
                newLoop = try resolve(request)
                timesOnEstimates.loop = nil
            }
            looping = .on(newLoop)
            move(to: newLoop.start, &actions)
        case .markLoop:
            switch looping {
            case .on:
                looping = .off
            case .marked(let mark):
                guard heard > mark else {
                    throw .usage("the loop's end must come after its start: mark A, let it play, then mark B (loop off clears A)")
                }
                let newLoop = heard.offset == 0
                    ? Loop(start: mark, endIndex: heard.index - 1, endOffset: nil, passesLeft: nil)
                    : Loop(start: mark, endIndex: heard.index, endOffset: heard.offset, passesLeft: nil)
                looping = .on(newLoop)
                move(to: mark, &actions)
            case .off:
                looping = .marked(heard)
            }
        case .stopAfter(let stop):
            switch stop {
            case .seconds(let seconds)?:
                setTimer(seconds, &actions)
            case nil:
                setTimer(nil, &actions)
                setStopAfter(nil, &actions)
            default:
                setStopAfter(stop, &actions)
            }
        case .sleep(let seconds):
            setTimer(seconds, &actions)
        }
        return actions
    }

    // MARK: - Pause, resume, stop, move

    /// Pauses where the listener is: the device's sound is dropped and `resume` starts on the very sample. Inside
    /// the sleep timer's fade, the pause goes back to where the fade began (and the timer to what it was there),
    /// so that resuming plays the fade again from full volume; at the very end of an item, it is the start of what
    /// follows.
    private mutating func pause(_ actions: inout [Action]) {
        guard case .playing(var listener, let writing) = phase else { return }
        if let (fadeStart, framesBack) = fadeHeard(writing) {
            listener.heard = fadeStart
            sleepTimer?.counted -= framesBack
        } else {
            listener.heard = settle(listener.heard, writing, passingTheOpenItem: true)
            giveBack(writing.unheard, at: writing.head.index)
        }
        actions.append(.discardOutput)
        tell(.paused, &actions)
        record(listener.heard, .pause, &listener, &actions)
        phase = .paused(listener)
    }

    /// Plays on from the pause (told once sound is written, or a download is awaited).
    private mutating func resume(_ actions: inout [Action]) {
        guard case .paused(let listener) = phase else { return }
        pump(listener, Writing(head: listener.heard), &actions)
    }

    /// Ends playback where the listener is (at the very end of an item: the start of what follows).
    private mutating func stop(_ reason: Reason, _ actions: inout [Action]) {
        var position = heard
        if case .playing(_, let writing) = phase { position = settle(position, writing, passingTheOpenItem: true) }
        actions.append(.record(record(at: position, reason)))
        actions.append(.discardOutput)
        tell(.stopped, &actions)
        actions.append(.end(.stopped, message: nil))
        phase = .ended(.stopped, heard: position)
    }

    /// Moves the listener to `position`: paused, the pause moves there; playing, the device's sound is dropped
    /// and playback opens there. `recording` the new position as a seek (not when only the layout changed).
    mutating func move(to position: PlanPosition, recording: Bool = true, _ actions: inout [Action]) {
        if case .on(let loop) = looping, !loop.contains(position) { looping = .off }
        switch phase {
        case .ended:
            return
        case .paused(var listener):
            listener.heard = position
            if recording { record(position, .seek, &listener, &actions) }
            phase = .paused(listener)
            want(from: position.index, &actions)  // fetch there while paused, so resume starts at once
        case .playing(var listener, let writing):
            giveBack(writing.unheard, at: writing.head.index)
            actions.append(.discardOutput)
            listener.heard = position
            announce(&listener, &actions)
            if recording { record(position, .seek, &listener, &actions) }
            pump(listener, Writing(head: position), &actions)
        }
    }

    /// Records `position` for `reason`: the journal then places the listener in its group.
    func record(_ position: PlanPosition, _ reason: Reason, _ listener: inout Listener, _ actions: inout [Action]) {
        actions.append(.record(record(at: position, reason)))
        listener.journaled = group(at: position.index)
    }

    /// The group of item `index`, nil past the end.
    func group(at index: Int) -> Range<Int>? {
        index < plan.items.count ? plan.group(containing: index) : nil
    }

    // MARK: - Memorisation controls

    /// Lays the plan out again with other options, keeping the listener on the same ayah (the same repetition and
    /// the same place in it where the new plan has them). Known lengths carry over, and so do size estimates (still
    /// marked as estimates); an A-B loop is cleared.
    private mutating func replan(_ newPlan: PlaybackPlan, _ actions: inout [Action]) {
        let mapped = Self.map(heard, from: plan, to: newPlan)
        var known: [AyahRef: Timeline.Length] = [:]
        for (index, item) in plan.items.enumerated() {
            if let file = item.file, known[file] == nil, !timeline.lengths[index].isEstimated { known[file] = timeline.lengths[index] }
        }
        plan = newPlan
        // Measured lengths carry over as they are, size estimates as estimates; the rest gets the mean again.
        timeline = Self.timeline(for: newPlan) { file in
            known[file] ?? sizeEstimates[file].map { Timeline.Length(samples: $0.samples, rate: $0.rate, isEstimated: true) }
        }
        looping = .off
        let position = PlanPosition(
            index: mapped.index,
            offset: mapped.index < plan.items.count ? min(mapped.offset, max(0, timeline.lengths[mapped.index].samples - 1)) : 0)
        if let stop = boundary?.stop {
            let first = plan.items.isEmpty ? 0 : boundary(of: stop, from: min(position.index, plan.items.count - 1))
            boundary = Boundary(stop: stop, firstItemNotPlayed: first)
        }
        // The listener stays on the same ayah: what the journal has of it holds in the new layout.
        let group = group(at: position.index)
        switch phase {
        case .playing(var listener, let writing):
            listener.announced = nil
            listener.journaled = listener.journaled == nil ? nil : group
            phase = .playing(listener, writing)
        case .paused(var listener):
            listener.announced = nil
            listener.journaled = listener.journaled == nil ? nil : group
            phase = .paused(listener)
        case .ended:
            break
        }
        move(to: position, recording: false, &actions)
    }

    /// Where `position` in `old` is in `new`, laid out from the same ayat: the same ayah in the same cycle (and
    /// stepped review), the same repetition when the new plan has it, the same offset into a recitation.
    static func map(_ position: PlanPosition, from old: PlaybackPlan, to new: PlaybackPlan) -> PlanPosition {
        guard position.index < old.items.count, !new.items.isEmpty else { return PlanPosition(index: new.items.count) }
        let item = old.items[position.index]
        let cycle = min(item.cycle, new.items.last!.cycle)
        let groupStart = new.items.firstIndex { $0.ayah == item.ayah && $0.cycle == cycle && $0.reviewOf == item.reviewOf && !$0.isPause }
            ?? new.items.firstIndex { $0.ayah == item.memorised && $0.cycle == cycle && $0.reviewOf == nil && !$0.isPause }
            ?? new.firstItem(of: item.memorised)
        guard let groupStart else { return PlanPosition(index: 0) }
        let group = new.group(containing: groupStart)
        let recitations = group.filter { new.items[$0].kind == .ayah }
        let repetition = min(item.repetition, recitations.count)
        let recitation = recitations.first { new.items[$0].repetition == repetition } ?? group.lowerBound
        switch item.kind {
        case .ayah:
            return PlanPosition(index: recitation, offset: position.offset)
        case .basmala:
            if new.items[group.lowerBound].kind == .basmala { return PlanPosition(index: group.lowerBound, offset: position.offset) }
            return PlanPosition(index: recitation)
        case .pause:
            return PlanPosition(index: recitation + 1)  // its pause in the new layout, or what follows the recitation
        case .cyclePause:
            return PlanPosition(index: group.upperBound)
        }
    }

    /// Where a loop request lands in the plan; a usage error when an end is not in it or B is not after A.
    func resolve(_ request: LoopRequest) throws(TartilError) -> Loop {
        guard !plan.items.isEmpty else { throw .usage("nothing is playing") }
        let first = try place(request.start, asEnd: false)
        let start = PlanPosition(index: first.index, offset: first.offset ?? 0)
        let end = try place(request.end, asEnd: true)
        let endPosition = PlanPosition(index: end.index, offset: end.offset ?? timeline.lengths[end.index].samples)
        guard start < endPosition else {
            throw .usage("the loop's end (\(request.end)) must come after its start (\(request.start))")
        }
        return Loop(start: start, endIndex: end.index, endOffset: end.offset, passesLeft: request.passes)
    }

    /// A loop point as a plan position (as A) or as the end of an item or an offset into one (as B).
    private func place(_ point: LoopPoint, asEnd: Bool) throws(TartilError) -> (index: Int, offset: Int?) {
        let near = min(heard.index, plan.items.count - 1)
        switch point {
        case .time(let seconds):
            let span = plan.surahSpan(containing: near)
            let length = timeline.seconds(in: span)
            guard seconds <= length else {
                throw .usage("\(Self.clock(seconds)) is past the end of what is playing of surah \(plan.items[span.lowerBound].ayah.surah), which lasts \(Self.clock(length))")
            }
            guard let position = timeline.position(atSeconds: seconds, from: span.lowerBound), position.index < span.upperBound else {
                return asEnd ? (span.upperBound - 1, nil) : (span.upperBound - 1, max(0, timeline.lengths[span.upperBound - 1].samples - 1))
            }
            if asEnd && position.offset == 0 && position.index > 0 { return (position.index - 1, nil) }
            return (position.index, position.offset)
        case .ayah(let ayah, let offset):
            guard let first = plan.firstItem(of: ayah, near: near) else {
                throw .usage("\(ayah) is not in what is playing (\(plan.rangeDescription))")
            }
            let group = plan.group(containing: first)
            guard let offset else { return asEnd ? (group.upperBound - 1, nil) : (group.lowerBound, 0) }
            let recitation = group.first { plan.items[$0].kind == .ayah } ?? first
            let length = timeline.lengths[recitation]
            let frames = Int((offset * Double(length.rate)).rounded())
            guard frames < length.samples else {
                throw .usage("\(ayah)+\(NumberText.format(offset)) is past the end of \(ayah), which lasts \(Self.clock(length.seconds))")
            }
            if asEnd && frames == 0 { return recitation > 0 ? (recitation - 1, nil) : (0, 0) }
            return (recitation, frames)
        }
    }

    /// Sets (from now) or cancels the sleep timer. When the old one had run out (its fade playing out before the
    /// stop), playback goes on from what is heard.
    private mutating func setTimer(_ seconds: Double?, _ actions: inout [Action]) {
        sleepTimer = nil
        if let seconds, !plan.items.isEmpty {
            let rate = timeline.lengths[min(heard.index, plan.items.count - 1)].rate
            sleepTimer = SleepTimer(frames: max(1, Int((seconds * Double(rate)).rounded())), rate: rate)
        }
        guard case .playing(let listener, let writing) = phase, writing.step == .draining(.sleepTimer) else { return }
        actions.append(.discardOutput)
        pump(listener, Writing(head: listener.heard), &actions)
    }

    /// Sets or cancels the boundary: the end of the ayat, surah or juz heard now.
    private mutating func setStopAfter(_ stop: StopAfter?, _ actions: inout [Action]) {
        guard let stop else {
            boundary = nil
            return
        }
        let first = plan.items.isEmpty ? 0 : boundary(of: stop, from: min(heard.index, plan.items.count - 1))
        boundary = Boundary(stop: stop, firstItemNotPlayed: first)
        // The engine may already have written past it (what the device holds): write again from what is heard.
        guard case .playing(let listener, let writing) = phase, writing.head.index >= first, listener.heard.index < first else { return }
        giveBack(writing.unheard, at: writing.head.index)
        actions.append(.discardOutput)
        pump(listener, Writing(head: listener.heard), &actions)
    }

    /// The first item after the stop `stop` names, from item `index`.
    private func boundary(of stop: StopAfter, from index: Int) -> Int {
        let items = plan.items
        switch stop {
        case .seconds: return items.count
        case .ayat(let count):
            let last = items[index].group + count - 1
            return items[index...].firstIndex { $0.group > last } ?? items.count
        case .surah:
            return plan.surahSpan(containing: index).upperBound
        case .juz:
            let (juz, cycle) = (Catalog.juz(containing: items[index].ayah), items[index].cycle)
            return items[index...].firstIndex { $0.cycle != cycle || Catalog.juz(containing: $0.ayah) != juz } ?? items.count
        }
    }

    // MARK: - The sleep timer and the loop's end

    /// How many frames of the open item the engine may write next, at most `chunk`: fewer at an A-B loop's end
    /// or when the sleep timer runs out. 0 means the item ends here: the engine reports `.sourceEnded`.
    public func allowance(_ chunk: Int) -> Int {
        guard case .playing(_, let writing) = phase, writing.step == .open, writing.head.index < plan.items.count else { return chunk }
        var frames = chunk
        if case .on(let loop) = looping, loop.endIndex == writing.head.index, let end = loop.endOffset, loop.passesLeft != 1 {
            frames = min(frames, max(0, end - writing.head.offset))
        }
        if let left = sleepFramesLeft { frames = min(frames, left) }
        return frames
    }

    /// The sleep timer's fade over the next frames, when it is set.
    public var fade: Fade? {
        guard let left = sleepFramesLeft, head.index < plan.items.count else { return nil }
        return Fade(framesLeft: left, fadeFrames: fadeFrames(at: head.index))
    }

    /// The fade's length in the recording's frames at item `index`'s rate and the speed.
    func fadeFrames(at index: Int) -> Int {
        Int((StopAfter.fadeSeconds * Double(timeline.lengths[index].rate) * speed).rounded())
    }

    /// The sleep timer's frames left, in the recording's frames at the rate of the item at the write head.
    private var sleepFramesLeft: Int? {
        guard let sleepTimer else { return nil }
        let rate = head.index < plan.items.count ? timeline.lengths[head.index].rate : sleepTimer.rate
        return Self.frames(sleepTimer.framesLeft, from: sleepTimer.rate, to: rate, speed: speed)
    }

    /// `frames × to / from × speed`, rounded: listening frames at the timer's rate as recording frames at an
    /// item's rate played at `speed` (and back, with the rates swapped and `1 / speed`).
    static func frames(_ frames: Int, from: Int, to: Int, speed: Double) -> Int {
        if from == to && speed == 1 { return frames }
        return Int((Double(frames) * Double(to) / Double(from) * speed).rounded())
    }

    /// Counts `frames` just written of item `index` against the sleep timer.
    mutating func countForTimer(_ frames: Int, at index: Int) {
        guard let timer = sleepTimer else { return }
        sleepTimer?.counted += Self.frames(frames, from: timeline.lengths[index].rate, to: timer.rate, speed: 1 / speed)
    }

    /// Gives the sleep timer back the `unheard` frames the device held and will not play (they were dropped):
    /// the timer counts listening.
    private mutating func giveBack(_ unheard: Int, at index: Int) {
        guard let timer = sleepTimer, unheard > 0, index < plan.items.count else { return }
        let frames = Self.frames(unheard, from: timeline.lengths[index].rate, to: timer.rate, speed: 1 / speed)
        sleepTimer?.counted = max(0, timer.counted - frames)
    }

    /// Where the sleep timer's fade began and how many of the timer's frames were counted since, when the listener
    /// is inside the fade (nil before it, or without a timer).
    private func fadeHeard(_ writing: Writing) -> (PlanPosition, Int)? {
        guard let timer = sleepTimer, writing.head.index < plan.items.count else { return nil }
        let fade = Int((StopAfter.fadeSeconds * Double(timer.rate)).rounded())
        guard timer.framesLeft < fade else { return nil }
        let since = min(fade - timer.framesLeft, timer.counted)  // a timer shorter than the fade fades from its start
        let written = Self.frames(since, from: timer.rate, to: timeline.lengths[writing.head.index].rate, speed: speed)
        guard writing.unheard < written, let start = writing.written.position(before: written) else { return nil }
        return (start, since)
    }
}
