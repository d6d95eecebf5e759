import FoundationEssentials
import Glibc
import SSOCore

/// The issuer's tables. Append new migrations; never edit a landed one.
public enum IssuerSchema {
    /// In order; each lives in its own file (IssuerMigration1…). Append new
    /// ones; never edit a landed one.
    public static let migrations: [Migration] = [
        IssuerMigrations.accounts,
        IssuerMigrations.signIn,
        IssuerMigrations.refreshRotation,
        IssuerMigrations.accountSecurity,
        IssuerMigrations.nativeSSO,
        IssuerMigrations.nativeSSOOptIn,
        IssuerMigrations.idTokenHint,
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
