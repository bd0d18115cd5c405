import Synchronization
import TartilAudio
import TartilCache
import TartilCore
import TartilNet
import TartilSystem

/// Plays a `PlaybackPlan`: gapless from one ayah to the next, with three ayat fetched ahead at top priority,
/// "buffering" only while a wanted file downloads, and a sample-exact scrubber over the current surah. Every
/// decision is the `PlaybackMachine`'s; the player's threads carry them out.
///
/// ```swift
/// let player = try Player(setup: setup) { event in print(event) }
/// try player.perform(.seek(.time(seconds: 200)))    // 3:20 into the surah
/// player.waitUntilEnded()
/// ```
///
/// Threads of its own, none of which the caller waits on for long:
/// - the **audio thread** owns the machine, the decoders and the output: it decodes, writes, and feeds the
///   machine the commands and what happened, carrying out its actions between chunks. It never touches the
///   network, the disk, a terminal or the journal.
/// - the **loader thread** owns a `Cache`: it reads and re-verifies the wanted files and asks the downloader for
///   those not cached;
/// - the **event thread** hands events to `events` (the journal, printers), so a slow receiver never stalls the
///   sound;
/// - the downloader's own threads (`Downloader`).
/// They meet in one `Monitor` (the mailbox); the status is published through a `Mutex`.
public final class Player: Sendable {
    /// The plan as it began (`set` lays it out again: the status has the options in force).
    public let plan: PlaybackPlan
    public let reciter: ReciterID
    /// Where the player's threads meet; the threads hold it themselves (never the `Player`, which its owner may
    /// let go of while they finish).
    let channels: Channels
    private let clock: any TartilClock
    var mailbox: Monitor<Mailbox> { channels.mailbox }
    var eventQueue: Monitor<EventQueue> { channels.events }

    /// The mailbox, the published status and the event queue, shared by the caller's side and the player's
    /// threads.
    final class Channels: Sendable {
        let mailbox: Monitor<Mailbox>
        let published: Mutex<PlayerStatus>
        let events = Monitor(EventQueue())
        let reciter: ReciterID

        init(mailbox: Mailbox, status: PlayerStatus, reciter: ReciterID) {
            self.mailbox = Monitor(mailbox)
            published = Mutex(status)
            self.reciter = reciter
        }

        /// Queues an event for the event thread (from the audio thread: never blocks on the receiver).
        func emit(_ event: PlayerEvent) {
            events.update { queue in
                queue.events.append(event)
                queue.emitted += 1
            }
        }

        /// No more events after these.
        func closeEvents() {
            events.update { $0.closed = true }
        }
    }

    /// A file for the audio thread: its verified bytes (with its length when the table does not pin it, counted
    /// by the loader so the audio thread need not, and for a surah-file reciter's part the samples its decode
    /// keeps), or that it is downloading, or why it cannot be had.
    enum FileState: Sendable {
        case ready([UInt8], measured: (samples: Int, rate: Int)?, window: SampleWindow? = nil)
        case downloading
        case failed(String)
    }

    /// Where the threads meet.
    struct Mailbox: Sendable {
        /// Commands from callers, each with its ticket, carried out in order by the audio thread.
        var commands: [(ticket: Int, command: PlaybackMachine.Command)] = []
        var commandsSent = 0
        var commandsDone = 0
        /// Commands the machine refused, by ticket (taken by their senders).
        var refusals: [Int: TartilError] = [:]
        /// The status the moment each command took effect, by ticket (taken by their senders): what `pause`,
        /// `seek`… report, before the next chunk moves it on.
        var effects: [Int: PlayerStatus] = [:]
        /// The files the audio thread wants now (current item first), set by it.
        var wanted: [AyahRef] = []
        var wantedVersion = 0
        /// Set by the loader thread; `filesVersion` counts changes (of these and of `estimates`).
        var files: [AyahRef: FileState] = [:]
        /// Lengths of files not here yet, estimated from their sizes (`LengthEstimate`), set by the loader thread.
        var estimates: [AyahRef: Timeline.Length] = [:]
        /// Exact lengths of files not here yet (the parts of a surah learned while playing), set by the loader.
        var knownLengths: [AyahRef: Timeline.Length] = [:]
        var filesVersion = 0
        /// The surah being learned while playing (`LearningOrder`), set by the loader thread (for the status).
        var learningSurah: Int?
        /// Files another tartil process has been downloading for a while (`DownloadEvent.heldElsewhere`) and this
        /// player has not had yet, set by the loader thread (for the status).
        var heldElsewhere: Set<AyahRef> = []
        /// Surahs learned, or that could not be, by the loader's learning thread, for the loader thread.
        var learned: [(surah: Int, result: Result<SurahTable.File, TartilError>)] = []
        /// From the downloader, for the loader thread.
        var downloadEvents: [DownloadEvent] = []
        /// Answers to length probes, from the downloader, for the loader thread.
        var fileHeads: [FileHead] = []
        /// Set by the audio thread when playback has ended; the loader then stops the downloader and ends too.
        var audioEnded = false
        var loaderEnded = false
    }

