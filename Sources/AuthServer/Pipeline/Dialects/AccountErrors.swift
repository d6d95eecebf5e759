import SSOCore

/// The account page's changes, posted by its plain forms and by its
/// script alike: a cross-site post gets a page (nobody's script asked for
/// it); the others a JSON error whose description, in the browser's
/// language, the page's script shows.
public struct AccountErrors: ErrorDialect {
    let catalogue: MessageCatalogue

    public init(catalogue: MessageCatalogue) { self.catalogue = catalogue }

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        let messages = catalogue.messages(for: exchange.request)
        switch error {
        case let crossSite as CrossSiteRequest:
            return ErrorPage.render(title: "account.error_title", message: PageText("account.cross_site"), messages: messages,
                                    status: 403, detail: "account CSRF refused: \(crossSite.detail)")
        case is SignedInAccount.SignedOut:
            return try Self.json(401, "signed_out", messages.text("account.sign_in_again"), detail: "no live SSO session")
        case let formError as FormError:
            return try Self.json(formError.code == .unsupportedMediaType ? 415 : 400, "invalid_request", messages.text("account.form_malformed"),
                                 detail: formError.description)
        case is AccountFormToken.ForeignForm:
            return try Self.json(403, "invalid_request", messages.text("account.form_foreign"), detail: "account form token mismatch")
        default: return nil
        }
    }

    /// The error line the page's script reads; `detail` is for the log.
    static func json(_ status: Int, _ error: String, _ description: String, detail: String? = nil) throws -> Response {
        try Response.json(["error": error, "error_description": description], status: status).logging(detail ?? description)
    }
}
