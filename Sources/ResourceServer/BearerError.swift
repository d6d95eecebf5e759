import SSOCore

/// Why a protected resource refused a request, and the one place that turns
/// that into the wire format of docs/API.md ("Resource servers"): RFC 6750
/// §3 for the `Bearer` scheme, RFC 9449 §7.1 for the `DPoP` scheme.
///
/// `description` goes to the client (body and challenge); `detail` only to
/// the log. Neither ever holds the token or the proof.
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
        /// A DPoP-bound token (`cnf.jkt`) presented as a bearer token.
        case tokenRequiresDPoP = "token_requires_dpop"
        /// A token without `cnf.jkt` presented under the DPoP scheme.
        case tokenNotDPoPBound = "token_not_dpop_bound"
        /// The DPoP proof is missing, repeated, or fails a check of RFC 9449 §4.3.
        case invalidDPoPProof = "invalid_dpop_proof"
        /// A good proof, signed by another key than the token is bound to.
        case dpopKeyMismatch = "dpop_key_mismatch"
        /// The proof lacks this server's current nonce (RFC 9449 §9).
        case useDPoPNonce = "use_dpop_nonce"
    }

    /// The authentication scheme a challenge is made in.
    public typealias Scheme = AccessTokenCredentials.Scheme

    public let code: Code
    /// Client-safe text for `error_description`.
    public let description: String
    /// Log-only text.
    public let detail: String
    /// The protected resource's origin, sent as the challenge's `realm`.
    public let realm: String
    /// The scope the resource needs, sent with `insufficient_scope`.
    public let requiredScope: String
    /// The scheme the client used, which its challenge answers in; a
    /// missing token is answered in both.
    public var scheme: Scheme
    /// The resource server's current DPoP nonce, sent as `DPoP-Nonce`
    /// (RFC 9449 §9) when it requires nonces.
    public var dpopNonce: String?

    public init(_ code: Code, _ description: String, detail: String = "", realm: String, requiredScope: String,
                scheme: Scheme = .bearer) {
        self.code = code
        self.description = description
        self.detail = detail
        self.realm = realm
        self.requiredScope = requiredScope
        self.scheme = scheme
    }

    /// 401 when the token or its proof is absent or cannot be trusted; 403
    /// when it is a good token that does not grant this resource.
    public var status: Int {
        switch code {
        case .invalidAudience, .insufficientScope: 403
        default: 401
        }
    }

    /// RFC 9449 §7.1: "An algs parameter SHOULD be included to signal to the
    /// client the JWS algorithms that are acceptable for the DPoP proof JWT.
    /// The value of the parameter is a space-delimited list".
    public static let dpopAlgorithms = DPoPProof.supportedAlgorithms.joined(separator: " ")

    /// The `WWW-Authenticate` values, one header field each.
    public var challenges: [String] {
        switch code {
        // RFC 6750 §3.1: "If the request lacks any authentication information
        // (e.g., the client was unaware that authentication is necessary or
        // attempted using an unsupported authentication method), the resource
        // server SHOULD NOT include an error code or other error information."
        // RFC 9449 §7.2: "Section 4.1 of [RFC7235] allows a protected resource
        // to indicate support for multiple authentication schemes (i.e.,
        // Bearer and DPoP) with the WWW-Authenticate header field".
        case .missingToken:
            [Self.challenge(.bearer, realm: realm), Self.challenge(.dpop, realm: realm)]
        // RFC 6750 §3.1 insufficient_scope: "The resource server SHOULD respond
        // with the HTTP 403 (Forbidden) status code and MAY include the "scope"
        // attribute with the scope necessary to access the protected resource."
        case .insufficientScope:
            [Self.challenge(scheme, realm: realm, error: "insufficient_scope", scope: requiredScope)]
        // RFC 9449 §7.1: "invalid_dpop_proof is used to indicate that the DPoP
        // proof itself was deemed invalid"; "The value use_dpop_nonce can be
        // used as described in Section 9 to signal that a nonce is needed".
        case .invalidDPoPProof, .useDPoPNonce:
            [Self.challenge(.dpop, realm: realm, error: code.rawValue, description: description)]
        // RFC 9449 §7.1: a request "rejected because the confirmation of the
        // DPoP binding in the access token failed" gets `DPoP
        // error="invalid_token"`; a bound token sent as a bearer token is
        // answered in the scheme it needs.
        case .tokenRequiresDPoP, .tokenNotDPoPBound, .dpopKeyMismatch:
            [Self.challenge(.dpop, realm: realm, error: "invalid_token", description: description)]
        // RFC 6750 §3.1 invalid_token: "The access token provided is expired,
        // revoked, malformed, or invalid for other reasons." A token for
        // another audience is such a token (sent with 403 per docs/API.md).
        default:
            [Self.challenge(scheme, realm: realm, error: "invalid_token", description: description)]
        }
    }

    /// The challenges as one value (RFC 9110 §11.6.1 allows a list); the
    /// response sends them as separate header fields.
    public var challenge: String { challenges.joined(separator: ", ") }

    /// RFC 6750 §3 for Bearer; RFC 9449 §7.1 for DPoP, the same parameters
    /// plus `algs`.
    static func challenge(_ scheme: Scheme, realm: String, error: String? = nil, description: String? = nil,
                          scope: String? = nil) -> String {
        let bearer = BearerSyntax.challenge(realm: realm, error: error, description: description, scope: scope)
        guard scheme == .dpop else { return bearer }
        return "DPoP" + bearer.dropFirst("Bearer".count) + ", algs=\"\(dpopAlgorithms)\""
    }
}

extension BearerError: HTTPResponseError {
    public var response: Response {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
        headers += challenges.map { ("WWW-Authenticate", $0) }
        if let dpopNonce { headers.append(("DPoP-Nonce", dpopNonce)) }
        return Response(status: status, headers: headers, body: BearerSyntax.errorBody(error: code.rawValue, description: description))
    }

    public var logDetail: String { detail.isEmpty ? code.rawValue : "\(code.rawValue): \(detail)" }
}
