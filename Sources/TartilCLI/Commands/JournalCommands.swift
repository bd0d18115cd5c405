import TartilSession
import Glibc
import TartilCore

/// `positions`, `history`, `bookmark` and `journal export|merge|stats|check`: the journal for people and scripts.
enum JournalCommands {
    static let positions = CommandSpec(
        path: ["positions"],
        overview: "The latest position in each surah, latest first.",
        discussion: """
            Of several positions the latest by (time, device id, event id) wins, so journals merged from other \
            devices give the same answer in any order. Fields (json, ndjson, csv): surah, ayah, offset_ms, \
            offset_samples, reciter, reason, ts_ms, device_id, event_id. A reciter must be one of mirrors.json's \
            or have events in the journal; a surah is a number or a name (36, yasin); anything else is a usage \
            error (exit 64).
            """,
        options: [
            .init(names: ["--reciter"], valueName: "id", help: "Only this reciter's positions."),
            .init(names: ["--surah"], valueName: "n|name", help: "Only this surah: 1-114 or a name (yasin)."),
            .init(names: ["--since"], valueName: "date", help: "Only surahs with a position from this time: 2026-11-29, 7d, 12h, 30m."),
            OutputFormat.option(),
            .init(names: ["--csv"], valueName: nil, help: "Same as --format csv (the older spelling)."),
            .init(names: ["--ndjson"], valueName: nil, help: "Same as --format ndjson (the older spelling)."),
        ],
        examples: [
            "tartil positions", "tartil positions --surah yasin --json", "tartil positions --since 7d --format csv > positions.csv",
        ],
        run: { invocation, context in
            let surah = try invocation.surah("--surah")
            let since = try time("--since", invocation, context)
            let format = try OutputFormat.chosen(invocation, context)
            let events = try context.session.positions(
                reciter: invocation.value("--reciter"), surah: surah, sinceMs: since, settings: context.settings)
            printPositions(events, format: format, console: context.console)
        })

    static let history = CommandSpec(
        path: ["history"],
        overview: "What was listened to: sessions, positions and bookmarks, oldest first.",
        discussion: """
            Filters combine. A session end belongs to the reciter of the session its device started last before \
            it, so --reciter shows that reciter's session ends only. --surah leaves out session starts and ends \
            (they name a range, not a surah). --limit keeps the latest N events, still printed oldest first. A \
            reciter must be one of mirrors.json's or have events in the journal; anything else is a usage error. \
            Fields (json, ndjson, csv): those of journal export.
            """,
        options: [
            .init(names: ["--since"], valueName: "date", help: "From this time: 2026-11-29, 2026-11-29T08:00, or 7d, 12h, 30m ago."),
            .init(names: ["--until"], valueName: "date", help: "Before this time (same forms as --since)."),
            .init(names: ["--reciter"], valueName: "id", help: "Only this reciter's events."),
            .init(names: ["--surah"], valueName: "n|name", help: "Only events in this surah: 1-114 or a name (yasin)."),
            .init(names: ["--kind"], valueName: "kinds", help: "Only these kinds, comma-separated (position,bookmark): \(JournalEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))."),
            .init(names: ["--limit"], valueName: "n", help: "Only the latest n events (1-1000000)."),
            OutputFormat.option(),
        ],
        examples: [
            "tartil history --since 7d", "tartil history --since 2026-11-01 --until 2026-12-01 --format csv",
            "tartil history --surah yasin --kind position,bookmark --limit 20",
        ],
        run: { invocation, context in
            var filter = JournalHistoryFilter()
            filter.sinceMs = try time("--since", invocation, context)
            filter.untilMs = try time("--until", invocation, context)
            filter.surah = try invocation.surah("--surah")
            filter.limit = try invocation.integer("--limit", in: 1...1_000_000)
            if let text = invocation.value("--kind") { filter.kinds = try kinds(text) }
            let format = try OutputFormat.chosen(invocation, context)
            filter.reciter = invocation.value("--reciter")
            let events = try context.session.history(filter, settings: context.settings)
            context.console.print(Listing(columns: JournalEvent.columnNames, rows: events.map(eventObject)), as: format) {
                for event in events { context.console.line(line(for: event)) }
            }
        })

