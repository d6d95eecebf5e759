import SQLiteClient

extension IssuerMigrations {
    /// `federated_identities`: local accounts' links to accounts at upstream
    /// providers, keyed by the provider's issuer and `sub`; and
    /// `federation_requests`: a browser's trip to a provider (state and
    /// binding stored as SHA-256 hashes, single use, ten minutes), with the
    /// link it may offer an existing account's owner. And whether a provider
    /// sends RFC 9207's `iss` in its authorization responses.
    static let federatedIdentities = Migration(version: 21, sql: """
        CREATE TABLE federated_identities (
            issuer TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            provider TEXT NOT NULL,
            email TEXT NOT NULL,
            linked_at INTEGER NOT NULL,
            last_used_at INTEGER,
            PRIMARY KEY (issuer, subject)
        ) WITHOUT ROWID;
        CREATE INDEX federated_identities_user ON federated_identities (user_id);
        CREATE TABLE federation_requests (
            state_hash BLOB PRIMARY KEY,
            binding_hash BLOB NOT NULL,
            provider TEXT NOT NULL,
            pending_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER,
            link_user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
            link_issuer TEXT,
            link_subject TEXT,
            link_email TEXT
        );
        CREATE INDEX federation_requests_pending ON federation_requests (pending_hash);
        ALTER TABLE identity_providers ADD COLUMN sends_iss INTEGER NOT NULL DEFAULT 0;
        """)
}
