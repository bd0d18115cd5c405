import TartilAudio
import TartilCache
import TartilCore
import TartilJournal
import TartilNet
import TartilPlayer
import TartilSystem

extension Session {
    /// A play checked and ready to start: nothing has changed yet.
    struct Prepared: Sendable {
        var setup: PlayerSetup
        var output: (output: String, device: String)
        var resumed: ResumePoint?
        var settings: Settings
    }

    /// Starts what `request` asks, replacing what plays. Everything is checked first (the references, the
    /// reciter, `--from`, the speed against the reciter's `max_speed`, the journal, the output): a request that
    /// cannot play throws and the running player goes on as it was. `settings` are the requesting front end's;
    /// nil (a request from the control socket, which names no paths) uses those of the session's last play.
    /// Nothing is fetched before the player starts: a surah-file reciter's surahs that no table covers are learned
    /// by the player as it plays (`LearningOrder`).
    public func play(_ request: PlayRequest, settings: Settings?) throws(TartilError) -> PlayStarted {
        settingUp.wait(until: { !$0 }) { $0 = true }
        defer { settingUp.update { $0 = false } }
        guard let settings = settings ?? playSettings else {
            throw TartilError(.failure, "this player has no settings to play with (start a play here first)")
        }
        // The journal opens on its writer's thread while the request is checked (mirrors.json, the table, the
        // cache): only a journal file that exists already (opening one at the current schema writes nothing) and
        // only when this session has none open (so a refused request leaves the session's journal as it was).
        // Whether it opened is still waited for before anything changes, after the request passed its checks.
        if state.withLock({ $0.journal == nil }), FileSystem.isRegularFile(settings.journalFile) { startJournal(settings) }
        let prepared = try prepare(request, settings: settings, render: false)
        // The new output is opened while the old player plays (a sound card that takes one stream at a time is
        // tried again once the old player has let go of it), and while the journal's thread opens it: the journal
        // is waited for after, before anything changes (an output opened for a play that is then refused is
        // closed unused).
        var output: Player.OpenedOutput?
        var outputError: AudioError?
        do {
            output = try Player.open(prepared.setup.output, clock: clock)
        } catch {
            outputError = error
        }
        let journal = try openJournal(settings)
        let previous = state.withLock { $0.player }
        if outputError != nil, let previous, !previous.status.state.isEnded, case .alsa = prepared.setup.output {
            previous.stop()
            previous.waitUntilEnded()
            outputError = nil
            do {
                output = try Player.open(prepared.setup.output, clock: clock)
            } catch {
                outputError = error
            }
        }
        if let outputError { throw TartilError(.failure, Self.outputAdvice(outputError.message)) }
        var setup = prepared.setup
        // A sleep timer running carries over to what replaces it, unless the new play sets its own.
        if let previous, setup.stopAfter == nil, let left = previous.status.sleepSecondsLeft, !previous.status.state.isEnded {
            setup.stopAfter = .seconds(max(1, left))
        }
        state.withLock { $0.replacing = true }
        if let previous {
            previous.stop()
            previous.waitUntilEnded()
        }
        let generation = state.withLock { state -> Int in
            state.generation += 1
            state.player = nil
            // The control socket and MPRIS start with the first sound (see `deliver`), not before it.
            state.firstSoundHooks += state.firstPlayerHooks
            state.firstPlayerHooks = []
            var playback = Playback(
                reciter: setup.reciter, records: setup.output.recordsPositions, note: "play \(setup.plan.rangeDescription)")
            if case .hifz(let session) = request.source {
                playback.note = "hifz \(session.day): " + session.parts.map { "\($0.kind.rawValue) \(HifzAyatText.text(inOrder: $0.ayat))" }.joined(separator: "; ")
                playback.listening = HifzListening(plan: setup.plan, kinds: session.parts.map(\.kind), day: session.day)
            }
            state.playbacks[state.generation] = playback
            state.failedAtBegin = journal.failedEvents
            state.playbackFailure = nil
            state.failureReported = false
            state.settings = prepared.settings
            var resolved = PlayRequest(source: .ayat(setup.plan.ayat))
            if case .hifz = request.source { resolved = PlayRequest(source: request.source) }
            resolved.reciter = setup.reciter.id.rawValue
            state.lastPlay = resolved
            state.carried.output = prepared.output
            state.carried.reciter = setup.reciter.id
            state.reciterName = setup.reciter.name
            return state.generation
        }
        standby.update { $0 = false }  // a play started: what stood by is replaced
        let player: Player
        do {
            player = try Player(setup: setup, output: output, clock: clock) { [weak self] event in
                self?.deliver(event, generation: generation)
            }
        } catch let error as TartilError {
            stopReplacing(generation)
            throw error
        } catch let error as AudioError {
            stopReplacing(generation)
            throw TartilError(.failure, Self.outputAdvice(error.message))
        } catch {
            stopReplacing(generation)
            throw TartilError(.failure, "\(error)")
        }
        let status = player.status
        let subscribers = state.withLock { state in
            state.player = player
            state.replacing = false
            state.settled += 1
            state.settledStatus = status
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber(.started(status)) }
        return PlayStarted(status: status, resumed: prepared.resumed, notes: Self.singleSourceNote(setup))
    }

