import TartilAudio
import TartilCore
import TartilSystem

/// The player's audio thread: owns the playback machine, the decoders and the output. It feeds the machine the
/// commands and what happened (files arriving, chunks written, the device drained) and carries out its actions
/// between chunks; it decides nothing itself. Files arrive as verified bytes through the mailbox, and events
/// leave through the event queue, so nothing here waits on the disk, the network or a reader; the only blocking
/// call is the output's write, which is what paces playback.
final class AudioThread {
    private let channels: Player.Channels
    private let clock: any TartilClock
    private var machine: PlaybackMachine
    private let output: any AudioOutput
    /// The decoder playing, and one holding the next file open for a gapless hand-over.
    private var decoder: Mpg123Decoder
    private var spare: Mpg123Decoder
    /// The plan item `spare` holds open, if any.
    private var preparedIndex: Int?

    /// What the open item is read from: a file (with the samples left of its window, for a part of a surah's
    /// file; nil: to its end), or silence.
    private enum Source {
        case file(remaining: Int?)
        case silence(remaining: Int)
    }
    private var source: Source?
    private var format: PCMFormat?
    private var draining = false
    /// True once libsonic's tail was written during the current drain.
    private var tailFlushed = false
    private var ended = false
    /// What the machine has been told of each file, and the mailbox's files version it was told from.
    private var told: [AyahRef: Told] = [:]
    /// The estimated and the known lengths the machine has been told.
    private var toldEstimates = 0
    private var toldKnown = 0
    private var seenFilesVersion = -1
    private var bufferingAyah: AyahRef?
    /// The surah the loader is learning (from the mailbox, for the status).
    private var learningSurah: Int?
    /// Files another tartil process is downloading (`Channels.Mailbox.heldElsewhere`), for the status.
    private var heldElsewhere: Set<AyahRef> = []
    private var writtenFrames = 0
    /// Whether the first PCM handed to the output was traced (`StartTrace`); true from the start when the trace is off.
    private var firstSampleTraced = !StartTrace.isOn
    /// Speed and volume between the decoder and the output, and what the device holds at which speed.
    private let stages = SoundStages()
    private var ledger = SpeedLedger()
    /// Set once the start's actions are carried out: changes of speed and volume after it are events.
    private var started = false
    private let chunkFrames: Int
    private let buffer: UnsafeMutableRawBufferPointer

    private enum Told { case ready, downloading, failed }

