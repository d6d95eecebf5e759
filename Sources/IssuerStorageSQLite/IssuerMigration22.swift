import SQLiteClient

extension IssuerMigrations {
    /// OpenID Connect Back-Channel Logout 1.0: a client's
    /// `backchannel_logout_uri` (§2.2), where a logout token is POSTed when
    /// a session it was issued tokens in ends.
    static let backchannelLogout = Migration(version: 22, sql: """
        ALTER TABLE clients ADD COLUMN backchannel_logout_uri TEXT;
        """)
}
