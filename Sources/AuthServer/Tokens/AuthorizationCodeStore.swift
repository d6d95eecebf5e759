import SSOCore

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
    /// How the user authenticated for the session the code came from (RFC
    /// 8176 values); the ID token's `amr`, and its `acr` via `acr`.
    public var amr: [String] = AuthenticationMethods.passwordOnly

    /// OIDC Core §2 acr for the ID token.
    public var acr: String { AuthenticationMethods.acr(for: amr) }
}

/// Why a code could not be redeemed.
public enum CodeRedemptionFailure: Error, Equatable {
    case unknownOrExpired
    case mismatch
    /// The code was redeemed before: what that use issued must be revoked.
    case reused(familyID: String?, jti: String?)
}

/// One-time authorization codes, stored as hashes, valid for 60 s.
public final class AuthorizationCodeStore {
    let database: SQLiteDatabase
    let clock: Clock

    public init(database: SQLiteDatabase, clock: @escaping Clock = systemClock) {
        self.database = database
        self.clock = clock
    }

    /// Issues a code; returns the code itself (shown once, to the client).
    public func issue(_ record: AuthorizationCodeGrantRecord, lifetime: Int) throws -> String {
        let code = SecureRandom.token()
        let now = clock()
        try database.execute("""
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time,
                created_at, expires_at, amr) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(SecretHash.of(code)), .text(record.clientID), .text(record.redirectURI), .text(record.codeChallenge),
                  .text(record.scope.joined(separator: " ")), SQLiteValue(record.nonce), .text(record.sid), .integer(record.userID),
                  .integer(record.authTime), .integer(now), .integer(now + Int64(lifetime)), .text(AuthenticationMethods.encode(record.amr))])
        return code
    }

    /// Redeems a code in one atomic statement that also checks the client,
    /// the redirect URI and the PKCE challenge, so a wrong verifier or a
    /// wrong client changes nothing and the code stays usable by its owner,
    /// while two concurrent redemptions can never both succeed.
    public func redeem(code: String, clientID: String, redirectURI: String, challengeFromVerifier: String) throws -> AuthorizationCodeGrantRecord {
        let hash = SecretHash.of(code)
        let now = clock()
        if let row = try database.queryOne("""
            UPDATE authorization_codes SET used_at = ?
            WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? AND client_id = ? AND redirect_uri = ? AND code_challenge = ?
            RETURNING client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time, amr
            """, [.integer(now), .blob(hash), .integer(now), .text(clientID), .text(redirectURI), .text(challengeFromVerifier)]) {
            return AuthorizationCodeGrantRecord(
                clientID: row.string(0), redirectURI: row.string(1), codeChallenge: row.string(2),
                scope: row.string(3).split(separator: " ").map(String.init), nonce: row.optionalString(4), sid: row.string(5),
                userID: row.int(6), authTime: row.int(7), amr: AuthenticationMethods.decode(row.string(8)))
        }
        guard let existing = try database.queryOne("""
            SELECT used_at, expires_at, client_id, issued_family_id, issued_jti FROM authorization_codes WHERE code_hash = ?
            """, [.blob(hash)]) else { throw CodeRedemptionFailure.unknownOrExpired }
        // RFC 6749 §4.1.2: "If an authorization code is used more than once,
        // the authorization server MUST deny the request and SHOULD revoke
        // (when possible) all tokens previously issued based on that code."
        // Only the client the code was issued to can trigger that.
        if existing.optionalInt(0) != nil, existing.string(2) == clientID {
            throw CodeRedemptionFailure.reused(familyID: existing.optionalString(3), jti: existing.optionalString(4))
        }
        if existing.optionalInt(0) != nil || existing.int(1) <= now { throw CodeRedemptionFailure.unknownOrExpired }
        throw CodeRedemptionFailure.mismatch
    }

    /// Records what the redemption issued, for revocation on reuse.
    public func recordIssued(code: String, familyID: String?, jti: String) throws {
        try database.execute("UPDATE authorization_codes SET issued_family_id = ?, issued_jti = ? WHERE code_hash = ?",
                             [SQLiteValue(familyID), .text(jti), .blob(SecretHash.of(code))])
    }
}
