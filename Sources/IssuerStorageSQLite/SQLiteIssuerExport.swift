import FoundationEssentials
import IssuerStorage
import SQLiteClient

/// The issuer's SQLite file as the source of a move to another backend
/// (`ssoctl migrate`), and the test for whether it holds any state.
/// Opened read-only: the file is left as it was, byte for byte.
public final class SQLiteIssuerExport: IssuerStateSource {
    let database: SQLiteDatabase
    let keys: SQLiteSigningKeyStore

    /// Throws when there is no file at `databasePath` (a read-only open
    /// would not create one, and there is nothing to move).
    public init(databasePath: String, keysDirectory: String) throws {
        guard FileManager.default.fileExists(atPath: databasePath) else {
            throw SQLiteError(code: 14, message: "no database at \(databasePath)")
        }
        database = try SQLiteDatabase(path: databasePath, readOnly: true)
        keys = SQLiteSigningKeyStore(database: database, keysDirectory: keysDirectory)
    }

    public var location: String { database.path }

    /// A copy needs the source at the schema this build writes, or the two
    /// schemas cannot match; the file is never migrated here (read-only).
    public func requireCurrentSchema() throws {
        let expected = SQLiteIssuerSchema.migrations.map(\.version).max() ?? 0
        let current = Int(try database.queryOne("SELECT version FROM schema_migrations WHERE component = 'issuer'")?.int(0) ?? 0)
        guard current == expected else {
            throw StateTransferError(.sourceOutOfDate, current < expected
                ? "\(location) is at issuer schema version \(current), this build writes \(expected): start Gatehouse on SQLite once "
                    + "with this build (GATEHOUSE_DATABASE_URL unset; ssoctl setup is enough) to bring it up to date, then migrate"
                : "\(location) is at issuer schema version \(current), newer than this build's \(expected): use the newer ssoctl")
        }
    }

    /// True when any table holds a row, the schema's bookkeeping aside: a
    /// file with only the schema (or none of it) holds nothing to lose.
    public func holdsState() throws -> Bool {
        try tables().contains { table in try database.queryOne("SELECT EXISTS (SELECT 1 FROM \(Self.quoted(table.name)))")?.int(0) == 1 }
    }

    public func tables() throws -> [IssuerTableShape] {
        let names = try database.query("""
            SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """).map { $0.string(0) }.filter { !IssuerStateTables.bookkeeping.contains($0) }
        return try names.map { name in
            IssuerTableShape(name: name, columns: try database.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)])
                .map { $0.string(0) })
        }
    }

    /// In rowid order, the order of insertion (a WITHOUT ROWID table, whose
    /// order nothing depends on, in its key's order).
    public func forEachRow(of table: IssuerTableShape, _ body: ([TransferValue]) throws -> Void) throws {
        let withoutRowID = try database.queryOne("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?",
                                                 [.text(table.name)])?.int(0) == 1
        let columns = table.columns.map(Self.quoted).joined(separator: ", ")
        try database.forEachRow("SELECT \(columns) FROM \(Self.quoted(table.name))\(withoutRowID ? "" : " ORDER BY rowid")") { row in
            try body(try row.values.enumerated().map { index, value in
                try Self.transferValue(value, table: table.name, column: table.columns[index])
            })
        }
    }

    public func rowCount(of table: String) throws -> Int {
        Int(try database.queryOne("SELECT count(*) FROM \(Self.quoted(table))")?.int(0) ?? 0)
    }

    public func privateKeyPEM(kid: String) throws -> [UInt8]? { try keys.privateKeyPEM(kid: kid) }

    /// A deferred read transaction: one snapshot of the file (and of its
    /// write-ahead log), taking no lock that would stop a writer.
    public func withSnapshot<T>(_ body: () throws -> T) throws -> T {
        try database.executeScript("BEGIN")
        defer { try? database.executeScript("COMMIT") }
        return try body()
    }

    static func transferValue(_ value: SQLiteValue, table: String, column: String) throws -> TransferValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .text(let text): return .text(text)
        case .blob(let bytes): return .bytes(bytes)
        case .real: throw StateTransferError(.unmovableRow, "\(table).\(column) holds a floating-point value, which no issuer column has")
        }
    }

    /// An identifier from the file's own schema, quoted for SQL.
    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacing("\"", with: "\"\"") + "\""
    }
}
