extension PlaybackMachine {
    // MARK: - Engine events

    /// Takes a report from the engine. An ended machine takes no more (nothing happens).
    public mutating func on(_ event: EngineEvent) -> [Action] {
        var actions: [Action] = []
        if case .ended = phase { return actions }
        switch event {
        case .fileReady(let ayah, let samples, let rate):
            files[ayah] = .ready
            if let samples, let rate { measure(ayah, samples: samples, rate: rate) }
        case .lengthsEstimated(let lengths):
            sizeEstimates.merge(lengths) { _, new in new }
            estimate(lengths)
        case .lengthsKnown(let lengths):
            for (file, length) in lengths.sorted(by: { $0.key < $1.key }) { measure(file, samples: length.samples, rate: length.rate) }
            placeTimesAgain(&actions)
            if case .ended = phase { return actions }
        case .fileDownloading(let ayah):
            if files[ayah] == nil { files[ayah] = .downloading }
        case .fileFailed(let ayah, let reason):
            files[ayah] = .failed(reason)
        case .fileDropped(let ayah):
            if files[ayah] == .ready { files[ayah] = nil }
            wanted = []  // ask again
        case .openedFileGone(let ayah):
            if files[ayah] == .ready { files[ayah] = nil }
            wanted = []  // ask again
            if case .playing(let listener, var writing) = phase, writing.step == .open, plan.items[writing.head.index].file == ayah {
                writing.step = .idle
                phase = .playing(listener, writing)
            }
        case .wrote(let frames, let unplayed):
            wrote(frames, unplayed: unplayed, &actions)
            return actions
        case .heard(let unplayed):
            if case .playing(var listener, var writing) = phase {
                hear(unplayed: unplayed, writtenNow: 0, &listener, &writing, &actions)
                phase = .playing(listener, writing)
            }
            return actions
        case .sourceEnded:
            sourceEnded(&actions)
        case .openFailed(let reason), .decodeFailed(let reason):
            // The file is bad: this item and any other that plays it are skipped (by `pump`, which says so).
            if case .playing(let listener, var writing) = phase, writing.step == .open {
                if let file = plan.items[writing.head.index].file { files[file] = .failed(reason) }
                writing.step = .idle
                phase = .playing(listener, writing)
            }
        case .drained:
            drained(&actions)
            return actions
        case .outputFailed(let message):
            switch phase {
            case .playing(let listener, _), .paused(let listener): fail(message, listener, &actions)
            case .ended: break
            }
            return actions
        }
        // Nothing open: what is here now may let the head move on.
        if case .playing(let listener, let writing) = phase, writing.step.isClosed { pump(listener, writing, &actions) }
        return actions
    }

    /// A start or loop placed on estimated lengths (`timesOnEstimates`) is placed again once its surah's lengths
    /// are known: the start while no sound has been written (after that the listener has moved on), the loop
    /// while it is on (and playback goes to its start when nothing was written yet). A time past the surah's
    /// real end ends playback with the message a usage error would have given.
    private mutating func placeTimesAgain(_ actions: inout [Action]) {
        let listener: Listener
        switch phase {
        case .playing(let playing, _), .paused(let playing): listener = playing
        case .ended: return
        }
        guard let span = heardSurahSpan else { return }
        if let start = timesOnEstimates.start {
            if listener.soundWritten {
                timesOnEstimates.start = nil
            } else if !awaitsLengths(span) {
                timesOnEstimates.start = nil
                do throws(TartilError) {
                    let position = try target(of: start)
                    move(to: position, recording: false, &actions)
                    startedInside(position)
                } catch {
                    fail(error, listener, &actions)
                    return
                }
            }
        }
        if let request = timesOnEstimates.loop, !awaitsLengths(span) {
            timesOnEstimates.loop = nil
            guard case .on(let old) = looping else { return }
            do throws(TartilError) {
                var loop = try resolve(request)
                loop.passesLeft = old.passesLeft
                looping = .on(loop)
                if !listener.soundWritten {
                    move(to: loop.start, recording: false, &actions)
                    startedInside(loop.start)
                }
            } catch {
                fail(error, listener, &actions)
            }
        }
    }

