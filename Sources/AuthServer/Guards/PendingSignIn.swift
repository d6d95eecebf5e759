import IssuerStorage
import SSOCore

/// A sign-in form's post continues one pending authorization request, and
/// only in the browser that started it: the `gh_login` cookie (SameSite
/// Strict, set by /authorize) names a live pending request, and the form's
/// `req` is that request's form token (its hash compared in constant
/// time), so neither a form copied from another browser nor a cookie alone
/// is enough. After SameOriginBrowser, which refuses cross-site posts
/// before the body is read.
public struct PendingSignIn: EndpointGuard {
    let pending: PendingAuthorizations
    let catalogue: MessageCatalogue

    public init(pending: PendingAuthorizations, catalogue: MessageCatalogue) {
        self.pending = pending
        self.catalogue = catalogue
    }

    public var readsInput: Bool { true }

    public typealias Value = LoginStep

    public func check(_ exchange: inout EndpointExchange) throws {
        let request = exchange.request, form = exchange.parameters
        let language = catalogue.pageLanguage(form)
        let messages = language.map(catalogue.messages) ?? catalogue.messages(for: request)
        guard let cookieSecret = request.cookies[PendingAuthorizations.cookieName],
              let waiting = try pending.find(cookieSecret: cookieSecret) else { throw Refusal.expired(language: language) }
        guard let formToken = try? form.single("req"), ConstantTime.equals(SecretHash.of(formToken), waiting.formTokenHash) else {
            throw Refusal.foreignForm(messages)
        }
        exchange.pendingSignIn = LoginStep(cookieSecret: cookieSecret, formToken: formToken, address: request.remoteAddress,
                                           clientID: waiting.request.clientID, userAgent: request.header("user-agent"),
                                           language: language, messages: messages)
    }

    enum Refusal: Error {
        /// No live pending request behind the cookie: the sign-in starts over.
        case expired(language: String?)
        /// The form's `req` is not the pending request's.
        case foreignForm(Messages)
    }
}
