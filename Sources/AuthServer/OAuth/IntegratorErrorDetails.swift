import SSOCore

/// What an authorization error page (one the issuer shows instead of
/// redirecting, RFC 6749 §4.1.2.1) tells the app's developer beside the
/// user's sentence: the OAuth error code, the parameter at fault, and the
/// request id, which is nginx's `$request_id`: the same id is the
/// `request_id` of that request's line in the request log (with the exact
/// reason) and its `X-Request-Id` header, so support can find the line.
public struct IntegratorErrorDetails: Sendable, Equatable {
    public let code: OAuthError.Code
    public let parameter: String?
    public let requestID: String

    public init(code: OAuthError.Code, parameter: String?, request: Request) {
        self.code = code
        self.parameter = parameter
        requestID = request.requestID
    }

    /// A small definition list; every value is escaped (the request id
    /// comes from nginx, the rest from the code, but a page escapes all).
    func html(_ messages: Messages) -> String {
        let escape = HTMLEscaping.escape
        var rows = [("error.details_code", code.rawValue)]
        if let parameter { rows.append(("error.details_parameter", parameter)) }
        if !requestID.isEmpty { rows.append(("error.details_request_id", requestID)) }
        let items = rows.map { "    <dt>\(messages.html($0.0))</dt><dd><code>\(escape($0.1))</code></dd>" }.joined(separator: "\n")
        return """
              <p class="small">\(messages.html("error.details_lead"))</p>
              <dl class="details" id="error-details">
            \(items)
              </dl>
            """
    }
}
