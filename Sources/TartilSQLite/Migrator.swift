/// Named schema migrations, applied in order, each once, each in its own transaction, and recorded in a
/// `migrations` table of the database (name and time applied), as GRDB's `DatabaseMigrator` does.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("v1-events") { db in try db.execute("CREATE TABLE events(…)") }
/// try migrator.migrate(connection)
/// ```
/// A database that has tables but no `migrations` table, or that records a migration this build does not know
/// (a newer tartil wrote it), is refused before anything is written.
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public let name: String
        let body: @Sendable (Connection) throws(SQLiteError) -> Void
    }

    public private(set) var migrations: [Migration] = []

    public init() {}

    /// Adds a migration after those already registered. Names must be unique.
    public mutating func register(_ name: String, _ body: @escaping @Sendable (Connection) throws(SQLiteError) -> Void) {
        precondition(!migrations.contains { $0.name == name }, "migration '\(name)' is registered twice")
        migrations.append(Migration(name: name, body: body))
    }

    /// The names of the migrations `connection`'s database has had applied, in order.
    /// (`schema` names an attached database: `main` by default.)
    public static func applied(_ connection: Connection, schema: String = "main") throws(SQLiteError) -> [String] {
        guard try connection.scalarText("SELECT name FROM \(schema).sqlite_master WHERE type = 'table' AND name = 'migrations'") != nil
        else { return [] }
        let statement = try connection.prepare("SELECT name FROM \(schema).migrations ORDER BY rowid")
        var names: [String] = []
        while try statement.step() { names.append(statement.text(at: 0) ?? "") }
        return names
    }

    /// Checks the database is one this migrator made (or an empty one) without writing anything; throws
    /// `.notADatabase` with `what` in the message otherwise.
    public func check(_ connection: Connection, what: String) throws(SQLiteError) {
        let tables = try connection.scalarText(
            "SELECT group_concat(name, ', ') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        let applied = try Self.applied(connection)
        if let tables, !tables.isEmpty, applied.isEmpty {
            throw SQLiteError(code: .notADatabase, message: "\(connection.path) is not \(what) (it holds the tables \(tables))")
        }
        let known = Set(migrations.map(\.name))
        if let unknown = applied.first(where: { !known.contains($0) }) {
            throw SQLiteError(
                code: .notADatabase,
                message: "\(connection.path) was written by a newer version (its schema has '\(unknown)', which this build does not know)")
        }
    }

    /// Applies the migrations the database has not had yet (of the first `count` when given: the schema an
    /// older version made, to compare with). Returns their names.
    @discardableResult
    public func migrate(_ connection: Connection, count: Int? = nil) throws(SQLiteError) -> [String] {
        let wanted = migrations.prefix(count ?? migrations.count)
        // A database that has had them all (every open of a current journal) needs no write transaction, which
        // would take the write lock just to find nothing to do: one read of the names. (Migrations are only ever
        // added, so names read outside a transaction that are all there stay there.)
        if try Self.applied(connection).starts(with: wanted.map(\.name)) { return [] }
        var done: [String] = []
        for migration in wanted {
            // Re-read inside the transaction: another process may have migrated in the meantime.
            try connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                try connection.execute("CREATE TABLE IF NOT EXISTS migrations(name TEXT PRIMARY KEY, applied_ms INTEGER NOT NULL)")
                if !(try Self.applied(connection)).contains(migration.name) {
                    try migration.body(connection)
                    let record = try connection.prepare(
                        "INSERT INTO migrations(name, applied_ms) VALUES (?, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))")
                    try record.bind([.text(migration.name)])
                    try record.step()
                    done.append(migration.name)
                }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        return done
    }
}
