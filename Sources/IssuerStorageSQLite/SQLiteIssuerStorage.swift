import IssuerStorage
import SQLiteClient
import SSOCore

/// IssuerStorage on one SQLite file (WAL mode, busy handler): the embedded
/// default, nothing to run. Private signing keys are 0600 files in
/// `keysDirectory`, beside the database, never in it.
///
/// Write units are `BEGIN IMMEDIATE … COMMIT`: the write lock is taken up
/// front, so write units of every process on the file run one at a time. A
/// write unit started inside another one joins it (one transaction).
public final class SQLiteIssuerStorage: IssuerStorage {
    public let database: SQLiteDatabase
    let stores: SQLiteStores
    private var writing = false
    /// changeMarker's last read, and the data_version it was read at.
    private var settingsSeen: (generation: Int64, dataVersion: Int64)?

    public init(database: SQLiteDatabase, keysDirectory: String) {
        self.database = database
        stores = SQLiteStores(database: database, keysDirectory: keysDirectory)
    }

    /// Opens (creating it owner-only if need be) and migrates the database.
    public convenience init(databasePath: String, keysDirectory: String) throws {
        self.init(database: try SQLiteIssuerSchema.open(path: databasePath), keysDirectory: keysDirectory)
    }

    public var read: any IssuerReads { stores.reads }

    public func write<T>(_ body: (any IssuerWrites) throws -> T) throws -> T {
        if writing { return try body(stores.writes) }
        writing = true
        defer { writing = false }
        return try database.transaction { try body(stores.writes) }
    }

    /// `issuer_changes.generation` (IssuerMigration13), read again only
    /// when PRAGMA data_version says another connection has committed
    /// something since the last read: a refresh committed by another
    /// responder costs one more small read here, not a reload of every
    /// cache. This connection's own commits move neither, as before; the
    /// caches drop what this process writes themselves.
    public func changeMarker() throws -> Int64 {
        let version = try database.dataVersion()
        if let seen = settingsSeen, seen.dataVersion == version { return seen.generation }
        let generation = try database.queryOne("SELECT generation FROM issuer_changes WHERE id = 1")?.int(0) ?? 0
        settingsSeen = (generation, version)
        return generation
    }

    public var maintenance: any StorageMaintenance { SQLiteMaintenance(database: database, keysDirectory: stores.keysDirectory) }
}

/// Every store, on one connection: the same objects serve reads (typed as
/// their read protocols) and write units.
final class SQLiteStores {
    let keysDirectory: String
    let userStore: SQLiteUserStore
    let totpStore: SQLiteTOTPStore
    let clientStore: SQLiteClientStore
    let apiStore: SQLiteAPIStore
    let groupStore: SQLiteNativeSSOGroupStore
    let keyStore: SQLiteSigningKeyStore
    let sessionStore: SQLiteSSOSessionStore
    let pendingStore: SQLitePendingAuthorizationStore
    let pushedStore: SQLitePushedAuthorizationStore
    let codeStore: SQLiteAuthorizationCodeStore
    let refreshStore: SQLiteRefreshTokenStore
    let revokedStore: SQLiteRevokedAccessTokenStore
    let deviceStore: SQLiteDeviceSecretStore
    let throttleStore: SQLiteLoginThrottleStore
    let dpopProofStore: SQLiteDPoPProofStore
    let initialAccessTokenStore: SQLiteInitialAccessTokenStore
    let passkeyStore: SQLitePasskeyStore
    let webAuthnChallengeStore: SQLiteWebAuthnChallengeStore
    let mailOutboxStore: SQLiteMailOutboxStore
    let accountLinkStore: SQLiteAccountLinkStore
    let identityProviderStore: SQLiteIdentityProviderStore
    let federatedIdentityStore: SQLiteFederatedIdentityStore
    private(set) lazy var reads = Reads(stores: self)
    private(set) lazy var writes = Writes(stores: self)

