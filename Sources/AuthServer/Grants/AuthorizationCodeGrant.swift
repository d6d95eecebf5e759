import SSOCore

/// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6).
public final class AuthorizationCodeGrant {
    let config: GatehouseConfig
    let database: SQLiteDatabase
    let codes: AuthorizationCodeStore
    let refreshTokens: RefreshTokenStore
    let revokedAccessTokens: RevokedAccessTokenStore
    let users: UserStore
    let sessions: SSOSessionStore
    let issuer: TokenIssuer
    let clock: Clock

    public init(config: GatehouseConfig, database: SQLiteDatabase, issuer: TokenIssuer, clock: @escaping Clock = systemClock) {
        self.config = config
        self.database = database
        self.issuer = issuer
        self.clock = clock
        codes = AuthorizationCodeStore(database: database, clock: clock)
        refreshTokens = RefreshTokenStore(database: database, clock: clock)
        revokedAccessTokens = RevokedAccessTokenStore(database: database)
        users = UserStore(database: database, clock: clock)
        sessions = SSOSessionStore(database: database, clock: clock)
    }

    public func handle(_ form: FormParameters, client: Client) throws -> TokenResponseBody {
        guard let code = try form.single("code") else { throw OAuthError.invalidRequest("code is required") }
        // RFC 6749 §4.1.3: redirect_uri REQUIRED if it was in the
        // authorization request (OIDC makes it required there, so here too).
        guard let redirectURI = try form.single("redirect_uri") else { throw OAuthError.invalidRequest("redirect_uri is required") }
        guard let verifier = try form.single("code_verifier") else { throw OAuthError.invalidRequest("code_verifier is required (PKCE)") }
        // RFC 7636 §4.1: code-verifier = 43*128unreserved.
        guard PKCE.isValidVerifier(verifier) else { throw OAuthError.invalidRequest("code_verifier must be 43 to 128 unreserved characters") }
        guard code.utf8.count <= 128 else { throw OAuthError.invalidGrant("the code is invalid, expired or already used") }

        let jti = SecureRandom.token(byteCount: 16)
        let issued: (record: AuthorizationCodeGrantRecord, user: User, refreshToken: String?)
        do {
            issued = try database.transaction {
                // RFC 7636 §4.6: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) == code_challenge,
                // checked inside the atomic redemption together with client and redirect URI.
                let record = try codes.redeem(code: code, clientID: client.clientID, redirectURI: redirectURI,
                                              challengeFromVerifier: PKCE.s256Challenge(verifier: verifier))
                guard let user = try users.find(id: record.userID), !user.disabled else {
                    throw OAuthError.invalidGrant("the user can no longer sign in")
                }
                guard try sessions.find(sid: record.sid) != nil else { throw OAuthError.invalidGrant("the sign-in session has ended") }
                var refreshToken: String?
                var familyID: String?
                // OIDC Core §11: refresh tokens only with offline_access.
                if record.scope.contains("offline_access") {
                    let refresh = try refreshTokens.issue(familyID: nil, clientID: client.clientID, userID: user.id, sid: record.sid,
                                                          scope: record.scope, authTime: record.authTime, lifetime: config.refreshTokenLifetime)
                    refreshToken = refresh.token
                    familyID = refresh.record.familyID
                }
                try codes.recordIssued(code: code, familyID: familyID, jti: jti)
                return (record, user, refreshToken)
            }
        } catch let failure as CodeRedemptionFailure {
            if case .reused(let familyID, let previousJTI) = failure {
                try database.transaction {
                    if let familyID { try refreshTokens.revokeFamily(familyID) }
                    if let previousJTI { try revokedAccessTokens.revoke(jti: previousJTI, expiresAt: clock() + Int64(config.accessTokenLifetime)) }
                }
            }
            throw OAuthError.invalidGrant("the code is invalid, expired or already used")
        }
        let grant = TokenGrant(user: issued.user, clientID: client.clientID, scope: issued.record.scope, sid: issued.record.sid,
                               authTime: issued.record.authTime, nonce: issued.record.nonce, jti: jti, amr: issued.record.amr)
        let tokens = try issuer.sign(grant)
        return TokenResponseBody(access_token: tokens.accessToken, token_type: "Bearer", expires_in: config.accessTokenLifetime,
                                 refresh_token: issued.refreshToken, id_token: tokens.idToken, scope: grant.scope.joined(separator: " "))
    }
}
