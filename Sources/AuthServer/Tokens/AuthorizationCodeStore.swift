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

/// Why a code could not be redeemed, told apart for the log and for the
/// error_description (each names a mistake in what the caller itself sent).
public enum CodeRedemptionFailure: Error, Equatable {
    case unknown
    case expired
    /// Issued to another client.
    case otherClient
    /// redirect_uri differs from the authorization request's.
    case wrongRedirectURI
    /// code_verifier does not hash to the code_challenge.
    case wrongVerifier
    /// Redeemed before, and presented again with everything right (client,
    /// redirect URI, verifier): the first redemption's holder is replaying
    /// it, or someone who holds the verifier too. What that use issued must
    /// be revoked (RFC 6749 §4.1.2).
    case reused(familyID: String?, jti: String?)
    /// Redeemed before, presented again without the proof (another client,
    /// a wrong redirect URI or verifier): refused, and nothing is revoked,
    /// or anyone who saw a used code (browser history, the interstitial
    /// page) could end its owner's tokens.
    case reusedWithoutProof
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
            SELECT used_at, expires_at, client_id, redirect_uri, code_challenge, issued_family_id, issued_jti
            FROM authorization_codes WHERE code_hash = ?
            """, [.blob(hash)]) else { throw CodeRedemptionFailure.unknown }
        let proves = existing.string(2).bytesEqual(clientID) && existing.string(3).bytesEqual(redirectURI)
            && ConstantTime.equals(Array(existing.string(4).utf8), Array(challengeFromVerifier.utf8))
        if existing.optionalInt(0) != nil {
            // RFC 6749 §4.1.2: "If an authorization code is used more than once,
            // the authorization server MUST deny the request and SHOULD revoke
            // (when possible) all tokens previously issued based on that code."
            // Only a presentation that proves possession (the client, redirect
            // URI and verifier of the first use) can trigger that.
            guard proves else { throw CodeRedemptionFailure.reusedWithoutProof }
            throw CodeRedemptionFailure.reused(familyID: existing.optionalString(5), jti: existing.optionalString(6))
        }
        if existing.int(1) <= now { throw CodeRedemptionFailure.expired }
        if !existing.string(2).bytesEqual(clientID) { throw CodeRedemptionFailure.otherClient }
        if !existing.string(3).bytesEqual(redirectURI) { throw CodeRedemptionFailure.wrongRedirectURI }
        throw CodeRedemptionFailure.wrongVerifier
    }

    /// Records what the redemption issued, for revocation on reuse.
    public func recordIssued(code: String, familyID: String?, jti: String) throws {
        try database.execute("UPDATE authorization_codes SET issued_family_id = ?, issued_jti = ? WHERE code_hash = ?",
                             [SQLiteValue(familyID), .text(jti), .blob(SecretHash.of(code))])
    }
}
