import SSOCore

/// How an endpoint writes a refusal: the same refusal (a malformed form, a
/// cross-site post) is OAuth JSON at /token, an HTML page at /login and a
/// JSON line for the account page's script. A dialect renders the errors it
/// knows; anything else is answered as every endpoint answers it
/// (`renderCommon`): an error that knows its response (HTTPResponseError)
/// gives it, any other is rethrown, and becomes a logged 500 with no detail.
public protocol ErrorDialect {
    /// The response for `error`, or nil when this dialect has no words for it.
    func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response?
    /// RFC 9110 §15.5.6: 405 with `Allow`, in the dialect's format.
    func methodNotAllowed(allowed: [String]) -> Response
}

extension ErrorDialect {
    public func methodNotAllowed(allowed: [String]) -> Response { .methodNotAllowed(allowed: allowed) }

    func render(_ error: any Error, _ exchange: EndpointExchange) throws -> Response {
        if let response = try response(for: error, exchange) { return response }
        if let known = error as? HTTPResponseError { return known.response.logging(known.logDetail) }
        throw error
    }
}

/// Errors as they come: FormError's plain JSON, OAuth and bearer errors
/// their own way (the documents, the metrics, the app's name).
public struct PlainErrors: ErrorDialect {
    public init() {}
    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? { nil }
}
