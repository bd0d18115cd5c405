import TartilAudio
import TartilCore
import TartilJournal

/// The player's audio thread: owns the decoders and the output, runs the plan, and carries out commands between
/// chunks. Files arrive as verified bytes through the mailbox, so nothing here waits on the disk or the network;
/// the only blocking call is the output's write, which is what paces playback.
final class AudioThread {
    private unowned let player: Player
    private var plan: PlaybackPlan
    private var timeline: Timeline
    private let start: SeekTarget?
    private let resumeAt: (ayah: AyahRef, offsetSamples: Int)?
    private let output: any AudioOutput
    /// The decoder playing, and one holding the next file open for a gapless hand-over.
    private var decoder: Mpg123Decoder
    private var spare: Mpg123Decoder
    /// The plan item `spare` holds open, if any.
    private var preparedIndex: Int?

    /// What the current item is reading from.
    private enum Source {
        case file
        case silence(remaining: Int)
    }

    private var source: Source?
    /// Frames to pass over at the start of the current item (a seek into it).
    private var skipFrames = 0
    /// Frames of the current item written so far (counted from its start, skipped ones included).
    private var itemFrames = 0
    /// The write head, in samples from the start of the plan.
    private var written = 0
    private var format: PCMFormat?
    /// nil until the first state is reported (so a first wait for a file shows as buffering).
    private var state: PlayerState?
    private var heardIndex = -1
    /// Where a pause happened, to resume on the same sample.
    private var pausedAt: Int?
    private var ended = false
    private let chunkFrames: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private let stopOnSkip: Bool