    /// A start placed again inside an ayah's group counts as its journal entry, as `start(at:)` counts one: the
    /// listener's first record is where they stop or move, not the group's start they never heard.
    private mutating func startedInside(_ position: PlanPosition) {
        guard position.offset > 0 else { return }
        switch phase {
        case .playing(var listener, let writing):
            listener.journaled = group(at: position.index)
            phase = .playing(listener, writing)
        case .paused(var listener):
            listener.journaled = group(at: position.index)
            phase = .paused(listener)
        case .ended:
            break
        }
    }

    /// `frames` of the open item were written: the head moves on, and the listener with what the device played.
    private mutating func wrote(_ frames: Int, unplayed: Int, _ actions: inout [Action]) {
        guard case .playing(var listener, var writing) = phase, writing.step == .open else { return }
        let start = writing.head.offset
        writing.head.offset += frames
        if frames > 0 {
            writing.written.append(index: writing.head.index, start: start, frames: frames)
            countForTimer(frames, at: writing.head.index)
            listener.soundWritten = true
        }
        hear(unplayed: unplayed, writtenNow: frames, &listener, &writing, &actions)
        prepareNext(&writing, &actions)
        phase = .playing(listener, writing)
    }

    /// The open item has no more frames: its length is what it decoded to, and the head moves on (back to A at
    /// an A-B loop's end), or the sleep timer ran out.
    private mutating func sourceEnded(_ actions: inout [Action]) {
        guard case .playing(let listener, var writing) = phase, writing.step == .open else { return }
        let index = writing.head.index
        var cutByLoop = false
        if case .on(let loop) = looping, loop.endIndex == index, let end = loop.endOffset, loop.passesLeft != 1 {
            cutByLoop = writing.head.offset >= end
        }
        let cutByTimer = sleepTimer?.framesLeft == 0
        if !cutByLoop && !cutByTimer {
            // The decode is the truth: a file longer or shorter than its table says gets its real length.
            let length = timeline.lengths[index]
            if writing.head.offset != length.samples || length.isEstimated {
                setLength(Timeline.Length(samples: writing.head.offset, rate: length.rate), of: index)
            }
        }
        writing.lastWritten = index
        if cutByTimer {
            // The device plays out what it holds (the end of the fade), then playback stops.
            writing.step = .draining(.sleepTimer)
            actions.append(.drainOutput)
        } else {
            writing.step = .idle
            writing.head = advance(past: index)
        }
        phase = .playing(listener, writing)
    }

    /// The device played everything it held: the end of the plan (or of the stop), or the sleep timer's.
    private mutating func drained(_ actions: inout [Action]) {
        guard case .playing(var listener, let writing) = phase, case .draining(let drain) = writing.step else { return }
        switch drain {
        case .sleepTimer:
            // Recorded where the fade began, so that resuming replays what was faded.
            let at = writing.written.position(before: fadeFrames(at: min(writing.head.index, plan.items.count - 1))) ?? writing.head
            actions.append(.record(record(at: at, .stop)))
            tell(.stopped, &actions)
            actions.append(.end(.stopped, message: "stopped by the sleep timer"))
            phase = .ended(.stopped, heard: at)
        case .end:
            // Everything written was heard: the listener is at the end of what was written.
            if let end = writing.written.position(before: 0) { listener.heard = end }
            finish(listener, writing, &actions)
        }
    }

    // MARK: - Where the listener is

    /// The write head less what the device holds (`unplayed`, which only shrinks but for the `writtenNow` frames
    /// just written: the listener never goes back); announces the item reached and records the start of a group
    /// entered.
    private mutating func hear(
        unplayed: Int, writtenNow: Int, _ listener: inout Listener, _ writing: inout Writing, _ actions: inout [Action]
    ) {
        writing.unheard = max(0, min(unplayed, writing.unheard + writtenNow))
        if writing.written.total > writing.unheard { listener.soundHeard = true }
        if let position = writing.written.position(before: writing.unheard) {
            listener.heard = settle(position, writing, passingTheOpenItem: false)
        }
        announce(&listener, &actions)
        recordGroupEntered(&listener, writing, &actions)
    }

