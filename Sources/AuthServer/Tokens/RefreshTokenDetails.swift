import SSOCore

/// Everything the issuer holds about one refresh token, live or not, for
/// introspection (RFC 7662) and revocation (RFC 7009).
public struct RefreshTokenDetails: Equatable, Sendable {
    public let familyID: String
    public let clientID: String
    public let userID: Int64
    public let sid: String
    public let scope: [String]
    public let authTime: Int64
    public let createdAt: Int64
    public let expiresAt: Int64
    public let usedAt: Int64?
    public let revokedAt: Int64?

    /// Usable for a refresh right now, as far as the token row says: not
    /// rotated away (a spent token is only ever good for the rotation grace
    /// retry, never as a token in its own right), not revoked, not expired.
    /// The session and the account are checked by the caller.
    public func isUsable(now: Int64) -> Bool {
        usedAt == nil && revokedAt == nil && now < expiresAt
    }
}

extension RefreshTokenStore {
    /// The row behind a presented token (found by its hash), nil for an
    /// unknown token. Reads only; never changes anything.
    public func details(of token: String) throws -> RefreshTokenDetails? {
        // Refresh tokens are 43 characters; anything much longer is not one
        // and is not worth hashing.
        guard !token.isEmpty, token.utf8.count <= 256 else { return nil }
        return try database.queryOne("""
            SELECT family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at, used_at, revoked_at
            FROM refresh_tokens WHERE token_hash = ?
            """, [.blob(SecretHash.of(token))]).map { row in
            RefreshTokenDetails(familyID: row.string(0), clientID: row.string(1), userID: row.int(2), sid: row.string(3),
                                scope: row.string(4).split(separator: " ").map(String.init), authTime: row.int(5),
                                createdAt: row.int(6), expiresAt: row.int(7), usedAt: row.optionalInt(8), revokedAt: row.optionalInt(9))
        }
    }
}