    init(database: SQLiteDatabase, keysDirectory: String) {
        self.keysDirectory = keysDirectory
        userStore = SQLiteUserStore(database: database)
        totpStore = SQLiteTOTPStore(database: database)
        clientStore = SQLiteClientStore(database: database)
        apiStore = SQLiteAPIStore(database: database)
        groupStore = SQLiteNativeSSOGroupStore(database: database)
        keyStore = SQLiteSigningKeyStore(database: database, keysDirectory: keysDirectory)
        sessionStore = SQLiteSSOSessionStore(database: database)
        pendingStore = SQLitePendingAuthorizationStore(database: database)
        pushedStore = SQLitePushedAuthorizationStore(database: database)
        codeStore = SQLiteAuthorizationCodeStore(database: database)
        refreshStore = SQLiteRefreshTokenStore(database: database)
        revokedStore = SQLiteRevokedAccessTokenStore(database: database)
        deviceStore = SQLiteDeviceSecretStore(database: database)
        throttleStore = SQLiteLoginThrottleStore(database: database)
        dpopProofStore = SQLiteDPoPProofStore(database: database)
        initialAccessTokenStore = SQLiteInitialAccessTokenStore(database: database)
        passkeyStore = SQLitePasskeyStore(database: database)
        webAuthnChallengeStore = SQLiteWebAuthnChallengeStore(database: database)
        mailOutboxStore = SQLiteMailOutboxStore(database: database)
        accountLinkStore = SQLiteAccountLinkStore(database: database)
        identityProviderStore = SQLiteIdentityProviderStore(database: database)
        federatedIdentityStore = SQLiteFederatedIdentityStore(database: database)
    }

    struct Reads: IssuerReads {
        unowned let stores: SQLiteStores
        var users: any UserReads { stores.userStore }
        var totp: any TOTPReads { stores.totpStore }
        var clients: any ClientReads { stores.clientStore }
        var apis: any APIReads { stores.apiStore }
        var nativeSSOGroups: any NativeSSOGroupReads { stores.groupStore }
        var signingKeys: any SigningKeyReads { stores.keyStore }
        var sessions: any SSOSessionReads { stores.sessionStore }
        var pendingAuthorizations: any PendingAuthorizationReads { stores.pendingStore }
        var pushedAuthorizations: any PushedAuthorizationReads { stores.pushedStore }
        var refreshTokens: any RefreshTokenReads { stores.refreshStore }
        var revokedAccessTokens: any RevokedAccessTokenReads { stores.revokedStore }
        var deviceSecrets: any DeviceSecretReads { stores.deviceStore }
        var loginThrottle: any LoginThrottleReads { stores.throttleStore }
        var passkeys: any PasskeyReads { stores.passkeyStore }
        var mailOutbox: any MailOutboxReads { stores.mailOutboxStore }
        var accountLinks: any AccountLinkReads { stores.accountLinkStore }
        var identityProviders: any IdentityProviderReads { stores.identityProviderStore }
        var federatedIdentities: any FederatedIdentityReads { stores.federatedIdentityStore }
        var initialAccessTokens: any InitialAccessTokenReads { stores.initialAccessTokenStore }
    }

    struct Writes: IssuerWrites {
        unowned let stores: SQLiteStores
        /// Nothing to do: a write unit is `BEGIN IMMEDIATE`, which already
        /// holds every other writer off until it ends.
        func serializeAdministrativeChanges() throws {}
        var users: any UserStore { stores.userStore }
        var totp: any TOTPStore { stores.totpStore }
        var clients: any ClientStore { stores.clientStore }
        var apis: any APIStore { stores.apiStore }
        var nativeSSOGroups: any NativeSSOGroupStore { stores.groupStore }
        var signingKeys: any SigningKeyStore { stores.keyStore }
        var sessions: any SSOSessionStore { stores.sessionStore }
        var pendingAuthorizations: any PendingAuthorizationStore { stores.pendingStore }
        var pushedAuthorizations: any PushedAuthorizationStore { stores.pushedStore }
        var authorizationCodes: any AuthorizationCodeStore { stores.codeStore }
        var refreshTokens: any RefreshTokenStore { stores.refreshStore }
        var revokedAccessTokens: any RevokedAccessTokenStore { stores.revokedStore }
        var deviceSecrets: any DeviceSecretStore { stores.deviceStore }
        var loginThrottle: any LoginThrottleStore { stores.throttleStore }
        var dpopProofs: any DPoPProofStore { stores.dpopProofStore }
        var initialAccessTokens: any InitialAccessTokenStore { stores.initialAccessTokenStore }
        var passkeys: any PasskeyStore { stores.passkeyStore }
        var webAuthnChallenges: any WebAuthnChallengeStore { stores.webAuthnChallengeStore }
        var mailOutbox: any MailOutboxStore { stores.mailOutboxStore }
        var accountLinks: any AccountLinkStore { stores.accountLinkStore }
        var identityProviders: any IdentityProviderStore { stores.identityProviderStore }
        var federatedIdentities: any FederatedIdentityStore { stores.federatedIdentityStore }
    }
}