    static let bookmark = CommandSpec(ControlVerbs.bookmark, adding: [OutputFormat.option()]) { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let request = try ControlRequest(invocation)
            let (result, _) = try PlayCommands.dispatch(request, invocation, context)
            guard case .bookmark(let bookmark) = result else { throw TartilError(.failure, "the journal did not record a bookmark") }
            context.console.print(report: bookmarkObject(bookmark), as: format) {
                context.console.line("bookmarked \(bookmark.surah):\(bookmark.ayah)" + (bookmark.note.map { " — \($0)" } ?? ""))
            }
        }

    static let bookmarks = CommandSpec(
        path: ["bookmarks"],
        overview: "List the bookmarks not removed, with their ids and latest notes.",
        discussion: """
            In the order of the Qur'an. The id (the bookmark event's id; its first 4 or more characters are \
            enough) is what 'bookmark rm' and 'bookmark note' take. A bookmark removed on any device, after a \
            merge, is gone here too; of several note edits the latest by (time, device id, event id) wins. Fields \
            (json, ndjson, csv): event_id, surah, ayah, reciter, note, ts_ms, device_id.
            """,
        options: [
            .init(names: ["--surah"], valueName: "n|name", help: "Only bookmarks in this surah: 1-114 or a name (yasin)."),
            .init(names: ["--reciter"], valueName: "id", help: "Only this reciter's bookmarks."),
            OutputFormat.option(),
        ],
        examples: ["tartil bookmarks", "tartil bookmarks --surah 2 --json"],
        run: { invocation, context in
            let surah = try invocation.surah("--surah")
            let format = try OutputFormat.chosen(invocation, context)
            let found = try context.session.bookmarks(reciter: invocation.value("--reciter"), surah: surah, settings: context.settings)
            let list = found ?? []
            context.console.print(Listing(columns: bookmarkFields, rows: list.map(bookmarkObject)), as: format) {
                if list.isEmpty { context.console.note(found == nil ? "no bookmarks yet" : "no bookmarks") }
                for bookmark in list {
                    let name = (try? Catalog.surah(bookmark.surah))?.nameTransliterated ?? ""
                    context.console.line(
                        Formatting.left(String(bookmark.eventID.prefix(8)), 10) + Formatting.left("\(bookmark.surah):\(bookmark.ayah)", 9)
                            + Formatting.left(name, 16) + Formatting.left(bookmark.reciter ?? "", 22)
                            + Formatting.timestamp(milliseconds: bookmark.timeMs) + (bookmark.note.map { "  — \($0)" } ?? ""))
                }
            }
        })

    static let bookmarkRemove = CommandSpec(
        path: ["bookmark", "rm"],
        overview: "Remove a bookmark (by appending an event; a merge carries it to other devices).",
        arguments: [.init(name: "id", help: "The bookmark's id from 'tartil bookmarks' (4 or more of its first characters).")],
        options: [OutputFormat.option()],
        examples: ["tartil bookmark rm 3f2a9c1e"],
        run: { invocation, context in
            let id = invocation.arguments[0]
            let format = try OutputFormat.chosen(invocation, context)
            let bookmark = try context.session.removeBookmark(id: id, settings: context.settings)
            context.console.print(report: bookmarkObject(bookmark) + [("removed", .bool(true))], as: format) {
                context.console.line("removed the bookmark \(bookmark.surah):\(bookmark.ayah) (\(bookmark.eventID.prefix(8)))")
            }
        })

    static let bookmarkNote = CommandSpec(
        path: ["bookmark", "note"],
        overview: "Replace a bookmark's note (empty clears it); the latest edit wins on every device.",
        arguments: [
            .init(name: "id", help: "The bookmark's id from 'tartil bookmarks' (4 or more of its first characters)."),
            .init(name: "text", help: "The new note (at most 4096 bytes; no control characters or bidirectional overrides)."),
        ],
        options: [OutputFormat.option()],
        examples: ["tartil bookmark note 3f2a9c1e 'Ayat al-Kursi, by heart'"],
        run: { invocation, context in
            let id = invocation.arguments[0]
            let text = invocation.arguments[1]
            let format = try OutputFormat.chosen(invocation, context)
            let bookmark = try context.session.editBookmarkNote(id: id, note: text, settings: context.settings)
            context.console.print(report: bookmarkObject(bookmark), as: format) {
                context.console.line(
                    "bookmark \(bookmark.surah):\(bookmark.ayah) (\(bookmark.eventID.prefix(8))): " + (bookmark.note.map { "— \($0)" } ?? "no note"))
            }
        })

