import SQLiteClient

extension IssuerMigrations {
    /// Sign-in: SSO sessions, pending authorization requests, one-time
    /// codes, refresh tokens. Every secret is stored as its SHA-256.
    static let signIn = Migration(version: 2, sql: """
            CREATE TABLE sso_sessions (
                sid TEXT PRIMARY KEY,
                secret_hash BLOB NOT NULL UNIQUE,
                user_id INTEGER NOT NULL REFERENCES users(id),
                auth_time INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                ended_at INTEGER
            );
            CREATE INDEX sso_sessions_user ON sso_sessions(user_id);
            CREATE TABLE pending_authorizations (
                secret_hash BLOB PRIMARY KEY,
                form_token_hash BLOB NOT NULL,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                scope TEXT NOT NULL,
                state TEXT,
                nonce TEXT,
                code_challenge TEXT NOT NULL,
                max_age INTEGER,
                replaces_sid TEXT,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX pending_authorizations_expiry ON pending_authorizations(expires_at);
            CREATE TABLE authorization_codes (
                code_hash BLOB PRIMARY KEY,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                sid TEXT NOT NULL,
                user_id INTEGER NOT NULL,
                auth_time INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                used_at INTEGER,
                issued_family_id TEXT,
                issued_jti TEXT
            );
            CREATE INDEX authorization_codes_expiry ON authorization_codes(expires_at);
            CREATE TABLE refresh_tokens (
                token_hash BLOB PRIMARY KEY,
                family_id TEXT NOT NULL,
                client_id TEXT NOT NULL,
                user_id INTEGER NOT NULL,
                sid TEXT NOT NULL,
                scope TEXT NOT NULL,
                auth_time INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                used_at INTEGER,
                revoked_at INTEGER
            );
            CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
            CREATE INDEX refresh_tokens_sid ON refresh_tokens(sid);
            CREATE INDEX refresh_tokens_expiry ON refresh_tokens(expires_at);
            CREATE TABLE revoked_access_tokens (
                jti TEXT PRIMARY KEY,
                expires_at INTEGER NOT NULL
            );
            """)
}
