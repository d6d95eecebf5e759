import PostgreSQLClient

/// The issuer's tables in PostgreSQL. Append new migrations; never edit a
/// landed one. The same rows as the SQLite schema, in PostgreSQL's types:
/// BIGINT for every number and flag (0/1), TEXT, BYTEA for hashes and
/// sealed values; `users.email_key` is the ASCII-folded email (EmailKey)
/// the unique index and the lookup use, so both backends agree on which
/// spellings are one address, byte for byte.
public enum PostgreSQLIssuerSchema {
    public static let migrations: [(version: Int, sql: String)] = [(1, version1), (2, version2), (3, version3), (4, version4), (5, version5),
                                                                    (6, version6), (7, version7), (8, version8), (9, version9),
                                                                    (10, version10), (11, version11), (12, version12),
                                                                    (13, version13), (14, version14), (15, version15),
                                                                    (16, version16), (17, version17), (18, version18), (19, version19)]

    /// Any fixed 64-bit number: the advisory lock every node takes to
    /// migrate, so nodes starting at once apply each migration once.
    static let migrationLock: Int64 = 0x6761_7465_686F_7573   // "gatehous"

    /// Brings the schema up to date, under a transaction-scoped advisory
    /// lock (DDL is transactional in PostgreSQL: all of a migration or none).
    public static func migrate(_ connection: PostgreSQLConnection) throws {
        try connection.transaction { try migrateInTransaction(connection) }
    }

    /// The same, inside the caller's transaction (`ssoctl migrate` creates
    /// the schema and copies the rows in one): all of it or none.
    static func migrateInTransaction(_ connection: PostgreSQLConnection) throws {
        try lockMigrations(connection)
        try connection.executeScript("CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT PRIMARY KEY, version BIGINT NOT NULL)")
        let current = try currentVersion(connection) ?? 0
        var applied = current
        for migration in migrations where migration.version > current {
            try connection.executeScript(migration.sql)
            applied = migration.version
        }
        if applied != current {
            try connection.execute("""
                INSERT INTO schema_migrations (component, version) VALUES ('issuer', $1)
                ON CONFLICT (component) DO UPDATE SET version = excluded.version
                """, [.integer(Int64(applied))])
        }
    }

    /// Until the transaction ends; taken again by the same transaction, it
    /// is held once more (PostgreSQL counts them), never waited for.
    static func lockMigrations(_ connection: PostgreSQLConnection) throws {
        try connection.execute("SELECT 1 FROM pg_advisory_xact_lock($1)", [.integer(migrationLock)])
    }

    static func currentVersion(_ connection: PostgreSQLConnection) throws -> Int? {
        try connection.queryOne("SELECT version FROM schema_migrations WHERE component = 'issuer'").map { Int($0.int(0)) }
    }

