import AuthServer
import FoundationEssentials
import IssuerStorage
import IssuerStoragePostgreSQL
import IssuerStorageSQLite
import PostgreSQLClient
import SSOCore

/// `ssoctl migrate --to URL`: the issuer's whole state, from the home's
/// SQLite file to an empty PostgreSQL database, where every node of a
/// PostgreSQL deployment finds it.
///
/// The file is opened read-only and read in one snapshot; nothing in the
/// home changes but `keys/master.key`, created if missing (the key every
/// PostgreSQL node needs a copy of). The copy itself is one PostgreSQL
/// transaction (PostgreSQLIssuerImport): all of it, counted, or none.
public enum SQLiteToPostgreSQLMigration {
    public struct Report: Sendable {
        public let source: String
        /// The URL without its password.
        public let target: String
        public let counts: [TableCopyCount]
        /// The signing keys whose private halves are now sealed in the database.
        public let sealedSigningKeys: Int
        public let masterKeyPath: String
    }

    /// Replies from the database may take this long: a big table is
    /// counted on both sides within the one transaction.
    static let replyTimeoutMilliseconds: Int32 = 300_000

    public static func run(_ config: GatehouseConfig, to url: String) throws -> Report {
        guard FileManager.default.fileExists(atPath: config.databasePath) else {
            throw ConfigError("\(config.databasePath) does not exist: this home has no SQLite state to migrate")
        }
        let source = try SQLiteIssuerExport(databasePath: config.databasePath, keysDirectory: config.keysDirectory)
        try source.requireCurrentSchema()
        let connection = try PostgreSQLConnection(url: url, replyTimeoutMilliseconds: replyTimeoutMilliseconds)
        // Refused before the master key is made: a refusal changes nothing.
        try PostgreSQLIssuerImport.requireEmptyTarget(connection)
        let masterKey = try MasterKey.load(config, create: true)
        let resealing = SealedSecretsMove(from: SealingKeyFiles(keysDirectory: config.keysDirectory), to: DerivedSealingKeys(masterKey: masterKey))
        let counts = try source.withSnapshot {
            try PostgreSQLIssuerImport(connection: connection, masterKey: masterKey).copy(from: source, resealing: resealing)
        }
        // As every node will check at its start: the master key opens the keys.
        let storage = try PostgreSQLIssuerStorage(connection: connection, masterKey: masterKey)
        try MasterKey.checkItOpensTheKeys(storage, config)
        let sealed = try storage.read.signingKeys.all().filter { try storage.read.signingKeys.privateKeyPEM(kid: $0.kid) != nil }.count
        return Report(source: source.location, target: PostgreSQLURL.redacted(url), counts: counts, sealedSigningKeys: sealed,
                      masterKeyPath: config.masterKeyPath)
    }
}
