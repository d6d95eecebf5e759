import SQLiteClient

extension IssuerMigrations {
    /// TOTP and login throttling.
    ///
    /// - `totp_credentials`: one TOTP seed per user, sealed with AES-256-GCM
    ///   under `keys/totp-seal.key` (TOTPSecretSealer), and the last time step
    ///   accepted, so a code is good once (RFC 6238 §5.2).
    /// - `login_throttle`: failed sign-ins per account and per client address
    ///   (LoginThrottle); the key is a SHA-256, so a password typed into the
    ///   email field is never stored in clear.
    /// - `pending_authorizations.password_verified_*`: the first factor passed
    ///   for this pending request; the TOTP step completes it.
    /// - `amr` on sessions and codes: how the user authenticated (RFC 8176
    ///   values, space-separated); rows from before this migration were
    ///   password sign-ins.
    static let accountSecurity = Migration(version: 4, sql: """
        CREATE TABLE totp_credentials (
            user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            sealed_secret BLOB NOT NULL,
            last_used_step INTEGER NOT NULL DEFAULT -1,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE login_throttle (
            key_hash BLOB PRIMARY KEY,
            failures INTEGER NOT NULL,
            window_started_at INTEGER NOT NULL,
            locked_until INTEGER NOT NULL DEFAULT 0,
            admitted INTEGER NOT NULL DEFAULT 1
        ) WITHOUT ROWID;
        CREATE INDEX login_throttle_window ON login_throttle(window_started_at);
        ALTER TABLE pending_authorizations ADD COLUMN password_verified_user_id INTEGER;
        ALTER TABLE pending_authorizations ADD COLUMN password_verified_at INTEGER;
        ALTER TABLE sso_sessions ADD COLUMN amr TEXT NOT NULL DEFAULT 'pwd';
        ALTER TABLE authorization_codes ADD COLUMN amr TEXT NOT NULL DEFAULT 'pwd';
        """)
}