    static let version1 = """
        CREATE TABLE users (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            subject TEXT NOT NULL UNIQUE,
            email TEXT NOT NULL,
            email_key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            password_hash TEXT NOT NULL,
            roles TEXT NOT NULL DEFAULT 'user',
            disabled BIGINT NOT NULL DEFAULT 0,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE clients (
            client_id TEXT PRIMARY KEY,
            secret_hash TEXT,
            scopes TEXT NOT NULL,
            native_sso_group TEXT,
            created_at BIGINT NOT NULL
        );
        CREATE INDEX clients_group ON clients(native_sso_group);
        CREATE TABLE client_redirect_uris (
            client_id TEXT NOT NULL REFERENCES clients(client_id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('login', 'post_logout')),
            uri TEXT NOT NULL,
            PRIMARY KEY (client_id, kind, uri)
        );
        CREATE TABLE native_sso_groups (
            name TEXT PRIMARY KEY,
            allow_device_id BIGINT NOT NULL DEFAULT 0 CHECK (allow_device_id IN (0, 1))
        );
        CREATE TABLE signing_keys (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            kid TEXT PRIMARY KEY,
            public_pem TEXT NOT NULL,
            private_sealed BYTEA,
            created_at BIGINT NOT NULL,
            activates_at BIGINT NOT NULL,
            retired_at BIGINT
        );
        CREATE TABLE issuer_changes (
            id BIGINT PRIMARY KEY CHECK (id = 1),
            generation BIGINT NOT NULL
        );
        INSERT INTO issuer_changes (id, generation) VALUES (1, 0);
        CREATE TABLE sso_sessions (
            sid TEXT PRIMARY KEY,
            secret_hash BYTEA NOT NULL UNIQUE,
            user_id BIGINT NOT NULL REFERENCES users(id),
            auth_time BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            ended_at BIGINT,
            amr TEXT NOT NULL DEFAULT 'pwd'
        );
        CREATE INDEX sso_sessions_user ON sso_sessions(user_id);
        CREATE TABLE pending_authorizations (
            secret_hash BYTEA PRIMARY KEY,
            form_token_hash BYTEA NOT NULL,
            client_id TEXT NOT NULL,
            redirect_uri TEXT NOT NULL,
            scope TEXT NOT NULL,
            state TEXT,
            nonce TEXT,
            code_challenge TEXT NOT NULL,
            max_age BIGINT,
            replaces_sid TEXT,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            password_verified_user_id BIGINT,
            password_verified_at BIGINT,
            expected_subject TEXT
        );
        CREATE INDEX pending_authorizations_expiry ON pending_authorizations(expires_at);
        CREATE TABLE authorization_codes (
            code_hash BYTEA PRIMARY KEY,
            client_id TEXT NOT NULL,
            redirect_uri TEXT NOT NULL,
            code_challenge TEXT NOT NULL,
            scope TEXT NOT NULL,
            nonce TEXT,
            sid TEXT NOT NULL,
            user_id BIGINT NOT NULL,
            auth_time BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            issued_family_id TEXT,
            issued_jti TEXT,
            amr TEXT NOT NULL DEFAULT 'pwd'
        );
        CREATE INDEX authorization_codes_expiry ON authorization_codes(expires_at);
        CREATE TABLE refresh_tokens (
            token_hash BYTEA PRIMARY KEY,
            family_id TEXT NOT NULL,
            client_id TEXT NOT NULL,
            user_id BIGINT NOT NULL,
            sid TEXT NOT NULL,
            scope TEXT NOT NULL,
            auth_time BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            revoked_at BIGINT,
            successor_hash BYTEA,
            successor_sealed BYTEA
        );
        CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
        CREATE INDEX refresh_tokens_sid ON refresh_tokens(sid);
        CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);
        CREATE INDEX refresh_tokens_expiry ON refresh_tokens(expires_at);
        CREATE INDEX refresh_tokens_sealed ON refresh_tokens(used_at) WHERE successor_sealed IS NOT NULL;
        CREATE TABLE revoked_access_tokens (
            jti TEXT PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX revoked_access_tokens_expiry ON revoked_access_tokens(expires_at);
        CREATE TABLE totp_credentials (
            user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            sealed_secret BYTEA NOT NULL,
            last_used_step BIGINT NOT NULL DEFAULT -1,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE login_throttle (
            key_hash BYTEA PRIMARY KEY,
            failures BIGINT NOT NULL,
            window_started_at BIGINT NOT NULL,
            locked_until BIGINT NOT NULL DEFAULT 0,
            admitted BIGINT NOT NULL DEFAULT 1
        );
        CREATE INDEX login_throttle_window ON login_throttle(window_started_at);
        CREATE TABLE device_secrets (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            secret_hash BYTEA NOT NULL UNIQUE,
            sid TEXT NOT NULL,
            user_id BIGINT NOT NULL,
            client_id TEXT NOT NULL,
            device_id TEXT,
            scope TEXT,
            code_hash BYTEA,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            revoked_at BIGINT
        );
        CREATE INDEX device_secrets_sid ON device_secrets(sid);
        CREATE INDEX device_secrets_expiry ON device_secrets(expires_at);
        CREATE INDEX device_secrets_code ON device_secrets(code_hash) WHERE code_hash IS NOT NULL;
        """

    /// A team's own APIs and complete client settings (as SQLite's
    /// migration 8): registered APIs and the scopes each owns (a scope has
    /// one owner), the grant types a client may use, its DPoP and PAR
    /// requirements, its own token lifetimes, and the app behind it for the
    /// association files.
    static let version2 = """
        CREATE TABLE apis (
            audience TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE api_scopes (
            scope TEXT PRIMARY KEY,
            audience TEXT NOT NULL REFERENCES apis(audience) ON DELETE CASCADE
        );
        CREATE INDEX api_scopes_audience ON api_scopes(audience);
        ALTER TABLE clients ADD COLUMN grant_types TEXT NOT NULL DEFAULT 'authorization_code refresh_token';
        ALTER TABLE clients ADD COLUMN require_dpop BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN require_par BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN access_token_lifetime BIGINT;
        ALTER TABLE clients ADD COLUMN refresh_token_lifetime BIGINT;
        ALTER TABLE clients ADD COLUMN ios_app_id TEXT;
        ALTER TABLE clients ADD COLUMN android_package TEXT;
        ALTER TABLE clients ADD COLUMN android_cert_fingerprints TEXT NOT NULL DEFAULT '';
        CREATE INDEX refresh_tokens_client ON refresh_tokens(client_id);
        CREATE INDEX device_secrets_client ON device_secrets(client_id);
        """

