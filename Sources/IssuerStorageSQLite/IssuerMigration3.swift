import SQLiteClient

extension IssuerMigrations {
    /// Refresh rotation: each spent token remembers its one successor (by
    /// hash) and, during the grace window only, the successor itself sealed
    /// with AES-GCM, so a retry after a lost reply gets the same token back.
    static let refreshRotation = Migration(version: 3, sql: """
        ALTER TABLE refresh_tokens ADD COLUMN successor_hash BLOB;
        ALTER TABLE refresh_tokens ADD COLUMN successor_sealed BLOB;
        CREATE INDEX refresh_tokens_sealed ON refresh_tokens(used_at) WHERE successor_sealed IS NOT NULL;
        """)
}
