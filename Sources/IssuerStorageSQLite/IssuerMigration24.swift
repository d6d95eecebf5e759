import SQLiteClient

extension IssuerMigrations {
    /// What a client is held to beyond its authentication:
    /// `require_signed_request_object` (RFC 9101 §10.5) and `profile`
    /// (`fapi2`, the FAPI 2.0 Security Profile; NULL for none).
    static let clientRequirements = Migration(version: 24, sql: """
        ALTER TABLE clients ADD COLUMN require_signed_request_object INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN profile TEXT;
        """)
}
