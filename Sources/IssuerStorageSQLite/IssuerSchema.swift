import FoundationEssentials
import Glibc
import SQLiteClient
import SSOCore

/// The issuer's tables in SQLite. Append new migrations; never edit a landed one.
public enum SQLiteIssuerSchema {
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
        IssuerMigrations.apisAndClientSettings,
        IssuerMigrations.senderConstraint,
        IssuerMigrations.readinessProbes,
        IssuerMigrations.passkeys,
        IssuerMigrations.sessionOrigins,
    ]

    /// Opens the issuer database at `path` and brings its schema up to date.
    public static func open(path: String) throws -> SQLiteDatabase {
        // The file holds password and token hashes: owner-only. SQLite gives
        // its -wal and -shm files the same mode as the database file.
        let created = Glibc.open(path, O_RDWR | O_CREAT, 0o600)
        if created >= 0 { close(created) }
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "issuer", migrations: migrations)
        return database
    }
}
