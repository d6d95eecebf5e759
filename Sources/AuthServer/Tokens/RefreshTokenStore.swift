import SSOCore

public struct RefreshTokenRecord: Equatable, Sendable {
    public let familyID: String
    public let clientID: String
    public let userID: Int64
    public let sid: String
    public let scope: [String]
    public let authTime: Int64
    public let expiresAt: Int64
}

/// Opaque refresh tokens, stored as hashes, grouped in families: every
/// rotation stays in the family of the code exchange that started it, so
/// reuse of a spent token can revoke all of them (RFC 9700 §4.14.2).
public final class RefreshTokenStore {
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Issues a token in `familyID` (a new family when nil).
    public func issue(familyID: String?, clientID: String, userID: Int64, sid: String, scope: [String], authTime: Int64,
                      lifetime: Int) throws -> (token: String, record: RefreshTokenRecord) {
        let token = SecureRandom.token()
        let now = clock()
        let record = RefreshTokenRecord(familyID: familyID ?? SecureRandom.token(byteCount: 16), clientID: clientID, userID: userID,
                                        sid: sid, scope: scope, authTime: authTime, expiresAt: now + Int64(lifetime))
        try database.execute("""
            INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(SecretHash.of(token)), .text(record.familyID), .text(clientID), .integer(userID), .text(sid),
                  .text(scope.joined(separator: " ")), .integer(authTime), .integer(now), .integer(record.expiresAt)])
        return (token, record)
    }

    /// Revokes every refresh token bound to an SSO session (logout).
    public func revokeAll(sid: String) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE sid = ? AND revoked_at IS NULL",
                             [.integer(clock()), .text(sid)])
    }

    /// Revokes every refresh token of a user (password change, disabling).
    public func revokeAll(userID: Int64) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
                             [.integer(clock()), .integer(userID)])
    }

    /// The family a presented token belongs to, live or not (revocation of a
    /// token revokes its family, RFC 7009 §2.1). Nil for unknown tokens.
    public func familyID(of token: String) throws -> (familyID: String, clientID: String)? {
        guard !token.isEmpty, token.utf8.count <= 256 else { return nil }
        return try database.queryOne("SELECT family_id, client_id FROM refresh_tokens WHERE token_hash = ?",
                                     [.blob(SecretHash.of(token))]).map { ($0.string(0), $0.string(1)) }
    }

    public func revokeFamily(_ familyID: String) throws {
        try database.execute("UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL",
                             [.integer(clock()), .text(familyID)])
    }
}

/// Access tokens revoked before they expire, by `jti` (introspection
/// honours the list; resource servers validate offline and cannot).
public final class RevokedAccessTokenStore {
    let database: SQLiteDatabase
    public init(database: SQLiteDatabase) { self.database = database }

    public func revoke(jti: String, expiresAt: Int64) throws {
        try database.execute("INSERT OR IGNORE INTO revoked_access_tokens (jti, expires_at) VALUES (?, ?)", [.text(jti), .integer(expiresAt)])
    }

    public func isRevoked(jti: String) throws -> Bool {
        try database.queryOne("SELECT 1 FROM revoked_access_tokens WHERE jti = ?", [.text(jti)]) != nil
    }
}
