import SQLiteClient

extension IssuerMigrations {
    /// Getting in on one's own (sign-up, verification, password reset,
    /// invitations):
    ///
    /// `users.email_verified`: every account before this migration was made
    /// by an administrator and its ID tokens said `email_verified: true`,
    /// so existing rows keep true (the DEFAULT); new rows always name it.
    ///
    /// `account_links`: the links mailed for those journeys. Only the
    /// SHA-256 of the 128-bit token is stored; `used_at` is set once by the
    /// statement that redeems (or voids) a link. `pending_request` names the
    /// sign-in a sign-up began from, so verifying can continue it in the
    /// same browser. The links go with their account (ON DELETE CASCADE).
    static let accountLinks = Migration(version: 17, sql: """
        ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1;
        CREATE TABLE account_links (
            token_hash BLOB PRIMARY KEY,
            purpose TEXT NOT NULL,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER,
            pending_request TEXT
        );
        CREATE INDEX account_links_user ON account_links(user_id, purpose) WHERE used_at IS NULL;
        CREATE INDEX account_links_expiry ON account_links(expires_at);
        """)
}
