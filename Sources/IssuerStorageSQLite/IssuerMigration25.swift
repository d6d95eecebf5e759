import SQLiteClient

extension IssuerMigrations {
    /// More than one signing algorithm: each key's `alg` (RS256 for every
    /// key made before), and the algorithm a client's tokens are signed
    /// with (`id_token_signed_response_alg`; NULL: RS256).
    static let signingAlgorithms = Migration(version: 25, sql: """
        ALTER TABLE signing_keys ADD COLUMN alg TEXT NOT NULL DEFAULT 'RS256';
        ALTER TABLE clients ADD COLUMN id_token_signed_response_alg TEXT;
        """)
}
