import SQLiteClient

extension IssuerMigrations {
    /// `identity_providers`: the upstream OpenID Connect providers people
    /// may sign in with. Secrets and Apple's signing key are sealed
    /// (AES-256-GCM under a key never in the database); the endpoints are
    /// the ones the provider's discovery document gave when it was added.
    static let identityProviders = Migration(version: 20, sql: """
        CREATE TABLE identity_providers (
            name TEXT PRIMARY KEY,
            issuer TEXT NOT NULL,
            client_id TEXT NOT NULL,
            secret_sealed BLOB,
            scopes TEXT NOT NULL,
            label TEXT NOT NULL,
            preset TEXT NOT NULL,
            authorization_endpoint TEXT NOT NULL,
            token_endpoint TEXT NOT NULL,
            jwks_uri TEXT NOT NULL,
            apple_team_id TEXT,
            apple_key_id TEXT,
            apple_key_sealed BLOB,
            hosted_domain TEXT,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """)
}
