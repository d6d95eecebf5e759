import SSOCore

/// `/authorize` before the request is known to be a client's: an error
/// page, never a redirect (RFC 6749 §4.1.2.1: without a verified
/// redirection URI the server "SHOULD inform the resource owner of the
/// error and MUST NOT automatically redirect"), with the details an
/// integrator needs.
public struct AuthorizationPageErrors: ErrorDialect {
    let catalogue: MessageCatalogue

    public init(catalogue: MessageCatalogue) { self.catalogue = catalogue }

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        guard let formError = error as? FormError else { return nil }
        return ErrorPage.render(title: "error.signin_title", message: PageText("error.signin_malformed", ["reason": formError.code.rawValue]),
                                messages: catalogue.messages(for: exchange.request),
                                status: formError.code == .unsupportedMediaType ? 415 : 400, detail: formError.description,
                                integrator: IntegratorErrorDetails(code: .invalidRequest, parameter: nil, request: exchange.request))
    }
}