    /// Events on their way to the event thread.
    struct EventQueue: Sendable {
        var events: [PlayerEvent] = []
        /// Events queued and events handed over, so that a command can wait until its own were.
        var emitted = 0
        var handedOver = 0
        var closed = false
        var delivered = false
    }

    /// Opens the output (so that a missing sound card fails here, on the caller's thread, with a clear message)
    /// and checks where to start (a `--from` past the end is a usage error here, before anything plays), then
    /// starts playing. `events` is called on the player's event thread, in order.
    public convenience init(
        setup: PlayerSetup, clock: any TartilClock = SystemClock.shared, events: @escaping @Sendable (PlayerEvent) -> Void
    ) throws {
        try self.init(setup: setup, output: nil, clock: clock, events: events)
    }

    /// An output opened before the player that will own it (so that a player already playing can go on while a
    /// new one's output is tried). Only the player it is handed to uses it, on its audio thread.
    public struct OpenedOutput: @unchecked Sendable {
        // @unchecked: the output moves to the new player's audio thread whole; nothing else touches it.
        let output: any AudioOutput
        public var name: String { output.name }
    }

    /// Opens `choice` on the caller's thread (a missing sound card fails here, with a clear message).
    public static func open(_ choice: OutputChoice, clock: any TartilClock = SystemClock.shared) throws(AudioError) -> OpenedOutput {
        OpenedOutput(output: try choice.open(clock: clock))
    }

    /// Like `init(setup:clock:events:)`, playing into `output` when given (opened with `Player.open`).
    public init(
        setup: PlayerSetup, output opened: OpenedOutput?, clock: any TartilClock = SystemClock.shared,
        events: @escaping @Sendable (PlayerEvent) -> Void
    ) throws {
        plan = setup.plan
        reciter = setup.reciter.id
        self.clock = clock
        // Unpinned files decoded before have their exact lengths in the cache index: the scrubber is exact for
        // them from the start.
        let unpinned = setup.plan.items.contains { item in item.file.map { setup.table?.files[$0] == nil } ?? false }
        let remembered = !unpinned ? [:] : ((try? Cache(directory: setup.cacheDirectory, clock: clock).rememberedLengths(reciter: setup.reciter.id)) ?? [:])
            .mapValues { Timeline.Length(samples: $0.samples, rate: $0.sampleRate) }
        var machine = PlaybackMachine(
            plan: setup.plan, timeline: PlaybackMachine.timeline(for: setup.plan, table: setup.table, remembered: remembered),
            stopOnSkip: setup.stopOnSkip)
        machine.surahsToLearn = setup.learnable
        var start: PlanPosition?
        if let resume = setup.resumeAt {
            start = machine.position(resuming: resume.ayah, offsetSamples: resume.offsetSamples)
        } else if let target = setup.start {
            start = try machine.startPosition(for: target)
        }
        machine.maximumSpeed = setup.maximumSpeed
        var actions = try machine.on(.setSpeed(setup.speed)) + machine.on(.setVolume(.to(setup.volume))) + machine.start(at: start)
        if let loop = setup.loop { actions += try machine.on(.loop(loop)) }
        if let stop = setup.stopAfter { actions += try machine.on(.stopAfter(stop)) }
        // From here on (the command line's options checked by the session), nothing may make a file endless.
        if case .wav(let path) = setup.output { machine.writesFile = setup.stopOnSkip ? "render" : "--output wav:\(path)" }
        let startActions = actions
        // The loader starts first, on the files the start wants, so the first file is read from the cache or its
        // download is under way (libcurl loaded, the connection opening) while the output device opens.
        var firstWanted = Mailbox()
        for case .want(let files) in startActions {
            firstWanted.wanted = files
            firstWanted.wantedVersion = 1
        }
        channels = Channels(
            mailbox: firstWanted,
            status: AudioThread.status(of: machine, reciter: setup.reciter.id, bufferingAyah: nil, writtenFrames: 0, writtenSeconds: 0),
            reciter: setup.reciter.id)
        let loader = UnsafeHandOver(FileLoader(setup: setup, clock: clock, mailbox: channels.mailbox))
        NativeThread.start(stackSize: 512 << 10) { loader.value.run() }
        let output: any AudioOutput
        let decoders: (Mpg123Decoder, Mpg123Decoder)
        do {
            output = try opened?.output ?? setup.output.open(clock: clock)
            decoders = (try Mpg123Decoder(), try Mpg123Decoder())
        } catch {
            channels.mailbox.update { $0.audioEnded = true }  // the loader stops its downloads and ends
            throw error
        }
        let audio = UnsafeHandOver(AudioThread(
                channels: channels, machine: machine, output: output, decoders: decoders, clock: clock))
        let queue = channels.events
        NativeThread.start(stackSize: 256 << 10) { Self.deliverEvents(queue, to: events) }
        NativeThread.start(stackSize: 512 << 10) { audio.value.run(startActions) }
    }

