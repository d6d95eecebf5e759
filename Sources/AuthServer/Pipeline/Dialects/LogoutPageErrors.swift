import SSOCore

/// RP-Initiated Logout §4: "If any of the validation procedures defined in
/// this specification fail, the OP MUST NOT perform post-logout
/// redirection to an RP": the user sees a page saying what went wrong, in
/// the browser's language, and nothing is changed.
public struct LogoutPageErrors: ErrorDialect {
    let catalogue: MessageCatalogue

    public init(catalogue: MessageCatalogue) { self.catalogue = catalogue }

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        let failure: LogoutRequestFailure
        switch error {
        case let formError as FormError:
            failure = LogoutRequestFailure(PageText("logout.malformed_reason", ["reason": formError.code.rawValue]), detail: formError.description,
                                           status: formError.code == .unsupportedMediaType ? 415 : 400)
        case let logoutFailure as LogoutRequestFailure: failure = logoutFailure
        default: return nil
        }
        return failure.response(catalogue.messages(for: exchange.request))
    }
}
