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

    /// RFC 7519 §4.1.3: "In the general case, the "aud" value is an array of
    /// case-sensitive strings ... In the special case when the JWT has one
    /// audience, the "aud" value MAY be a single case-sensitive string".
    public struct Audience: Decodable, Sendable, Equatable {
        public let values: [String]

        public init(_ values: [String]) { self.values = values }

        public init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let single = try? container.decode(String.self) {
                values = [single]
            } else {
                values = try container.decode([String].self)
            }
        }
    }
}
