import IssuerStorage
import PostgreSQLClient

/// The issuer's tables as the PostgreSQL catalogue describes them: columns
/// with their types, identity columns, and an order in which every table
/// comes after the tables its foreign keys name (a copy must insert a user
/// before the sessions that point at it: the role Gatehouse connects as
/// cannot switch the checks off).
struct PostgreSQLTableShapes {
    struct Column: Equatable {
        let name: String
        /// information_schema's `data_type`: `bigint`, `text`, `bytea` in this schema.
        let type: String
        let isIdentity: Bool
    }

    /// Table name → columns in order, bookkeeping aside.
    let columns: [String: [Column]]
    /// Every table, parents before children.
    let insertionOrder: [String]

    static func read(_ connection: PostgreSQLConnection) throws -> PostgreSQLTableShapes {
        var columns: [String: [Column]] = [:]
        for row in try connection.query("""
            SELECT c.table_name::text, c.column_name::text, c.data_type::text, c.is_identity::text
            FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
            ORDER BY c.table_name, c.ordinal_position
            """) where !IssuerStateTables.bookkeeping.contains(row.string(0)) {
            columns[row.string(0), default: []].append(Column(name: row.string(1), type: row.string(2), isIdentity: row.string(3) == "YES"))
        }
        let references = try connection.query("""
            SELECT child.relname::text, parent.relname::text FROM pg_constraint k
            JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
            WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace
            """).map { (child: $0.string(0), parent: $0.string(1)) }
        return PostgreSQLTableShapes(columns: columns, insertionOrder: try order(Array(columns.keys), references: references))
    }

    /// Parents first; among tables free to go, by name (a stable order).
    static func order(_ tables: [String], references: [(child: String, parent: String)]) throws -> [String] {
        var waiting = Set(tables)
        var ordered: [String] = []
        while !waiting.isEmpty {
            let ready = waiting.filter { table in
                !references.contains { $0.child == table && $0.parent != table && waiting.contains($0.parent) }
            }.sorted()
            guard !ready.isEmpty else {
                throw StateTransferError(.schemaMismatch, "the foreign keys of " + waiting.sorted().joined(separator: ", ") + " form a cycle")
            }
            ordered += ready
            waiting.subtract(ready)
        }
        return ordered
    }
}
