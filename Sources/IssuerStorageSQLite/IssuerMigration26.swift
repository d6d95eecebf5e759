import SQLiteClient

extension IssuerMigrations {
    /// Dynamic client registration (RFC 7591, RFC 7592): the initial access
    /// tokens `ssoctl client registration-token` makes (by SHA-256, with
    /// their uses left), and the hash of each dynamically registered
    /// client's registration access token.
    static let dynamicRegistration = Migration(version: 26, sql: """
        CREATE TABLE initial_access_tokens (
            token_hash BLOB PRIMARY KEY,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            uses_left INTEGER NOT NULL
        );
        ALTER TABLE clients ADD COLUMN registration_access_token_hash BLOB;
        """)
}
