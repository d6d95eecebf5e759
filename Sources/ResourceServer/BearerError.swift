import SSOCore

/// Why a protected resource refused a request, and the one place that turns
/// that into the wire format of docs/API.md ("Resource servers") and RFC 6750 §3.
///
/// `description` goes to the client (body and challenge); `detail` only to
/// the log. Neither ever holds the token.
public struct BearerError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case missingToken = "missing_token"
        case malformedToken = "malformed_token"
        case tokenExpired = "token_expired"
        case invalidSignature = "invalid_signature"
        case unknownSigningKey = "unknown_signing_key"
        case invalidIssuer = "invalid_issuer"
        case invalidAudience = "invalid_audience"
        case insufficientScope = "insufficient_scope"
    }

    public let code: Code
    /// Client-safe text for `error_description`.
    public let description: String
    /// Log-only text.
    public let detail: String
    /// The protected resource's origin, sent as the challenge's `realm`.
    public let realm: String
    /// The scope the resource needs, sent with `insufficient_scope`.
    public let requiredScope: String

    public init(_ code: Code, _ description: String, detail: String = "", realm: String, requiredScope: String) {
        self.code = code
        self.description = description
        self.detail = detail
        self.realm = realm
        self.requiredScope = requiredScope
    }

    /// 401 when the token is absent or cannot be trusted; 403 when it is a
    /// good token that does not grant this resource.
    public var status: Int {
        switch code {
        case .invalidAudience, .insufficientScope: 403
        default: 401
        }
    }

    /// The `WWW-Authenticate` value.
    public var challenge: String {
        switch code {
        // RFC 6750 §3.1: "If the request lacks any authentication information
        // (e.g., the client was unaware that authentication is necessary or
        // attempted using an unsupported authentication method), the resource
        // server SHOULD NOT include an error code or other error information."
        case .missingToken:
            BearerSyntax.challenge(realm: realm)
        // RFC 6750 §3.1 insufficient_scope: "The resource server SHOULD respond
        // with the HTTP 403 (Forbidden) status code and MAY include the "scope"
        // attribute with the scope necessary to access the protected resource."
        case .insufficientScope:
            BearerSyntax.challenge(realm: realm, error: "insufficient_scope", scope: requiredScope)
        // RFC 6750 §3.1 invalid_token: "The access token provided is expired,
        // revoked, malformed, or invalid for other reasons." A token for
        // another audience is such a token (sent with 403 per docs/API.md).
        default:
            BearerSyntax.challenge(realm: realm, error: "invalid_token", description: description)
        }
    }

}

extension BearerError: HTTPResponseError {
    public var response: Response {
        Response(status: status, headers: [
            ("Content-Type", "application/json"),
            ("Cache-Control", "no-store"),
            ("WWW-Authenticate", challenge),
        ], body: BearerSyntax.errorBody(error: code.rawValue, description: description))
    }

    public var logDetail: String { detail.isEmpty ? code.rawValue : "\(code.rawValue): \(detail)" }
}
