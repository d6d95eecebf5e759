import SQLiteClient

extension IssuerMigrations {
    /// OpenID Connect Back-Channel Logout 1.0: a client's
    /// `backchannel_logout_uri` (§2.2), where a logout token is POSTed when
    /// a session it was issued tokens in ends. `sso_sessions.client_ids`:
    /// the clients issued tokens in the session (a space-separated list;
    /// client ids hold no spaces), so a client that took only an ID token
    /// is told too once its code is swept; `ended_reason`: why it ended,
    /// the `reason` a refused refresh gives (SessionEndReason).
    static let backchannelLogout = Migration(version: 22, sql: """
        ALTER TABLE clients ADD COLUMN backchannel_logout_uri TEXT;
        ALTER TABLE sso_sessions ADD COLUMN client_ids TEXT NOT NULL DEFAULT '';
        ALTER TABLE sso_sessions ADD COLUMN ended_reason TEXT;
        """)
}