    /// One line naming the plan's cached unpinned files that only one mirror vouches for (single-source), and one
    /// naming its learned surahs that only one mirror served (their cached parts single-source), or nil.
    static func singleSourceNote(_ setup: PlayerSetup) -> [String]? {
        let unpinned = setup.plan.ayat.filter { setup.table?.files[$0] == nil }
        let learned = setup.parts?.learnedSurahs ?? []
        let learnedParts = setup.plan.items.compactMap(\.file).filter { learned.contains($0.surah) }
        guard !unpinned.isEmpty || !learnedParts.isEmpty, let cache = try? Cache(directory: setup.cacheDirectory) else { return nil }
        let isSingle = { (file: AyahRef) in (try? cache.mark(reciter: setup.reciter.id, ayah: file)) == .singleSource }
        /// What the next prefetch does about them: compare them with another mirror, when one is listed.
        let compare = { (them: String, comparable: Bool) in
            comparable ? "the next prefetch compares \(them) with another mirror" : "no other mirror is listed in mirrors.json to compare \(them) with"
        }
        var notes: [String] = []
        let single = unpinned.filter(isSingle)
        if !single.isEmpty {
            let listed = single.prefix(10).map(\.description).joined(separator: ", ") + (single.count > 10 ? ", …" : "")
            let them = single.count == 1 ? "it" : "them"
            notes.append("\(Plural.count(single.count, "ayah")) (\(listed)) single-source: only one mirror could serve \(them) so far; \(compare(them, setup.reciter.mirrors.count > 1))")
        }
        // A learned surah's parts: single-source when one mirror served its file; comparable when a mirror other
        // than that one is listed (`LearningOrder.canCompare`).
        let bySurah = Dictionary(grouping: Set(learnedParts), by: \.surah).mapValues { parts in
            (try? SurahLearning.learnedParts(Array(parts), reciter: setup.reciter, cache: cache)) ?? []
        }
        let singleSurahs = bySurah.keys.sorted().filter { bySurah[$0]!.contains { $0.mark == .singleSource } }
        let comparable = singleSurahs.filter { surah in
            LearningOrder.canCompare(bySurah[surah]!, urls: setup.reciter.mirrors.map { $0.template.url(forSurah: surah) })
        }
        for (surahs, comparing) in [(comparable, true), (singleSurahs.filter { !comparable.contains($0) }, false)] where !surahs.isEmpty {
            let one = surahs.count == 1
            notes.append(
                "\(one ? "surah" : "surahs") \(surahs.map(String.init).joined(separator: ", ")) single-source: learned from one mirror, the only one that could serve \(one ? "its file" : "their files") so far; \(compare(one ? "it" : "them", comparing))")
        }
        return notes.isEmpty ? nil : notes
    }

    /// A play whose player could not start after the old one was stopped: nothing plays now.
    private func stopReplacing(_ generation: Int) {
        state.withLock { state in
            state.playbacks.removeValue(forKey: generation)
            state.replacing = false
            state.settled += 1
            state.settledStatus = nil
        }
    }

    /// A sound card's error with what to do without one: play in real time without sound (`--output silent`), or
    /// write a file; ALSA's null device takes sound at once, so nothing played on it counts as heard.
    static func outputAdvice(_ message: String) -> String {
        guard message.contains(text: "cannot open the ALSA device") else { return message }
        return message
            + ". Without a sound card, use --output silent (plays in real time, positions saved as usual) or --output wav:FILE; "
            + "ALSA's null device (--device null) takes the sound at once, so its positions are not saved"
    }

