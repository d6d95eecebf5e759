import SSOCore

/// The claims of a JWT access token (RFC 9068 §2.2), decoded only after its
/// signature has been verified.
///
/// Required here: `iss`, `sub`, `aud`, `exp`, `iat` (the ones the checks
/// and responses use); a token without one of them, or with a claim of the
/// wrong JSON type, does not decode and is a malformed token. NumericDate
/// values may be non-integer (RFC 7519 §2), hence `Double`.
public struct AccessTokenClaims: Decodable, Sendable {
    public let issuer: String
    public let subject: String
    public let audience: Audience
    public let expiresAt: Double
    public let notBefore: Double?
    public let issuedAt: Double
    public let tokenID: String?
    public let clientID: String?
    public let scope: String?
    public let sessionID: String?
    public let authTime: Double?
    public let email: String?
    public let roles: [String]?
    /// RFC 7800 §3.1 `cnf`: present only in a sender-constrained token.
    public let confirmation: Confirmation?

    enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audience = "aud", expiresAt = "exp", notBefore = "nbf", issuedAt = "iat"
        case tokenID = "jti", clientID = "client_id", scope, sessionID = "sid", authTime = "auth_time", email, roles
        case confirmation = "cnf"
    }

    /// RFC 9449 §6.1: `"cnf": {"jkt": "<JWK SHA-256 thumbprint>"}`, the
    /// key a DPoP-bound token is bound to. `jkt` is required: the only
    /// confirmation method these servers can verify, so a `cnf` without one
    /// (bound to a certificate, say) does not decode and is a malformed
    /// token here rather than a bearer token.
    public struct Confirmation: Decodable, Sendable {
        public let jwkThumbprint: String

        enum CodingKeys: String, CodingKey { case jwkThumbprint = "jkt" }
    }

    /// RFC 9068 §2.2.3 / RFC 8693 §4.2: "a JSON string containing a
    /// space-separated list of scopes".
    public var scopes: [Substring] { (scope ?? "").split(separator: " ") }

    /// RFC 7519 §4.1.3: an array of strings, or one string (one decoder, in SSOCore).
    public typealias Audience = AudienceClaim
}
