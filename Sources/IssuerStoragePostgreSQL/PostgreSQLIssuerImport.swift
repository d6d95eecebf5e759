import IssuerStorage
import PostgreSQLClient

/// Copies an issuer's whole state from another backend (`ssoctl migrate`:
/// the SQLite file of a home) into an empty PostgreSQL database.
///
/// One transaction, under the lock every node takes to migrate the schema:
/// the target is checked empty, the schema created, every table copied
/// (the schemas compared first, parents before children), what is sealed
/// at rest sealed again under this deployment's keys, the identity
/// sequences moved past the copied ids, and the rows counted on both sides.
/// Any failure rolls all of it back: the database is as it was.
public final class PostgreSQLIssuerImport {
    let connection: PostgreSQLConnection
    let keySealing: SigningKeySealing

    /// `masterKey`: the deployment's `keys/master.key`, which seals the
    /// private signing keys here as it does for every node.
    public init(connection: PostgreSQLConnection, masterKey: [UInt8]) {
        self.connection = connection
        keySealing = SigningKeySealing(masterKey: masterKey)
    }

    /// Refuses, naming what is there, unless the database holds no issuer
    /// state; creates nothing. `copy` checks it again, under the lock.
    public static func requireEmptyTarget(_ connection: PostgreSQLConnection) throws {
        try PostgreSQLIssuerState.requireEmpty(connection)
    }

    /// The counts per table, all equal; or it throws and nothing is kept.
    /// Read `source` inside its snapshot (`withSnapshot`) for a consistent copy.
    public func copy(from source: any IssuerStateSource, resealing: any SealedValueResealing) throws -> [TableCopyCount] {
        try connection.transaction {
            try PostgreSQLIssuerSchema.lockMigrations(connection)
            try PostgreSQLIssuerState.requireEmpty(connection)
            try PostgreSQLIssuerSchema.migrateInTransaction(connection)
            let shapes = try PostgreSQLTableShapes.read(connection)
            let plans = try PostgreSQLTablePlan.all(source: try source.tables(), target: shapes)
            let rules = PostgreSQLImportRules(source: source, keySealing: keySealing, resealing: resealing)
            for plan in plans {
                let sql = plan.insertSQL
                try source.forEachRow(of: plan.source) { row in try connection.execute(sql, try plan.values(of: row, rules)) }
            }
            try restartIdentitySequences(shapes)
            return try countBothSides(plans, source)
        }
    }

    /// Each identity sequence starts after the largest id now in its table,
    /// so the next user (say) does not collide with a copied one.
    func restartIdentitySequences(_ shapes: PostgreSQLTableShapes) throws {
        for (table, columns) in shapes.columns.sorted(by: { $0.key < $1.key }) {
            for column in columns where column.isIdentity {
                let quotedTable = PostgreSQLIssuerState.quoted(table)
                try connection.query("""
                    SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(\(PostgreSQLIssuerState.quoted(column.name))), 0) + 1, false)
                    FROM \(quotedTable)
                    """, [.text(quotedTable), .text(column.name)])
            }
        }
    }

    /// Every table's rows, counted in the source's snapshot and in this
    /// transaction: a row lost or doubled on the way fails the copy.
    func countBothSides(_ plans: [PostgreSQLTablePlan], _ source: any IssuerStateSource) throws -> [TableCopyCount] {
        let counts = try plans.map { plan in
            TableCopyCount(table: plan.table, source: try source.rowCount(of: plan.table),
                           target: Int(try connection.queryOne("SELECT count(*) FROM \(PostgreSQLIssuerState.quoted(plan.table))")?.int(0) ?? 0))
        }.sorted { $0.table < $1.table }
        let differing = counts.filter { $0.source != $0.target }
        guard differing.isEmpty else {
            throw StateTransferError(.countMismatch, "the copy's row counts differ: "
                                     + differing.map { "\($0.table) \($0.source) in the source, \($0.target) copied" }.joined(separator: "; "))
        }
        return counts
    }
}
