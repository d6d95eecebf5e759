/// What a refresh token grants.
public struct RefreshTokenRecord: Equatable, Sendable {
    public let familyID: String
    public let clientID: String
    public let userID: Int64
    public let sid: String
    public let scope: [String]
    public let authTime: Int64
    public let expiresAt: Int64
    /// RFC 9449 §5: the key (JWK thumbprint) a public client's refresh
    /// token is bound to, kept by every successor; nil when unbound.
    public var dpopJKT: String? = nil

    public init(familyID: String, clientID: String, userID: Int64, sid: String, scope: [String], authTime: Int64, expiresAt: Int64) {
        self.familyID = familyID
        self.clientID = clientID
        self.userID = userID
        self.sid = sid
        self.scope = scope
        self.authTime = authTime
        self.expiresAt = expiresAt
    }
}

/// A stored refresh token in any state (introspection, revocation, the
/// explanation of a refused rotation).
public struct RefreshTokenDetails: Equatable, Sendable {
    public let record: RefreshTokenRecord
    public let createdAt: Int64
    public let usedAt: Int64?
    public let revokedAt: Int64?
    /// The one successor a rotation recorded, by hash, and during the grace
    /// window the successor itself, sealed by the issuer.
    public let successorHash: [UInt8]?
    public let successorSealed: [UInt8]?

    public init(record: RefreshTokenRecord, createdAt: Int64, usedAt: Int64?, revokedAt: Int64?, successorHash: [UInt8]?,
                successorSealed: [UInt8]?) {
        self.record = record
        self.createdAt = createdAt
        self.usedAt = usedAt
        self.revokedAt = revokedAt
        self.successorHash = successorHash
        self.successorSealed = successorSealed
    }

    public var familyID: String { record.familyID }
    public var clientID: String { record.clientID }
    public var userID: Int64 { record.userID }
    public var sid: String { record.sid }
    public var scope: [String] { record.scope }
    public var authTime: Int64 { record.authTime }
    public var expiresAt: Int64 { record.expiresAt }

    /// Unused, unrevoked, unexpired.
    public func isUsable(now: Int64) -> Bool { usedAt == nil && revokedAt == nil && now < expiresAt }
}

/// The successor a rotation records on the token it spends.
public struct RefreshTokenSuccessor: Equatable, Sendable {
    public let tokenHash: [UInt8]
    /// Sealed for the grace window (nil when there is none).
    public let sealed: [UInt8]?

    public init(tokenHash: [UInt8], sealed: [UInt8]?) {
        self.tokenHash = tokenHash
        self.sealed = sealed
    }
}

public protocol RefreshTokenReads {
    func details(tokenHash: [UInt8]) throws -> RefreshTokenDetails?
}

public protocol RefreshTokenStore: RefreshTokenReads {
    func insert(tokenHash: [UInt8], _ record: RefreshTokenRecord, createdAt: Int64) throws
    /// Marks `presented` spent if it is live (unused, unrevoked, unexpired
    /// at `now`), `clientID`'s, and its SSO session is live too (not ended,
    /// unexpired, its user not disabled), recording `successor` as its only
    /// successor: one conditional UPDATE … RETURNING. Of concurrent callers
    /// exactly one gets the token's record; the others get nil (and read
    /// `details` to learn why). The caller inserts the successor in the
    /// same write unit.
    func claim(_ presented: [UInt8], clientID: String, successor: RefreshTokenSuccessor, now: Int64) throws -> RefreshTokenRecord?
    func revokeFamily(_ familyID: String, at now: Int64) throws
    /// Every token bound to the session (logout, session end).
    func revokeAll(sid: String, at now: Int64) throws
    /// Every token of the user (password change, disabling).
    func revokeAll(userID: Int64, at now: Int64) throws
    /// Deletes every token of the user, in any state (erasure); returns how
    /// many. A deleted token is unknown: presenting it is `invalid_grant`.
    func deleteAll(userID: Int64) throws -> Int
}

public protocol RevokedAccessTokenReads {
    func isRevoked(jti: String) throws -> Bool
}

/// Access tokens revoked before they expire, by `jti` (the issuer honours
/// the list; resource servers validate offline and cannot).
public protocol RevokedAccessTokenStore: RevokedAccessTokenReads {
    /// Idempotent: revoking twice keeps one row.
    func revoke(jti: String, expiresAt: Int64) throws
}

/// Every access token of a grant (the refresh token family it was issued
/// in, named by its `grant_id` claim) revoked at once, in the same list:
/// a key that no jti can be (jtis are base64url, without ":"). `expiresAt`
/// is when the last access token the grant can have issued expires.
extension RevokedAccessTokenReads {
    public func isRevoked(grantID: String) throws -> Bool { try isRevoked(jti: Self.key(grantID: grantID)) }

    static func key(grantID: String) -> String { "grant:" + grantID }
}

extension RevokedAccessTokenStore {
    public func revoke(grantID: String, expiresAt: Int64) throws { try revoke(jti: Self.key(grantID: grantID), expiresAt: expiresAt) }
}
