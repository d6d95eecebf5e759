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
/// - `email_verified` is true: accounts are created by the operator with
///   `ssoctl`, which is the verification (as in the ID token).
public final class UserInfoResponder: Responder {
    let issuer: String
    let verifier: IssuerAccessTokenVerifier

    public init(services: IssuerServices) {
        issuer = services.settings.issuer
        verifier = services.accessTokens
    }

    /// OIDC Core §5.3.2: the response body, JSON; absent claims are omitted.
    struct Body: Encodable {
        let sub: String
        let email: String?
        let email_verified: Bool?
        let name: String?
    }

    public func respond(to request: Request) throws -> Response {
        // OIDC Core §5.3.1: "The UserInfo Endpoint MUST support the use of the
        // HTTP GET and HTTP POST methods defined in RFC 7231."
        guard request.method == "GET" || request.method == "POST" else { return .methodNotAllowed(allowed: ["GET", "POST"]) }
        do {
            let active = try authorize(request)
            let user = active.user
            let scopes = active.claims.scopes
            // OIDC Core §5.4: email and email_verified with scope "email",
            // name with scope "profile".
            let body = Body(sub: user.subject,
                            email: scopes.contains("email") ? user.email : nil,
                            email_verified: scopes.contains("email") ? true : nil,
                            name: scopes.contains("profile") ? user.name : nil)
            // Personal data: never stored by a cache (RFC 9111 §5.2.2.5).
            return try .json(body, headers: [("Cache-Control", "no-store"), ("Pragma", "no-cache")])
        } catch var error as IssuerBearerError {
            error.realm = issuer
            throw error
        }
    }

    /// The active token, or the RFC 6750 error that explains the refusal.
    func authorize(_ request: Request) throws -> (claims: PresentedAccessToken, user: User) {
        guard case .token(let token) = try BearerAuthorization.extract(from: request) else {
            throw IssuerBearerError(.missingToken, "an access token is required (Authorization: Bearer)")
        }
        let active: ActiveAccessToken
        do { active = try verifier.active(token) } catch let rejection as TokenRejection {
            // RFC 6750 §3.1 invalid_token: "The access token provided is
            // expired, revoked, malformed, or invalid for other reasons."
            throw IssuerBearerError(.invalidToken, Self.description(rejection.reason), detail: rejection.description)
        }
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

    /// Client-safe wording per reason; the token holder may learn why its
    /// own token no longer works, never anything about other accounts.
    static func description(_ reason: TokenRejection.Reason) -> String {
        switch reason {
        case .malformed, .wrongType: "the access token is not a well-formed access token of this issuer"
        case .unsupportedAlgorithm, .invalidSignature: "the access token signature does not verify"
        case .unknownKey: "the access token is signed with a key this issuer does not publish"
        case .wrongIssuer: "the access token was not issued by this issuer"
        case .expired: "the access token has expired"
        case .notYetValid: "the access token is not valid yet"
        case .revoked: "the access token has been revoked"
        case .sessionEnded: "the sign-in session of the access token has ended"
        case .userDisabled: "the account of the access token is disabled"
        case .clientDeleted: "the client of the access token is no longer registered"
        }
    }
}
