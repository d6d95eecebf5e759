import IssuerStorage
import SSOCore

/// The token checks of every protected resource the issuer serves itself
/// (userinfo, the admin API), in one order: the credentials' scheme, the
/// token (IssuerAccessTokenVerifier), then the DPoP proof where the token
/// is bound. What a resource then asks of the token (a scope, a user, an
/// audience) is its own. Every refusal is an IssuerBearerError.
struct IssuerProtectedResource {
    let verifier: IssuerAccessTokenVerifier
    let dpop: IssuerDPoP
    /// The resource's path in DPoP's `htu`: the request's own path when nil.
    let path: String?

    /// The active token of `request`.
    func activeToken(_ request: Request) throws -> ActiveAccessToken {
        switch try BearerAuthorization.extract(from: request) {
        case .absent:
            throw IssuerBearerError(.missingToken, "an access token is required (Authorization: Bearer, or DPoP with a proof)")
        case .token(let token):
            let active = try verified(token, scheme: .bearer)
            // RFC 9449 §7.1: a DPoP-bound token presented as a bearer token
            // is refused ("the resource server MUST check that the token is
            // not DPoP-bound" before accepting it under the Bearer scheme).
            guard active.claims.cnf == nil else {
                throw IssuerBearerError(.invalidToken, "this access token is DPoP-bound: send it with the DPoP scheme and a proof",
                                        scheme: .dpop)
            }
            return active
        case .dpop(let token):
            let active = try verified(token, scheme: .dpop)
            try checkProof(request, token: token, boundTo: active.claims.cnf?.jkt)
            return active
        }
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
        do { proof = try dpop.resourceProof(request, path: path ?? request.path, accessToken: token) } catch IssuerDPoPRefusal.invalidProof(let refusal) {
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
