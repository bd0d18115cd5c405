/// The shape of the playback machine's state: each case carries what that state needs and nothing else, so a
/// combination that cannot happen (an item open while paused, a drain while an item is open, a failure message
/// while playing, a loop and a loop mark at once) cannot be written.
///
/// ```
/// phase: .playing(Listener, Writing)        Writing.step: .idle | .waiting(for: file, downloading:) | .open
///      | .paused(Listener)                                | .draining(.end | .sleepTimer)
///      | .ended(.stopped | .finished | .failed(message:, isUsage:), heard:)
/// looping: .off | .marked(A) | .on(Loop)     boundary: Boundary?     sleepTimer: SleepTimer?
/// ```
extension PlaybackMachine {
    /// Where playback is.
    enum Phase: Sendable, Hashable {
        /// Sound is written, or about to be: the listener's side and the engine's.
        case playing(Listener, Writing)
        /// Paused by the listener: `resume` starts exactly at the listener's `heard`. The device holds nothing.
        case paused(Listener)
        /// Over for good, and where the listener was left.
        case ended(Ending, heard: PlanPosition)
    }

    /// How playback ended.
    enum Ending: Sendable, Hashable {
        case stopped
        case finished
        /// `isUsage`: what the listener asked for turned out impossible (a time past the end, found once a
        /// surah's lengths were known), which the command reports as bad input (exit 64).
        case failed(message: String, isUsage: Bool)

        var state: State {
            switch self {
            case .stopped: .stopped
            case .finished: .finished
            case .failed: .failed
            }
        }
    }

    /// The listener's side of a play: where they are and what they and the journal were told. It lasts through a
    /// pause.
    struct Listener: Sendable, Hashable {
        /// What the listener hears; while paused, exactly where `resume` starts.
        var heard: PlanPosition
        /// Whether sound of this play was written (the device has some to play out at the end).
        var soundWritten = false
        /// Whether the device has played some of it: until then nothing is recorded but what the listener asks (a
        /// pause, a seek, a stop), and a play that fails records nothing.
        var soundHeard = false
        /// The item last announced as heard (`Notice.item`).
        var announced: Int?
        /// The items of the group the journal already places the listener in (its last record of this play, or a
        /// start inside it): entering another group by playing records that group's start.
        var journaled: Range<Int>?
    }

    /// The engine's side while playing: where it writes, what it is doing, what the device holds.
    struct Writing: Sendable, Hashable {
        /// Where the engine writes: the open item and how far into it, or where the next item opens.
        var head: PlanPosition
        var step = Step.idle
        /// What was written since the device last started afresh.
        var written = WrittenLog()
        /// What the device held at its last report and has not played, in the recording's frames.
        var unheard = 0
        /// The last item written to its end since the device started afresh: the plan is finished only when that
        /// is its last item.
        var lastWritten: Int?
        /// The item whose file the engine holds open ahead (`Action.prepare`), so it is not asked for twice.
        var prepared: Int?
    }

    /// What the engine is doing while playing.
    enum Step: Sendable, Hashable {
        /// Nothing open and nothing asked for: before `start`, and for a moment while the next item is chosen.
        case idle
        /// Nothing open: the item at the head waits for `file`'s bytes, read from the cache or `downloading` (which
        /// the listener is told: buffering).
        case waiting(for: AyahRef, downloading: Bool)
        /// The item at the head is open: the engine writes it, reporting `.wrote`, then `.sourceEnded`.
        case open
        /// Everything to write is written: the device plays out what it holds, reports `.drained`, and playback
        /// ends.
        case draining(Drain)

        /// Nothing open and nothing being played out: the head can move on.
        var isClosed: Bool {
            switch self {
            case .idle, .waiting: true
            case .open, .draining: false
            }
        }
    }

    /// Why the device is playing out what it holds.
    enum Drain: Sendable, Hashable {
        /// The end of the plan, or of `--stop-after` a number of ayat, a surah or a juz.
        case end
        /// The sleep timer ran out.
        case sleepTimer
    }

    /// What was written, item by item, newest last: where the listener is is found by walking back from the
    /// write head over what the device still holds (loops jump back, so the plan's own order cannot tell).
    struct WrittenLog: Sendable, Hashable {
        struct Piece: Sendable, Hashable {
            var index: Int
            var start: Int
            var frames: Int
        }

        /// The pieces kept: a device holds far less than this many.
        static let kept = 256

        private(set) var pieces: [Piece] = []
        /// Every frame appended (not only those of the pieces kept).
        private(set) var total = 0

        /// Notes `frames` of item `index` written from frame `start`.
        mutating func append(index: Int, start: Int, frames: Int) {
            guard frames > 0 else { return }
            total += frames
            if let last = pieces.last, last.index == index, last.start + last.frames == start {
                pieces[pieces.count - 1].frames += frames
            } else {
                pieces.append(Piece(index: index, start: start, frames: frames))
                if pieces.count > Self.kept { pieces.removeFirst(pieces.count - Self.kept) }
            }
        }

        /// Where the piece holding the position `unheard` frames before the end of what was written began: a
        /// loop's jump back, a seek or a start lands inside an item, and a piece starts there.
        func pieceStart(before unheard: Int) -> PlanPosition? {
            piece(before: unheard).map { PlanPosition(index: $0.piece.index, offset: $0.piece.start) }
        }

        /// The position `unheard` frames before the end of what was written (never before its start); nil when
        /// nothing was.
        func position(before unheard: Int) -> PlanPosition? {
            piece(before: unheard).map { PlanPosition(index: $0.piece.index, offset: $0.piece.start + $0.piece.frames - $0.after) }
        }

        /// The piece holding the position `unheard` frames before the end of what was written, and how many of its
        /// frames come after that position (all of the first piece's, before the start).
        private func piece(before unheard: Int) -> (piece: Piece, after: Int)? {
            var left = max(0, unheard)
            for piece in pieces.reversed() {
                if left <= piece.frames { return (piece, left) }
                left -= piece.frames
            }
            return pieces.first.map { ($0, $0.frames) }
        }
    }

    /// The A-B loop.
    enum LoopSetting: Sendable, Hashable {
        case off
        /// The `l` key marked A here; the next press marks B.
        case marked(PlanPosition)
        case on(Loop)
    }

    /// `--stop-after` a number of ayat, the surah or the juz, and the first item it does not play.
    struct Boundary: Sendable, Hashable {
        let stop: StopAfter
        var firstItemNotPlayed: Int
    }

    /// The sleep timer: `frames` of listening at `rate` and normal speed (at 1.5× a frame of the recording lasts
    /// 1/1.5 of one), `counted` of them written so far.
    struct SleepTimer: Sendable, Hashable {
        let frames: Int
        let rate: Int
        var counted = 0

        var framesLeft: Int { max(0, frames - counted) }
    }

    /// What the listener was last told: the state, and the file playback waits for while buffering. Nothing is
    /// told at the start (or on resume, or after a seek while buffering) until sound is written or a download is
    /// awaited, so a `playing` notice means sound.
    struct Told: Sendable, Hashable {
        var state: State?
        var buffering: AyahRef?
    }

    /// What the engine said of a file.
    enum FileStatus: Sendable, Hashable {
        case ready
        case downloading
        case failed(String)
    }
}
