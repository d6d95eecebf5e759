import SQLiteClient

extension IssuerMigrations {
    /// Native SSO (OpenID Connect Native SSO for Mobile Apps 1.0).
    ///
    /// - `device_secrets`: the `device_secret`s handed out with the `device_sso`
    ///   scope, stored as SHA-256 (SecretHash) like every other secret. Each is
    ///   bound to the SSO session (`sid`) and user it was issued in, so ending
    ///   the session (SessionBoundCredentials) revokes it; it never outlives the
    ///   session (`expires_at` is the session's). `client_id` is the app it was
    ///   issued to, `device_id` what that app said about its device, if
    ///   anything. `code_hash` is the authorization code whose exchange issued
    ///   it: a replayed code revokes what its first use issued.
    ///   A plain rowid table: the Sweeper deletes by rowid.
    static let nativeSSO = Migration(version: 5, sql: """
        CREATE TABLE device_secrets (
            secret_hash BLOB NOT NULL UNIQUE,
            sid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            client_id TEXT NOT NULL,
            device_id TEXT,
            code_hash BLOB,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            revoked_at INTEGER
        );
        CREATE INDEX device_secrets_sid ON device_secrets(sid);
        CREATE INDEX device_secrets_expiry ON device_secrets(expires_at);
        CREATE INDEX device_secrets_code ON device_secrets(code_hash) WHERE code_hash IS NOT NULL;
        """)
}
