import Foundation
import SSOCore

/// The issuer's tables. Append new migrations; never edit a landed one.
public enum IssuerSchema {
    public static let migrations: [Migration] = [
        Migration(version: 1, sql: """
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
                state TEXT NOT NULL CHECK (state IN ('active', 'published', 'retired')),
                public_pem TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                retired_at INTEGER
            );
            CREATE UNIQUE INDEX one_active_signing_key ON signing_keys(state) WHERE state = 'active';
            """),
        // Sign-in: SSO sessions, pending authorization requests, one-time
        // codes, refresh tokens. Every secret is stored as its SHA-256.
        Migration(version: 2, sql: """
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
            """),
    ]

    /// Opens the issuer database and brings its schema up to date.
    public static func open(_ config: GatehouseConfig) throws -> SQLiteDatabase {
        // The file holds password and token hashes: owner-only. SQLite gives
        // its -wal and -shm files the same mode as the database file.
        let created = Glibc.open(config.databasePath, O_RDWR | O_CREAT, 0o600)
        if created >= 0 { close(created) }
        let database = try SQLiteDatabase(path: config.databasePath)
        try Migrator.migrate(database, component: "issuer", migrations: migrations)
        return database
    }
}

/// Seconds since the epoch; one clock for every store, injectable in tests.
public typealias Clock = @Sendable () -> Int64

public let systemClock: Clock = { Int64(Date().timeIntervalSince1970) }
