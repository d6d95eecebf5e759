import SSOCore

/// `database.schema`: the issuer's tables are at the version this build's
/// migrations end at. Behind: nothing ran them yet; ahead: this build is
/// older than the responders that migrated the file.
struct SchemaVersionCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let database = context.database else { return [] }
        let expected = IssuerSchema.migrations.map(\.version).max() ?? 0
        let current: Int64
        do {
            guard let row = try database.queryOne("SELECT version FROM schema_migrations WHERE component = 'issuer'") else {
                return [DoctorFinding(.fail, "database.schema", "no issuer schema recorded: run ssoctl setup")]
            }
            current = row.int(0)
        } catch {
            return [DoctorFinding(.fail, "database.schema", "no schema_migrations table (\(error)): run ssoctl setup")]
        }
        if current < expected {
            return [DoctorFinding(.fail, "database.schema", "issuer schema version \(current), this build expects \(expected): run ssoctl setup")]
        }
        if current > expected {
            return [DoctorFinding(.fail, "database.schema",
                                  "issuer schema version \(current) is newer than this build (\(expected)): ssoctl is older than the database")]
        }
        return [DoctorFinding(.ok, "database.schema", "issuer schema version \(current), up to date")]
    }
}
