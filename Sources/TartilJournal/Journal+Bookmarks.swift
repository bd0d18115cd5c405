import TartilCore
import TartilSQLite

/// Bookmarks are events; removing one or editing its note appends an event naming it (`target_id`), so the
/// journal stays append-only and the change merges to other devices like any event. What a list shows is
/// derived: a bookmark is left out once any device removed it, and its note is the latest edit by the same
/// (time, device id, event id) order positions use, so every device that has the same events shows the same list.
extension Journal {
    /// The bookmarks not removed, of `reciter` and in `surah` when given, in the order of the Qur'an (then time).
    public func bookmarks(reciter: String? = nil, surah: Int? = nil) throws(JournalError) -> [Bookmark] {
        var conditions: [String] = []
        var values: [Statement.Value] = []
        if let reciter {
            conditions.append("b.reciter = ?")
            values.append(.text(reciter))
        }
        if let surah {
            conditions.append("b.surah = ?")
            values.append(.integer(Int64(surah)))
        }
        return try bookmarkRows(conditions, values, includingRemoved: false).map(\.bookmark)
    }

    /// The bookmark whose event id is `id` or starts with it (at least 4 characters). Throws `.unknownBookmark`
    /// when none is, several are, or it was removed.
    public func bookmark(id: String) throws(JournalError) -> Bookmark {
        guard id.utf8.count >= 4, id.utf8.count <= MergeLimits.idBytes else {
            throw JournalError(.unknownBookmark, "'\(id.prefix(40))' is not a bookmark id (the ids 'tartil bookmarks' lists, or at least their first 4 characters)")
        }
        let rows = try bookmarkRows(["substr(b.event_id, 1, length(?1)) = ?1"], [.text(id)], includingRemoved: true)
        guard let row = rows.first else {
            throw JournalError(.unknownBookmark, "no bookmark has the id '\(id)' (see 'tartil bookmarks')")
        }
        guard rows.count == 1 else {
            throw JournalError(
                .unknownBookmark,
                "'\(id)' is the start of \(rows.count) bookmarks' ids (\(rows.prefix(3).map(\.bookmark.eventID).joined(separator: ", "))): give more of it")
        }
        guard !row.removed else {
            throw JournalError(.unknownBookmark, "the bookmark \(row.bookmark.eventID) (\(row.bookmark.surah):\(row.bookmark.ayah)) was removed already")
        }
        return row.bookmark
    }

    /// Appends a `bookmark-removed` event for the bookmark `id` names (see `bookmark(id:)`) and returns the
    /// bookmark once the event is durable. Nothing is written when `id` names no bookmark.
    @discardableResult
    public func removeBookmark(id: String) throws(JournalError) -> Bookmark {
        let bookmark = try bookmark(id: id)
        try append(EventDraft(kind: .bookmarkRemoved, reciter: bookmark.reciter, surah: bookmark.surah, ayah: bookmark.ayah, targetID: bookmark.eventID))
        return bookmark
    }

    /// Appends a `bookmark-note` event giving the bookmark `id` names the note `note` (empty: none) and returns
    /// the bookmark as it now stands. Nothing is written when `id` names no bookmark.
    @discardableResult
    public func editBookmarkNote(id: String, note: String) throws(JournalError) -> Bookmark {
        let bookmark = try bookmark(id: id)
        try append(EventDraft(kind: .bookmarkNote, reciter: bookmark.reciter, surah: bookmark.surah, ayah: bookmark.ayah, note: note, targetID: bookmark.eventID))
        return try self.bookmark(id: bookmark.eventID)
    }

    // MARK: - The query

    private func bookmarkRows(
        _ conditions: [String], _ values: [Statement.Value], includingRemoved: Bool
    ) throws(JournalError) -> [(bookmark: Bookmark, removed: Bool)] {
        // A journal of an older tartil opened read-only has no target_id column, and so no edits.
        let edited = database.hasTargetColumn
            ? """
              (SELECT n.note FROM events n WHERE n.target_id = b.event_id AND n.kind = 'bookmark-note'
               ORDER BY n.ts_ms DESC, n.device_id DESC, n.event_id DESC LIMIT 1)
              """ : "NULL"
        let removed = database.hasTargetColumn
            ? "EXISTS (SELECT 1 FROM events r WHERE r.target_id = b.event_id AND r.kind = 'bookmark-removed')" : "0"
        var filters = ["b.kind = 'bookmark'"] + conditions
        if !includingRemoved { filters.append("NOT \(removed)") }
        let sql = """
            SELECT b.event_id, b.device_id, b.ts_ms, b.reciter, b.surah, b.ayah, b.note, \(edited), \(removed)
            FROM events b WHERE \(filters.joined(separator: " AND "))
            ORDER BY b.surah, b.ayah, b.ts_ms, b.device_id, b.event_id
            """
        do {
            let statement = try database.connection.prepare(sql)
            try statement.bind(values)
            var rows: [(Bookmark, Bool)] = []
            while try statement.step() {
                let note = statement.isNull(at: 7) ? statement.text(at: 6) : statement.text(at: 7)
                rows.append((
                    Bookmark(
                        eventID: statement.text(at: 0) ?? "", deviceID: statement.text(at: 1) ?? "", timeMs: statement.integer(at: 2),
                        reciter: statement.text(at: 3), surah: Int(statement.integer(at: 4)), ayah: Int(statement.integer(at: 5)),
                        note: note?.isEmpty == false ? note : nil),
                    statement.integer(at: 8) != 0
                ))
            }
            return rows
        } catch {
            throw JournalError(error, "cannot read the journal \(path)")
        }
    }
}
