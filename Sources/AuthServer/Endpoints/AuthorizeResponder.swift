import IssuerStorage
import SSOCore

/// `GET|POST /authorize` (RFC 6749 §4.1.1, OIDC Core §3.1.2).
public final class AuthorizeResponder: OneEndpointGroup {
    public static let path = "/authorize"
    public let served: SingleEndpoint

    public init(services: IssuerServices) {
        let authorization = Authorization(validator: services.authorizationRequestValidator, pushedAuthorizations: services.pushedAuthorizations,
                                          sessions: services.sessions, users: services.users, silentSignIn: services.silentSignIn,
                                          pendingAuthorizations: services.pendingAuthorizations, catalogue: services.messages,
                                          issuer: services.settings.issuer, clock: services.clock)
        // OIDC Core §3.1.2.1: "Authorization Servers MUST support the use of
        // the HTTP GET and POST methods."
        served = SingleEndpoint(Endpoint(Self.path, .getAndPost, input: .formOrQuery,
                                         errors: AuthorizationPageErrors(catalogue: services.messages), cache: .noStore,
                                         handler: authorization.answer))
    }


    /// OIDC Core §3.1.2.1 ui_locales: "End-User's preferred languages and
    /// scripts for the user interface, represented as a space-separated
    /// list of BCP47 [RFC5646] language tag values, ordered by preference."
    /// A hint: unreadable (repeated, a control character) is no preference.
    static func uiLocales(_ parameters: FormParameters) -> String? {
        (try? parameters.single("ui_locales")) ?? nil
    }
}

/// The authorization endpoint's handler: the request validated (or taken
/// from PAR), then a code for a live sign-in, `login_required`, or the
/// sign-in page.
struct Authorization {
    let validator: AuthorizationRequestValidator
    let pushedAuthorizations: PushedAuthorizations
    let sessions: SSOSessions
    let users: UserAccounts
    let silentSignIn: SilentSignIn
    let pendingAuthorizations: PendingAuthorizations
    /// The error page's and the sign-in page's languages.
    let catalogue: MessageCatalogue
    let issuer: String
    let clock: Clock

    func answer(_ exchange: EndpointExchange) throws -> Response {
        let request = exchange.request, parameters = exchange.parameters

        let authorization: AuthorizationRequest
        var uiLocales = AuthorizeResponder.uiLocales(parameters)
        do {
            // RFC 9126 §4: with a request_uri, the pushed parameters are the
            // request; the query's other parameters are ignored.
            if let pushed = try pushedAuthorizations.parameters(for: parameters, validator: validator) {
                uiLocales = AuthorizeResponder.uiLocales(pushed)
                authorization = try validator.validate(pushed, source: .pushed)
            } else {
                // RFC 9101 §6.3: with a request object, its parameters are the request.
                let validated = try validator.validated(parameters)
                uiLocales = AuthorizeResponder.uiLocales(validated.parameters)
                authorization = validated.request
            }
        } catch AuthorizationFailure.errorPage(let message, _, let detail, let code, let parameter) {
            return ErrorPage.render(title: "error.signin_title", message: message,
                                    messages: catalogue.messages(for: request, uiLocales: uiLocales),
                                    detail: detail, integrator: IntegratorErrorDetails(code: code, parameter: parameter, request: request))
        } catch AuthorizationFailure.redirect(let redirectURI, let state, let error) {
            return AuthorizationResponse.error(redirectURI: redirectURI, error: error, state: state, issuer: issuer)
                .logging("authorization error redirect: \(error.logDetail)")
        }

        let session = try request.cookies[SSOSessions.cookieName].flatMap { try sessions.find(secret: $0) }
        let hintedUserSignedIn = try isHintedUser(authorization, session: session)
        if let session, hintedUserSignedIn, !needsAuthentication(authorization, session: session) {
            let code = try silentSignIn.issueCode(for: authorization, session: session)
            return AuthorizationResponse.success(redirectURI: authorization.redirectURI, code: code, state: authorization.state,
                                                 issuer: issuer)
        }
        // OIDC Core §3.1.2.1 prompt=none: "The Authorization Server MUST NOT
        // display any authentication or consent user interface pages. An
        // error is returned if an End-User is not already authenticated."
        if authorization.prompt.contains("none") {
            let reason = session == nil ? "no live SSO session" : !hintedUserSignedIn ? "the session's user is not id_token_hint's subject"
                : "the session is too old for max_age"
            return AuthorizationResponse.error(redirectURI: authorization.redirectURI,
                                               error: OAuthError(.loginRequired, "the user must sign in", detail: "prompt=none: \(reason)"),
                                               state: authorization.state, issuer: issuer)
                .logging("authorization error redirect: login_required (prompt=none: \(reason))")
        }
        let (cookieSecret, formToken) = try pendingAuthorizations.create(authorization, replacesSID: session?.sid)
        // prompt=create: the sign-up page of this pending sign-in, whose
        // verification link continues it in this browser (GettingIn).
        var location = authorization.prompt.contains("create")
            ? GettingInResponder.signUpPath + "?req=" + FormParser.encodeComponent(formToken)
            : LoginPageLocation.page(clientID: authorization.clientID, formToken: formToken)
        if let hint = authorization.loginHint { location += "&login_hint=" + FormParser.encodeComponent(hint) }
        // The sign-in page in the language ui_locales asks for, when there
        // are pages in it; without ui_locales nginx picks from Accept-Language.
        if let language = LanguagePreferences.lookup(LanguagePreferences.ranges(uiLocales: uiLocales), in: catalogue.available) {
            location += "&lang=" + language
        }
        var response = Response.redirect(to: location)
        // SameSite=Strict: a cross-site form post to /login never carries it.
        response.addCookie(SetCookie(name: PendingAuthorizations.cookieName, value: cookieSecret, path: "/login",
                                     maxAge: PendingAuthorizations.lifetime, sameSite: .strict))
        return response
    }

    /// prompt=login always asks; so do create and select_account (OIDC Core §3.1.2.1:
    /// "prompt the End-User to select a user account"; the sign-in page is
    /// where the user picks one, by signing in with it); max_age asks when
    /// the last sign-in is older (max_age=0 is equivalent to prompt=login).
    func needsAuthentication(_ request: AuthorizationRequest, session: SSOSession) -> Bool {
        // create: "the user desires to create a new account rather than
        // authenticate an existing identity", signed in or not.
        if request.prompt.contains("login") || request.prompt.contains("select_account") || request.prompt.contains("create") { return true }
        if let maxAge = request.maxAge, clock() - session.authTime >= Int64(maxAge) { return true }
        return false
    }

    /// OIDC Core §3.1.2.1 id_token_hint: "If the End-User identified by the
    /// ID Token is logged in or is logged in by the request, then the
    /// Authorization Server returns a positive response; otherwise, it SHOULD
    /// return an error, such as login_required." True without a hint.
    func isHintedUser(_ request: AuthorizationRequest, session: SSOSession?) throws -> Bool {
        guard let expected = request.expectedSubject else { return true }
        guard let session, let user = try users.find(id: session.userID) else { return false }
        return user.subject.bytesEqual(expected)
    }
}
