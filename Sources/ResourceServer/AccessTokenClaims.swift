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

    enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audience = "aud", expiresAt = "exp", notBefore = "nbf", issuedAt = "iat"
        case tokenID = "jti", clientID = "client_id", scope, sessionID = "sid", authTime = "auth_time", email, roles
    }

    /// RFC 9068 §2.2.3 / RFC 8693 §4.2: "a JSON string containing a
    /// space-separated list of scopes".
    public var scopes: [Substring] { (scope ?? "").split(separator: " ") }

    /// RFC 7519 §4.1.3: an array of strings, or one string (one decoder, in SSOCore).
    public typealias Audience = AudienceClaim
}