    init(
        player: Player, plan: PlaybackPlan, timeline: Timeline, start: SeekTarget?,
        resumeAt: (ayah: AyahRef, offsetSamples: Int)?, output: any AudioOutput, decoders: (Mpg123Decoder, Mpg123Decoder),
        stopOnSkip: Bool
    ) {
        self.resumeAt = resumeAt
        self.stopOnSkip = stopOnSkip
        self.player = player
        self.plan = plan
        self.timeline = timeline
        self.start = start
        self.output = output
        (decoder, spare) = decoders
        // A device is fed in small chunks so commands act within a few tens of milliseconds; files and `null`
        // in large ones.
        chunkFrames = output.isPaced ? 1024 : 16384
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * 4, alignment: 16)
    }

    deinit { buffer.deallocate() }

    func run() {
        if let resumeAt, let index = plan.items.firstIndex(where: { $0.kind == .ayah && $0.ayah == resumeAt.ayah }) {
            // At the very start of an ayah, start with its group (its basmala); inside it, on the very sample.
            let target = resumeAt.offsetSamples == 0
                ? timeline.start(of: plan.group(containing: index).lowerBound)
                : timeline.start(of: index) + min(resumeAt.offsetSamples, timeline.lengths[index].samples)
            jump(toSample: target)
        } else if let start {
            seek(start)
        }
        publishWanted()
        while !ended {
            var commands: [Player.Command] = []
            if !player.mailbox.read({ $0.commands.isEmpty }) {
                commands = player.mailbox.update { box in
                    defer { box.commands.removeAll() }
                    return box.commands
                }
            }
            for command in commands where !ended { handle(command) }
            if !commands.isEmpty { player.mailbox.update { $0.commandsDone += commands.count } }
            if ended { break }
            if pausedAt != nil {
                player.mailbox.wait(until: { !$0.commands.isEmpty }) { _ in }
                continue
            }
            guard let item = plan.currentItem else {
                finish(.finished, message: nil)
                break
            }
            if source == nil && !openCurrent(item) { continue }
            playChunk()
        }
        player.mailbox.update { $0.audioEnded = true }
    }

    // MARK: - Items

    /// Opens the current item's source; false when it is not there yet (buffering) or was skipped.
    private func openCurrent(_ item: PlanItem) -> Bool {
        itemFrames = 0
        if case .pause(let milliseconds) = item.kind {
            if format == nil && !learnFormatBeforeSilence() { return false }
            let frames = milliseconds * (format?.sampleRate ?? timeline.sampleRate) / 1000
            source = .silence(remaining: max(0, frames - skipFrames))
            itemFrames = min(frames, skipFrames)
            skipFrames = 0
            setState(.playing)
            return true
        }
        guard let file = item.file else { return false }
        let fileState = player.mailbox.read { $0.files[file] }
        switch fileState {
        case nil:
            setState(.buffering, ayah: file)
            player.mailbox.wait(
                until: { $0.files[file] != nil || !$0.commands.isEmpty }, timeout: 0.5) { _, _ in }
            return false
        case .failed(let reason):
            skip(item, reason: reason)
            return false
        case .ready(let bytes, let measuredFrames):
            do {
                if preparedIndex == plan.current && skipFrames == 0 {
                    swap(&decoder, &spare)
                } else {
                    try decoder.open(bytes: bytes, name: "\(file.fileStem).mp3")
                }
                preparedIndex = nil
                do {
                    try adopt(decoder.format)
                } catch {
                    finish(.failed, message: "\(error)")
                    return false
                }
                if let measuredFrames { measure(measuredFrames) }
                if skipFrames > 0 {
                    try decoder.skip(frames: skipFrames)
                    itemFrames = skipFrames
                    skipFrames = 0
                }
            } catch {
                skip(item, reason: "\(file) does not decode: \(error)")
                return false
            }
            source = .file
            setState(.playing)
            return true
        }
    }

    /// Silence before any file has played (a plan that starts, or resumes, on a pause, or whose first ayat
    /// were skipped) needs the output's format, which only a file gives: opens the first later file that is
    /// here, as the prepared next decoder. False when the silence cannot start yet: that file is still on its
    /// way (buffering), or no file fetched ahead can play, in which case the silence is passed over (it follows
    /// ayat that could not be had, and the files after the window are not asked for until playback moves on).
    private func learnFormatBeforeSilence() -> Bool {
        var index = plan.current
        let window = plan.filesAhead()
        while let next = plan.nextFileItem(after: index), let file = plan.items[next].file, window.contains(file) {
            switch player.mailbox.read({ $0.files[file] }) {
            case nil:
                setState(.buffering, ayah: file)
                player.mailbox.wait(until: { $0.files[file] != nil || !$0.commands.isEmpty }, timeout: 0.5) { _, _ in }
                return false
            case .failed:
                index = next
            case .ready(let bytes, _):
                do {
                    try spare.open(bytes: bytes, name: "\(file.fileStem).mp3")
                    try adopt(spare.format)
                    preparedIndex = next
                    return true
                } catch {
                    index = next  // reported when it becomes the current item
                }
            }
        }
        advance()
        return false
    }

    /// Reports an item that cannot play and moves past it.
    private func skip(_ item: PlanItem, reason: String) {
        player.published.withLock { $0.skipped[item.ayah] = reason }
        if stopOnSkip {
            player.emit(.error(message: "\(item): \(reason)", ayah: item.ayah))
            finish(.failed, message: "\(item) cannot be played: \(reason)")
            return
        }
        player.emit(.error(message: "skipped \(item): \(reason)", ayah: item.ayah))
        advance()
    }

    /// An unpinned ayah's length becomes exact once its file is here. A seek made on the estimate keeps its
    /// offset into the item.
    private func measure(_ frames: Int) {
        guard timeline.lengths[plan.current].isEstimated else { return }
        timeline.setLength(Timeline.Length(samples: frames), of: plan.current)
        written = timeline.start(of: plan.current) + itemFrames
    }

    /// Configures the output for the file's format when it differs from the last.
    private func adopt(_ newFormat: PCMFormat) throws {
        guard newFormat != format else { return }
        try output.configure(newFormat)
        format = newFormat
    }

    private func advance() {
        plan.advance()
        source = nil
        skipFrames = 0
        itemFrames = 0
        written = timeline.start(of: plan.current)
        publishWanted()
    }

    // MARK: - Playing

    private func playChunk() {
        guard let source, let format else { return }
        var frames = 0
        switch source {
        case .silence(let remaining):
            frames = min(remaining, chunkFrames)
            if frames > 0 {
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[..<(frames * format.frameBytes)])
                bytes.initializeMemory(as: UInt8.self, repeating: 0)
                self.source = .silence(remaining: remaining - frames)
            }
        case .file:
            do {
                let capacity = (buffer.count / format.frameBytes) * format.frameBytes
                frames = try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<capacity])) / format.frameBytes
            } catch {
                let item = plan.currentItem!
                player.emit(.error(message: "\(item) stopped decoding: \(error)", ayah: item.ayah))
                frames = 0
            }
        }
        if frames == 0 {
            endOfItem()
            return
        }
        do {
            try output.write(UnsafeRawBufferPointer(rebasing: buffer[..<(frames * format.frameBytes)]))
        } catch {
            finish(.failed, message: "\(error)")
            return
        }
        itemFrames += frames
        written += frames
        publishPosition()
        prepareNext()
    }

    /// The current item has played to its end: its true length goes into the timeline, the next item follows.
    private func endOfItem() {
        if timeline.lengths[plan.current].samples != itemFrames {
            timeline.setLength(Timeline.Length(samples: itemFrames), of: plan.current)
        }
        advance()
    }

    /// Opens the next file item in the spare decoder once its bytes are here, so the hand-over is gapless.
    private func prepareNext() {
        guard preparedIndex == nil, let next = plan.nextFileItem(after: plan.current), let file = plan.items[next].file else { return }
        guard case .ready(let bytes, _) = player.mailbox.read({ $0.files[file] }) else { return }
        do {
            try spare.open(bytes: bytes, name: "\(file.fileStem).mp3")
            preparedIndex = next
        } catch {
            preparedIndex = nil  // reported when it becomes the current item
        }
    }

    // MARK: - Commands

    private func handle(_ command: Player.Command) {
        switch command {
        case .pause:
            pause()
        case .resume:
            resume()
        case .toggle:
            if pausedAt == nil { pause() } else { resume() }
        case .stop(let reason):
            emitPosition(at: pausedAt ?? heardPosition().sample, reason: reason)
            finish(.stopped, message: nil)
        case .next:
            let heard = heardPosition()
            var probe = plan
            probe.jump(to: heard.index)
            jump(toSample: timeline.start(of: probe.nextTarget()))
            emitPosition(at: written, reason: .seek)
        case .previous:
            let heard = heardPosition()
            var probe = plan
            probe.jump(to: heard.index)
            let groupStart = probe.isFinished ? heard.sample : timeline.start(of: probe.group(containing: heard.index).lowerBound)
            let seconds = timeline.seconds(atSample: heard.sample - groupStart)
            jump(toSample: timeline.start(of: probe.previousTarget(secondsIntoGroup: seconds)))
            emitPosition(at: written, reason: .seek)
        case .seek(let target):
            seek(target)
            emitPosition(at: pausedAt ?? written, reason: .seek)
        }
    }

    private func pause() {
        guard pausedAt == nil else { return }
        let heard = heardPosition()
        output.discard()
        pausedAt = heard.sample
        source = nil
        preparedIndex = nil
        setState(.paused)
        publishPosition(heard: heard.sample)
        emitPosition(at: heard.sample, reason: .pause)
    }

    private func resume() {
        guard let sample = pausedAt else { return }
        pausedAt = nil
        jump(toSample: sample, discard: false)
        setState(.playing)
    }

    /// Carries out a seek, relative to where playback is heard.
    private func seek(_ target: SeekTarget) {
        let heard = pausedAt.map { (index: timeline.locate($0).index, sample: $0) } ?? heardPosition()
        let index = min(heard.index, max(0, plan.items.count - 1))
        guard !plan.items.isEmpty else { return }
        let span = plan.surahSpan(containing: index)
        let spanStart = timeline.start(of: span.lowerBound)
        let spanLength = timeline.samples(in: span)
        let sample: Int
        switch target {
        case .time(let seconds):
            sample = spanStart + min(spanLength, timeline.sample(atSeconds: seconds))
        case .offset(let seconds):
            sample = max(0, min(timeline.totalSamples, heard.sample + timeline.sample(atSeconds: seconds)))
        case .fraction(let share):
            sample = spanStart + Int((share * Double(spanLength)).rounded())
        case .ayah(let ayah):
            guard let item = plan.firstItem(of: ayah) else { return }
            sample = timeline.start(of: item)
        }
        if pausedAt != nil {
            pausedAt = sample
            publishPosition(heard: sample)
        } else {
            jump(toSample: sample)
        }
    }

    /// Moves the write head to `sample` of the plan: what is buffered in the device is dropped, and the item
    /// there is opened at the right frame.
    private func jump(toSample sample: Int, discard: Bool = true) {
        if discard { output.discard() }
        let (index, offset) = timeline.locate(sample)
        plan.jump(to: index)
        source = nil
        preparedIndex = nil
        skipFrames = offset
        itemFrames = 0
        written = timeline.start(of: plan.current) + offset
        publishWanted()
        publishPosition(heard: written)
    }

    // MARK: - Publishing

    /// Where playback is heard: the write head less what the device still holds.
    private func heardPosition() -> (index: Int, sample: Int) {
        let sample = max(0, written - output.unplayedFrames)
        return (timeline.locate(sample).index, sample)
    }

    private func publishWanted() {
        let files = plan.filesAhead()
        guard player.mailbox.read({ $0.wanted != files }) else { return }
        player.mailbox.update { box in
            box.wanted = files
            box.wantedVersion += 1
        }
    }

    private func publishPosition(heard: Int? = nil) {
        let sample = heard ?? heardPosition().sample
        let index = min(timeline.locate(sample).index, plan.items.count)
        if index != heardIndex {
            heardIndex = index
            if index < plan.items.count {
                player.emit(.item(index: index, plan.items[index]))
                if plan.group(containing: index).lowerBound == index { emitPosition(at: timeline.start(of: index), reason: .ayahStart) }
            }
        }
        guard !plan.items.isEmpty else { return }
        let span = plan.surahSpan(containing: min(index, plan.items.count - 1))
        let spanStart = timeline.start(of: span.lowerBound)
        var ticks: [Int] = []
        var item = span.lowerBound
        while item < span.upperBound {
            ticks.append(timeline.start(of: item) - spanStart)
            item = plan.group(containing: item).upperBound
        }
        let duration = timeline.samples(in: span)
        let estimated = timeline.isEstimated(in: span)
        let total = timeline.totalSamples
        player.published.withLock { status in
            status.totalSamples = total
            status.index = index
            status.item = index < plan.items.count ? plan.items[index] : nil
            status.surah = plan.items[span.lowerBound].ayah.surah
            status.position = min(duration, sample - spanStart)
            status.duration = duration
            status.sampleRate = format?.sampleRate ?? timeline.sampleRate
            status.isEstimated = estimated
            status.ayahStarts = ticks
        }
    }

    /// Reports where `sample` of the plan is as a position in an ayah's recitation (the ayah's start while its
    /// basmala or a pause plays; the end of the last ayah at the end).
    private func emitPosition(at sample: Int, reason: JournalEvent.Reason) {
        guard !plan.items.isEmpty else { return }
        var (index, offset) = timeline.locate(sample)
        if index >= plan.items.count {
            index = plan.items.count - 1
            offset = timeline.lengths[index].samples
        }
        let item = plan.items[index]
        let position = PlaybackPosition(
            reciter: player.reciter, ayah: item.ayah, offsetSamples: item.kind == .ayah ? offset : 0,
            sampleRate: format?.sampleRate ?? timeline.sampleRate, reason: reason)
        player.emit(.position(position))
    }

    private func setState(_ newState: PlayerState, ayah: AyahRef? = nil) {
        guard newState != state else { return }
        state = newState
        player.published.withLock { status in
            status.state = newState
            status.bufferingAyah = newState == .buffering ? ayah : nil
        }
        if newState == .buffering, let ayah { player.emit(.buffering(ayah)) }
        player.emit(.state(newState))
    }

    private func finish(_ final: PlayerState, message: String?) {
        guard !ended else { return }
        ended = true
        var final = final
        var message = message
        if final == .finished {
            do {
                try output.finish()  // waits until the device has played everything
            } catch {
                final = .failed
                message = "\(error)"
            }
            written = timeline.totalSamples
            publishPosition(heard: written)
            emitPosition(at: written, reason: .end)
        } else {
            output.abandon()
        }
        if final == .failed, let message { player.published.withLock { $0.endMessage = message } }
        setState(final)
        player.emit(.end(final, message: message))
    }
}

@available(*, unavailable) extension AudioThread: Sendable {}
