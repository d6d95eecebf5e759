/// The doctor's verdict on a schema version, the same for every backend.
public enum SchemaVersionFinding {
    public static func of(current: Int, expected: Int) -> DoctorFinding {
        if current < expected {
            return DoctorFinding(.fail, "database.schema", "issuer schema version \(current), this build expects \(expected): run ssoctl setup")
        }
        if current > expected {
            return DoctorFinding(.fail, "database.schema",
                                 "issuer schema version \(current) is newer than this build (\(expected)): ssoctl is older than the database")
        }
        return DoctorFinding(.ok, "database.schema", "issuer schema version \(current), up to date")
    }
}
