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
        IssuerMigrations.settingsChanges,
        IssuerMigrations.clientDisplayNames,
        IssuerMigrations.clientRegistrations,
        IssuerMigrations.mailOutbox,
        IssuerMigrations.accountLinks,
        IssuerMigrations.recoveryCodes,
        IssuerMigrations.emailChangeLinks,
        IssuerMigrations.identityProviders,
        IssuerMigrations.federatedIdentities,
        IssuerMigrations.backchannelLogout,
        IssuerMigrations.clientKeys,
        IssuerMigrations.clientRequirements,
        IssuerMigrations.signingAlgorithms,
        IssuerMigrations.dynamicRegistration,
    ]

    /// WAL pages written before a commit checkpoints them (see open).
    static let walAutocheckpointPages = 4000

    /// Opens the issuer database at `path` and brings its schema up to date.
    public static func open(path: String) throws -> SQLiteDatabase {
        // The file holds password and token hashes: owner-only. SQLite gives
        // its -wal and -shm files the same mode as the database file.
        let created = Glibc.open(path, O_RDWR | O_CREAT, 0o600)
        if created >= 0 { close(created) }
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "issuer", migrations: migrations)
        // A checkpoint copies the WAL's pages into the database file and
        // syncs both, on the request path of whichever responder commits
        // past the limit. A refresh writes seven pages, mostly the same hot
        // index pages as the last one, so with SQLite's default of 1,000
        // pages a token responder checkpointed every ~140 refreshes and
        // copied the same pages again each time; with 4,000 (a 16 MB WAL)
        // a refresh costs about 4% less CPU (docs/PERFORMANCE.md). The
        // file is cut back to 64 MB should it ever grow past that.
        try database.execute("PRAGMA wal_autocheckpoint = \(walAutocheckpointPages)")
        try database.execute("PRAGMA journal_size_limit = \(64 << 20)")
        return database
    }
}
