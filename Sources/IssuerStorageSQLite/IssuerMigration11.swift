import SQLiteClient

extension IssuerMigrations {
    /// Passkeys (WebAuthn credentials) and the single-use WebAuthn challenges.
    ///
    /// - `passkeys`: one row per credential, by its id as bytes (1…1023,
    ///   WebAuthn §5.1), for one user: its COSE public key and algorithm,
    ///   the signature counter (a use is recorded only if it grew), the
    ///   authenticator's AAGUID, the backup flags (BE, BS), the transports
    ///   (space-separated), the name shown on /account. Erasing the user
    ///   takes them along (ON DELETE CASCADE; AccountChanges.delete also
    ///   deletes them itself, to count them).
    /// - `webauthn_challenges`: by SHA-256 of the challenge (never the
    ///   challenge itself), what it was issued for, the user (NULL for a
    ///   discoverable sign-in) and the caller's binding, until it expires
    ///   or is used once; the sweep deletes it then.
    static let passkeys = Migration(version: 11, sql: """
        CREATE TABLE passkeys (
            credential_id BLOB NOT NULL PRIMARY KEY CHECK (length(credential_id) BETWEEN 1 AND 1023),
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            public_key_cose BLOB NOT NULL,
            algorithm INTEGER NOT NULL,
            sign_count INTEGER NOT NULL,
            name TEXT NOT NULL,
            aaguid BLOB NOT NULL,
            backup_eligible INTEGER NOT NULL CHECK (backup_eligible IN (0, 1)),
            backup_state INTEGER NOT NULL CHECK (backup_state IN (0, 1)),
            transports TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL,
            last_used_at INTEGER
        );
        CREATE INDEX passkeys_user ON passkeys(user_id);
        CREATE TABLE webauthn_challenges (
            challenge_hash BLOB NOT NULL PRIMARY KEY CHECK (length(challenge_hash) = 32),
            purpose TEXT NOT NULL,
            user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
            binding BLOB,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        );
        CREATE INDEX webauthn_challenges_expiry ON webauthn_challenges(expires_at);
        CREATE INDEX webauthn_challenges_user ON webauthn_challenges(user_id);
        """)
}
