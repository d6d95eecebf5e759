import SSOCore

/// `grant_type=refresh_token` (RFC 6749 §6) with rotation (RFC 9700 §4.14.2).
public final class RefreshTokenGrant {
    let config: GatehouseConfig
    let rotation: RefreshTokenRotation
    let users: UserStore
    let sessions: SSOSessionStore
    let issuer: TokenIssuer

    public init(config: GatehouseConfig, database: SQLiteDatabase, issuer: TokenIssuer, sealingKey: [UInt8], clock: @escaping Clock = systemClock) {
        self.config = config
        self.issuer = issuer
        rotation = RefreshTokenRotation(database: database, sealingKey: sealingKey, clock: clock)
        users = UserStore(database: database, clock: clock)
        sessions = SSOSessionStore(database: database, clock: clock)
    }

    public func handle(_ form: FormParameters, client: Client) throws -> TokenResponseBody {
        guard let token = try form.single("refresh_token") else { throw OAuthError.invalidRequest("refresh_token is required") }
        let requested = try form.single("scope").map { Set($0.split(separator: " ").map(String.init)) }
        // RFC 6749 §6: "The requested scope MUST NOT include any scope not
        // originally granted by the resource owner, and if omitted is treated
        // as equal to the scope originally granted." Checked before rotation.
        let outcome = try rotation.present(token, clientID: client.clientID, lifetime: config.refreshTokenLifetime,
                                           gracePeriod: config.refreshGracePeriod) { presented in
            if let requested, !requested.isSubset(of: Set(presented.scope)) {
                throw OAuthError(.invalidScope, "scope exceeds the original grant")
            }
        }
        let successor: String, record: RefreshTokenRecord
        switch outcome {
        case .rotated(let token, let issued), .replayed(let token, let issued): (successor, record) = (token, issued)
        case .refused, .reuseDetected: throw OAuthError.invalidGrant("the refresh token is invalid, expired or revoked")
        }
        let scope = requested.map { requested in record.scope.filter(requested.contains) } ?? record.scope
        guard let user = try users.find(id: record.userID), !user.disabled,
              let session = try sessions.find(sid: record.sid) else {
            throw OAuthError.invalidGrant("the user can no longer sign in")
        }
        // OIDC Core §12.2: the new ID token keeps sub, aud and the original
        // auth_time; it carries no nonce (none was sent with this request).
        let grant = TokenGrant(user: user, clientID: client.clientID, scope: scope, sid: record.sid, authTime: record.authTime,
                               nonce: nil, jti: SecureRandom.token(byteCount: 16), amr: session.amr)
        let tokens = try issuer.sign(grant)
        return TokenResponseBody(access_token: tokens.accessToken, token_type: "Bearer", expires_in: config.accessTokenLifetime,
                                 refresh_token: successor, id_token: tokens.idToken, scope: scope.joined(separator: " "))
    }
}