    static let bookmarkFields = SessionJSON.bookmarkFieldNames

    static func bookmarkObject(_ bookmark: Bookmark) -> Fields { SessionJSON.fields(bookmark) }

    static let group = CommandSpec(path: ["journal"], overview: "Export, merge, sync, back up, check and count the positions journal.", run: nil)

    static let export = CommandSpec(
        path: ["journal", "export"],
        overview: "Write the journal's raw events, oldest first, as NDJSON (default), one JSON array or CSV.",
        discussion: """
            Columns, in this order: event_id, device_id, device_seq, ts_ms (milliseconds since 1970, UTC), kind \
            (position, session-start, session-end, bookmark, bookmark-removed, bookmark-note), reciter, surah, \
            ayah, offset_samples, offset_ms, reason (ayah-start, pause, seek, stop, quit, end), note, target_id \
            (the bookmark a removal or note edit changes). Missing values and empty notes are null in JSON and \
            empty in CSV; a CSV text cell starting with =, +, -, @, tab or CR gets a ' before it (so a spreadsheet \
            does not run it as a formula). \
            It writes data only (no text format): 'tartil history' lists events for people.
            """,
        options: [
            .init(names: ["--since"], valueName: "date", help: "From this time: 2026-11-29, 2026-11-29T08:00, or 7d, 12h, 30m ago."),
            OutputFormat.option(exportFormats, default: .ndjson),
        ],
        examples: ["tartil journal export > journal.ndjson", "tartil journal export --since 30d --format csv"],
        run: { invocation, context in
            let since = try time("--since", invocation, context)
            let chosen = try OutputFormat.chosen(invocation, context, allowed: exportFormats, default: .ndjson)
            let format = JournalExportFormat(rawValue: chosen.rawValue)!
            guard try context.session.exportJournal(sinceMs: since, format: format, to: context.console.outputDescriptor, settings: context.settings) else {
                context.console.print(Listing(columns: JournalEvent.columnNames, rows: []), as: chosen) {}
                return
            }
        })

    /// What `journal export` writes (each streamed by the journal itself).
    static let exportFormats: [OutputFormat] = [.ndjson, .json, .csv]

    static let merge = CommandSpec(
        path: ["journal", "merge"],
        overview: "Add the events of another journal (another device's) that this one lacks.",
        discussion: """
            Events are matched by their event id, so merging the same journal twice adds nothing, and the \
            positions come out the same whatever order journals are merged in. The other file is only read \
            (read-only and immutable: nothing is written beside it, so it may be on a read-only mount). It must be \
            exactly a tartil journal (tables, columns, triggers, migrations, SQLite's quick check) and every \
            event must be possible: a time at most 10 minutes ahead of this clock, a known kind and reason, a real \
            surah and ayah, offsets not negative, a note of at most 4096 bytes. Otherwise it is refused with exit \
            64 and nothing is merged. A file with a non-empty -wal beside it (in use, or not closed cleanly) is \
            refused with exit 1. Ctrl-C or SIGTERM stops a merge with exit 130, the journal unchanged. Events of \
            this device in the file that only continue the journal's (a journal restored from an older copy) are \
            folded back as its own; if the file shows that another journal writes under this device's id (a copy \
            used on another machine), this journal takes a new device id first and the old id's events merge like \
            another device's (a note says so; fields restored, device_id, previous_device_id).
            """,
        arguments: [.init(name: "other", help: "The other journal.sqlite.")],
        options: [OutputFormat.option()],
        examples: ["tartil journal merge ~/phone-journal.sqlite"],
        run: { invocation, context in
            let other = invocation.arguments[0]
            let format = try OutputFormat.chosen(invocation, context)
            // The merge runs on the session's journal writer, which stays open for the commands after it.
            let outcome = try context.session.mergeJournal(from: other, settings: context.settings, shouldStop: context.isCancelled)
            let added = outcome.added
            let fields: Fields = [
                ("file", .string(other)), ("new_events", .int(added)), ("restored", .bool(outcome.identity == .restored)),
                ("device_id", .string(outcome.deviceID)),
                ("previous_device_id", outcome.identity == .shared ? .string(outcome.previousDeviceID) : .null),
            ]
            context.console.print(report: fields, as: format) {
                context.console.line("\(added) new event\(added == 1 ? "" : "s") from \(other)")
            }
            if outcome.identity == .restored { context.console.note(restoredNote(other)) }
            if outcome.identity == .shared { context.console.note(sharedNote(other, from: outcome.previousDeviceID, to: outcome.deviceID)) }
        })

