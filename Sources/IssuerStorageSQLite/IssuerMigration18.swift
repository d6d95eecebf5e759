import SQLiteClient

extension IssuerMigrations {
    /// `totp_recovery_codes`: the SHA-256 of each unused recovery code of
    /// an account with TOTP (ten are shown once when it is enrolled); using
    /// one deletes its row, and removing TOTP deletes them all.
    static let recoveryCodes = Migration(version: 18, sql: """
        CREATE TABLE totp_recovery_codes (
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            code_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (user_id, code_hash)
        ) WITHOUT ROWID;
        """)
}
