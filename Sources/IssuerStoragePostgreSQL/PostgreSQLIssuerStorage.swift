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
    private var schemaChecked = false

    /// Connects and brings the schema up to date. A database out of reach
    /// (an outage, a failover) does not stop a responder from starting: it
    /// answers 503 until the database is back, then checks the schema at
    /// its first write unit. (A bad URL or a refused login looks the same
    /// from here; `ssoctl setup`, which Scripts/run runs first, and
    /// `ssoctl doctor` report it.)
    public convenience init(url: String, masterKey: [UInt8]) throws {
        try self.init(migrating: try PostgreSQLConnection(url: url, connectNow: false), masterKey: masterKey)
    }

    /// The same on a connection the caller made (IssuerComposition looks
    /// at the database through it before anything is created).
    public init(migrating connection: PostgreSQLConnection, masterKey: [UInt8]) throws {
        self.connection = connection
        stores = PostgreSQLStores(connection: connection, keySealing: SigningKeySealing(masterKey: masterKey))
        try connection.listen(IssuerChanges.channel)
        do { try checkSchema() } catch let error as PostgreSQLError where error.isTemporary {}
    }

    private func checkSchema() throws {
        guard !schemaChecked else { return }
        try PostgreSQLIssuerSchema.migrate(connection)
        schemaChecked = true
    }

    /// On an existing connection, changing nothing (ssoctl doctor, stats).
    public init(connection: PostgreSQLConnection, masterKey: [UInt8]) throws {
        self.connection = connection
        stores = PostgreSQLStores(connection: connection, keySealing: SigningKeySealing(masterKey: masterKey))
        try connection.listen(IssuerChanges.channel)
        schemaChecked = true
    }

    public var read: any IssuerReads { stores.reads }

    public func write<T>(_ body: (any IssuerWrites) throws -> T) throws -> T {
        if writing { return try body(stores.writes) }
        try checkSchema()
        writing = true
        defer { writing = false }
        return try connection.transaction { try body(stores.writes) }
    }

    /// Grows with every announced change (IssuerChanges) and every
    /// reconnect, read from what the connection has already received:
    /// checking it on every request costs no round trip.
    public func changeMarker() throws -> Int64 {
        try connection.changesSeen()
    }

    public var maintenance: any StorageMaintenance { PostgreSQLMaintenance(connection: connection) }
}

/// What the responders cache (signing keys, clients, APIs, Native SSO
/// group settings) changes rarely and from anywhere: a write that changes it
/// bumps `issuer_changes.generation` and notifies every listening
/// connection, on every node, when its transaction commits.
enum IssuerChanges {
    static let channel = "gatehouse_changes"

    static func announce(_ connection: PostgreSQLConnection) throws {
        try connection.query("""
            WITH bumped AS (UPDATE issuer_changes SET generation = generation + 1 WHERE id = 1 RETURNING generation)
            SELECT bumped.generation FROM bumped, pg_notify('\(channel)', bumped.generation::text)
            """)
    }
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
    let apis: PostgreSQLAPIStore
    let groups: PostgreSQLNativeSSOGroupStore
    let keys: PostgreSQLSigningKeyStore
    let sessions: PostgreSQLSSOSessionStore
    let pending: PostgreSQLPendingAuthorizationStore
    let pushed: PostgreSQLPushedAuthorizationStore
    let codes: PostgreSQLAuthorizationCodeStore
    let refresh: PostgreSQLRefreshTokenStore
    let revoked: PostgreSQLRevokedAccessTokenStore
    let devices: PostgreSQLDeviceSecretStore
    let throttle: PostgreSQLLoginThrottleStore
    let dpopProofs: PostgreSQLDPoPProofStore
    let initialAccessTokens: PostgreSQLInitialAccessTokenStore
    let passkeys: PostgreSQLPasskeyStore
    let webAuthnChallenges: PostgreSQLWebAuthnChallengeStore
    let mailOutbox: PostgreSQLMailOutboxStore
    let accountLinks: PostgreSQLAccountLinkStore
    let identityProviders: PostgreSQLIdentityProviderStore
    let federatedIdentities: PostgreSQLFederatedIdentityStore
    private(set) lazy var reads = Reads(stores: self)
    private(set) lazy var writes = Writes(stores: self)

