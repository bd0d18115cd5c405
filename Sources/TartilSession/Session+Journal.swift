import TartilCore
import TartilJournal
import TartilSystem

extension Session {
    /// The journal writer for `settings.journalFile`, opened once per session (again when another path is
    /// named). A file that is not a journal is refused: a usage error when the user named it.
    func openJournal(_ settings: Settings) throws(TartilError) -> JournalWriter {
        let writer = startJournal(settings)
        do {
            try writer.opened()
        } catch {
            state.withLock { if $0.journal === writer { $0.journal = nil } }
            // A file that is not a journal, named by the user, is bad input; a disk that is full or read-only is
            // a failure.
            let named = settings.journalIsExplicit && error.code == .notAJournal
            throw TartilError(named ? .usage : .failure, "\(error.message)\(named ? " (--journal or TARTIL_JOURNAL)" : "")")
        }
        return writer
    }

    /// Starts opening the journal (on its writer's thread) without waiting; `openJournal` later waits for it.
    @discardableResult
    func startJournal(_ settings: Settings) -> JournalWriter {
        if let open = state.withLock({ $0.journal }), open.path == settings.journalFile { return open }
        try? FileSystem.createDirectories(Path.parent(settings.journalFile))
        let writer = JournalWriter(path: settings.journalFile, clock: clock) { [weak self] error, _ in self?.journalFailed(error) }
        let previous = state.withLock { state in
            defer { state.journal = writer }
            return state.journal
        }
        previous?.close()
        return writer
    }

    /// Runs `body` on the session's journal writer (after every event handed over before it), so that what it
    /// reads and appends sees every position of this session: merges, syncs, bookmark edits.
    public func withJournal<T: Sendable>(
        _ settings: Settings, _ body: @escaping @Sendable (Journal) throws(JournalError) -> T
    ) throws(TartilError) -> T {
        let writer = try openJournal(settings)
        do {
            return try writer.withJournal(body)
        } catch {
            throw Self.journalError(error)
        }
    }

    /// The journal's device id (opening the journal when needed).
    public func journalDeviceID(_ settings: Settings) throws(TartilError) -> String {
        // Asked of the journal itself: its id changes when it finds another journal writing under it.
        try withJournal(settings) { journal throws(JournalError) in journal.deviceID }
    }

    /// A journal's error as tartil reports it: a file that is not a journal, events that cannot be true and a
    /// destination that cannot be written are usage errors (nothing was changed); Ctrl-C is an interruption.
    public static func journalError(_ error: JournalError) -> TartilError {
        switch error.code {
        case .notAJournal, .refused, .badDestination, .unknownBookmark: return TartilError(.usage, error.message)
        case .interrupted: return TartilError(.interrupted, error.message)
        case .failed, .unreadable: return TartilError(.failure, error.message)
        }
    }

    /// Waits until every position handed to the journal is durable.
    public func flushJournal() {
        _ = state.withLock { $0.journal }?.flush()
    }

    /// Called on the journal writer's thread when events could not be made durable: during playback, the first
    /// such failure is told at once (playback goes on); `journalLosses` then says how many were lost.
    private func journalFailed(_ error: JournalError) {
        let notices = state.withLock { state -> (@Sendable (String) -> Void)? in
            guard state.playbackFailure == nil else { return nil }
            state.playbackFailure = error
            guard state.player.map({ !$0.status.state.isEnded }) ?? false else { return nil }
            state.failureReported = true
            return state.notices
        }
        notices?("Error: \(error.message); playback goes on, but its positions are not being saved")
    }

    /// Why the current playback's positions are not all in the journal (after waiting for it), or nil when they
    /// are: the listener must know that resume will not find them.
    public func journalLosses() -> TartilError? {
        guard let writer = state.withLock({ $0.journal }) else { return nil }
        writer.flush()
        let (lost, failure, reported) = state.withLock { state in
            (writer.failedEvents - state.failedAtBegin, state.playbackFailure, state.failureReported)
        }
        guard lost > 0 else { return nil }
        let what = "\(Plural.count(lost, "event")) of this playback could not be saved to the journal \(writer.path)"
        if reported || failure == nil { return TartilError(.failure, what + " (the error is above)") }
        return TartilError(.failure, what + ": \(failure!.message)")
    }

    /// Flushes and closes the journal (before tartil exits); returns a note when the journal file alone does not
    /// hold every event (another program kept it busy: the events are safe in its log beside it).
    @discardableResult
    public func closeJournal() -> String? {
        let writer = state.withLock { state in
            defer { state.journal = nil }
            return state.journal
        }
        guard let problem = writer?.close() else { return nil }
        return "note: \(problem.message); every event is safe in \(writer!.path)-wal beside it, and the next tartil that writes folds it in (copy both files until then)"
    }

    // MARK: - Bookmarks

    /// Records a bookmark: at the ayah asked, or where playback is (and for the reciter playing, unless one is
    /// named); returns it once it is durable. A reciter must be one of mirrors.json's (the journal keeps it for
    /// good); a bookmark where playback is needs a player.
    public func bookmark(_ request: BookmarkRequest, settings given: Settings?) throws(TartilError) -> Bookmark {
        guard let settings = given ?? playSettings else { throw .usage("bookmark needs an ayah (36:12) when nothing is playing") }
        let reciter = try request.reciter.map { name throws(TartilError) in try settings.library().reciter(named: name).id.rawValue }
        var draft = EventDraft(kind: .bookmark, reciter: reciter, note: request.note)
        if let ayah = request.ayah {
            draft.surah = ayah.surah
            draft.ayah = ayah.ayah
        } else {
            guard let status = status(), let item = status.item else {
                throw .usage("bookmark needs an ayah (36:12) when nothing is playing")
            }
            draft.surah = item.ayah.surah
            draft.ayah = item.ayah.ayah
            draft.reciter = draft.reciter ?? status.reciter.rawValue
        }
        let made = draft
        let event = try withJournal(settings) { journal throws(JournalError) in try journal.append(made) }
        guard let bookmark = Bookmark(event) else { throw TartilError(.failure, "the journal did not record a bookmark") }
        return bookmark
    }
}
