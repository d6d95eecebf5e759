import IssuerStorage
import SSOCore

/// `POST /introspect` (RFC 7662): the state of a token, for authenticated
/// confidential clients (resource servers that prefer asking to verifying).
///
/// Choices where the RFC leaves room:
/// - Only confidential clients (client_secret_basic) may call; a public
///   client can prove nothing about itself, so it is invalid_client (401).
/// - Any authenticated confidential client may introspect any token of the
///   issuer: that is the resource server's use case (RFC 7662 §1). Tokens
///   are 256-bit random strings or signed JWTs, so scanning finds nothing.
/// - `token_type` is what RFC 7662 §2.2 defines it as, the RFC 6749 §5.1
///   type: "Bearer" for access tokens, absent for refresh tokens (they have
///   none). The extension member `token_use` (`access_token` or
///   `refresh_token`, the RFC 7009 hint values) says which kind it was.
/// - An access token is active only inside [nbf, exp) with no leeway: the
///   issuer judges its own tokens by its own clock. It must also not be
///   revoked, and its session and account must still be live.
/// - A rotated (spent) refresh token is inactive, even while the rotation
///   grace window would still answer a retry with the same successor.
public final class IntrospectionResponder: OneEndpointGroup {
    public static let path = "/introspect"
    public let served: SingleEndpoint

    public init(services: IssuerServices) {
        let introspection = Introspection(tokenLocator: services.tokenLocator, accessTokens: services.accessTokens, sessions: services.sessions,
                                          users: services.users, issuer: services.settings.issuer, clock: services.clock)
        // RFC 7662 §2.1: "The protected resource calls the introspection
        // endpoint using an HTTP POST request"; the caller is authenticated
        // from the header alone before the body is read
        // (ClientAuthentication.Mode.confidentialFromHeader).
        served = SingleEndpoint(Endpoint(Self.path, .post, input: .form,
                                         guards: [ClientAuthentication(services.clientAuthenticator, .confidentialFromHeader)],
                                         errors: OAuthErrors(), cache: .credentials, handler: introspection.answer))
    }

}

/// The introspection endpoint's handler.
struct Introspection {
    let tokenLocator: PresentedTokenLocator
    let accessTokens: IssuerAccessTokenVerifier
    let sessions: SSOSessions
    let users: UserAccounts
    let issuer: String
    let clock: Clock

    /// RFC 7662 §2.2. Every member but `active` is omitted when nil, so an
    /// inactive token is exactly `{"active":false}`.
    struct Body: Encodable {
        let active: Bool
        var token_type: String?
        var token_use: String?
        var client_id: String?
        var sub: String?
        var username: String?
        var scope: String?
        var exp: Int64?
        var iat: Int64?
        var nbf: Int64?
        var auth_time: Int64?
        var aud: [String]?
        var iss: String?
        var jti: String?
        var sid: String?
        /// RFC 9449 §6.2: "the authorization server ... MUST ... [return]
        /// the cnf claim" of a DPoP-bound token, so a resource server that
        /// introspects can require the proof.
        var cnf: Confirmation?

        static let inactive = Body(active: false)
    }

    func answer(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters
        // RFC 6749 §2.3: "The client MUST NOT use more than one
        // authentication method in each request."
        if try form.single("client_secret") != nil {
            throw OAuthError.invalidRequest("client_secret_post is not supported; use HTTP Basic only")
        }
        // RFC 7662 §2.1: token REQUIRED.
        guard let token = try form.single("token") else { throw OAuthError.invalidRequest("token is required") }
        // RFC 7662 §4: responses carry token state and personal data;
        // nothing may cache them (CachePolicy.credentials).
        return try .json(try introspect(token, hint: try form.single("token_type_hint")))
    }

    func introspect(_ token: String, hint: String?) throws -> Body {
        switch try tokenLocator.locate(token, hint: hint) {
        case .refreshToken(let details): try refreshTokenBody(details)
        case .accessToken(let claims): try accessTokenBody(claims)
        // RFC 7662 §2.2: "If the introspection call is properly authorized
        // but the token is not active, does not exist on this server, or the
        // protected resource is not allowed to introspect this particular
        // token, then the authorization server MUST return an introspection
        // response with the "active" field set to "false"." ... "the
        // authorization server SHOULD NOT include any additional information".
        case .unknown: .inactive
        }
    }

    /// Active: usable per its row, its SSO session live, its user enabled.
    func refreshTokenBody(_ details: RefreshTokenDetails) throws -> Body {
        guard details.isUsable(now: clock()),
              let session = try sessions.find(sid: details.sid), session.userID == details.userID,
              let user = try users.find(id: details.userID), !user.disabled else { return .inactive }
        var body = Body(active: true)
        body.token_use = "refresh_token"
        body.client_id = details.clientID
        body.sub = user.subject
        body.username = user.email
        body.scope = details.scope.joined(separator: " ")
        body.exp = details.expiresAt
        body.iat = details.createdAt
        body.auth_time = details.authTime
        body.iss = issuer
        body.sid = details.sid
        return body
    }

    func accessTokenBody(_ claims: PresentedAccessToken) throws -> Body {
        let active: ActiveAccessToken
        do { active = try accessTokens.active(claims, leeway: 0) } catch is TokenRejection { return .inactive }
        var body = Body(active: true)
        body.token_type = TokenResponseBody.tokenType(boundTo: active.claims.cnf?.jkt)
        body.token_use = "access_token"
        body.cnf = active.claims.cnf
        body.client_id = active.claims.client_id
        body.sub = active.claims.sub
        body.username = active.user?.email
        body.scope = active.claims.scope
        body.exp = active.claims.exp
        body.iat = active.claims.iat
        body.nbf = active.claims.nbf
        body.auth_time = active.session?.authTime
        body.aud = active.claims.aud.values
        body.iss = active.claims.iss
        body.jti = active.claims.jti
        body.sid = active.claims.sid
        return body
    }
}
