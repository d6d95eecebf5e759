import SSOCore

/// The sign-in pages' posts (/login and its passkey steps): a refusal is a
/// page in the pages' style and language, or the sign-in page again.
public struct SignInPageErrors: ErrorDialect {
    let catalogue: MessageCatalogue

    public init(catalogue: MessageCatalogue) { self.catalogue = catalogue }

    public func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
        let browserLanguage = catalogue.messages(for: exchange.request)
        switch error {
        case let crossSite as CrossSiteRequest:
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.cross_site_form"), messages: browserLanguage,
                                    status: 403, detail: "login CSRF refused: \(crossSite.detail)")
        case let formError as FormError:
            return ErrorPage.render(title: "error.signin_title",
                                    message: PageText("error.login_form_malformed", ["reason": formError.code.rawValue]),
                                    messages: browserLanguage, status: formError.code == .unsupportedMediaType ? 415 : 400,
                                    detail: formError.description)
        case PendingSignIn.Refusal.expired(let language):
            return .redirect(to: "/login.html?error=expired" + LoginStep.languageParameter(language))
                .logging("no live pending request behind the gh_login cookie")
        case PendingSignIn.Refusal.foreignForm(let messages):
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.foreign_form"), messages: messages, status: 403,
                                    detail: "the form's req does not match the pending request")
        default: return nil
        }
    }
}
