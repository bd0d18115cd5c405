import Synchronization
import TartilAudio
import TartilCache
import TartilCore
import TartilJournal
import TartilNet

/// Plays a `PlaybackPlan`: gapless from one ayah to the next, with three ayat fetched ahead at top priority,
/// a visible "buffering" state instead of a failure when a file is late, and a sample-exact scrubber over the
/// current surah.
///
/// ```swift
/// let player = try Player(setup: setup) { event in print(event) }
/// player.seek(.time(seconds: 200))    // 3:20 into the surah
/// player.waitUntilEnded()
/// ```
///
/// Three threads of its own, none of which the caller waits on:
/// - the **audio thread** owns the decoders and the output; it decodes, writes, and carries out commands between
///   chunks. It never touches the network, the disk or a lock held for long: files reach it as verified bytes.
/// - the **loader thread** owns a `Cache`: it reads and re-verifies the wanted files (the current item's and the
///   next three) and asks the downloader for those not cached;
/// - the downloader's own threads (`Downloader`).
/// They meet in one `Monitor` (the mailbox); the status is published through a `Mutex`.
public final class Player: Sendable {
    public let plan: PlaybackPlan
    public let reciter: ReciterID
    let mailbox: Monitor<Mailbox>
    let published: Mutex<PlayerStatus>
    let emit: @Sendable (PlayerEvent) -> Void

    /// Commands from the caller, carried out by the audio thread in order.
    enum Command: Sendable {
        case pause, resume, toggle, next, previous
        case stop(JournalEvent.Reason)
        case seek(SeekTarget)
    }

    /// A file for the audio thread: its verified bytes (with its length in PCM frames when the table does not
    /// pin it, counted by the loader so the audio thread need not), or why it cannot be had.
    enum FileState: Sendable {
        case ready([UInt8], measuredFrames: Int?)
        case failed(String)
    }

    /// Where the threads meet.
    struct Mailbox: Sendable {
        var commands: [Command] = []
        /// Commands sent and commands carried out, so that a command returns once it has taken effect.
        var commandsSent = 0
        var commandsDone = 0
        /// The files the audio thread wants now (current item first), set by it.
        var wanted: [AyahRef] = []
        var wantedVersion = 0
        /// Set by the loader thread.
        var files: [AyahRef: FileState] = [:]
        /// From the downloader, for the loader thread.
        var downloadEvents: [DownloadEvent] = []
        /// Set by the audio thread when playback has ended; the loader then stops the downloader and ends too.
        var audioEnded = false
        var loaderEnded = false
    }

    /// Opens the output (so that a missing sound card fails here, on the caller's thread, with a clear message),
    /// then starts playing. `events` is called from the player's threads.
    public init(setup: PlayerSetup, events: @escaping @Sendable (PlayerEvent) -> Void) throws {
        plan = setup.plan
        reciter = setup.reciter.id
        emit = events
        let timeline = Self.timeline(for: setup.plan, table: setup.table)
        published = Mutex(
            PlayerStatus(
                state: .buffering, reciter: setup.reciter.id, index: 0, item: setup.plan.items.first,
                itemCount: setup.plan.items.count, surah: setup.plan.items.first?.ayah.surah ?? 0, position: 0,
                duration: 0, sampleRate: timeline.sampleRate, isEstimated: false, ayahStarts: [], bufferingAyah: nil,
                skipped: [:], totalSamples: timeline.totalSamples, endMessage: nil))
        mailbox = Monitor(Mailbox())
        let output = try setup.output.open()
        let decoders = (try Mpg123Decoder(), try Mpg123Decoder())
        let loader = FileLoader(setup: setup, mailbox: mailbox)
        let audio = AudioThread(
            player: self, plan: setup.plan, timeline: timeline, start: setup.start, resumeAt: setup.resumeAt, output: output,
            decoders: decoders, stopOnSkip: setup.stopOnSkip)
        let handOver = UnsafeHandOver((audio, loader))
        NativeThread.start(stackSize: 512 << 10) { handOver.value.1.run() }
        NativeThread.start(stackSize: 512 << 10) { handOver.value.0.run() }
    }

    // MARK: - Control (any thread)

    public func pause() { send(.pause) }
    public func resume() { send(.resume) }
    public func toggle() { send(.toggle) }
    /// Stops playback. `reason` is what the last position records: `stop`, or `quit` when tartil is leaving.
    public func stop(reason: JournalEvent.Reason = .stop) { send(.stop(reason)) }
    public func next() { send(.next) }
    public func previous() { send(.previous) }

    /// Moves playback. An ayah the plan does not play is refused here, before anything changes.
    public func seek(_ target: SeekTarget) throws(TartilError) {
        if case .ayah(let ayah) = target, plan.firstItem(of: ayah) == nil {
            throw .usage("\(ayah) is not in what is playing (\(plan.rangeDescription))")
        }
        send(.seek(target))
    }

    /// Hands `command` to the audio thread and waits until it has been carried out (within a chunk, a few tens
    /// of milliseconds), so that a `status` after a `seek` sees the seek. Returns at once once playback has ended.
    private func send(_ command: Command) {
        let ticket = mailbox.update { box -> Int? in
            guard !box.audioEnded else { return nil }
            box.commands.append(command)
            box.commandsSent += 1
            return box.commandsSent
        }
        guard let ticket else { return }
        mailbox.wait(until: { $0.commandsDone >= ticket || $0.audioEnded }, timeout: 5) { _, _ in }
    }

    /// A snapshot of where playback is.
    public var status: PlayerStatus { published.withLock { $0 } }

    /// Blocks until playback has ended and the downloads have stopped, or `seconds` pass; true when ended.
    @discardableResult
    public func waitUntilEnded(timeout seconds: Double = .infinity) -> Bool {
        if seconds == .infinity {
            mailbox.wait(until: { $0.loaderEnded }) { _ in }
            return true
        }
        return mailbox.wait(until: { $0.loaderEnded }, timeout: seconds) { _, ended in ended }
    }

    // MARK: - Timeline

    /// The plan's time axis from the table: pinned ayat exactly, unpinned ones estimated (the reciter's mean
    /// length, or 10 s without a table) until their files are opened. Time is counted at the rate of the plan's
    /// first pinned file (a reciter's files share one rate; in a plan that mixes rates, each item counts its own
    /// frames, so times there are approximate).
    static func timeline(for plan: PlaybackPlan, table: ReciterTable?) -> Timeline {
        let rows = plan.items.compactMap { $0.file.flatMap { table?.files[$0] } }
        let rate = rows.first?.sampleRate ?? 22050
        let mean = rows.isEmpty ? rate * 10 : rows.reduce(0) { $0 + $1.samples } / rows.count
        let lengths = plan.items.map { item -> Timeline.Length in
            switch item.kind {
            case .pause(let milliseconds):
                return Timeline.Length(samples: milliseconds * rate / 1000)
            case .ayah, .basmala:
                if let file = item.file, let row = table?.files[file] { return Timeline.Length(samples: row.samples) }
                return Timeline.Length(samples: mean, isEstimated: true)
            }
        }
        return Timeline(sampleRate: rate, lengths: lengths)
    }
}

/// Moves values that are not Sendable to the one thread that will own them from then on.
struct UnsafeHandOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