    /// Where a listener at `position` is: at the very end of an item that was written to its end, at the start of
    /// what follows (the head, or past the open item with `passingTheOpenItem`: a pause or a stop, which would pass
    /// over it anyway); the end of the plan (or of the stop) stays where it is.
    mutating func settle(_ position: PlanPosition, _ writing: Writing, passingTheOpenItem: Bool) -> PlanPosition {
        guard position.index < plan.items.count, position.offset >= timeline.lengths[position.index].samples else { return position }
        let next: PlanPosition
        if writing.step == .open && writing.head.index == position.index {
            // It may have more frames than its table says: only a pause or a stop passes over them.
            guard passingTheOpenItem else { return position }
            next = advance(past: position.index)
        } else {
            next = writing.head
        }
        return next.index < endIndex ? next : position
    }

    /// Tells the item being heard when it changed.
    func announce(_ listener: inout Listener, _ actions: inout [Action]) {
        let index = listener.heard.index
        guard index < plan.items.count, index != listener.announced else { return }
        listener.announced = index
        actions.append(.notify(.item(index)))
    }

    /// Once sound was written, entering another ayah's group by playing records its start (a seek, a pause or a
    /// start inside a group records itself instead; a review records nothing: the journal keeps the new ayah).
    /// Entered where what is heard began inside the group (the piece of `writing` it is in: a loop's jump back to
    /// an A inside an ayah), it records that place, not the group's start: the listener did not hear what comes
    /// before it.
    private func recordGroupEntered(_ listener: inout Listener, _ writing: Writing, _ actions: inout [Action]) {
        let index = listener.heard.index
        guard listener.soundHeard, index < plan.items.count, listener.journaled?.contains(index) != true,
            plan.items[index].reviewOf == nil
        else { return }
        let group = plan.group(containing: index)
        var place = PlanPosition(index: group.lowerBound)
        if let entry = writing.written.pieceStart(before: writing.unheard), group.contains(entry.index), entry.index <= index {
            place = entry
        }
        record(place, .ayahStart, &listener, &actions)
    }

    // MARK: - Moving on

    /// Decides what comes next at the head when nothing is open, and keeps the phase it leads to: opens a file
    /// whose bytes are here, or silence once a format is known; passes over failed files (reporting them) and
    /// empty items; waits (buffering while downloading) for a file that is not here; drains at the end.
    mutating func pump(_ listener: Listener, _ writing: Writing, _ actions: inout [Action]) {
        var writing = writing
        // Loops can bring the head back to items already passed over: after a whole lap with nothing playable,
        // nothing will be.
        var steps = 0
        while writing.head.index < endIndex && steps <= plan.items.count + 1 {
            steps += 1
            let index = writing.head.index
            let item = plan.items[index]
            let length = timeline.lengths[index].samples
            if length == 0 || writing.head.offset >= length {
                // Nothing of it to write: an empty item, or one heard to its end before a pause.
                if length > 0 || writing.lastWritten == index - 1 { writing.lastWritten = index }
                writing.head = advance(past: index)
                continue
            }
            if let file = item.file {
                switch files[file] {
                case .ready?:
                    open(listener, writing, &actions)
                case .failed(let reason)?:
                    guard skip(item, reason: reason, listener, &writing, &actions) else { return }
                    continue
                case .downloading?:
                    wait(for: file, downloading: true, listener, writing, &actions)
                case nil:
                    wait(for: file, downloading: false, listener, writing, &actions)  // being read from the cache
                }
                return
            }
            // Silence: the engine needs a format, which only a file gives.
            if engineHasFormat {
                open(listener, writing, &actions)
                return
            }
            var ahead = index
            let window = filesAhead(from: index)
            var looked = 0
            while looked < plan.items.count, let next = nextFileItem(after: ahead), let file = plan.items[next].file, window.contains(file) {
                looked += 1
                switch files[file] {
                case .ready?:
                    actions.append(.prepare(next))
                    writing.prepared = next
                    engineHasFormat = true
                    open(listener, writing, &actions)
                    return
                case .downloading?:
                    wait(for: file, downloading: true, listener, writing, &actions)
                    return
                case nil:
                    wait(for: file, downloading: false, listener, writing, &actions)
                    return
                case .failed?:
                    ahead = next
                }
            }
            // No file fetched ahead can play (this silence follows ayat that could not be had): pass it over.
            writing.head = following(index)
        }
        if writing.head.index < endIndex {
            // A loop with nothing in it that can play.
            fail(Self.skippedMessage(skipped, basmala: skippedBasmala, files: plan.files) ?? "nothing in the loop could be played", listener, &actions)
            return
        }
        want(from: writing.head.index, &actions)
        // The end: play out what the device holds.
        if listener.soundWritten {
            writing.step = .draining(.end)
            actions.append(.drainOutput)
            phase = .playing(listener, writing)
        } else {
            finish(listener, writing, &actions)
        }
    }