    init(
        channels: Player.Channels, machine: PlaybackMachine, output: any AudioOutput, decoders: (Mpg123Decoder, Mpg123Decoder),
        clock: any TartilClock
    ) {
        self.channels = channels
        self.clock = clock
        self.machine = machine
        self.output = output
        (decoder, spare) = decoders
        // A device is fed in small chunks (23 ms at 22050 Hz) so commands act at once and the published position
        // is fresh; files and `null` in large ones.
        chunkFrames = output.isPaced ? 512 : 16384
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * 4, alignment: 16)
    }

    deinit { buffer.deallocate() }

    func run(_ startActions: [PlaybackMachine.Action]) {
        execute(startActions)
        started = true
        while !ended {
            takeCommands()
            if ended { break }
            tellFiles()
            if ended { break }
            if draining {
                do {
                    if !tailFlushed {
                        try write(try stages.flush())  // libsonic's tail, before the device drains
                        tailFlushed = true
                    }
                    // An output that keeps time by the clock is waited for here, where a command can come between
                    // (a seek during the last ayah's drain plays on); one that blocks waits in `finish`.
                    if let drained = output.drainedAt, clock.now < drained {
                        waitForCommands(until: drained)
                        continue
                    }
                    draining = false
                    tailFlushed = false
                    try output.finish()  // waits until the device has played everything
                    execute(machine.on(.drained))
                } catch {
                    draining = false
                    execute(machine.on(.outputFailed("\(error)")))
                }
            } else if source != nil && machine.state == .playing {
                // The same for a chunk the output has no room for yet: commands are taken while it waits.
                if let ready = output.readyForWriting(chunkFrames), clock.now < ready {
                    waitForCommands(until: ready)
                    continue
                }
                playChunk()
            } else {
                // Nothing to write: wait for a command or a file.
                let seen = seenFilesVersion
                channels.mailbox.wait(until: { !$0.commands.isEmpty || $0.filesVersion != seen }, timeout: 0.5) { _, _ in }
            }
        }
        flushEvents()
        channels.mailbox.update { $0.audioEnded = true }
        channels.closeEvents()
    }

    /// Waits until `deadline` on the player's clock, or until a command or a file arrives.
    private func waitForCommands(until deadline: ClockInstant) {
        let seen = seenFilesVersion
        channels.mailbox.wait(until: { !$0.commands.isEmpty || $0.filesVersion != seen }, deadline: deadline, clock: clock) { _, _ in }
    }

    // MARK: - Feeding the machine

    private func takeCommands() {
        guard !channels.mailbox.read({ $0.commands.isEmpty }) else { return }
        let commands = channels.mailbox.update { box in
            defer { box.commands.removeAll() }
            return box.commands
        }
        for (ticket, command) in commands {
            var refusal: TartilError?
            if !ended {
                execute(machine.on(.heard(unplayed: unplayedFrames)))
                do {
                    execute(try machine.on(command))
                } catch {
                    refusal = error
                }
            }
            if !ended { publishStatus() }  // a command that changed only settings emits no action
            let effect = channels.published.withLock { $0 }
            channels.mailbox.update { box in
                if let refusal { box.refusals[ticket] = refusal }
                box.effects[ticket] = effect
                box.commandsDone = ticket
            }
        }
    }

    /// Tells the machine what changed in the mailbox's files since it was last told.
    private func tellFiles() {
        guard channels.mailbox.read({ $0.filesVersion != seenFilesVersion }) else { return }
        let (files, version, estimates, known, learning, held) = channels.mailbox.read { box in
            (box.files.mapValues { state -> (Told, (samples: Int, rate: Int)?, String?) in
                switch state {
                case .ready(_, let measured, _): (.ready, measured, nil)
                case .downloading: (.downloading, nil, nil)
                case .failed(let reason): (.failed, nil, reason)
                }
            }, box.filesVersion, box.estimates.count == toldEstimates ? [:] : box.estimates,
             box.knownLengths.count == toldKnown ? [:] : box.knownLengths, box.learningSurah, box.heldElsewhere)
        }
        seenFilesVersion = version
        if learning != learningSurah || held != heldElsewhere {
            learningSurah = learning
            heldElsewhere = held
            publishStatus()
        }
        if !estimates.isEmpty {
            toldEstimates = estimates.count
            execute(machine.on(.lengthsEstimated(estimates)))
            if ended { return }
            publishStatus()
        }
        if !known.isEmpty {
            toldKnown = known.count
            execute(machine.on(.lengthsKnown(known)))
            if ended { return }
            publishStatus()
        }
        for (ayah, (kind, measured, reason)) in files.sorted(by: { $0.key < $1.key }) where told[ayah] != kind {
            told[ayah] = kind
            switch kind {
            case .ready: execute(machine.on(.fileReady(ayah, samples: measured?.samples, rate: measured?.rate)))
            case .downloading: execute(machine.on(.fileDownloading(ayah)))
            case .failed: execute(machine.on(.fileFailed(ayah, reason: reason ?? "failed")))
            }
            if ended { return }
        }
        // Files the loader let go of (no longer wanted) are no longer here.
        for ayah in told.keys where files[ayah] == nil {
            told[ayah] = nil
            execute(machine.on(.fileDropped(ayah)))
        }
    }

    // MARK: - Carrying out actions

    /// Events waiting for the status to be published: a reader that acts on an event (a script that asks for
    /// `status` on `state playing`) then sees the status that event announced.
    private var outbox: [PlayerEvent] = []

    private func emit(_ event: PlayerEvent) { outbox.append(event) }

    /// Hands the waiting events to the event thread (after `publishStatus`).
    private func flushEvents() {
        for event in outbox { channels.emit(event) }
        outbox.removeAll()
    }

    private func execute(_ actions: [PlaybackMachine.Action]) {
        defer { flushEvents() }
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .want(let files):
                channels.mailbox.update { box in
                    box.wanted = files
                    box.wantedVersion += 1
                }
            case .open(let position):
                open(position)
            case .prepare(let index):
                prepare(index)
            case .discardOutput:
                output.discard()
                ledger.clear()
                do { try stages.discard() } catch { execute(machine.on(.outputFailed("\(error)"))) }
                source = nil
                preparedIndex = nil
                draining = false  // a seek during the last item's drain plays on: the output must stay open
                tailFlushed = false
            case .drainOutput:
                draining = true
            case .setSpeed(let speed):
                let before = stages.speed
                do { try write(try stages.setSpeed(speed), at: before) } catch { execute(machine.on(.outputFailed("\(error)"))) }
                if started && speed != before { emit(.speed(speed)) }
            case .setVolume(let volume):
                if started && volume != stages.volume { emit(.volume(volume)) }
                stages.volume = volume
            case .record(let record):
                emit(.position(PlaybackPosition(
                    reciter: channels.reciter, ayah: record.ayah, offsetSamples: record.offsetSamples, sampleRate: record.rate,
                    reason: record.reason)))
            case .notify(let notice):
                switch notice {
                case .state(let state):
                    if state != .buffering { bufferingAyah = nil }
                    emit(.state(state))
                case .item(let index):
                    emit(.item(index: index, machine.plan.items[index]))
                case .buffering(let ayah):
                    bufferingAyah = ayah
                    emit(.buffering(ayah))
                case .skipped(let ayah, let reason):
                    emit(.error(message: "skipped \(ayah): \(reason)", ayah: ayah))
                case .skippedBasmala(let ayah, let reason):
                    emit(.error(message: PlaybackMachine.skippedBasmalaLine(before: ayah, reason: reason, files: machine.plan.files), ayah: ayah))
                }
            case .end(let state, let message):
                ended = true
                source = nil
                if state != .finished { output.abandon() }
                publishStatus()
                emit(.end(state, message: message))
            }
        }
        if !ended { publishStatus() }
    }

    /// Opens item `position.index` at `position.offset`: its file (the prepared decoder when it is that one, for
    /// the gapless hand-over), or silence.
    private func open(_ position: PlanPosition) {
        let item = machine.plan.items[position.index]
        guard let file = item.file else {
            if format == nil {
                execute(machine.on(.outputFailed("silence before any file: no format to write it in")))
                return
            }
            source = .silence(remaining: machine.timeline.lengths[position.index].samples - position.offset)
            return
        }
        guard case .ready(let bytes, _, let window)? = channels.mailbox.read({ $0.files[file] }) else {
            told[file] = nil
            execute(machine.on(.openedFileGone(file)))
            return
        }
        do {
            if preparedIndex == position.index && position.offset == 0 {
                swap(&decoder, &spare)  // opened at its window's start
            } else {
                try decoder.open(bytes: bytes, name: "\(file.fileStem).mp3")
                if let window, window.skip > 0 { try decoder.skip(frames: window.skip) }
            }
            preparedIndex = nil
            if position.offset > 0 { try decoder.skip(frames: position.offset) }
        } catch {
            preparedIndex = nil
            source = nil
            execute(machine.on(.openFailed(reason: "\(file.fileStem).mp3 does not decode: \(error)")))
            return
        }
        do {
            try adopt(decoder.format)
        } catch {
            execute(machine.on(.outputFailed("\(error)")))
            return
        }
        source = .file(remaining: window.map { max(0, $0.count - position.offset) })
    }

    /// Opens item `index`'s file in the spare decoder; before any file has played, its format is the output's.
    private func prepare(_ index: Int) {
        guard let file = machine.plan.items[index].file, case .ready(let bytes, _, let window)? = channels.mailbox.read({ $0.files[file] })
        else {
            return
        }
        do {
            try spare.open(bytes: bytes, name: "\(file.fileStem).mp3")
            if let window, window.skip > 0 { try spare.skip(frames: window.skip) }
            preparedIndex = index
            if format == nil { try adopt(spare.format) }
        } catch {
            preparedIndex = nil  // reported when it becomes the open item
        }
    }

    /// Configures the output for the file's format when it differs from the last.
    private func adopt(_ newFormat: PCMFormat) throws {
        guard newFormat != format else { return }
        try write(try stages.flush())  // what libsonic holds is in the old format
        // A clock-paced output plays the old format out first, as a sound card's drain does; the wait ends early
        // when a command comes (a stop or a seek need not hear the old tail).
        if let drained = output.drainedAt, clock.now < drained {
            channels.mailbox.wait(until: { !$0.commands.isEmpty }, deadline: drained, clock: clock) { _, _ in }
        }
        try stages.configure(newFormat)
        try output.configure(newFormat)
        format = newFormat
    }

    // MARK: - Playing

    private func playChunk() {
        guard let source, let format else { return }
        // Fewer frames at an A-B loop's end or when the sleep timer runs out; none: the item ends here.
        let allowed = machine.allowance(chunkFrames)
        if allowed == 0 {
            self.source = nil
            execute(machine.on(.sourceEnded))
            return
        }
        var frames = 0
        switch source {
        case .silence(let remaining):
            frames = min(remaining, allowed)
            if frames > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[..<(frames * format.frameBytes)]).initializeMemory(as: UInt8.self, repeating: 0)
                self.source = .silence(remaining: remaining - frames)
            }
        case .file(let remaining):
            do {
                let capacity = min(buffer.count / format.frameBytes, allowed, remaining ?? Int.max) * format.frameBytes
                frames = capacity == 0 ? 0 : try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<capacity])) / format.frameBytes
                if let remaining { self.source = .file(remaining: remaining - frames) }
            } catch {
                // The machine skips the ayah (and says so) and goes on with the next item.
                self.source = nil
                let file = machine.plan.items[machine.head.index].file.map { "\($0.fileStem).mp3" } ?? "the file"
                execute(machine.on(.decodeFailed(reason: "\(file) stopped decoding: \(error)")))
                return
            }
        }
        if frames == 0 {
            self.source = nil
            execute(machine.on(.sourceEnded))
            return
        }
        if let fade = machine.fade { Self.apply(fade, to: buffer, frames: frames, channels: format.channels) }
        do {
            try write(try stages.process(UnsafeRawBufferPointer(rebasing: buffer[..<(frames * format.frameBytes)])))
        } catch {
            self.source = nil
            execute(machine.on(.outputFailed("\(error)")))
            return
        }
        execute(machine.on(.wrote(frames: frames, unplayed: unplayedFrames)))
        if !ended { publishStatus() }  // the position moved on, whether or not the machine had anything to do
    }

    /// Writes processed PCM, noting the speed it was stretched to.
    private func write(_ pcm: UnsafeRawBufferPointer, at speed: Double? = nil) throws {
        guard pcm.count > 0, let format else { return }
        try output.write(pcm)
        if !firstSampleTraced {
            firstSampleTraced = true
            StartTrace.mark("first-sample")
        }
        writtenFrames += pcm.count / format.frameBytes
        ledger.wrote(pcm.count / format.frameBytes, at: speed ?? stages.speed)
    }

    /// What has been decoded but not heard, in the recording's frames: what the device holds (converted at the
    /// speeds it was written at) and what libsonic holds.
    private var unplayedFrames: Int {
        ledger.recordingFrames(unplayed: output.unplayedFrames) + stages.heldFrames
    }

    /// The sleep timer's fade-out: each frame's samples scaled by its gain (signed 16-bit, rounded to nearest).
    static func apply(_ fade: PlaybackMachine.Fade, to buffer: UnsafeMutableRawBufferPointer, frames: Int, channels: Int) {
        guard fade.framesLeft - frames < fade.fadeFrames else { return }  // the fade has not begun in this chunk
        let samples = buffer.bindMemory(to: Int16.self)
        for frame in 0..<frames {
            let gain = fade.gain(at: frame)
            guard gain < 1 else { continue }
            for channel in 0..<channels {
                let index = frame * channels + channel
                samples[index] = Int16((Float(samples[index]) * gain).rounded())
            }
        }
    }

    // MARK: - Publishing

    /// The status `status` reads: the machine's, with how it moves on by itself while sound flows (to the end of the
    /// item heard, and no further than what was written). A snapshot a little behind one a reader may already have
    /// extrapolated (the device's clock and the system's differ by a little) keeps the extrapolated position, so the
    /// position never moves back while sound flows.
    private func publishStatus() {
        var status = Self.status(
            of: machine, reciter: channels.reciter, bufferingAyah: bufferingAyah, writtenFrames: writtenFrames,
            writtenSeconds: writtenSeconds)
        status.learningSurah = learningSurah
        status.bufferingHeldElsewhere = bufferingAyah.map(heldElsewhere.contains) == true ? true : nil
        status.endIsUsage = machine.endIsUsage ? true : nil
        let now = clock.now
        if output.isPaced && machine.state == .playing && (source != nil || draining), machine.heard.index < machine.plan.items.count {
            let timeline = machine.timeline
            let heard = machine.heard
            let spanStart = timeline.sample(at: PlanPosition(index: machine.plan.surahSpan(containing: heard.index).lowerBound))
            let itemEnd = timeline.sample(at: PlanPosition(index: heard.index, offset: timeline.lengths[heard.index].samples))
            let written = machine.head.index < machine.plan.items.count && machine.head >= heard ? timeline.sample(at: machine.head) : itemEnd
            status.motion = PlayerStatus.Motion(since: now, limitSamples: min(itemEnd, written) - spanStart)
        }
        channels.published.withLock { previous in
            let extrapolated = previous.at(now)
            let tolerance = status.sampleRate / 20  // 50 ms
            if status.motion != nil, extrapolated.motion != nil, extrapolated.index == status.index,
                extrapolated.cycle == status.cycle, extrapolated.positionSamples > status.positionSamples,
                extrapolated.positionSamples - status.positionSamples <= tolerance
            {
                status.positionSamples = extrapolated.positionSamples
                status.positionSeconds = extrapolated.positionSeconds
            }
            previous = status
        }
    }

    /// The machine's state and the scrubber over the heard item's surah.
    static func status(
        of machine: PlaybackMachine, reciter: ReciterID, bufferingAyah: AyahRef?, writtenFrames: Int, writtenSeconds: Double
    ) -> PlayerStatus {
        let plan = machine.plan
        let timeline = machine.timeline
        let heard = machine.heard
        let index = min(heard.index, plan.items.count)
        let span = plan.items.isEmpty ? 0..<0 : plan.surahSpan(containing: min(index, plan.items.count - 1))
        let spanStart = PlanPosition(index: span.lowerBound)
        var ticks: [Double] = []
        var item = span.lowerBound
        while item < span.upperBound {
            ticks.append(timeline.startSeconds[item] - timeline.startSeconds[span.lowerBound])
            item = plan.group(containing: item).upperBound
        }
        let position = min(heard, PlanPosition(index: span.upperBound))
        let skipped = Dictionary(machine.skipped.map { ($0.ayah, $0.reason) }, uniquingKeysWith: { first, _ in first })
        return PlayerStatus(
            state: machine.state, reciter: reciter, index: index, item: index < plan.items.count ? plan.items[index] : nil,
            itemCount: plan.items.count, surah: span.isEmpty ? 0 : plan.items[span.lowerBound].ayah.surah,
            positionSeconds: timeline.seconds(at: position) - timeline.seconds(at: spanStart),
            positionSamples: timeline.sample(at: position) - timeline.sample(at: spanStart),
            durationSeconds: timeline.seconds(in: span), durationSamples: timeline.samples(in: span),
            sampleRate: plan.items.isEmpty ? 0 : timeline.lengths[min(index, plan.items.count - 1)].rate,
            isEstimated: timeline.isEstimated(in: span), ayahStarts: ticks,
            bufferingAyah: machine.state == .buffering ? bufferingAyah : nil, skipped: skipped,
            totalSamples: timeline.totalSamples, writtenFrames: writtenFrames, writtenSeconds: writtenSeconds,
            endMessage: machine.endMessage, options: plan.options,
            cycle: index < plan.items.count ? plan.items[index].cycle : plan.items.last?.cycle ?? 1,
            loop: machine.loop.map { loop in
                let end = PlanPosition(index: loop.endIndex, offset: loop.endOffset ?? timeline.lengths[loop.endIndex].samples)
                return LoopSpan(
                    startSeconds: timeline.seconds(at: loop.start) - timeline.seconds(at: spanStart),
                    endSeconds: timeline.seconds(at: end) - timeline.seconds(at: spanStart), passesLeft: loop.passesLeft)
            },
            loopMarkSeconds: machine.loopMark.map { timeline.seconds(at: $0) - timeline.seconds(at: spanStart) },
            stopAfter: machine.stopAfter, sleepSecondsLeft: machine.sleepSecondsLeft,
            speed: machine.speed, volume: machine.volume, maximumSpeed: machine.maximumSpeed, hasNext: machine.hasNext,
            skippedBasmala: Dictionary(machine.skippedBasmala.map { ($0.ayah, $0.reason) }, uniquingKeysWith: { first, _ in first }))
    }

    /// How long what was written lasts (what `render` wrote).
    private var writtenSeconds: Double { format.map { Double(writtenFrames) / Double($0.sampleRate) } ?? 0 }
}

@available(*, unavailable) extension AudioThread: Sendable {}
