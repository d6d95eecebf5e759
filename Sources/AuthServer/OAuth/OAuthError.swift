import IssuerStorage
import SSOCore

/// An OAuth 2.0 error (RFC 6749 §4.1.2.1 and §5.2) with its one wire format
/// for the token endpoint: JSON, no-store, the right status.
public struct OAuthError: Error, Equatable {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
        case unsupportedResponseType = "unsupported_response_type"
        case accessDenied = "access_denied"
        case loginRequired = "login_required"
        /// OIDC Core §3.1.2.6: prompt=consent, and no consent page here.
        case consentRequired = "consent_required"
        /// OIDC Core §3.1.2.6: prompt=select_account cannot be met silently.
        case accountSelectionRequired = "account_selection_required"
        case requestNotSupported = "request_not_supported"
        case requestURINotSupported = "request_uri_not_supported"
        /// RFC 9101 §6.3 (OIDC Core §3.1.2.6): the request object is not
        /// signed by the client, not for this issuer, expired or malformed.
        case invalidRequestObject = "invalid_request_object"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        /// RFC 8693 §2.2.2: an audience or resource the server will not issue for.
        case invalidTarget = "invalid_target"
        /// RFC 9449 §5: the DPoP proof is missing or not acceptable.
        case invalidDPoPProof = "invalid_dpop_proof"
        /// RFC 9449 §8: the proof must carry the nonce sent in `DPoP-Nonce`.
        case useDPoPNonce = "use_dpop_nonce"
    }

    public let code: Code
    /// Client-safe text (`error_description`): it names the parameter or the
    /// mistake, never echoes a value and never tells the caller anything it
    /// did not send itself.
    public let description: String
    /// Log-only: the exact reason ("reuse detected; family F revoked"), for
    /// the operator reading the request log (fosite's debug beside its hint).
    /// Never a secret.
    public var detail: String
    /// True when the client authenticated with HTTP Basic, so a 401 must
    /// answer with a Basic challenge (RFC 6749 §5.2, invalid_client).
    public var usedBasicAuthentication = false
    /// RFC 9449 §8: the nonce a client's next proof must carry (`DPoP-Nonce`).
    public var dpopNonce: String?
    /// A refused refresh's `reason` member (RFC 6749 §5.2 allows members
    /// beyond its own): what an app can tell its user (RefreshRefusal).
    public var reason: RefreshRefusal?

    public init(_ code: Code, _ description: String, detail: String = "") {
        self.code = code
        self.description = description
        self.detail = detail
    }

    public static func invalidRequest(_ description: String, detail: String = "") -> OAuthError {
        OAuthError(.invalidRequest, description, detail: detail)
    }
    public static func invalidGrant(_ description: String, detail: String = "") -> OAuthError {
        OAuthError(.invalidGrant, description, detail: detail)
    }
}

extension OAuthError: HTTPResponseError {
    struct Body: Encodable {
        let error: String
        let error_description: String
        let reason: String?
    }

    /// RFC 6749 §5.2: 400 for every error but invalid_client, which is 401
    /// (with WWW-Authenticate when the client used the Authorization header).
    public var response: Response {
        let status = code == .invalidClient ? 401 : 400
        var headers: [(name: String, value: String)] = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
        if code == .invalidClient && usedBasicAuthentication {
            headers.append(("WWW-Authenticate", "Basic realm=\"gatehouse\", charset=\"UTF-8\""))
        }
        if let dpopNonce { headers.append(("DPoP-Nonce", dpopNonce)) }
        let body = Body(error: code.rawValue, error_description: description, reason: reason?.rawValue)
        return (try? Response.json(body, status: status, headers: headers))
            ?? .plainError(status, code.rawValue)
    }

    public var logDetail: String {
        let text = detail.isEmpty ? "\(code.rawValue): \(description)" : "\(code.rawValue): \(detail)"
        return reason.map { text + " (reason \($0.rawValue))" } ?? text
    }
}

extension FormError {
    /// The token endpoint answers even malformed forms in OAuth's format.
    var asOAuthError: OAuthError {
        switch code {
        case .repeatedParameter: .invalidRequest("parameter \(detail) is repeated")
        case .unsupportedMediaType: .invalidRequest("the body must be application/x-www-form-urlencoded")
        case .tooLarge: .invalidRequest("a parameter is too long")
        case .tooManyParameters: .invalidRequest("too many parameters")
        case .badEncoding: .invalidRequest("the body is not valid form encoding")
        case .controlCharacter: .invalidRequest("parameter \(parameter ?? "") contains a control character")
        }
    }
}
