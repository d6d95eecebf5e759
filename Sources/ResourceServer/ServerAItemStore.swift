import SQLiteClient
import SSOCore

/// Resource server A's own rows, in its own table of the shared SQLite file
/// (component "api-a"). It never reads the issuer's tables.
public final class ServerAItemStore {
    public struct Item: Encodable, Equatable, Sendable {
        public let id: Int64
        public let title: String
        public let detail: String
    }

    /// A response carries at most this many items.
    static let maximumItems = 100

    static let migrations = [
        Migration(version: 1, sql: """
            CREATE TABLE api_a_items (
                id INTEGER PRIMARY KEY,
                email TEXT NOT NULL COLLATE NOCASE,
                title TEXT NOT NULL,
                detail TEXT NOT NULL
            );
            CREATE INDEX api_a_items_by_email ON api_a_items (email, id);
            INSERT INTO api_a_items (email, title, detail) VALUES
                ('alice@example.com', 'Quarterly report', 'Revenue up 4% on the previous quarter'),
                ('alice@example.com', 'Team roster', 'Five engineers, one designer'),
                ('alice@example.com', 'Travel policy', 'Economy class under six hours');
            """),
    ]

    private let database: SQLiteDatabase

    /// Migrates the table (once per schema version, whichever process comes
    /// first) and warms the one query.
    public init(database: SQLiteDatabase) throws {
        self.database = database
        try Migrator.migrate(database, component: "api-a", migrations: Self.migrations)
        _ = try items(forEmail: "")
    }

    /// Changes whenever another process commits to the database file.
    public func dataVersion() throws -> Int64 { try database.dataVersion() }

    public func items(forEmail email: String) throws -> [Item] {
        try database.query("SELECT id, title, detail FROM api_a_items WHERE email = ? ORDER BY id LIMIT ?",
                           [.text(email), .integer(Int64(Self.maximumItems))])
            .map { Item(id: $0.int(0), title: $0.string(1), detail: $0.string(2)) }
    }
}
