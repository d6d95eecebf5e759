import IssuerStorage
import PostgreSQLClient

/// Whether a PostgreSQL database already holds an issuer's state, read
/// without creating anything (no schema, no row): the start-up check
/// against a home whose state is still on SQLite, and `ssoctl migrate`'s
/// requirement of an empty target, use the same answer.
public enum PostgreSQLIssuerState {
    /// True when any table of the connection's schema holds a row, the
    /// schema's bookkeeping aside. A database without the schema, or with
    /// only the schema, holds nothing.
    public static func holdsState(_ connection: PostgreSQLConnection) throws -> Bool {
        let tables = try stateTables(connection)
        guard !tables.isEmpty else { return false }
        let test = tables.map { "EXISTS (SELECT 1 FROM \(quoted($0)))" }.joined(separator: " OR ")
        return try connection.queryOne("SELECT (\(test))::int")?.int(0) == 1
    }

    /// Refuses, naming the tables that hold rows, unless the database holds nothing.
    static func requireEmpty(_ connection: PostgreSQLConnection) throws {
        let occupied = try stateTables(connection).filter { table in
            try connection.queryOne("SELECT EXISTS (SELECT 1 FROM \(quoted(table)))::int")?.int(0) == 1
        }
        guard occupied.isEmpty else {
            throw StateTransferError(.targetNotEmpty, "the target database already holds issuer state (rows in "
                                     + occupied.joined(separator: ", ") + "): migrate only into an empty database")
        }
    }

    /// The base tables of the connection's current schema, bookkeeping aside.
    static func stateTables(_ connection: PostgreSQLConnection) throws -> [String] {
        try connection.query("""
            SELECT table_name::text FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name
            """).map { $0.string(0) }.filter { !IssuerStateTables.bookkeeping.contains($0) }
    }

    /// An identifier from the database's own catalogue, quoted for SQL.
    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacing("\"", with: "\"\"") + "\""
    }
}