    init(connection: PostgreSQLConnection, keySealing: SigningKeySealing) {
        users = PostgreSQLUserStore(connection: connection)
        totp = PostgreSQLTOTPStore(connection: connection)
        clients = PostgreSQLClientStore(connection: connection)
        apis = PostgreSQLAPIStore(connection: connection)
        groups = PostgreSQLNativeSSOGroupStore(connection: connection)
        keys = PostgreSQLSigningKeyStore(connection: connection, sealing: keySealing)
        sessions = PostgreSQLSSOSessionStore(connection: connection)
        pending = PostgreSQLPendingAuthorizationStore(connection: connection)
        pushed = PostgreSQLPushedAuthorizationStore(connection: connection)
        codes = PostgreSQLAuthorizationCodeStore(connection: connection)
        refresh = PostgreSQLRefreshTokenStore(connection: connection)
        revoked = PostgreSQLRevokedAccessTokenStore(connection: connection)
        devices = PostgreSQLDeviceSecretStore(connection: connection)
        throttle = PostgreSQLLoginThrottleStore(connection: connection)
        dpopProofs = PostgreSQLDPoPProofStore(connection: connection)
        initialAccessTokens = PostgreSQLInitialAccessTokenStore(connection: connection)
        passkeys = PostgreSQLPasskeyStore(connection: connection)
        webAuthnChallenges = PostgreSQLWebAuthnChallengeStore(connection: connection)
        mailOutbox = PostgreSQLMailOutboxStore(connection: connection)
        accountLinks = PostgreSQLAccountLinkStore(connection: connection)
        identityProviders = PostgreSQLIdentityProviderStore(connection: connection)
        federatedIdentities = PostgreSQLFederatedIdentityStore(connection: connection)
    }

    struct Reads: IssuerReads {
        unowned let stores: PostgreSQLStores
        var users: any UserReads { stores.users }
        var totp: any TOTPReads { stores.totp }
        var clients: any ClientReads { stores.clients }
        var apis: any APIReads { stores.apis }
        var nativeSSOGroups: any NativeSSOGroupReads { stores.groups }
        var signingKeys: any SigningKeyReads { stores.keys }
        var sessions: any SSOSessionReads { stores.sessions }
        var pendingAuthorizations: any PendingAuthorizationReads { stores.pending }
        var pushedAuthorizations: any PushedAuthorizationReads { stores.pushed }
        var refreshTokens: any RefreshTokenReads { stores.refresh }
        var revokedAccessTokens: any RevokedAccessTokenReads { stores.revoked }
        var deviceSecrets: any DeviceSecretReads { stores.devices }
        var loginThrottle: any LoginThrottleReads { stores.throttle }
        var passkeys: any PasskeyReads { stores.passkeys }
        var mailOutbox: any MailOutboxReads { stores.mailOutbox }
        var accountLinks: any AccountLinkReads { stores.accountLinks }
        var identityProviders: any IdentityProviderReads { stores.identityProviders }
        var federatedIdentities: any FederatedIdentityReads { stores.federatedIdentities }
        var initialAccessTokens: any InitialAccessTokenReads { stores.initialAccessTokens }
    }

    struct Writes: IssuerWrites {
        unowned let stores: PostgreSQLStores
        /// A transaction-scoped advisory lock (released at COMMIT or
        /// ROLLBACK): READ COMMITTED alone would let two changes read the same
        /// row, both pass their check and the second overwrite the first.
        func serializeAdministrativeChanges() throws {
            try stores.users.connection.execute("SELECT 1 FROM pg_advisory_xact_lock($1)", [.integer(Self.administrativeLockKey)])
        }

        /// Any constant of our own: the lock names nothing in the schema.
        static let administrativeLockKey: Int64 = 0x6761_7465_6164_6d6e   // "gateadmn"
        var users: any UserStore { stores.users }
        var totp: any TOTPStore { stores.totp }
        var clients: any ClientStore { stores.clients }
        var apis: any APIStore { stores.apis }
        var nativeSSOGroups: any NativeSSOGroupStore { stores.groups }
        var signingKeys: any SigningKeyStore { stores.keys }
        var sessions: any SSOSessionStore { stores.sessions }
        var pendingAuthorizations: any PendingAuthorizationStore { stores.pending }
        var pushedAuthorizations: any PushedAuthorizationStore { stores.pushed }
        var authorizationCodes: any AuthorizationCodeStore { stores.codes }
        var refreshTokens: any RefreshTokenStore { stores.refresh }
        var revokedAccessTokens: any RevokedAccessTokenStore { stores.revoked }
        var deviceSecrets: any DeviceSecretStore { stores.devices }
        var loginThrottle: any LoginThrottleStore { stores.throttle }
        var dpopProofs: any DPoPProofStore { stores.dpopProofs }
        var initialAccessTokens: any InitialAccessTokenStore { stores.initialAccessTokens }
        var passkeys: any PasskeyStore { stores.passkeys }
        var webAuthnChallenges: any WebAuthnChallengeStore { stores.webAuthnChallenges }
        var mailOutbox: any MailOutboxStore { stores.mailOutbox }
        var accountLinks: any AccountLinkStore { stores.accountLinks }
        var identityProviders: any IdentityProviderStore { stores.identityProviders }
        var federatedIdentities: any FederatedIdentityStore { stores.federatedIdentities }
    }
}