    static let backup = CommandSpec(
        path: ["journal", "backup"],
        overview: "Write a consistent, self-contained copy of the journal, even while a player writes.",
        discussion: """
            The copy is a snapshot as of one moment, made with SQLite's online backup API (a player appending \
            meanwhile is not stopped), written to a temporary name beside FILE, checked, fsynced and then \
            renamed: FILE is never half-written. It is self-contained (no -wal file beside it is needed), passes \
            'journal check', can be merged ('journal merge FILE' into the journal it came from adds nothing) or \
            used as a journal (--journal FILE). FILE must not be the journal itself; a FILE that exists is \
            replaced only with --force (exit 64 otherwise, nothing written). Temporary copies that backups killed \
            midway left beside FILE (FILE.tmp-XXXXXXXX) are removed first. Paths are file names, never SQLite \
            URIs ('file:x.db' is a file of that name).
            """,
        arguments: [.init(name: "file", help: "Where to write the copy.")],
        options: [.init(names: ["--force"], valueName: nil, help: "Replace FILE if it exists."), OutputFormat.option()],
        examples: ["tartil journal backup ~/backups/tartil-journal.sqlite", "tartil journal backup /mnt/usb/journal.sqlite --force"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let (journal, result) = try context.session.backupJournal(
                to: invocation.arguments[0], replacing: invocation.flag("--force"), settings: context.settings)
            let fields: Fields = [
                ("file", .string(result.path)), ("journal", .string(journal)), ("events", .int(result.events)), ("bytes", .int(result.bytes)),
            ]
            context.console.print(report: fields, as: format) {
                context.console.line(
                    "backed up \(Plural.count(result.events, "event", number: Formatting.grouped(result.events))) to \(result.path) (\(Formatting.bytes(result.bytes)))")
            }
        })

