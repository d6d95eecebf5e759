import SSOCore

/// RFC 6749 §5.2's JSON errors (token, PAR, revocation, introspection):
/// even a malformed form is answered in OAuth's format, except a body
/// over the size limit, which is 413 (RFC 9110 §15.5.14) before any
/// parameter is read.
public struct OAuthErrors: ErrorDialect {
    public init() {}

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        guard let formError = error as? FormError, formError.code != .tooLarge else { return nil }
        return formError.asOAuthError.response.logging(formError.asOAuthError.logDetail)
    }
}
