import AuthServer
import FoundationEssentials
import IssuerStorage
import IssuerStoragePostgreSQL
import IssuerStorageSQLite
import PostgreSQLClient
import SQLiteClient
import SSOCore

/// The one place that knows the storage backends: every process's
/// composition root (a responder's main.swift, ssoctl) asks it for the
/// issuer's object graph, built on the backend the configuration selects:
/// SQLite in $GATEHOUSE_HOME by default, PostgreSQL when
/// GATEHOUSE_DATABASE_URL names one.
public enum IssuerComposition {
    /// The services of a responder or of ssoctl: storage opened and its
    /// schema brought up to date. Only `ssoctl setup` (`creatingMasterKey`)
    /// may create a PostgreSQL deployment's master key. A responder that
    /// builds pages (`withPages`) needs the catalogues `ssoctl pages` wrote
    /// and does not start without them.
    public static func services(_ config: GatehouseConfig, hasher: PasswordHasher = PasswordHasher(), clock: @escaping Clock = systemClock,
                                creatingMasterKey: Bool = false, withPages: Bool = false) throws -> IssuerServices {
        let messages = withPages ? try MessageCatalogue.load(directory: config.messagesDirectory, defaultLanguage: config.brand.defaultLanguage)
            : .empty
        let (storage, sealing) = try open(config, creatingMasterKey: creatingMasterKey)
        return IssuerServices(settings: IssuerSettings(config: config), storage: storage, sealingKeys: sealing, hasher: hasher, clock: clock,
                              messages: messages)
    }

    /// The storage, migrated, and where the sealing keys come from.
    public static func open(_ config: GatehouseConfig, creatingMasterKey: Bool = false) throws
        -> (storage: any IssuerStorage, sealingKeys: any SealingKeySource) {
        guard let url = config.databaseURL else {
            return (try SQLiteIssuerStorage(databasePath: config.databasePath, keysDirectory: config.keysDirectory),
                    SealingKeyFiles(keysDirectory: config.keysDirectory))
        }
        let connection = try PostgreSQLConnection(url: url, connectNow: false)
        // Before the master key and the schema are created.
        try SQLiteStateLeftBehind.refuseToStartEmpty(config, on: connection)
        let masterKey = try MasterKey.load(config, create: creatingMasterKey)
        let storage = try PostgreSQLIssuerStorage(migrating: connection, masterKey: masterKey)
        // Every process, not only setup: a node given the wrong file must not
        // start and then fail every sign-in. A database out of reach leaves
        // the check to the next start (the process answers 503 meanwhile).
        do { try MasterKey.checkItOpensTheKeys(storage, config) } catch let error as PostgreSQLError where error.isTemporary {}
        return (storage, DerivedSealingKeys(masterKey: masterKey))
    }

    /// The storage as it is, for looking only (ssoctl doctor and stats):
    /// nothing is created or migrated, and a missing database is an error
    /// that says so.
    public static func openStorageForInspection(_ config: GatehouseConfig) throws -> any IssuerStorage {
        if let url = config.databaseURL {
            // Without the master key the database can still be looked at;
            // opening a private key then fails, and the doctor says so.
            let masterKey = (try? SecretKeyFile.load(path: config.masterKeyPath)) ?? nil
            return try PostgreSQLIssuerStorage(connection: try PostgreSQLConnection(url: url), masterKey: masterKey ?? [])
        }
        guard FileManager.default.fileExists(atPath: config.databasePath) else {
            throw ConfigError("no database at \(config.databasePath) (Scripts/run or ssoctl setup creates it)")
        }
        do {
            let database = try SQLiteDatabase(path: config.databasePath, readOnly: true)
            _ = try database.queryOne("SELECT count(*) FROM sqlite_schema")
            return SQLiteIssuerStorage(database: database, keysDirectory: config.keysDirectory)
        } catch {
            throw ConfigError("\(config.databasePath): \(error)")
        }
    }
}

/// `keys/master.key` of a PostgreSQL deployment: created once, by the
/// first node's `ssoctl setup`, and copied to every other node.
enum MasterKey {
    static func load(_ config: GatehouseConfig, create: Bool) throws -> [UInt8] {
        if let key = try SecretKeyFile.load(path: config.masterKeyPath) { return key }
        guard create else {
            throw ConfigError("\(config.masterKeyPath) is missing: copy it from the first node (ssoctl setup creates it there)")
        }
        return try SecretKeyFile.loadOrCreate(path: config.masterKeyPath)
    }

    /// A node that made a master key of its own while the database already
    /// holds keys sealed with another one would sign nothing: refuse early.
    static func checkItOpensTheKeys(_ storage: any IssuerStorage, _ config: GatehouseConfig) throws {
        guard let kid = try storage.read.signingKeys.all().first(where: { $0.retiredAt == nil })?.kid else { return }
        do { _ = try storage.read.signingKeys.privateKeyPEM(kid: kid) } catch {
            throw ConfigError("\(config.masterKeyPath) does not open the signing keys in the database: "
                              + "every node needs a copy of the first node's master key")
        }
    }
}

extension IssuerComposition {
    /// A responder process's whole composition: the issuer once, and the
    /// process's route table over it.
    public static func routeTable(_ process: IssuerProcess, _ config: GatehouseConfig) throws -> RouteTable {
        let services = try services(config, withPages: process.rendersPages)
        // The sign-in's upstream providers; clients' keys at their jwks_uri
        // (private_key_jwt) wherever a client authenticates.
        if [.login, .token, .par, .revoke, .introspect].contains(process) {
            services.providerHTTP = OutboundDocumentFetcher(config, environment: ProcessInfo.processInfo.environment)
        }
        return try IssuerRouteTable.table(process, services: services, config: config)
    }
}