    /// Carries the speed, volume, reciter and output the session's player has (or last had) into a request that
    /// does not give its own; what the configuration says comes after.
    func carried() -> Carried {
        state.withLock { state in
            var carried = state.carried
            if let status = state.player?.status {
                carried.speed = status.speed
                carried.volume = status.volume
            }
            return carried
        }
    }

    /// Checks `request` and builds what the player needs; nothing is written. `render` builds a `render`: no
    /// carried speed or volume, an end it must reach, and a WAV output (given by the caller).
    func prepare(
        _ request: PlayRequest, settings: Settings, render: Bool, isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws(TartilError) -> Prepared {
        let carried = render ? Carried() : carried()
        // The output: as given, else the session's (a `play` from another terminal plays where the player it
        // replaces did), else TARTIL_OUTPUT and TARTIL_DEVICE, else the config file, else the sound card.
        let device = request.device ?? carried.output?.device ?? settings.environment["TARTIL_DEVICE"] ?? settings.configured("device") ?? "default"
        let outputText = request.output ?? carried.output?.output ?? settings.environment["TARTIL_OUTPUT"] ?? settings.configured("output") ?? "alsa"
        guard let output = OutputChoice.parse(outputText, device: device) else {
            throw .usage(
                "--output takes \(OutputChoice.forms), not '\(outputText)'"
                    + (outputText.lowercased().hasSuffix(".wav") ? "; did you mean wav:\(outputText)?" : Suggestion.hint(for: outputText, among: OutputChoice.names)))
        }
        var ayat: [AyahRef] = []
        var hifzParts: [PlaybackPlan.Part]?
        var resumeAt: (AyahRef, Int)?
        var resumed: ResumePoint?
        var reciterID: ReciterID?
        switch request.source {
        case .ayat(let requested):
            ayat = requested
        case .resume(let scope, let surah):
            let (point, pointAyat) = try resumePoint(scope: scope, surah: surah, reciter: request.reciter, settings: settings)
            ayat = pointAyat
            resumeAt = (point.ayah, point.offsetSamples)
            reciterID = try ReciterID(point.reciter)
            resumed = point
        case .hifz(let session):
            guard !session.parts.isEmpty else { throw .usage("hifz: nothing is left of \(session.day)'s session") }
            if !request.layout.isEmpty || request.loop != nil {
                throw .usage("hifz play: each part plays with its plan's options (change them with 'tartil hifz plan')")
            }
            hifzParts = session.parts.map { part in
                PlaybackPlan.Part(ayat: part.ayat.compactMap { try? AyahRef(global: $0) }, options: part.options)
            }
        }
        var options = PlaybackOptions()
        if let text = settings.configured("basmala"), !request.layout.contains(where: { if case .basmala = $0 { true } else { false } }) {
            guard let basmala = PlaybackOptions.Basmala(rawValue: text) else {
                throw Suggestion.unknownValue(text, for: "basmala", among: PlaybackOptions.Basmala.allCases.map(\.rawValue))
            }
            options.basmala = basmala
        }
        for setting in request.layout { options = options.with(setting) }
        var plan: PlaybackPlan
        if let hifzParts {
            // A part's basmala is the plan's, unless that is `auto` and the config file turns it off.
            let configured = options.basmala
            plan = try PlaybackPlan(parts: hifzParts.map { part in
                var partOptions = part.options
                if partOptions.basmala == .auto { partOptions.basmala = configured }
                return PlaybackPlan.Part(ayat: part.ayat, options: partOptions)
            }, fixed: true)
        } else {
            plan = try PlaybackPlan(ayat: ayat, options: options)
        }
        if case .ayah(let ayah)? = request.start, plan.firstItem(of: ayah) == nil {
            throw .usage("--from \(ayah): that ayah is not in \(plan.rangeDescription)")
        }
        // What writes a file must end, and its path must be one: both refused before anything is fetched (or a
        // surah learned) for it.
        if case .wav(let path) = output {
            let writer = render ? "render" : "--output wav:\(path)"
            if !render { try Self.checkOutputPath(path, option: "--output wav:", example: "out.wav") }
            try Self.checkEnds(options: plan.options, loop: request.loop, stopAfter: request.stopAfter, writer: writer)
        }
        let library = try settings.library()
        let reciter: Reciter
        if let reciterID {
            reciter = try library.reciter(reciterID)  // from the journal: exactly that one
        } else if let name = request.reciter {
            reciter = try library.reciter(named: name)
        } else if !render, let id = carried.reciter, let same = try? library.reciter(id) {
            reciter = same  // the reciter carries over between plays, like speed and volume
        } else if let name = settings.defaultReciter {
            reciter = try library.reciter(named: name)
        } else if let first = library.reciters.first {
            reciter = first
        } else {
            throw .usage("\(library.mirrorsFile) lists no reciters")
        }
        // A reciter of one file per surah plays its table's parts, and each surah's own basmala.
        // A surah-file reciter's surahs that no table covers are learned from its published timings: a render
        // learns them all first (it needs them all); a play learns each as it plays (`LearningOrder`: the one it
        // waits for, or the next one), and skips the ayat of one that cannot be learned, saying why.
        var learnable: Set<Int> = []
        if render {
            // With the timeouts asked for, as the render's own downloads have them.
            var limits = try settings.downloadLimits()
            if let seconds = request.connectTimeout { limits.connectTimeout = seconds }
            if let seconds = request.stallSeconds { limits.stallSeconds = seconds }
            let unlearned = try Self.learnSurahs(
                of: plan.ayat, reciter: reciter, library: library, settings: settings, limits: limits, clock: clock, isCancelled: isCancelled).failures
            if let (surah, error) = unlearned.min(by: { $0.key < $1.key }) {
                throw TartilError(error.code, "surah \(surah) cannot be rendered: \(error.message)")
            }
        } else if reciter.files == .surah, reciter.timings != nil {
            learnable = Set(try library.unlearnedSurahs(plan.ayat.map(\.surah), for: reciter))
        }
        // Only the table rows the plan can play are read: its surahs' and Al-Fatiha's (1:1 is the basmala of a
        // per-ayah reciter, which a change of options while playing can turn on). A whole table is 6236 rows, a
        // quarter of a short play's start-up.
        let (table, parts) = try library.playbackSource(for: reciter, surahs: [1] + plan.ayat.map(\.surah))
        if parts != nil { plan = try plan.laidOut(for: .surah) }
        var setup = PlayerSetup(
            reciter: reciter, table: table, cacheDirectory: try settings.checkedCacheDirectory(), output: output, plan: plan, start: request.start)
        if let parts { setup = setup.playing(parts, learnable: learnable) }
        setup.limits = try settings.downloadLimits(setup.limits)
        if let seconds = request.connectTimeout { setup.limits.connectTimeout = seconds }
        if let seconds = request.stallSeconds { setup.limits.stallSeconds = seconds }
        setup.stopAfter = request.stopAfter
        setup.loop = request.loop
        setup.resumeAt = resumeAt
        setup.stopOnSkip = render
        // A reciter's max_speed bounds every speed: one asked for here is refused above it; one carried over or
        // configured is held to it.
        let maximum = reciter.maximumSpeed ?? PlaybackSpeed.range.upperBound
        setup.maximumSpeed = maximum
        if let speed = request.speed, speed > maximum {
            throw .usage(
                "--speed \(PlaybackSpeed.text(speed)): \(reciter.id) is played at most at \(PlaybackSpeed.text(maximum)) (max_speed in mirrors.json); allowed: \(PlaybackSpeed.allowed(maximum: maximum))")
        }
        // A render is the recording as it is unless asked; a play takes the config file's speed and volume after
        // what the session's last player had (checked when read).
        let configuredSpeed = render ? nil : settings.configured("speed").flatMap { try? PlaybackSpeed.parse($0, for: "speed") }
        var configuredVolume: Int?
        if !render, let text = settings.configured("volume"), case .to(let level)? = try? PlaybackVolume.parse(text, relative: false, for: "volume") {
            configuredVolume = level
        }
        setup.speed = min(request.speed ?? carried.speed ?? configuredSpeed ?? PlaybackSpeed.normal, maximum)
        setup.volume = request.volume ?? carried.volume ?? configuredVolume ?? PlaybackVolume.normal
        // Where it starts must be in the plan (`--from` past the end is a usage error now, before anything changes).
        var machine = PlaybackMachine(
            plan: plan, timeline: PlaybackMachine.timeline(for: plan, table: setup.table), stopOnSkip: setup.stopOnSkip)
        machine.surahsToLearn = setup.learnable
        if resumeAt == nil, let start = request.start { _ = try machine.startPosition(for: start) }
        if let loop = request.loop { _ = try machine.on(.loop(loop)) }
        return Prepared(setup: setup, output: (outputText, device), resumed: resumed, settings: settings)
    }

    /// Learns the surahs of `ayat` that a surah-file reciter with published timings has no rows for yet
    /// (`SurahLearning`: each surah's timings and whole file, once); nothing for any other reciter. Returns the
    /// surahs it tried, and why each that could not be learned was not; an interruption throws.
    static func learnSurahs(
        of ayat: [AyahRef], reciter: Reciter, library: ReciterLibrary, settings: Settings, limits: DownloadLimits, clock: any TartilClock,
        isCancelled: @escaping @Sendable () -> Bool, announce: (PrefetchStep) -> Void = { _ in }
    ) throws(TartilError) -> (tried: [Int], failures: [Int: TartilError]) {
        guard reciter.files == .surah, reciter.timings != nil else { return ([], [:]) }
        let missing = try library.unlearnedSurahs(ayat.map(\.surah), for: reciter)
        guard !missing.isEmpty else { return ([], [:]) }
        announce(.learning(surahs: missing))
        let failures = try SurahLearning.learn(
            missing, reciter: reciter, cacheDirectory: try settings.checkedCacheDirectory(), limits: limits, clock: clock,
            isCancelled: isCancelled)
        return (missing, failures)
    }

    // MARK: - Render

    /// A file a command is about to write (`-o`), checked before any work is done for it: a folder, a path under a
    /// file, or something there that is neither a regular file nor a character device or FIFO (which are written
    /// through: `-o /dev/stdout`) is a usage error. `example` names a file to suggest in a folder.
    static func checkOutputPath(_ path: String, option: String = "-o ", example: String) throws(TartilError) {
        if path.hasSuffix("/") { throw .usage("\(option)\(path) names a folder: give the file to write (e.g. \(Path.join(path, example)))") }
        if FileSystem.isDirectory(path) { throw .usage("\(option)\(path) is a folder: give the file to write (e.g. \(Path.join(path, example)))") }
        if FileSystem.kind(of: path) == .other {
            throw .usage("\(option)\(path) is not a regular file, a character device or a FIFO: give the file to write")
        }
        var parent = Path.parent(path)
        while !FileSystem.exists(parent) && Path.parent(parent) != parent { parent = Path.parent(parent) }
        if !FileSystem.isDirectory(parent) { throw .usage("\(option)\(path): \(parent) is a file, not a folder") }
    }

    /// Writes what `request` would play to the WAV file at `path`, as fast as it decodes, and returns the status
    /// at its end; nothing is written when an ayah cannot be had. The session's player is not touched.
    public func render(
        _ request: PlayRequest, to path: String, settings: Settings, isCancelled: @escaping @Sendable () -> Bool
    ) throws(TartilError) -> PlayerStatus {
        var wanted = request
        wanted.output = "wav:" + path
        wanted.device = nil
        // A path that cannot be a file is refused before anything is fetched (or a surah learned) for it.
        try Self.checkOutputPath(path, example: "out.wav")
        let prepared = try prepare(wanted, settings: settings, render: true, isCancelled: isCancelled)
        let player: Player
        do {
            player = try Player(setup: prepared.setup, clock: clock) { _ in }
        } catch {
            throw TartilError(failureFrom: error)
        }
        while !player.waitUntilEnded(timeout: 0.1) {
            if isCancelled() {
                player.stop(quitting: true)
                player.waitUntilEnded()
                throw TartilError(.interrupted, "render stopped; nothing was written")
            }
        }
        let status = player.status
        if status.state == .failed { throw TartilError(status.endIsUsage == true ? .usage : .failure, status.endMessage ?? "rendering failed") }
        return status
    }

    /// What writes a file (`render`, `play --output wav:`) must end: `inf` and an endless loop need a timer
    /// (`--stop-after 20m`), or a boundary for a range repeated for ever. `writer` names it in the message.
    static func checkEnds(options: PlaybackOptions, loop: LoopRequest?, stopAfter: StopAfter?, writer: String) throws(TartilError) {
        var timer = false
        if case .seconds? = stopAfter { timer = true }
        let endlessLoop = loop.flatMap { $0.passes == nil ? "'\($0.start) \($0.end) 5'" : nil }
        if let reason = options.endlessReason(endlessLoop: endlessLoop, timer: timer, stopAfter: stopAfter != nil) {
            throw .usage("\(writer) writes a file, which must end: \(reason)")
        }
    }

    // MARK: - Resume

    /// Where `resume` and `play --resume` continue, and the ayat from there to the end of its surah (or of the
    /// scope).
    func resumePoint(scope: [AyahRef]?, surah given: Int?, reciter: String?, settings: Settings) throws(TartilError) -> (ResumePoint, [AyahRef]) {
        var surah = given
        if surah == nil, let scope, Set(scope.map(\.surah)).count == 1 { surah = scope[0].surah }
        let path = settings.journalFile
        guard FileSystem.exists(path) else {
            _ = try listedReciter(reciter, settings, nil)  // a reciter nobody knows is a usage error first
            throw TartilError(.notFound, "nothing to resume: there is no journal at \(path) yet (play something first)")
        }
        let journal: Journal
        do {
            journal = try Journal(path: path, readOnly: true, clock: clock)
        } catch {
            throw TartilError(error.code == .notAJournal && settings.journalIsExplicit ? .usage : .failure, error.message)
        }
        defer { journal.close() }
        // As `positions` takes it: a reciter of mirrors.json by id or name, or one only the journal remembers.
        let reciter = try listedReciter(reciter, settings, journal)
        let inScope = Set(scope ?? [])
        let positions: [JournalEvent]
        do {
            positions = try journal.latestPositions(reciter: reciter, surah: surah)
                .filter { event in scope == nil || (try? AyahRef(event.surah ?? 0, event.ayah ?? 0)).map(inScope.contains) == true }
        } catch {
            throw TartilError(.failure, error.message)
        }
        guard let last = positions.first, let surahNumber = last.surah, let ayahNumber = last.ayah, let who = last.reciter else {
            let filters = [reciter.map { "of \($0)" }, surah.map { "in surah \($0)" }].compactMap { $0 }.joined(separator: " ")
            throw TartilError(.notFound, "nothing to resume: the journal has no position\(filters.isEmpty ? "" : " " + filters)")
        }
        let recorded = try AyahRef(surahNumber, ayahNumber)
        var point = ResumePoint(
            reciter: who, ayah: recorded, offsetSamples: Int(last.offsetSamples ?? 0), offsetMs: last.offsetMs ?? 0,
            reason: last.reason?.rawValue ?? "position", recordedMs: last.timeMs, after: nil)
        if last.reason == .end {
            // That ayah was heard to its end: go on with the next one (the next surah after a whole one).
            guard let next = recorded.next else { throw TartilError(.notFound, "nothing to resume: the last position is the end of 114:6") }
            if scope != nil && !inScope.contains(next) {
                throw TartilError(.notFound, "nothing to resume: \(recorded) was played to the end of what you named")
            }
            point.ayah = next
            point.offsetSamples = 0
            point.offsetMs = 0
            point.after = recorded
        }
        let start = point.ayah
        let ayat: [AyahRef]
        if let scope {
            ayat = Array(scope.drop { $0 != start })  // the order written (a playlist), from the resume point
        } else {
            let surahInfo = try Catalog.surah(start.surah)
            ayat = try (start.ayah...surahInfo.ayahCount).map { ayah throws(TartilError) in try AyahRef(start.surah, ayah) }
        }
        return (point, ayat)
    }
}

/// Where a resume continues, and why: the journal's latest position (`reason` at `recordedMs`), or the ayah
/// `after` the one that position played to its end.
public struct ResumePoint: Sendable, Hashable, Codable {
    public var reciter: String
    public var ayah: AyahRef
    public var offsetSamples: Int
    public var offsetMs: Int64
    /// The recorded position's reason (`pause`, `stop`, `end`…) and time, in milliseconds since 1970.
    public var reason: String
    public var recordedMs: Int64
    /// The ayah played to its end, when the resume goes on with the next one.
    public var after: AyahRef?
}
