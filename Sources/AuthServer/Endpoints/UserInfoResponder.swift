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
    let verifier: IssuerAccessTokenVerifier
    let dpop: IssuerDPoP

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
        let active: ActiveAccessToken
        switch try BearerAuthorization.extract(from: request) {
        case .absent:
            throw IssuerBearerError(.missingToken, "an access token is required (Authorization: Bearer, or DPoP with a proof)")
        case .token(let token):
            active = try verified(token, scheme: .bearer)
            // RFC 9449 §7.1: a DPoP-bound token presented as a bearer token
            // is refused ("the resource server MUST check that the token is
            // not DPoP-bound" before accepting it under the Bearer scheme).
            guard active.claims.cnf == nil else {
                throw IssuerBearerError(.invalidToken, "this access token is DPoP-bound: send it with the DPoP scheme and a proof",
                                        scheme: .dpop)
            }
        case .dpop(let token):
            active = try verified(token, scheme: .dpop)
            try checkProof(request, token: token, boundTo: active.claims.cnf?.jkt)
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

    /// RFC 6750 §3.1 invalid_token: "The access token provided is expired,
    /// revoked, malformed, or invalid for other reasons."
    func verified(_ token: String, scheme: IssuerBearerError.Scheme) throws -> ActiveAccessToken {
        do { return try verifier.active(token) } catch let rejection as TokenRejection {
            throw IssuerBearerError(.invalidToken, Self.description(rejection.reason), detail: rejection.description, scheme: scheme)
        }
    }

    /// RFC 9449 §7: under the DPoP scheme the token must be bound (`cnf.jkt`)
    /// and the request must carry a proof for it (ath, htm, htu, fresh iat,
    /// unused jti) signed by the key it is bound to.
    func checkProof(_ request: Request, token: String, boundTo jkt: String?) throws {
        guard let jkt else {
            throw IssuerBearerError(.invalidToken, "this access token is not DPoP-bound: send it with the Bearer scheme", scheme: .dpop)
        }
        let proof: VerifiedDPoPProof
        do { proof = try dpop.resourceProof(request, path: "/userinfo", accessToken: token) } catch IssuerDPoPRefusal.invalidProof(let refusal) {
            SecurityEvents.dpopProofRejected(refusal.reason)
            throw IssuerBearerError(.invalidDPoPProof, DPoPRefusalText.describe(refusal.reason), detail: "DPoP proof refused: \(refusal)",
                                    scheme: .dpop)
        }
        guard proof.jkt.bytesEqual(jkt) else {
            SecurityEvents.dpopProofRejected(.wrongKey)
            throw IssuerBearerError(.invalidDPoPProof, DPoPRefusalText.describe(.wrongKey), detail: "proof key differs from cnf.jkt",
                                    scheme: .dpop)
        }
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