    static let sync = CommandSpec(
        path: ["journal", "sync"],
        overview: "Exchange journals with your other devices through a folder a sync tool keeps in sync.",
        discussion: """
            Merges every other device's DIR/DEVICE-ID.tartil-journal that is a valid tartil journal of that device, \
            then writes this device's snapshot, DIR/<this device id>.tartil-journal (SQLite's online backup API, a \
            temporary name, fsync, rename), unless the one there holds every event already: what a run learnt is \
            published by the same run, and a run that learnt nothing writes nothing. Nothing else is written to \
            DIR. Sync tools' temporary and conflict copies (.syncthing.*.tmp, *.sync-conflict-*, "conflicted copy", \
            .*.~*, *.partial, ~$*), partial, damaged or crafted files and files that vanish while being read are \
            skipped and listed on standard error (and under "skipped" with --json), never fatal. Only new events \
            are read, found by device and sequence number. One run at a time per journal (a lock beside the \
            journal, <journal>.sync-lock; a second run waits up to 60 s). Safe to run again at any time (from cron \
            or a systemd timer). Exit 0 when every valid journal merged, 64 when DIR cannot be used, 1 on a failure \
            of this journal or of writing the snapshot, 130 when interrupted (the merge under way is rolled back). \
            --watch syncs every --interval until Ctrl-C or SIGTERM, which end it with exit 0. What is at this \
            device's own name is merged first (a journal), or moved aside to \
            <device-id>.aside-<ms>.tartil-journal-aside (anything else not empty): never overwritten unread. A \
            journal restored from an older copy folds its later events back from the folder; one that finds \
            another journal writing under its device id (a copy on another machine) takes a new id, and the other \
            does the same when it syncs: nothing is lost and both go on converging (notes on standard error; \
            --json adds restored_from, previous_device_id, moved_aside).
            """,
        arguments: [.init(name: "dir", help: "The folder kept in sync between your machines.")],
        options: [
            .init(names: ["--watch"], valueName: nil, help: "Keep syncing, every --interval, until Ctrl-C or SIGTERM."),
            .init(names: ["--interval"], valueName: "time", help: "With --watch: the time between syncs, 1 s to 24 h (300, 90s, 5m, 1h; default 60 s)."),
        ],
        examples: ["tartil journal sync ~/Sync/tartil", "tartil journal sync ~/Dropbox/tartil --json", "tartil journal sync ~/Sync/tartil --watch --interval 300"],
        run: { invocation, context in
            let folder = invocation.arguments[0]
            let watch = invocation.flag("--watch")
            let interval = try invocation.duration("--interval", in: 1...86_400).map { Int($0.rounded()) }
            if interval != nil && !watch { throw TartilError.usage("--interval goes with --watch") }
            var round = 0
            while true {
                round += 1
                do throws(TartilError) {
                    let (report, deviceID) = try context.session.syncJournal(folder: folder, settings: context.settings, shouldStop: context.isCancelled)
                    printSync(report, deviceID: deviceID, context)
                } catch {
                    // A watch goes on after a failed round (a folder unmounted for a while); the first round's
                    // failure, or an interruption, ends it.
                    if !watch || round == 1 || error.code == .interrupted {
                        if watch && error.code == .interrupted { return }
                        throw error
                    }
                    context.console.note("journal sync: \(error.description)")
                }
                guard watch else { return }
                if waitForInterrupt(seconds: interval ?? 60, context) { return }
            }
        })

    static func restoredNote(_ file: String) -> String {
        "note: \(file) held later events of this device than this journal (a journal restored from an older copy): they were folded back in as this device's own"
    }

    static func sharedNote(_ file: String, from old: String, to new: String) -> String {
        "note: another journal writes under this device's id \(old) (found in \(file); a copy of this journal used on another machine): this journal now writes as \(new), the old id's events merge like another device's, and nothing was lost"
    }

    /// Prints what a sync did: merges and the snapshot on standard output, skips on standard error (and all of it
    /// as one JSON object with --json).
    static func printSync(_ report: JournalSyncReport, deviceID: String, _ context: Context) {
        let console = context.console
        for skip in report.skipped { console.note("skipped \(skip.name): \(skip.reason)") }
        for aside in report.movedAside {
            console.note("moved \(aside.name) aside: it was at this device's name and could not be merged (\(aside.reason)); nothing was overwritten")
        }
        for name in report.restoredFrom { console.note(restoredNote(name)) }
        if let old = report.previousDeviceID { console.note(sharedNote(report.folder, from: old, to: deviceID)) }
        let total = report.merged.reduce(0) { $0 + $1.newEvents }
        if context.settings.json {
            console.json(.object([
                ("folder", .string(report.folder)), ("device_id", .string(deviceID)), ("file", .string(report.ownFile)),
                ("new_events", .int(total)),
                ("merged", .array(report.merged.map { .object([("file", .string($0.name)), ("new_events", .int($0.newEvents))]) })),
                ("skipped", .array(report.skipped.map { .object([("file", .string($0.name)), ("reason", .string($0.reason))]) })),
                ("published", .bool(report.published != nil)),
                ("events", report.published.map { .int($0.events) } ?? .null),
                ("bytes", report.published.map { .int($0.bytes) } ?? .null),
                ("restored_from", .array(report.restoredFrom.map(JSONValue.string))),
                ("previous_device_id", report.previousDeviceID.map(JSONValue.string) ?? .null),
                ("moved_aside", .array(report.movedAside.map { .object([("file", .string($0.name)), ("reason", .string($0.reason))]) })),
            ]))
            return
        }
        for merged in report.merged where merged.newEvents > 0 {
            console.line("\(merged.newEvents) new event\(merged.newEvents == 1 ? "" : "s") from \(merged.name)")
        }
        if let published = report.published {
            console.line(
                "wrote \(report.ownFile) (\(Plural.count(published.events, "event", number: Formatting.grouped(published.events))), \(Formatting.bytes(published.bytes)))")
        } else {
            console.line("\(report.ownFile) is up to date")
        }
    }

