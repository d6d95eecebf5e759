/// What a code was issued for (RFC 6749 §4.1.2: bound to client, redirect
/// URI, PKCE challenge, scope, nonce, session and authentication time).
public struct AuthorizationCodeGrantRecord: Equatable, Sendable {
    public let clientID: String
    public let redirectURI: String
    public let codeChallenge: String
    public let scope: [String]
    public let nonce: String?
    public let sid: String
    public let userID: Int64
    public let authTime: Int64
    /// How the user authenticated for the session the code came from (RFC 8176).
    public let amr: [String]
    /// RFC 9449 §10: the key (JWK thumbprint) the code is bound to.
    public var dpopJKT: String? = nil

    public init(clientID: String, redirectURI: String, codeChallenge: String, scope: [String], nonce: String?, sid: String,
                userID: Int64, authTime: Int64, amr: [String]) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.scope = scope
        self.nonce = nonce
        self.sid = sid
        self.userID = userID
        self.authTime = authTime
        self.amr = amr
    }
}

/// A code the atomic redemption did not redeem, as it stands: what the
/// issuer needs to say why, and what to revoke on a proven replay.
public struct UnredeemedCode: Equatable, Sendable {
    public let clientID: String
    public let redirectURI: String
    public let codeChallenge: String
    public let expiresAt: Int64
    public let usedAt: Int64?
    /// What its first redemption issued (for revocation on reuse).
    public let issuedFamilyID: String?
    public let issuedJTI: String?

    public init(clientID: String, redirectURI: String, codeChallenge: String, expiresAt: Int64, usedAt: Int64?,
                issuedFamilyID: String?, issuedJTI: String?) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.issuedFamilyID = issuedFamilyID
        self.issuedJTI = issuedJTI
    }
}

/// What a redemption will issue, recorded by the redemption itself so a
/// proven replay can revoke it (RFC 6749 §4.1.2): the refresh token family
/// (chosen before the redemption; it stays empty when the scope has no
/// offline_access) and the access token's `jti`.
public struct CodeIssue: Equatable, Sendable {
    public let familyID: String
    public let jti: String

    public init(familyID: String, jti: String) {
        self.familyID = familyID
        self.jti = jti
    }
}

public enum CodeRedemption: Equatable, Sendable {
    case redeemed(AuthorizationCodeGrantRecord)
    /// Nothing changed; nil when no code hashes to the one presented.
    case refused(UnredeemedCode?)
}

public protocol AuthorizationCodeStore {
    func insert(codeHash: [UInt8], _ record: AuthorizationCodeGrantRecord, createdAt: Int64, expiresAt: Int64) throws
    /// Marks the code used at `now`, recording `issuing`, if it is unused,
    /// unexpired, and was issued for exactly this client, redirect URI and
    /// PKCE challenge: one conditional UPDATE … RETURNING. Of concurrent
    /// callers exactly one gets `.redeemed`; the others, and every mismatch,
    /// get `.refused` with the code as it stands (a read that changes nothing).
    func redeem(codeHash: [UInt8], clientID: String, redirectURI: String, codeChallenge: String, now: Int64,
                issuing: CodeIssue) throws -> CodeRedemption
    /// Deletes every code issued to the user, used or not (erasure);
    /// returns how many. A deleted code is unknown: redeeming it is
    /// `invalid_grant`.
    func deleteAll(userID: Int64) throws -> Int
}
