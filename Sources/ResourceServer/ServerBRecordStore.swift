import SQLiteClient
import SSOCore

/// Resource server B's own rows, in its own table of the shared SQLite file
/// (component "api-b"). It never reads the issuer's tables.
public final class ServerBRecordStore {
    public struct Record: Encodable, Equatable, Sendable {
        public let id: Int64
        public let label: String
        public let amount_cents: Int64
        public let currency: String
    }

    /// A response carries at most this many records.
    static let maximumRecords = 100

    static let migrations = [
        Migration(version: 1, sql: """
            CREATE TABLE api_b_records (
                id INTEGER PRIMARY KEY,
                email TEXT NOT NULL COLLATE NOCASE,
                label TEXT NOT NULL,
                amount_cents INTEGER NOT NULL,
                currency TEXT NOT NULL
            );
            CREATE INDEX api_b_records_by_email ON api_b_records (email, id);
            INSERT INTO api_b_records (email, label, amount_cents, currency) VALUES
                ('alice@example.com', 'Invoice INV-1001', 120000, 'EUR'),
                ('alice@example.com', 'Invoice INV-1002', 45050, 'EUR'),
                ('alice@example.com', 'Refund RF-0007', -9900, 'EUR');
            """),
    ]

    private let database: SQLiteDatabase

    /// Migrates the table (once per schema version, whichever process comes
    /// first) and warms the one query.
    public init(database: SQLiteDatabase) throws {
        self.database = database
        try Migrator.migrate(database, component: "api-b", migrations: Self.migrations)
        _ = try records(forEmail: "")
    }

    /// Changes whenever another process commits to the database file.
    public func dataVersion() throws -> Int64 { try database.dataVersion() }

    public func records(forEmail email: String) throws -> [Record] {
        try database.query(
            "SELECT id, label, amount_cents, currency FROM api_b_records WHERE email = ? ORDER BY id LIMIT ?",
            [.text(email), .integer(Int64(Self.maximumRecords))])
            .map { Record(id: $0.int(0), label: $0.string(1), amount_cents: $0.int(2), currency: $0.string(3)) }
    }
}
