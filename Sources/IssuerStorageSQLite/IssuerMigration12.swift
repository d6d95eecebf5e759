import SQLiteClient

extension IssuerMigrations {
    /// Where each sign-in came from, for `/account`'s "Sessions and
    /// devices": `sso_sessions.created_ip`, the client address at sign-in,
    /// and `sso_sessions.user_agent`, its User-Agent header (each at most
    /// 256 bytes, control characters dropped, by SSOSessions.create). NULL
    /// for sessions made before this migration, or without them.
    static let sessionOrigins = Migration(version: 12, sql: """
        ALTER TABLE sso_sessions ADD COLUMN created_ip TEXT;
        ALTER TABLE sso_sessions ADD COLUMN user_agent TEXT;
        """)
}
