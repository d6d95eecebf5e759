import IssuerStorage
import SSOCore

/// `GET|POST /userinfo` (OIDC Core §5.3): the signed-in user's claims, for
/// a Bearer access token the issuer signed.
///
/// Choices where the specifications leave room:
/// - The token's `aud` is not checked: OIDC Core §5.3 makes userinfo accept
///   the issuer's access tokens that carry `openid`, and a token asked for
///   with API scopes names only the APIs as audience (TokenIssuer.audience).
/// - Claims come from the users table as it is now, not from the token, so
///   a changed name or address shows at once (OIDC Core §5.3.2 lets
///   userinfo return current values).
/// - `email_verified` is the account's as it is now (as in the ID token):
///   true for accounts an administrator made or invited, and for a sign-up
///   once its verification link was used.
public final class UserInfoResponder: OneEndpointGroup {
    public static let path = "/userinfo"
    public let served: SingleEndpoint

    public init(services: IssuerServices) throws {
        let userInfo = UserInfo(verifier: services.accessTokens, dpop: try services.dpop())
        // OIDC Core §5.3.1: "The UserInfo Endpoint MUST support the use of the
        // HTTP GET and HTTP POST methods defined in RFC 7231." Personal data:
        // never stored by a cache (RFC 9111 §5.2.2.5).
        served = SingleEndpoint(Endpoint(Self.path, .getAndPost, errors: BearerChallengeErrors(realm: services.settings.issuer),
                                         cache: .credentials, handler: userInfo.answer))
    }

}

/// The userinfo endpoint's handler: the token's checks, then the claims.
struct UserInfo {
    let resource: IssuerProtectedResource

    init(verifier: IssuerAccessTokenVerifier, dpop: IssuerDPoP) {
        resource = IssuerProtectedResource(verifier: verifier, dpop: dpop, path: UserInfoResponder.path)
    }

    /// OIDC Core §5.3.2: the response body, JSON; absent claims are omitted.
    struct Body: Encodable {
        let sub: String
        let email: String?
        let email_verified: Bool?
        let name: String?
    }

    func answer(_ exchange: EndpointExchange) throws -> Response {
        let active = try authorize(exchange.request)
        let user = active.user
        let scopes = active.claims.scopes
        // OIDC Core §5.4: email and email_verified with scope "email",
        // name with scope "profile".
        let body = Body(sub: user.subject,
                        email: scopes.contains("email") ? user.email : nil,
                        email_verified: scopes.contains("email") ? user.emailVerified : nil,
                        name: scopes.contains("profile") ? user.name : nil)
        return try .json(body)
    }

    /// The active token, or the RFC 6750 error that explains the refusal.
    func authorize(_ request: Request) throws -> (claims: PresentedAccessToken, user: User) {
        let active = try resource.activeToken(request)
        // OIDC Core §5.3: the UserInfo Endpoint returns claims for an access
        // token obtained with an OpenID Connect request (scope openid).
        // RFC 6750 §3.1 insufficient_scope: "The request requires higher
        // privileges than provided by the access token."
        guard active.claims.scopes.contains("openid") else {
            throw IssuerBearerError(.insufficientScope, "the access token was not issued with scope openid", requiredScope: "openid")
        }
        // A machine client's token speaks for no user (and never has openid).
        guard let user = active.user else {
            throw IssuerBearerError(.insufficientScope, "the access token speaks for no user", requiredScope: "openid")
        }
        return (active.claims, user)
    }
}