    /// Sender-constrained tokens and pushed authorization requests (as
    /// SQLite's migration 9).
    static let version3 = """
        CREATE TABLE pushed_authorizations (
            request_uri_hash BYTEA PRIMARY KEY,
            client_id TEXT NOT NULL,
            parameters TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT
        );
        CREATE INDEX pushed_authorizations_expiry ON pushed_authorizations(expires_at);
        CREATE TABLE dpop_proofs (
            jti_hash BYTEA PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX dpop_proofs_expiry ON dpop_proofs(expires_at);
        ALTER TABLE pending_authorizations ADD COLUMN dpop_jkt TEXT;
        ALTER TABLE authorization_codes ADD COLUMN dpop_jkt TEXT;
        ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
        """

    /// The ops listener's readiness write, one row per node (as SQLite's
    /// migration 10).
    static let version4 = """
        CREATE TABLE readiness_probes (
            node TEXT PRIMARY KEY,
            written_at BIGINT NOT NULL
        );
        """

    /// Passkeys (WebAuthn credentials) and the single-use WebAuthn
    /// challenges (as SQLite's migration 11): credential ids and challenge
    /// hashes are BYTEA, compared byte for byte.
    static let version5 = """
        CREATE TABLE passkeys (
            credential_id BYTEA PRIMARY KEY CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
            user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            public_key_cose BYTEA NOT NULL,
            algorithm BIGINT NOT NULL,
            sign_count BIGINT NOT NULL,
            name TEXT NOT NULL,
            aaguid BYTEA NOT NULL,
            backup_eligible BIGINT NOT NULL CHECK (backup_eligible IN (0, 1)),
            backup_state BIGINT NOT NULL CHECK (backup_state IN (0, 1)),
            transports TEXT NOT NULL DEFAULT '',
            created_at BIGINT NOT NULL,
            last_used_at BIGINT
        );
        CREATE INDEX passkeys_user ON passkeys(user_id);
        CREATE TABLE webauthn_challenges (
            challenge_hash BYTEA PRIMARY KEY CHECK (octet_length(challenge_hash) = 32),
            purpose TEXT NOT NULL,
            user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
            binding BYTEA,
            expires_at BIGINT NOT NULL,
            used_at BIGINT
        );
        CREATE INDEX webauthn_challenges_expiry ON webauthn_challenges(expires_at);
        CREATE INDEX webauthn_challenges_user ON webauthn_challenges(user_id);
        """

    /// Where each sign-in came from (as SQLite's migration 12): the client
    /// address and the User-Agent header at sign-in, NULL for older sessions.
    static let version6 = """
        ALTER TABLE sso_sessions ADD COLUMN created_ip TEXT;
        ALTER TABLE sso_sessions ADD COLUMN user_agent TEXT;
        """

    /// A client's display name (as SQLite's migration 14): what the pages
    /// show instead of its id; NULL for none.
    static let version7 = """
        ALTER TABLE clients ADD COLUMN display_name TEXT;
        """

    /// A random id of each registration of a client id (as SQLite's
    /// migration 15), carried by its access tokens as `client_registration`.
    static let version8 = """
        ALTER TABLE clients ADD COLUMN registration_id TEXT NOT NULL DEFAULT '';
        UPDATE clients SET registration_id = md5(random()::text || clock_timestamp()::text || client_id);
        ALTER TABLE clients ALTER COLUMN registration_id DROP DEFAULT;
        """

    /// The mail outbox (as SQLite's migration 16): the serialized message
    /// as BYTEA, the recipient's EmailKey for the per-address count, and a
    /// partial index of the rows a claim can still take, in the claim's
    /// order, which `FOR UPDATE SKIP LOCKED` walks.
    static let version9 = """
        CREATE TABLE mail_outbox (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind TEXT NOT NULL,
            recipient TEXT NOT NULL,
            recipient_key TEXT NOT NULL,
            message BYTEA NOT NULL,
            created_at BIGINT NOT NULL,
            next_attempt_at BIGINT NOT NULL,
            attempts BIGINT NOT NULL DEFAULT 0,
            claimed_until BIGINT,
            claimed_by TEXT,
            sent_at BIGINT,
            failed_at BIGINT,
            last_error TEXT
        );
        CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE sent_at IS NULL AND failed_at IS NULL;
        CREATE INDEX mail_outbox_recipient ON mail_outbox(recipient_key, created_at);
        """

