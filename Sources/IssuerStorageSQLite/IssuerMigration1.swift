import SQLiteClient

extension IssuerMigrations {
    /// Users, clients and their redirect URIs, signing key metadata.
    static let accounts = Migration(version: 1, sql: """
            CREATE TABLE users (
                id INTEGER PRIMARY KEY,
                subject TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                name TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                roles TEXT NOT NULL DEFAULT 'user',
                disabled INTEGER NOT NULL DEFAULT 0,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE clients (
                client_id TEXT PRIMARY KEY,
                secret_hash TEXT,
                scopes TEXT NOT NULL,
                native_sso_group TEXT,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE client_redirect_uris (
                client_id TEXT NOT NULL REFERENCES clients(client_id) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('login', 'post_logout')),
                uri TEXT NOT NULL,
                PRIMARY KEY (client_id, kind, uri)
            );
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                public_pem TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                activates_at INTEGER NOT NULL,
                retired_at INTEGER
            );
            CREATE INDEX signing_keys_activation ON signing_keys(activates_at);
            """)
}
