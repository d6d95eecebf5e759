import SQLiteClient

extension IssuerMigrations {
    /// Sender-constrained tokens (DPoP, RFC 9449) and pushed authorization
    /// requests (PAR, RFC 9126).
    ///
    /// - `pushed_authorizations`: a validated authorization request a client
    ///   pushed, by the SHA-256 of its single-use `request_uri`, bound to
    ///   the client; `parameters` is the request as pushed (form-encoded).
    /// - `dpop_proofs`: the `jti`s of DPoP proofs seen, by SHA-256, kept for
    ///   the proof's acceptance window: a proof is accepted once (§11.1),
    ///   by every responder process and node.
    /// - `dpop_jkt` on pending requests, codes and refresh tokens: the JWK
    ///   SHA-256 thumbprint (RFC 7638) a code (§10) or a public client's
    ///   refresh token (§5) is bound to; NULL when not bound.
    static let senderConstraint = Migration(version: 9, sql: """
        CREATE TABLE pushed_authorizations (
            request_uri_hash BLOB PRIMARY KEY,
            client_id TEXT NOT NULL,
            parameters TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        );
        CREATE INDEX pushed_authorizations_expiry ON pushed_authorizations(expires_at);
        CREATE TABLE dpop_proofs (
            jti_hash BLOB PRIMARY KEY,
            expires_at INTEGER NOT NULL
        );
        CREATE INDEX dpop_proofs_expiry ON dpop_proofs(expires_at);
        ALTER TABLE pending_authorizations ADD COLUMN dpop_jkt TEXT;
        ALTER TABLE authorization_codes ADD COLUMN dpop_jkt TEXT;
        ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
        """)
}
