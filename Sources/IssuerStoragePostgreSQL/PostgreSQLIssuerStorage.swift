import IssuerStorage
import PostgreSQLClient
import SSOCore

/// IssuerStorage in PostgreSQL, for several issuer nodes sharing one
/// database (and a standby). One connection per responder process.
///
/// Write units run at READ COMMITTED, PostgreSQL's default: every one-time
/// rule is a single conditional UPDATE … RETURNING, whose row lock picks
/// exactly one winner among concurrent callers on any node, with no retry
/// loop. Private signing keys are sealed (AES-256-GCM) in the database with
/// a key derived from the deployment's master key (`keys/master.key`, the
/// same file on every node), so every node signs with the same key and a
/// copy of the database alone opens none of them. A write unit started
/// inside another one joins it.
public final class PostgreSQLIssuerStorage: IssuerStorage {
    public let connection: PostgreSQLConnection
    let stores: PostgreSQLStores
    private var writing = false

    /// Connects and brings the schema up to date.
    public init(url: String, masterKey: [UInt8]) throws {
        connection = try PostgreSQLConnection(url: url)
        try PostgreSQLIssuerSchema.migrate(connection)
        stores = PostgreSQLStores(connection: connection, keySealing: SigningKeySealing(masterKey: masterKey))
    }

    /// On an existing connection, changing nothing (ssoctl doctor, stats).
    public init(connection: PostgreSQLConnection, masterKey: [UInt8]) {
        self.connection = connection
        stores = PostgreSQLStores(connection: connection, keySealing: SigningKeySealing(masterKey: masterKey))
    }

    public var read: any IssuerReads { stores.reads }

    public func write<T>(_ body: (any IssuerWrites) throws -> T) throws -> T {
        if writing { return try body(stores.writes) }
        writing = true
        defer { writing = false }
        return try connection.transaction { try body(stores.writes) }
    }

    /// A counter the signing key and group setting writes bump: the one
    /// thing the responders' caches depend on (a primary-key read).
    public func changeMarker() throws -> Int64 {
        try connection.queryOne("SELECT generation FROM issuer_changes WHERE id = 1")?.int(0) ?? 0
    }

    public var maintenance: any StorageMaintenance { PostgreSQLMaintenance(connection: connection) }
}

/// The private signing keys' sealing: AES-256-GCM under a key derived from
/// the master key, the kid as authenticated data (a sealed key moved to
/// another row does not open).
struct SigningKeySealing {
    let key: [UInt8]
    init(masterKey: [UInt8]) {
        key = KeyDerivation.derive(masterKey, label: "gatehouse signing-key v1")
    }
    func seal(_ pem: [UInt8], kid: String) throws -> [UInt8] { try AESGCM.seal(pem, key: key, authenticating: Array(kid.utf8)) }
    func open(_ sealed: [UInt8], kid: String) throws -> [UInt8] { try AESGCM.open(sealed, key: key, authenticating: Array(kid.utf8)) }
}

/// Every store, on one connection.
final class PostgreSQLStores {
    let users: PostgreSQLUserStore
    let totp: PostgreSQLTOTPStore
    let clients: PostgreSQLClientStore
    let groups: PostgreSQLNativeSSOGroupStore
    let keys: PostgreSQLSigningKeyStore
    let sessions: PostgreSQLSSOSessionStore
    let pending: PostgreSQLPendingAuthorizationStore
    let codes: PostgreSQLAuthorizationCodeStore
    let refresh: PostgreSQLRefreshTokenStore
    let revoked: PostgreSQLRevokedAccessTokenStore
    let devices: PostgreSQLDeviceSecretStore
    let throttle: PostgreSQLLoginThrottleStore
    private(set) lazy var reads = Reads(stores: self)
    private(set) lazy var writes = Writes(stores: self)

    init(connection: PostgreSQLConnection, keySealing: SigningKeySealing) {
        users = PostgreSQLUserStore(connection: connection)
        totp = PostgreSQLTOTPStore(connection: connection)
        clients = PostgreSQLClientStore(connection: connection)
        groups = PostgreSQLNativeSSOGroupStore(connection: connection)
        keys = PostgreSQLSigningKeyStore(connection: connection, sealing: keySealing)
        sessions = PostgreSQLSSOSessionStore(connection: connection)
        pending = PostgreSQLPendingAuthorizationStore(connection: connection)
        codes = PostgreSQLAuthorizationCodeStore(connection: connection)
        refresh = PostgreSQLRefreshTokenStore(connection: connection)
        revoked = PostgreSQLRevokedAccessTokenStore(connection: connection)
        devices = PostgreSQLDeviceSecretStore(connection: connection)
        throttle = PostgreSQLLoginThrottleStore(connection: connection)
    }

    struct Reads: IssuerReads {
        unowned let stores: PostgreSQLStores
        var users: any UserReads { stores.users }
        var totp: any TOTPReads { stores.totp }
        var clients: any ClientReads { stores.clients }
        var nativeSSOGroups: any NativeSSOGroupReads { stores.groups }
        var signingKeys: any SigningKeyReads { stores.keys }
        var sessions: any SSOSessionReads { stores.sessions }
        var pendingAuthorizations: any PendingAuthorizationReads { stores.pending }
        var refreshTokens: any RefreshTokenReads { stores.refresh }
        var revokedAccessTokens: any RevokedAccessTokenReads { stores.revoked }
        var deviceSecrets: any DeviceSecretReads { stores.devices }
        var loginThrottle: any LoginThrottleReads { stores.throttle }
    }

    struct Writes: IssuerWrites {
        unowned let stores: PostgreSQLStores
        var users: any UserStore { stores.users }
        var totp: any TOTPStore { stores.totp }
        var clients: any ClientStore { stores.clients }
        var nativeSSOGroups: any NativeSSOGroupStore { stores.groups }
        var signingKeys: any SigningKeyStore { stores.keys }
        var sessions: any SSOSessionStore { stores.sessions }
        var pendingAuthorizations: any PendingAuthorizationStore { stores.pending }
        var authorizationCodes: any AuthorizationCodeStore { stores.codes }
        var refreshTokens: any RefreshTokenStore { stores.refresh }
        var revokedAccessTokens: any RevokedAccessTokenStore { stores.revoked }
        var deviceSecrets: any DeviceSecretStore { stores.devices }
        var loginThrottle: any LoginThrottleStore { stores.throttle }
    }
}
