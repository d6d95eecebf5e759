import SQLiteClient

extension IssuerMigrations {
    /// `readiness_probes`: the ops listener's `/health/ready` proves that
    /// the database takes writes by writing here, one row per node (when
    /// each node last found itself ready).
    static let readinessProbes = Migration(version: 10, sql: """
        CREATE TABLE readiness_probes (
            node TEXT PRIMARY KEY,
            written_at INTEGER NOT NULL
        );
        """)
}
