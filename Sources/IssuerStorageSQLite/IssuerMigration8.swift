import SQLiteClient

extension IssuerMigrations {
    /// A team's own APIs and complete client settings.
    ///
    /// - `apis`, `api_scopes`: registered resource servers (`ssoctl api`);
    ///   a scope has one owner, so it names one audience. The demo APIs are
    ///   registered by `ssoctl setup` (their origins are configuration).
    /// - `clients.grant_types`: what a client may use (RFC 7591 §2); rows
    ///   from before were sign-in clients.
    /// - `clients.require_dpop`, `require_par`: RFC 9449, RFC 9126 §6.
    /// - `clients.*_lifetime`: seconds, NULL for the issuer's own.
    /// - `clients.ios_app_id`, `android_package`,
    ///   `android_cert_fingerprints`: the app for the association files.
    static let apisAndClientSettings = Migration(version: 8, sql: """
        CREATE TABLE apis (
            audience TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE api_scopes (
            scope TEXT PRIMARY KEY,
            audience TEXT NOT NULL REFERENCES apis(audience) ON DELETE CASCADE
        );
        CREATE INDEX api_scopes_audience ON api_scopes(audience);
        ALTER TABLE clients ADD COLUMN grant_types TEXT NOT NULL DEFAULT 'authorization_code refresh_token';
        ALTER TABLE clients ADD COLUMN require_dpop INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN require_par INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN access_token_lifetime INTEGER;
        ALTER TABLE clients ADD COLUMN refresh_token_lifetime INTEGER;
        ALTER TABLE clients ADD COLUMN ios_app_id TEXT;
        ALTER TABLE clients ADD COLUMN android_package TEXT;
        ALTER TABLE clients ADD COLUMN android_cert_fingerprints TEXT NOT NULL DEFAULT '';
        CREATE INDEX refresh_tokens_client ON refresh_tokens(client_id);
        CREATE INDEX device_secrets_client ON device_secrets(client_id);
        """)
}
