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
