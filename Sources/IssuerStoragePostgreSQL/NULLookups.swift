import PostgreSQLClient

extension PostgreSQLConnection {
    /// PostgreSQL text cannot hold a NUL byte (it refuses the value, SQLSTATE
    /// 22021), so a text value with one names no stored row: a lookup with
    /// it finds nothing, as on SQLite, where it is simply another value.
    /// Identifiers are bytes, on every backend.
    func lookup(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> [PostgreSQLRow] {
        values.contains(where: Self.holdsNUL) ? [] : try query(sql, values)
    }

    func lookupOne(_ sql: String, _ values: [PostgreSQLValue] = []) throws -> PostgreSQLRow? {
        try lookup(sql, values).first
    }

    static func holdsNUL(_ value: PostgreSQLValue) -> Bool {
        if case .text(let text) = value { return text.utf8.contains(0) }
        return false
    }
}
