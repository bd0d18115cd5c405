// Written by JournalSchemaTests (TARTIL_UPDATE_GOLDEN=1) from the migrations in JournalDatabase.swift: do not edit.

extension Journal {
    /// The schema this build's migrations make, as `sqlite_master` holds it (type, name, table, SQL; in that order),
    /// which a journal opened as this device's must have (`checkOwnSchema`).
    static let currentSchema: [SchemaObject] = [
        SchemaObject(type: "index", name: "events_by_device", table: "events", sql: "CREATE INDEX events_by_device ON events(device_id, device_seq)"),
        SchemaObject(type: "index", name: "events_by_target", table: "events", sql: "CREATE INDEX events_by_target ON events(target_id) WHERE target_id IS NOT NULL"),
        SchemaObject(type: "index", name: "events_by_time", table: "events", sql: "CREATE INDEX events_by_time ON events(ts_ms, device_id, event_id)"),
        SchemaObject(type: "index", name: "events_positions", table: "events", sql: "CREATE INDEX events_positions ON events(kind, surah, ts_ms)"),
        SchemaObject(type: "index", name: "sqlite_autoindex_events_1", table: "events", sql: ""),
        SchemaObject(type: "index", name: "sqlite_autoindex_meta_1", table: "meta", sql: ""),
        SchemaObject(type: "index", name: "sqlite_autoindex_migrations_1", table: "migrations", sql: ""),
        SchemaObject(type: "table", name: "events", table: "events", sql: #"""
CREATE TABLE events(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    device_id TEXT NOT NULL,
    device_seq INTEGER NOT NULL,
    ts_ms INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('position', 'session-start', 'session-end', 'bookmark',
                                       'bookmark-removed', 'bookmark-note',
                                       'hifz-plan', 'hifz-mark', 'hifz-heard')),
    reciter TEXT,
    surah INTEGER CHECK (surah BETWEEN 1 AND 114),
    ayah INTEGER CHECK (ayah >= 1),
    offset_samples INTEGER CHECK (offset_samples >= 0),
    offset_ms INTEGER CHECK (offset_ms >= 0),
    reason TEXT CHECK (reason IN ('ayah-start', 'pause', 'seek', 'stop', 'quit', 'end')),
    note TEXT,
    target_id TEXT CHECK ((target_id IS NOT NULL) = (kind IN ('bookmark-removed', 'bookmark-note')))
)
"""#),
        SchemaObject(type: "table", name: "meta", table: "meta", sql: "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
        SchemaObject(type: "table", name: "migrations", table: "migrations", sql: "CREATE TABLE migrations(name TEXT PRIMARY KEY, applied_ms INTEGER NOT NULL)"),
        SchemaObject(type: "table", name: "sqlite_sequence", table: "sqlite_sequence", sql: "CREATE TABLE sqlite_sequence(name,seq)"),
        SchemaObject(type: "trigger", name: "events_no_delete", table: "events", sql: #"""
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be deleted'); END
"""#),
        SchemaObject(type: "trigger", name: "events_no_update", table: "events", sql: #"""
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: events cannot be updated'); END
"""#),
        SchemaObject(type: "trigger", name: "meta_no_delete", table: "meta", sql: #"""
CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta
    BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END
"""#),
        SchemaObject(type: "trigger", name: "meta_no_update", table: "meta", sql: #"""
CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta
    BEGIN SELECT RAISE(ABORT, 'journal metadata is written once'); END
"""#),
    ]
}
