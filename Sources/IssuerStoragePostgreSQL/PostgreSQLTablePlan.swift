import IssuerStorage
import PostgreSQLClient

/// How one table's rows go in: each column inserted, and where its value
/// comes from (a source column, or a rule); identity columns the source
/// lacks are left to their sequence.
struct PostgreSQLTablePlan {
    struct Inserted {
        let column: PostgreSQLTableShapes.Column
        /// The source column's position; nil: made by PostgreSQLImportRules.
        let sourceIndex: Int?
    }

    let table: String
    let source: IssuerTableShape
    let inserted: [Inserted]
    /// The source's column name → position, for the rules.
    let columnIndex: [String: Int]

    init(table: String, source: IssuerTableShape, inserted: [Inserted]) {
        self.table = table
        self.source = source
        self.inserted = inserted
        columnIndex = Dictionary(uniqueKeysWithValues: source.columns.enumerated().map { ($1, $0) })
    }

    /// One plan per table, parents first; or the refusal, naming every
    /// table and column the two schemas do not share (a column added to one
    /// backend's migrations only, say), before a row is copied.
    static func all(source: [IssuerTableShape], target: PostgreSQLTableShapes) throws -> [PostgreSQLTablePlan] {
        let sources = Dictionary(uniqueKeysWithValues: source.map { ($0.name, $0) })
        var differences = Set(sources.keys).subtracting(target.columns.keys).sorted().map { "table \($0) only in the source" }
        differences += Set(target.columns.keys).subtracting(sources.keys).sorted().map { "table \($0) only in PostgreSQL" }
        var plans: [PostgreSQLTablePlan] = []
        for table in target.insertionOrder {
            guard let shape = sources[table], let columns = target.columns[table] else { continue }
            let targetNames = Set(columns.map(\.name))
            differences += shape.columns.filter { !targetNames.contains($0) }.map { "column \(table).\($0) only in the source" }
            let derived = PostgreSQLImportRules.derivedColumns[table] ?? []
            var inserted: [Inserted] = []
            for column in columns {
                if let index = shape.columns.firstIndex(of: column.name) {
                    inserted.append(Inserted(column: column, sourceIndex: index))
                } else if derived.contains(column.name) {
                    inserted.append(Inserted(column: column, sourceIndex: nil))
                } else if !column.isIdentity {
                    differences.append("column \(table).\(column.name) only in PostgreSQL")
                }
            }
            plans.append(PostgreSQLTablePlan(table: table, source: shape, inserted: inserted))
        }
        guard differences.isEmpty else {
            throw StateTransferError(.schemaMismatch, "the SQLite and PostgreSQL schemas differ: " + differences.joined(separator: "; ")
                                     + " (every table and column must have its counterpart, or a rule in PostgreSQLImportRules)")
        }
        return plans
    }

    /// A value given for an identity column needs OVERRIDING SYSTEM VALUE
    /// (`users.id`: every other table refers to users by it).
    var insertSQL: String {
        let names = inserted.map { PostgreSQLIssuerState.quoted($0.column.name) }.joined(separator: ", ")
        let placeholders = inserted.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let overriding = inserted.contains { $0.column.isIdentity } ? " OVERRIDING SYSTEM VALUE" : ""
        return "INSERT INTO \(PostgreSQLIssuerState.quoted(table)) (\(names))\(overriding) VALUES (\(placeholders))"
    }

    /// One source row as the values of `insertSQL`.
    func values(of sourceValues: [TransferValue], _ rules: PostgreSQLImportRules) throws -> [PostgreSQLValue] {
        let row = ImportRow(table: table, columnIndex: columnIndex, values: sourceValues)
        return try inserted.map { item in
            guard let index = item.sourceIndex else { return try rules.derive(item.column.name, of: table, row) }
            let carried = try rules.carry(sourceValues[index], column: item.column.name, of: table, row)
            return try Self.postgreSQLValue(carried, for: item.column, of: table)
        }
    }

    /// The value as the column's type takes it, or a refusal naming the
    /// column (never the value: it may be a secret's hash).
    static func postgreSQLValue(_ value: TransferValue, for column: PostgreSQLTableShapes.Column, of table: String) throws -> PostgreSQLValue {
        switch (value, column.type) {
        case (.null, _): return .null
        case (.integer(let number), "bigint"): return .integer(number)
        case (.text(let text), "text") where !text.utf8.contains(0): return .text(text)
        case (.bytes(let bytes), "bytea"): return .bytes(bytes)
        default:
            throw StateTransferError(.unmovableRow, "a value in \(table).\(column.name) does not fit its PostgreSQL type \(column.type)")
        }
    }
}