    /// Waits `seconds`, or until Ctrl-C or SIGTERM; returns true when one arrived.
    static func waitForInterrupt(seconds: Int, _ context: Context) -> Bool {
        var remaining = seconds * 1000
        while remaining > 0 {
            if context.isCancelled() { return true }
            var wake = pollfd(fd: context.frontEnd.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            let step = min(remaining, 1000)
            if wake.fd >= 0 { _ = poll(&wake, 1, Int32(step)) } else { context.session.clock.sleep(seconds: Double(step) / 1000) }
            remaining -= step
        }
        return context.isCancelled()
    }

    static let stats = CommandSpec(
        path: ["journal", "stats"],
        overview: "Events by kind and device, sizes of the journal and its log, first and last times.",
        discussion: """
            bytes is the size of the journal file, wal_bytes that of its write-ahead log beside it (events not yet \
            checkpointed into the file: 0 after every tartil that wrote to it exited cleanly). by_device lists \
            every device with events (this one and those merged in), most events first, with its first and last \
            event's time; by_kind every kind with its count. Times are milliseconds since 1970 (UTC) in JSON and CSV.
            """,
        options: [OutputFormat.option()],
        examples: ["tartil journal stats", "tartil journal stats --json"],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let report = try context.session.journalStats(settings: context.settings)
            let stats = report.stats
            let fields: Fields = [
                ("journal", .string(report.path)), ("device_id", .string(report.deviceID)),
                ("bytes", .int(report.bytes)), ("wal_bytes", .int(report.logBytes)), ("events", .int(stats.events)),
                ("by_kind", .array(JournalEvent.Kind.allCases.map { .object([("kind", .string($0.rawValue)), ("events", .int(stats.byKind[$0] ?? 0))]) })),
                ("devices", .int(stats.devices)),
                ("by_device", .array(stats.byDevice.map { device in
                    .object([
                        ("device_id", .string(device.deviceID)), ("events", .int(device.events)),
                        ("first_ts_ms", .int(Int(device.firstMs))), ("last_ts_ms", .int(Int(device.lastMs))),
                    ])
                })),
                ("surahs_with_positions", .int(stats.surahsWithPositions)),
                ("first_ts_ms", stats.firstMs.map { .int(Int($0)) } ?? .null),
                ("last_ts_ms", stats.lastMs.map { .int(Int($0)) } ?? .null),
            ]
            context.console.print(report: fields, as: format) { statsText(report, context.console) }
        })

    /// `journal stats` for people.
    static func statsText(_ report: Session.JournalReport, _ console: Console) {
        let stats = report.stats
        console.line("journal   \(report.path) (\(Formatting.bytes(report.bytes)); log \(Formatting.bytes(report.logBytes)))")
        console.line("device    \(report.deviceID)")
        console.line("events    \(Formatting.grouped(stats.events)): "
            + JournalEvent.Kind.allCases.map { "\(Formatting.grouped(stats.byKind[$0] ?? 0)) \($0.rawValue)" }.joined(separator: ", "))
        console.line("devices   \(stats.devices); positions in \(Plural.count(stats.surahsWithPositions, "surah"))")
        for device in stats.byDevice {
            console.line(
                "  " + Formatting.left(device.deviceID + (device.deviceID == report.deviceID ? " (this one)" : ""), 50)
                    + Formatting.left(Plural.count(device.events, "event", number: Formatting.grouped(device.events)), 16)
                    + "\(Formatting.timestamp(milliseconds: device.firstMs)) to \(Formatting.timestamp(milliseconds: device.lastMs))")
        }
        if let first = stats.firstMs, let last = stats.lastMs {
            console.line("from      \(Formatting.timestamp(milliseconds: first)) to \(Formatting.timestamp(milliseconds: last))")
        }
    }