    /// The first item not played: the stop boundary (`--stop-after`), else the end of the plan.
    var endIndex: Int { boundary?.firstItemNotPlayed ?? plan.items.count }

    /// Where the write head goes once item `index` is written: back to A at an A-B loop's end (a pass fewer;
    /// past B after its last pass, which clears the loop), else `following`.
    private mutating func advance(past index: Int) -> PlanPosition {
        guard case .on(var loop) = looping, loop.endIndex == index else { return following(index) }
        if loop.passesLeft == 1 {
            looping = .off  // its last pass went through B
            return following(index)
        }
        loop.passesLeft = loop.passesLeft.map { $0 - 1 }
        looping = .on(loop)
        return loop.start
    }

    /// Where the write head goes after item `index`: back to the start of its ayah's recitations when each ayah
    /// repeats for ever; the stop boundary; back to the start of the plan when the range repeats for ever; else
    /// the next item. (An A-B loop's end is taken before this.)
    private func following(_ index: Int) -> PlanPosition {
        if plan.options.repeatEach == .forever && plan.items[index].reviewOf == nil {
            let group = plan.group(containing: index)
            if index == group.upperBound - 1, let first = group.first(where: { plan.items[$0].kind == .ayah }) {
                return PlanPosition(index: first)
            }
        }
        let next = index + 1
        if next == stopBoundary { return PlanPosition(index: next) }
        if next == plan.items.count && plan.options.repeatRange == .forever { return PlanPosition(index: 0) }
        return PlanPosition(index: next)
    }

    /// The next item with a file that the write head reaches after item `index`, through loops (nil at the end).
    private func nextFileItem(after index: Int) -> Int? {
        var position = PlanPosition(index: index)
        if case .on(let loop) = looping, loop.endIndex == index, loop.passesLeft != 1 {
            position = loop.start
            if plan.items[position.index].file != nil { return position.index }
        }
        for _ in 0...plan.items.count {
            position = following(position.index)
            guard position.index < endIndex else { return nil }
            if plan.items[position.index].file != nil { return position.index }
        }
        return nil
    }

    /// The files wanted with the write head at item `index`: its file and those of the next `queueAhead` items
    /// with a file, in the order they play (through loops), without repeats.
    private func filesAhead(from index: Int) -> [AyahRef] {
        guard index < endIndex else { return [] }
        var files: [AyahRef] = []
        var fileItems = 0
        if let file = plan.items[index].file {
            files.append(file)
            fileItems = 1
        }
        var at = index
        while fileItems <= PlaybackPlan.queueAhead, let next = nextFileItem(after: at) {
            fileItems += 1
            if let file = plan.items[next].file, !files.contains(file) { files.append(file) }
            at = next
        }
        return files
    }

    /// Opens the item at the head.
    private mutating func open(_ listener: Listener, _ writing: Writing, _ actions: inout [Action]) {
        var writing = writing
        writing.step = .open
        if plan.items[writing.head.index].file != nil {
            engineHasFormat = true
            writing.prepared = nil  // the engine hands over to the prepared decoder, or opens afresh
        }
        tell(.playing, &actions)
        want(from: writing.head.index, &actions)
        actions.append(.open(writing.head))
        phase = .playing(listener, writing)
    }

    /// Waits for `file` (the head's, or the next one's to give silence a format).
    private mutating func wait(for file: AyahRef, downloading: Bool, _ listener: Listener, _ writing: Writing, _ actions: inout [Action]) {
        var writing = writing
        writing.step = .waiting(for: file, downloading: downloading)
        want(from: writing.head.index, &actions)
        if downloading { tell(.buffering, buffering: file, &actions) }
        phase = .playing(listener, writing)
    }

