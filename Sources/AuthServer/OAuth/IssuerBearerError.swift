import IssuerStorage
import SSOCore

/// Why the issuer's own protected resource (userinfo) refused a request,
/// and the one place that turns it into RFC 6750 §3's wire format: a
/// `WWW-Authenticate: Bearer` challenge plus a JSON body
/// `{"error", "error_description"}`, never cached.
///
/// (The resource servers have their own `BearerError` in ResourceServer;
/// AuthServer does not link that module, see Package.swift.)
public struct IssuerBearerError: Error, Equatable {
    public enum Code: String, Sendable {
        /// No credentials were sent (RFC 6750 §3.1: no error code in the challenge).
        case missingToken = "missing_token"
        case invalidRequest = "invalid_request"
        case invalidToken = "invalid_token"
        case insufficientScope = "insufficient_scope"
        /// RFC 9449 §7.1: the DPoP proof is missing or not acceptable.
        case invalidDPoPProof = "invalid_dpop_proof"
    }

    /// The authentication scheme the challenge names: RFC 6750's Bearer,
    /// or RFC 9449's DPoP for a request about a DPoP-bound token.
    public enum Scheme: Sendable { case bearer, dpop }

    public let code: Code
    /// Client-safe text; never holds the token.
    public let description: String
    /// Log-only text.
    public let detail: String
    /// Sent with insufficient_scope.
    public var requiredScope: String?
    /// The challenge's `realm`: the issuer origin, set by the responder.
    public var realm: String = ""
    public var scheme: Scheme

    public init(_ code: Code, _ description: String, detail: String = "", requiredScope: String? = nil, scheme: Scheme = .bearer) {
        self.code = code
        self.description = description
        self.detail = detail
        self.requiredScope = requiredScope
        self.scheme = scheme
    }

    /// RFC 6750 §3.1: invalid_request → 400, invalid_token → 401,
    /// insufficient_scope → 403; a request without credentials → 401.
    public var status: Int {
        switch code {
        case .invalidRequest: 400
        case .missingToken, .invalidToken, .invalidDPoPProof: 401
        case .insufficientScope: 403
        }
    }

    public var challenge: String {
        // RFC 9449 §7.1: "WWW-Authenticate: DPoP" with the algorithms this
        // server accepts in proofs, the error and its description.
        if scheme == .dpop {
            return "DPoP algs=\"\(DPoPProof.supportedAlgorithms.joined(separator: " "))\", error=\"\(code.rawValue)\", "
                + "error_description=\"\(BearerSyntax.quotable(description))\""
        }
        return switch code {
        // RFC 6750 §3.1: "If the request lacks any authentication information
        // (e.g., the client was unaware that authentication is necessary or
        // attempted using an unsupported authentication method), the resource
        // server SHOULD NOT include an error code or other error information."
        case .missingToken:
            BearerSyntax.challenge(realm: realm)
        // RFC 6750 §3: the "scope" attribute names the scope needed.
        case .insufficientScope:
            BearerSyntax.challenge(realm: realm, error: code.rawValue, scope: requiredScope)
        case .invalidRequest, .invalidToken, .invalidDPoPProof:
            BearerSyntax.challenge(realm: realm, error: code.rawValue, description: description)
        }
    }

}

extension IssuerBearerError: HTTPResponseError {
    public var response: Response {
        Response(status: status, headers: [
            ("Content-Type", "application/json"),
            ("Cache-Control", "no-store"),
            ("Pragma", "no-cache"),
            ("WWW-Authenticate", challenge),
        ], body: BearerSyntax.errorBody(error: code.rawValue, description: description))
    }

    public var logDetail: String { detail.isEmpty ? "\(code.rawValue): \(description)" : "\(code.rawValue): \(detail)" }
}