    static let check = CommandSpec(
        path: ["journal", "check"],
        overview: "Check the journal: SQLite's integrity check, the append-only triggers, WAL mode, unknown kinds.",
        discussion: "Exit 0 when all is well, 1 with each problem named otherwise.",
        options: [OutputFormat.option()],
        run: { invocation, context in
            let format = try OutputFormat.chosen(invocation, context)
            let (path, problems) = try context.session.journalProblems(settings: context.settings)
            let fields: Fields = [("journal", .string(path)), ("ok", .bool(problems.isEmpty)), ("problems", .array(problems.map(JSONValue.string)))]
            context.console.print(report: fields, as: format) {
                if problems.isEmpty { context.console.line("\(path): ok (integrity check passed, append-only triggers present, WAL on)") }
            }
            if !problems.isEmpty {
                throw TartilError(.failure, "\(path): " + problems.joined(separator: "; "))
            }
        })

    // MARK: - Helpers

    /// `--kind`'s comma-separated kinds.
    static func kinds(_ text: String) throws(TartilError) -> Set<JournalEvent.Kind> {
        var kinds: Set<JournalEvent.Kind> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let kind = JournalEvent.Kind(rawValue: name.trimmedWhitespace) else {
                let names = JournalEvent.Kind.allCases.map(\.rawValue)
                throw TartilError.usage(
                    "--kind takes kinds separated by commas (\(names.joined(separator: ", "))), not '\(name.prefix(80))'"
                        + Suggestion.hint(for: name.trimmedWhitespace, among: names))
            }
            kinds.insert(kind)
        }
        return kinds
    }

    static let positionFields = ["surah", "ayah", "offset_ms", "offset_samples", "reciter", "reason", "ts_ms", "device_id", "event_id"]

    static func positionObject(_ event: JournalEvent) -> Fields {
        [
            ("surah", .int(event.surah ?? 0)), ("ayah", .int(event.ayah ?? 0)), ("offset_ms", .int(Int(event.offsetMs ?? 0))),
            ("offset_samples", .int(Int(event.offsetSamples ?? 0))), ("reciter", .string(event.reciter ?? "")),
            ("reason", .string(event.reason?.rawValue ?? "")), ("ts_ms", .int(Int(event.timeMs))), ("device_id", .string(event.deviceID)),
            ("event_id", .string(event.eventID)),
        ]
    }

    static func printPositions(_ events: [JournalEvent], format: OutputFormat, console: Console) {
        console.print(Listing(columns: positionFields, rows: events.map(positionObject)), as: format) {
            if events.isEmpty {
                console.note("no positions yet")
                return
            }
            for event in events {
                let name = (try? Catalog.surah(event.surah ?? 0))?.nameTransliterated ?? ""
                let place = "\(event.surah ?? 0):\(event.ayah ?? 0)"
                let offset = (event.offsetMs ?? 0) > 0 ? " +" + Formatting.duration(seconds: Double(event.offsetMs ?? 0) / 1000) : ""
                console.line(
                    Formatting.left(place, 8) + Formatting.left(offset, 12) + Formatting.left(name, 16) + Formatting.left(event.reciter ?? "", 22)
                        + "\(Formatting.timestamp(milliseconds: event.timeMs))  \(event.reason?.rawValue ?? "")")
            }
        }
    }

    /// An event with the fields and order of `journal export` (`Journal.columnNames`), for `history`.
    static func eventObject(_ event: JournalEvent) -> Fields {
        func number(_ value: Int64?) -> JSONValue { .int(value.map(Int.init)) }
        return [
            ("event_id", .string(event.eventID)), ("device_id", .string(event.deviceID)), ("device_seq", .int(Int(event.deviceSeq))),
            ("ts_ms", .int(Int(event.timeMs))), ("kind", .string(event.kind.rawValue)), ("reciter", .string(event.reciter)),
            ("surah", .int(event.surah)), ("ayah", .int(event.ayah)), ("offset_samples", number(event.offsetSamples)),
            ("offset_ms", number(event.offsetMs)), ("reason", .string(event.reason?.rawValue)), ("note", .string(JournalNote.normalized(event.note))),
            ("target_id", .string(event.targetID)),
        ]
    }

    static func line(for event: JournalEvent) -> String {
        let when = Formatting.timestamp(milliseconds: event.timeMs)
        let place = event.surah.map { surah in "\(surah):\(event.ayah ?? 1)" } ?? ""
        switch event.kind {
        case .sessionStart: return "\(when)  started \(event.note ?? "") (\(event.reciter ?? ""))"
        case .sessionEnd: return "\(when)  ended (\(event.note ?? ""))"
        case .bookmark: return "\(when)  bookmark \(place)\(event.note.map { " — \($0)" } ?? "")"
        case .bookmarkRemoved: return "\(when)  bookmark \(place) removed (\(event.targetID ?? ""))"
        case .bookmarkNote:
            return "\(when)  bookmark \(place) note \(event.note?.isEmpty == false ? "— \(event.note!)" : "cleared") (\(event.targetID ?? ""))"
        case .hifzPlan: return "\(when)  hifz plan"
        case .hifzMark: return "\(when)  hifz mark \(place) \(event.note ?? "")"
        case .hifzHeard:
            let note = event.note.flatMap { try? HifzHeardNote(encoded: $0) }
            return "\(when)  hifz \(note.map { "\($0.part.rawValue) of \($0.day) heard \(HifzAyatText.text($0.ayat))" } ?? "heard")"
        case .position:
            let offset = (event.offsetMs ?? 0) > 0 ? " +" + Formatting.duration(seconds: Double(event.offsetMs ?? 0) / 1000) : ""
            return "\(when)  \(event.reason?.rawValue ?? "position") \(place)\(offset)"
        }
    }

    /// The time `option` gives (`--since`, `--until`), a span ago counted back from the session clock's wall time.
    static func time(_ option: String, _ invocation: Invocation, _ context: Context) throws(TartilError) -> Int64? {
        guard let text = invocation.value(option) else { return nil }
        return try parseSince(text, option: option, nowMs: context.session.clock.wallMilliseconds)
    }

    /// `2026-11-29`, `2026-11-29T08:00[:SS]` (local time, or with `Z` for UTC), or `7d`, `12h`, `30m` before
    /// `nowMs` (the session clock's wall time): in milliseconds since 1970.
    static func parseSince(_ text: String, option: String = "--since", nowMs: Int64) throws(TartilError) -> Int64 {
        let forms = "a date from 1970-01-01 to 9999-12-31 (2026-11-29), a date and time (2026-11-29T08:00), or a span ago up to 100 years (7d, 12h, 30m)"
        let bad = TartilError.usage("\(option) takes \(forms), not '\(text)'")
        if let unit = text.last, "dhm".contains(unit) {
            let secondsPerUnit = unit == "d" ? 86400 : unit == "h" ? 3600 : 60
            guard let amount = NumberText.whole(text.dropLast(), in: 0...(100 * 366 * 86400 / secondsPerUnit)) else {
                throw bad
            }
            return nowMs - Int64(amount * secondsPerUnit) * 1000
        }
        var body = Substring(text)
        let utc = body.hasSuffix("Z")
        if utc { body = body.dropLast() }
        let parts = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "T" || $0 == " " })
        guard (1...2).contains(parts.count) else { throw bad }
        let dateParts = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let clockParts = parts.count > 1 ? parts[1].split(separator: ":", omittingEmptySubsequences: false) : []
        guard dateParts.count == 3, dateParts[0].count == 4, dateParts[1].count == 2, dateParts[2].count == 2,
            let year = NumberText.whole(dateParts[0], in: 1970...9999),
            let month = NumberText.whole(dateParts[1], in: 1...12),
            let day = NumberText.whole(dateParts[2], in: 1...31),
            parts.count == 1 || (2...3).contains(clockParts.count), clockParts.allSatisfy({ $0.count == 2 })
        else { throw bad }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] else {
            throw .usage("--since: \(parts[0]) is not a day of the calendar (month \(month) of \(year) has \([31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]) days)")
        }
        let clock = clockParts.compactMap { NumberText.whole($0, in: 0...59) }
        guard clock.count == clockParts.count, (clock.first ?? 0) < 24 else { throw bad }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(clock.count > 0 ? clock[0] : 0)
        fields.tm_min = Int32(clock.count > 1 ? clock[1] : 0)
        fields.tm_sec = Int32(clock.count > 2 ? clock[2] : 0)
        fields.tm_isdst = -1
        let seconds = utc ? timegm(&fields) : mktime(&fields)
        return Int64(seconds) * 1000
    }
}