    /// Getting in on one's own (as SQLite's migration 17): existing
    /// accounts, all made by an administrator, keep `email_verified` true;
    /// the mailed links, stored as the SHA-256 of their token.
    static let version10 = """
        ALTER TABLE users ADD COLUMN email_verified BIGINT NOT NULL DEFAULT 1;
        CREATE TABLE account_links (
            token_hash BYTEA PRIMARY KEY,
            purpose TEXT NOT NULL,
            user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            pending_request TEXT
        );
        CREATE INDEX account_links_user ON account_links(user_id, purpose) WHERE used_at IS NULL;
        CREATE INDEX account_links_expiry ON account_links(expires_at);
        """

    /// Recovery codes for TOTP accounts (as SQLite's migration 18): the
    /// SHA-256 of each unused code; using one deletes its row.
    static let version11 = """
        CREATE TABLE totp_recovery_codes (
            user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            code_hash BYTEA NOT NULL,
            created_at BIGINT NOT NULL,
            PRIMARY KEY (user_id, code_hash)
        );
        """

    /// The address an email-change (or revert) link moves the account to
    /// (as SQLite's migration 19).
    static let version12 = """
        ALTER TABLE account_links ADD COLUMN target_email TEXT;
        """

    /// Upstream OpenID Connect providers (as SQLite's migration 20).
    static let version13 = """
        CREATE TABLE identity_providers (
            name TEXT PRIMARY KEY,
            issuer TEXT NOT NULL,
            client_id TEXT NOT NULL,
            secret_sealed BYTEA,
            scopes TEXT NOT NULL,
            label TEXT NOT NULL,
            preset TEXT NOT NULL,
            authorization_endpoint TEXT NOT NULL,
            token_endpoint TEXT NOT NULL,
            jwks_uri TEXT NOT NULL,
            apple_team_id TEXT,
            apple_key_id TEXT,
            apple_key_sealed BYTEA,
            hosted_domain TEXT,
            created_at BIGINT NOT NULL
        );
        """

    /// Links to accounts at upstream providers, and the trips there (as
    /// SQLite's migration 21).
    static let version14 = """
        CREATE TABLE federated_identities (
            issuer TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            provider TEXT NOT NULL,
            email TEXT NOT NULL,
            linked_at BIGINT NOT NULL,
            last_used_at BIGINT,
            PRIMARY KEY (issuer, subject)
        );
        CREATE INDEX federated_identities_user ON federated_identities (user_id);
        CREATE TABLE federation_requests (
            state_hash BYTEA PRIMARY KEY,
            binding_hash BYTEA NOT NULL,
            provider TEXT NOT NULL,
            pending_hash BYTEA NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            link_user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
            link_issuer TEXT,
            link_subject TEXT,
            link_email TEXT
        );
        CREATE INDEX federation_requests_pending ON federation_requests (pending_hash);
        ALTER TABLE identity_providers ADD COLUMN sends_iss BIGINT NOT NULL DEFAULT 0;
        """

    /// A client's back-channel logout URI, a session's clients and why it
    /// ended (as SQLite's migration 22).
    static let version15 = """
        ALTER TABLE clients ADD COLUMN backchannel_logout_uri TEXT;
        ALTER TABLE sso_sessions ADD COLUMN client_ids TEXT NOT NULL DEFAULT '';
        ALTER TABLE sso_sessions ADD COLUMN ended_reason TEXT;
        """

    /// A client's authentication method and public keys (as SQLite's migration 23).
    static let version16 = """
        ALTER TABLE clients ADD COLUMN token_endpoint_auth_method TEXT;
        ALTER TABLE clients ADD COLUMN jwks TEXT;
        ALTER TABLE clients ADD COLUMN jwks_uri TEXT;
        """

    /// What a client is held to: a signed request object, a profile (as
    /// SQLite's migration 24).
    static let version17 = """
        ALTER TABLE clients ADD COLUMN require_signed_request_object BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN profile TEXT;
        """

    /// Signing keys of several algorithms, and a client's (as SQLite's
    /// migration 25).
    static let version18 = """
        ALTER TABLE signing_keys ADD COLUMN alg TEXT NOT NULL DEFAULT 'RS256';
        ALTER TABLE clients ADD COLUMN id_token_signed_response_alg TEXT;
        """

    /// Dynamic client registration (as SQLite's migration 26).
    static let version19 = """
        CREATE TABLE initial_access_tokens (
            token_hash BYTEA PRIMARY KEY,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            uses_left BIGINT NOT NULL
        );
        ALTER TABLE clients ADD COLUMN registration_access_token_hash BYTEA;
        """
}