    /// Reports an item that cannot play and moves the head past it; false when that ended playback (`stopOnSkip`).
    private mutating func skip(_ item: PlanItem, reason: String, _ listener: Listener, _ writing: inout Writing, _ actions: inout [Action]) -> Bool {
        if item.kind == .basmala {
            if !skippedBasmala.contains(where: { $0.ayah == item.ayah }) { skippedBasmala.append((item.ayah, reason)) }
            actions.append(.notify(.skippedBasmala(item.ayah, reason: reason)))
        } else {
            if !skipped.contains(where: { $0.ayah == item.ayah }) { skipped.append((item.ayah, reason)) }
            actions.append(.notify(.skipped(item.ayah, reason: reason)))
        }
        if stopOnSkip {
            let what = item.kind == .basmala ? Self.basmalaName(of: [item.ayah.surah], files: plan.files) : "\(item)"
            fail("\(what) cannot be played: \(reason)", listener, &actions)
            return false
        }
        let index = writing.head.index
        writing.head = following(index)
        if writing.head.index <= index && plan.options.repeatEach == .forever && item.reviewOf == nil {
            // An ayah repeated for ever would come back to this file: on to the next ayah instead.
            let next = plan.group(containing: index).upperBound
            writing.head = PlanPosition(index: next == plan.items.count && plan.options.repeatRange == .forever ? 0 : next)
        }
        return true
    }

    /// Opens the next file ahead once the current item is being written, so one runs into the next.
    private func prepareNext(_ writing: inout Writing, _ actions: inout [Action]) {
        guard writing.prepared == nil, writing.step == .open, let next = nextFileItem(after: writing.head.index),
            let file = plan.items[next].file, files[file] == .ready
        else { return }
        writing.prepared = next
        actions.append(.prepare(next))
    }

    /// The files wanted now: those of item `index` (the head's) and the next ones ahead.
    mutating func want(from index: Int, _ actions: inout [Action]) {
        let files = filesAhead(from: index).filter { file in
            if case .failed? = self.files[file] { return false }
            return true
        }
        guard files != wanted else { return }
        wanted = files
        actions.append(.want(files))
    }

    // MARK: - Ending

    /// Everything was played out: finished when the plan's last item was heard to its end, stopped at the end
    /// of `--stop-after`, else failed (the rest could not be had).
    private mutating func finish(_ listener: Listener, _ writing: Writing, _ actions: inout [Action]) {
        if let boundary, boundary.firstItemNotPlayed < plan.items.count, writing.lastWritten == boundary.firstItemNotPlayed - 1 {
            // `--stop-after` a number of ayat, a surah or a juz: the last of them was heard to its end.
            let last = boundary.firstItemNotPlayed - 1
            let end = PlanPosition(index: last, offset: timeline.lengths[last].samples)
            actions.append(.record(record(at: end, .end)))
            tell(.stopped, &actions)
            actions.append(.end(.stopped, message: "stopped after \(boundary.stop)"))
            phase = .ended(.stopped, heard: end)
        } else if !plan.items.isEmpty, writing.lastWritten == plan.items.count - 1 {
            actions.append(.record(record(at: timeline.end, .end)))
            tell(.finished, &actions)
            actions.append(.end(.finished, message: nil))
            phase = .ended(.finished, heard: timeline.end)
        } else {
            fail(Self.skippedMessage(skipped, basmala: skippedBasmala, files: plan.files) ?? "nothing could be played", listener, &actions)
        }
    }

    /// Ends playback failed, recording where the listener stopped hearing (nothing when no sound was written).
    private mutating func fail(_ message: String, isUsage: Bool = false, _ listener: Listener, _ actions: inout [Action]) {
        if listener.soundHeard { actions.append(.record(record(at: listener.heard, .stop))) }
        tell(.failed, &actions)
        actions.append(.end(.failed, message: message))
        phase = .ended(.failed(message: message, isUsage: isUsage), heard: listener.heard)
    }

    /// Ends playback on `error`; a usage error stays one (`endIsUsage`).
    private mutating func fail(_ error: TartilError, _ listener: Listener, _ actions: inout [Action]) {
        fail(error.message, isUsage: error.code == .usage, listener, &actions)
    }

    /// Tells the listener what they have not been told yet: a new state, or buffering for another file.
    mutating func tell(_ state: State, buffering file: AyahRef? = nil, _ actions: inout [Action]) {
        if let file, file != told.buffering { actions.append(.notify(.buffering(file))) }
        told.buffering = file
        guard state != told.state else { return }
        told.state = state
        actions.append(.notify(.state(state)))
    }
}
