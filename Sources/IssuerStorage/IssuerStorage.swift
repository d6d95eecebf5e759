/// The issuer's storage, whatever the database behind it: one object per
/// process, built once by the composition root, that hands out the stores
/// of each aggregate for reading, or inside a write unit.
///
/// A write unit is one database transaction: everything `body` does through
/// `tx` commits together or not at all (a thrown error rolls it back, and
/// the error propagates). Stores that change state are reachable only
/// through `tx`, so no grant or endpoint can write outside a transaction,
/// and none can open one of its own: the transaction belongs to storage.
///
///     try storage.write { tx in
///         try tx.refreshTokens.revokeAll(sid: sid, at: now)
///         try tx.sessions.end(sid: sid, at: now)
///     }
///
/// Backends: IssuerStorageSQLite (one file, the embedded default) and
/// IssuerStoragePostgreSQL (several nodes, a standby). Both pass the same
/// conformance suite (Tests/IssuerStorageConformanceTests). Errors a backend
/// throws for an unreachable or busy database know their HTTP response
/// (503 with Retry-After).
public protocol IssuerStorage: AnyObject {
    /// The stores, for reads (each one statement, or a consistent snapshot
    /// where the method says so).
    var read: any IssuerReads { get }

    /// Runs `body` in one transaction and returns what it returns.
    func write<T>(_ body: (any IssuerWrites) throws -> T) throws -> T

    /// Cheap, changes whenever another connection (a responder, ssoctl, a
    /// node) may have committed a change to the signing keys or the
    /// settings caches read: a test for "reload what I cached".
    func changeMarker() throws -> Int64

    /// Backend-specific checks and upkeep (ssoctl doctor, stats, sweep).
    var maintenance: any StorageMaintenance { get }
}

/// Read access to every aggregate.
public protocol IssuerReads {
    var users: any UserReads { get }
    var totp: any TOTPReads { get }
    var clients: any ClientReads { get }
    var apis: any APIReads { get }
    var nativeSSOGroups: any NativeSSOGroupReads { get }
    var signingKeys: any SigningKeyReads { get }
    var sessions: any SSOSessionReads { get }
    var pendingAuthorizations: any PendingAuthorizationReads { get }
    var pushedAuthorizations: any PushedAuthorizationReads { get }
    var refreshTokens: any RefreshTokenReads { get }
    var revokedAccessTokens: any RevokedAccessTokenReads { get }
    var deviceSecrets: any DeviceSecretReads { get }
    var loginThrottle: any LoginThrottleReads { get }
    var passkeys: any PasskeyReads { get }
    var mailOutbox: any MailOutboxReads { get }
    var accountLinks: any AccountLinkReads { get }
    var identityProviders: any IdentityProviderReads { get }
    var federatedIdentities: any FederatedIdentityReads { get }
    var initialAccessTokens: any InitialAccessTokenReads { get }
}

/// Write access to every aggregate, inside one transaction.
public protocol IssuerWrites {
    var users: any UserStore { get }
    var totp: any TOTPStore { get }
    var clients: any ClientStore { get }
    var apis: any APIStore { get }
    var nativeSSOGroups: any NativeSSOGroupStore { get }
    var signingKeys: any SigningKeyStore { get }
    var sessions: any SSOSessionStore { get }
    var pendingAuthorizations: any PendingAuthorizationStore { get }
    var pushedAuthorizations: any PushedAuthorizationStore { get }
    var authorizationCodes: any AuthorizationCodeStore { get }
    var refreshTokens: any RefreshTokenStore { get }
    var revokedAccessTokens: any RevokedAccessTokenStore { get }
    var deviceSecrets: any DeviceSecretStore { get }
    var loginThrottle: any LoginThrottleStore { get }
    var dpopProofs: any DPoPProofStore { get }
    var passkeys: any PasskeyStore { get }
    var webAuthnChallenges: any WebAuthnChallengeStore { get }
    /// Queueing a message, and the sender's claims and outcomes.
    var mailOutbox: any MailOutboxStore { get }
    /// The links mailed for sign-up, password reset and invitations.
    var accountLinks: any AccountLinkStore { get }
    /// The upstream OpenID Connect providers (`ssoctl idp`).
    var identityProviders: any IdentityProviderStore { get }
    /// Links to accounts at upstream providers, and the trips there.
    var federatedIdentities: any FederatedIdentityStore { get }
    /// Dynamic client registration's initial access tokens (RFC 7591 §3).
    var initialAccessTokens: any InitialAccessTokenStore { get }

    /// Waits until no other write unit that called it, on any connection or
    /// node, is open, and holds them off until this one ends: an
    /// administrative change that checks what it read (an `If-Match`) and
    /// then writes cannot interleave with another such change. Call it
    /// first, before the reads the check depends on.
    func serializeAdministrativeChanges() throws
}
