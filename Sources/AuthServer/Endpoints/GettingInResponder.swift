import IssuerStorage
import SSOCore

/// The getting-in pages, served by the login process under `/login/` so
/// the sign-in's `gh_login` cookie (path /login) reaches them: a sign-up
/// can continue the app's sign-in it began from.
///
/// | path | GET | POST |
/// | --- | --- | --- |
/// | `/login/forgot` | the email form | "check your email" (a link for a known address) |
/// | `/login/reset` | the new-password form of a reset link | sets it, ends every session |
/// | `/login/signup` | the sign-up form (GATEHOUSE_SIGNUP=open) | "check your email" |
/// | `/login/verify` | the page with the one button | verifies; continues the sign-in |
/// | `/login/verify/resend` | – | "check your email" (a new link for an unverified account) |
/// | `/login/invitation` | the new-password form of an invitation | sets it; the address is verified |
/// | `/login/email-change` | the page with the one button, naming the new address | moves the account there; the old address is told |
/// | `/login/email-revert` | the new-password form of the old address's "it wasn't me" link | sets it, moves the account back, removes passkeys and TOTP, ends every session |
/// | `/login/signup-offer` | `open` or nothing, for the login page's SSI (nginx: internal) | – |
///
/// Every POST passes SameOriginBrowser (the GETs are links from mail);
/// the link tokens travel in the form, never in a cookie.
public final class GettingInResponder: RoutedEndpointGroup {
    public static let forgotPath = "/login/forgot"
    public static let resetPath = GettingIn.resetPath
    public static let signUpPath = "/login/signup"
    public static let verifyPath = GettingIn.verifyPath
    public static let resendPath = "/login/verify/resend"
    public static let invitationPath = GettingIn.invitationPath
    public static let signUpOfferPath = "/login/signup-offer"
    public static let emailChangePath = GettingIn.emailChangePath
    public static let emailRevertPath = GettingIn.emailRevertPath
    public static let paths = [forgotPath, resetPath, signUpPath, verifyPath, resendPath, invitationPath, signUpOfferPath, emailChangePath,
                               emailRevertPath]

    public let table: RouteTable

    public init(services: IssuerServices) {
        let handlers = GettingInHandlers(gettingIn: services.gettingIn, selfService: services.accountSelfService, catalogue: services.messages,
                                         signup: services.settings.signup, completion: services.signInCompletion,
                                         answer: SignInAnswer(issuer: services.settings.issuer,
                                                              sessionLifetime: services.settings.lifetimes.ssoSession))
        let guards: [any EndpointGuard] = [SameOriginBrowserPosts(issuer: services.settings.issuer)]
        let errors = SignInPageErrors(catalogue: services.messages)
        func page(_ path: String, _ handler: @escaping (EndpointExchange) throws -> Response) -> Endpoint {
            Endpoint(path, .getAndPost, input: .formOrQuery, guards: guards, errors: errors, cache: .noStore, handler: handler)
        }
        let signUp = handlers.signup
        table = RouteTable([
            page(Self.forgotPath, handlers.forgot), page(Self.resetPath, handlers.reset), page(Self.signUpPath, handlers.signUp),
            page(Self.verifyPath, handlers.verify), page(Self.invitationPath, handlers.invitation),
            page(Self.emailChangePath, handlers.emailChange), page(Self.emailRevertPath, handlers.emailRevert),
            Endpoint(Self.resendPath, .post, input: .form, guards: guards, errors: errors, cache: .noStore, handler: handlers.resend),
            // nginx's SSI subrequest: whether the login page offers sign-up.
            Endpoint(Self.signUpOfferPath, .get, cache: .noStore) { _ in
                Response(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: signUp == .open ? Array("open".utf8) : [])
            },
        ])
    }
}
