import IssuerStorage
import SSOCore

/// Opaque refresh tokens, stored as hashes, grouped in families: every
/// rotation stays in the family of the code exchange that started it, so
/// reuse of a spent token can revoke all of them (RFC 9700 §4.14.2).
public final class RefreshTokens {
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Issues a token in `familyID` (a new family when nil), in the caller's
    /// write unit.
    /// `dpopJKT`: the key a public client's token is bound to (RFC 9449 §5).
    public func issue(familyID: String?, clientID: String, userID: Int64, sid: String, scope: [String], authTime: Int64,
                      lifetime: Int, dpopJKT: String? = nil, _ tx: any IssuerWrites) throws -> (token: String, record: RefreshTokenRecord) {
        let token = SecureRandom.token()
        let now = clock()
        var record = RefreshTokenRecord(familyID: familyID ?? SecureRandom.token(byteCount: 16), clientID: clientID, userID: userID,
                                        sid: sid, scope: scope, authTime: authTime, expiresAt: now + Int64(lifetime))
        record.dpopJKT = dpopJKT
        try tx.refreshTokens.insert(tokenHash: SecretHash.of(token), record, createdAt: now)
        return (token, record)
    }

    /// The stored token in any state; nil for unknown ones.
    public func details(of token: String) throws -> RefreshTokenDetails? {
        // Refresh tokens are 43 characters; anything much longer is not one
        // and is not worth hashing.
        guard !token.isEmpty, token.utf8.count <= 256 else { return nil }
        return try storage.read.refreshTokens.details(tokenHash: SecretHash.of(token))
    }
}
