/// Schema versions, one line per component in `schema_migrations`: the
/// issuer and each resource server own their tables in the shared file and
/// migrate them independently. Each migration runs once, in order, inside
/// one write transaction, so two processes starting at once cannot both
/// apply it.
public struct Migration: Sendable {
    public let version: Int
    public let sql: String
    public init(version: Int, sql: String) { self.version = version; self.sql = sql }
}

public enum Migrator {
    @discardableResult
    public static func migrate(_ database: SQLiteDatabase, component: String, migrations: [Migration]) throws -> Int {
        try database.transaction {
            try database.executeScript("""
                CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT PRIMARY KEY, version INTEGER NOT NULL)
                """)
            let current = Int(try database.queryOne("SELECT version FROM schema_migrations WHERE component = ?",
                                                    [.text(component)])?.int(0) ?? 0)
            var applied = current
            for migration in migrations.sorted(by: { $0.version < $1.version }) where migration.version > current {
                try database.executeScript(migration.sql)
                applied = migration.version
            }
            if applied != current {
                try database.execute("""
                    INSERT INTO schema_migrations (component, version) VALUES (?, ?)
                    ON CONFLICT (component) DO UPDATE SET version = excluded.version
                    """, [.text(component), .integer(Int64(applied))])
            }
            return applied
        }
    }
}
