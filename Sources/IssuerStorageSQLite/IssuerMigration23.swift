import SQLiteClient

extension IssuerMigrations {
    /// Strong client authentication (RFC 7523 §2.2, OIDC Core §9):
    /// `token_endpoint_auth_method` (RFC 7591 §2; nil: `client_secret_basic`
    /// and `client_secret_post` with a secret, `none` without), and the
    /// client's public keys for `private_key_jwt`, as a JWK Set (`jwks`)
    /// or where to fetch one (`jwks_uri`).
    static let clientKeys = Migration(version: 23, sql: """
        ALTER TABLE clients ADD COLUMN token_endpoint_auth_method TEXT;
        ALTER TABLE clients ADD COLUMN jwks TEXT;
        ALTER TABLE clients ADD COLUMN jwks_uri TEXT;
        """)
}
