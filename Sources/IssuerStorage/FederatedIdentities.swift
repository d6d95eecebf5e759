/// A local account's link to an account at an upstream provider: the
/// provider's issuer and its `sub` name that account for good (OIDC Core
/// §2: "The sub (subject) and iss (issuer) Claims, used together, are the
/// only Claims that an RP can rely upon as a stable identifier"), so later
/// sign-ins match on them and never on an email address.
public struct FederatedIdentity: Equatable, Sendable {
    public let issuer: String
    public let subject: String
    public let userID: Int64
    /// The provider's name when the link was made (`idp`), for display.
    public let provider: String
    /// The address the provider gave when the link was made.
    public let email: String
    public let linkedAt: Int64
    public let lastUsedAt: Int64?

    public init(issuer: String, subject: String, userID: Int64, provider: String, email: String, linkedAt: Int64, lastUsedAt: Int64? = nil) {
        self.issuer = issuer
        self.subject = subject
        self.userID = userID
        self.provider = provider
        self.email = email
        self.linkedAt = linkedAt
        self.lastUsedAt = lastUsedAt
    }
}

/// One browser's trip to a provider: stored when the login page's control
/// sends it there, taken once by the callback. The `state` and the
/// browser's binding cookie are random and stored only as SHA-256 hashes;
/// the PKCE verifier and the nonce are derived from them, so nothing here
/// redeems a code.
public struct FederationRequest: Equatable, Sendable {
    public let stateHash: [UInt8]
    public let bindingHash: [UInt8]
    public let provider: String
    /// The SHA-256 of the pending authorization's cookie secret: the
    /// request the sign-in completes.
    public let pendingHash: [UInt8]
    public let createdAt: Int64
    public let expiresAt: Int64

    public init(stateHash: [UInt8], bindingHash: [UInt8], provider: String, pendingHash: [UInt8], createdAt: Int64, expiresAt: Int64) {
        self.stateHash = stateHash
        self.bindingHash = bindingHash
        self.provider = provider
        self.pendingHash = pendingHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A link waiting for its account's owner: the provider's verified address
/// belongs to a local account, which is linked only once that account's
/// own password or passkey completes the same pending authorization.
public struct FederatedLinkOffer: Equatable, Sendable {
    public let userID: Int64
    public let provider: String
    public let issuer: String
    public let subject: String
    public let email: String

    public init(userID: Int64, provider: String, issuer: String, subject: String, email: String) {
        self.userID = userID
        self.provider = provider
        self.issuer = issuer
        self.subject = subject
        self.email = email
    }
}

public protocol FederatedIdentityReads {
    /// The link for (issuer, subject), compared as bytes; nil when none.
    func find(issuer: String, subject: String) throws -> FederatedIdentity?
    /// `userID`'s links, oldest first.
    func list(userID: Int64) throws -> [FederatedIdentity]
}

public protocol FederatedIdentityStore: FederatedIdentityReads {
    /// Adds the link; the caller has checked in the same write unit that
    /// (issuer, subject) is free (the primary key still refuses a
    /// concurrent one). Links go with their user (ON DELETE CASCADE).
    func insert(_ identity: FederatedIdentity) throws
    /// Records a sign-in through the link.
    func touch(issuer: String, subject: String, at now: Int64) throws
    /// Removes `userID`'s link to (issuer, subject); false when it has none.
    func remove(userID: Int64, issuer: String, subject: String) throws -> Bool

    /// Stores a trip to a provider.
    func insertRequest(_ request: FederationRequest) throws
    /// Takes the live, unused request whose state hashes to `stateHash`:
    /// of concurrent callers exactly one gets it (single use).
    func takeRequest(stateHash: [UInt8], now: Int64) throws -> FederationRequest?
    /// Attaches a link offer to the (taken) request; it lives as long as the request would have.
    func offerLink(stateHash: [UInt8], _ offer: FederatedLinkOffer) throws
    /// Takes the live offer made for `userID` in the pending authorization
    /// `pendingHash`, when there is one (the newest; the others go too).
    func takeLinkOffer(pendingHash: [UInt8], userID: Int64, now: Int64) throws -> FederatedLinkOffer?
}
