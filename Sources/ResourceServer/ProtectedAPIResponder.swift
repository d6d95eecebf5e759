import FoundationEssentials
import Glibc
import SSOCore

/// One protected GET endpoint of a resource server: the method and path
/// checks, the access token under either scheme (`Bearer`, or `DPoP` with
/// its proof), then the endpoint's own handler with the verified claims.
/// Every answer, success or error, is `no-store`.
public final class ProtectedAPIResponder: Responder {
    public typealias Handler = (AccessTokenClaims) throws -> Response

    public let path: String
    let validator: AccessTokenValidator
    let dpop: DPoPResourceGuard
    let handler: Handler
    /// Seconds since 1970; injectable so tests can move time.
    let clock: () -> Int

    public init(path: String, validator: AccessTokenValidator, dpop: DPoPResourceGuard,
                clock: @escaping () -> Int = { Int(time(nil)) }, handler: @escaping Handler) {
        self.path = path
        self.validator = validator
        self.dpop = dpop
        self.clock = clock
        self.handler = handler
    }

    public func respond(to request: Request) throws -> Response {
        guard request.path == path else { return .plainError(404, "not_found") }
        guard request.method == "GET" else { return .methodNotAllowed(allowed: ["GET"]) }
        let now = clock()
        var response: Response
        do {
            switch AccessTokenCredentials.extract(fromAuthorization: request.header("authorization"),
                                                  isVerified: validator.verifiedTokens.contains) {
            case .token(.bearer, let token):
                response = try handler(try validator.validateBearer(token, now: now))
            case .token(.dpop, let token):
                response = try handler(try validateDPoP(token, request: request, now: now))
                if let nonce = dpop.currentNonce(now: now) { response.setHeader("DPoP-Nonce", nonce) }
            case .malformed(let scheme, let reason):
                throw validator.policy.error(.malformedToken, "the Authorization header is not a valid \(scheme.rawValue) credential",
                                             detail: reason, scheme: scheme)
            case .absent:
                throw validator.policy.error(.missingToken, "an access token is required (Authorization: Bearer, or DPoP with a DPoP proof)")
            }
        } catch var error as BearerError {
            Metrics.count(.accessTokenRefusals, error.code.rawValue)
            // RFC 9449 §8/§9: "The rejection response MAY include a DPoP-Nonce
            // HTTP header providing a new nonce value": every challenge that
            // invites a DPoP request brings the nonce it will need.
            if error.challenges.contains(where: { $0.hasPrefix("DPoP") }) { error.dpopNonce = dpop.currentNonce(now: now) }
            throw error
        }
        response.setHeader("Cache-Control", "no-store")
        return response
    }

    /// RFC 9449 §7.1: the token's own checks (cached after the first time,
    /// answered in the DPoP scheme), then the proof on every request.
    func validateDPoP(_ token: String, request: Request, now: Int) throws -> AccessTokenClaims {
        let claims: AccessTokenClaims
        do { claims = try validator.verifiedClaims(token, now: now) } catch var error as BearerError {
            error.scheme = .dpop
            throw error
        }
        try dpop.check(token: token, claims: claims, proofHeader: request.header("dpop"), method: request.method, now: now)
        return claims
    }
}
