/// Schema versions kept in `PRAGMA user_version`. Each migration runs once,
/// in order, inside one write transaction, so two processes starting at
/// once cannot both apply it.
public struct Migration: Sendable {
    public let version: Int
    public let sql: String
    public init(version: Int, sql: String) { self.version = version; self.sql = sql }
}

public enum Migrator {
    @discardableResult
    public static func migrate(_ database: SQLiteDatabase, migrations: [Migration]) throws -> Int {
        try database.transaction {
            let current = Int(try database.queryOne("PRAGMA user_version")?.int(0) ?? 0)
            var applied = current
            for migration in migrations.sorted(by: { $0.version < $1.version }) where migration.version > current {
                try database.executeScript(migration.sql)
                try database.executeScript("PRAGMA user_version = \(migration.version)")
                applied = migration.version
            }
            return applied
        }
    }
}