    // MARK: - Control (any thread)

    /// Hands `command` to the audio thread and returns once it has taken effect (within a chunk, a few tens of
    /// milliseconds), so that a `status` after a `seek` sees the seek; throws the machine's refusal (a seek past
    /// the end, `next` from the last ayah) as a usage error. Returns at once when playback has ended. Returns the
    /// status the moment the command took effect.
    @discardableResult
    public func perform(_ command: PlaybackMachine.Command) throws(TartilError) -> PlayerStatus {
        let ticket = mailbox.update { box -> Int? in
            guard !box.audioEnded else { return nil }
            box.commandsSent += 1
            box.commands.append((box.commandsSent, command))
            return box.commandsSent
        }
        guard let ticket else { return status }
        let (refusal, effect) = mailbox.wait(until: { $0.commandsDone >= ticket || $0.audioEnded }) { box in
            (box.refusals.removeValue(forKey: ticket), box.effects.removeValue(forKey: ticket))
        }
        if let refusal { throw refusal }
        // The command's events (its position first) were queued before it was marked done: wait until they are
        // handed over, so the caller can then wait for the journal.
        let mark = eventQueue.read { $0.emitted }
        eventQueue.wait(until: { $0.handedOver >= mark || $0.delivered }) { _ in }
        return effect.map { $0.at(clock.now) } ?? status
    }

    /// Stops playback; `quit` records the last position as a quit (tartil is leaving) rather than a stop.
    public func stop(quitting: Bool = false) { _ = try? perform(quitting ? .quit : .stop) }

    /// Where playback is now: the audio thread's last snapshot, moved on by the time since it was taken while sound
    /// flows (`PlayerStatus.at`), so it is never more than a few milliseconds behind what the output has played.
    public var status: PlayerStatus { channels.published.withLock { $0 }.at(clock.now) }

    /// Blocks until playback has ended, the downloads have stopped and every event has been handed over, or
    /// `seconds` pass; true when ended.
    @discardableResult
    public func waitUntilEnded(timeout seconds: Double = .infinity) -> Bool {
        // Real time: a caller waiting for the end polls, on whatever clock playback runs.
        if seconds == .infinity {
            mailbox.wait(until: { $0.loaderEnded }) { _ in }
            eventQueue.wait(until: { $0.delivered }) { _ in }
            return true
        }
        guard mailbox.wait(until: { $0.loaderEnded }, timeout: seconds, then: { _, ended in ended }) else { return false }
        return eventQueue.wait(until: { $0.delivered }, timeout: seconds) { _, delivered in delivered }
    }

    // MARK: - Events

    /// The event thread: hands each event to `receiver`, in order, until the queue is closed and empty.
    private static func deliverEvents(_ queue: Monitor<EventQueue>, to receiver: @Sendable (PlayerEvent) -> Void) {
        while true {
            // The audio thread closes the queue after its last event, so seeing it closed here means every
            // event has been taken.
            let (events, closed) = queue.wait(until: { !$0.events.isEmpty || $0.closed }) { box in
                defer { box.events.removeAll() }
                return (box.events, box.closed)
            }
            for event in events { receiver(event) }
            queue.update { $0.handedOver += events.count }
            if closed { break }
        }
        queue.update { $0.delivered = true }
    }
}

/// Moves values that are not Sendable to the one thread that will own them from then on.
struct UnsafeHandOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
