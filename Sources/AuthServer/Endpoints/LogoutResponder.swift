import IssuerStorage
import SSOCore

/// `GET|POST /logout` (OpenID Connect RP-Initiated Logout 1.0).
///
/// Ends the browser's SSO session (the `sso_session` cookie) and the session
/// a verified `id_token_hint` names, revokes what is bound to them (refresh
/// tokens and Native SSO device secrets, see SessionBoundCredentials), clears the
/// cookie, then returns to the client's registered post-logout redirect URI
/// with `state`, or shows "You are signed out". Repeating it is harmless.
///
/// Choices where the specification leaves room:
/// - §6 warns that "logout requests without a valid id_token_hint value are
///   a potential means of denial of service; therefore, OPs should obtain
///   explicit confirmation from the End-User before acting upon them". A
///   live browser session is ended at once only when a valid hint names the
///   same user (or there is no browser session, so only the hint's own
///   session is at stake). Otherwise the user gets a confirmation page whose
///   form posts back an HMAC of the session cookie: a cross-site page cannot
///   forge it, and a GET never counts as the confirmation (a link would be
///   followed by a prefetch or a mail scanner), so nothing signs anyone out
///   by navigation alone.
/// - The hint's `sid` session is ended only when it belongs to the hint's
///   `sub`; an expired ID token is accepted (§4).
/// - An invalid request (bad hint, unknown client, unregistered redirect,
///   bad state) shows an error page and changes nothing (§4: no redirect).
public final class LogoutResponder: OneEndpointGroup {
    public static let path = "/logout"
    public let served: SingleEndpoint

    public init(services: IssuerServices) {
        let logout = Logout(validator: LogoutRequestValidator(clients: services.clients, hints: services.idTokenHints),
                            sessions: services.sessions, users: services.users, signOut: services.signOut, catalogue: services.messages,
                            issuer: services.settings.issuer)
        // RP-Initiated Logout §2: "The OP MUST support the use of the HTTP GET
        // and POST methods at the Logout Endpoint."
        served = SingleEndpoint(Endpoint(Self.path, .getAndPost, input: .formOrQuery,
                                         errors: LogoutPageErrors(catalogue: services.messages), cache: .noStore, handler: logout.answer))
    }


    /// A value only this browser's cookie can produce, and that reveals
    /// nothing about the cookie (HMAC keyed with the cookie secret).
    static func confirmation(for cookieSecret: String) -> String {
        Base64URL.encode(HMACSHA256.authenticate(Array("gatehouse logout confirmation".utf8), key: Array(cookieSecret.utf8)))
    }
}

/// The logout endpoint's handler.
struct Logout {
    let validator: LogoutRequestValidator
    let sessions: SSOSessions
    let users: UserAccounts
    let signOut: SignOut
    /// The pages' languages.
    let catalogue: MessageCatalogue
    let issuer: String

    func answer(_ exchange: EndpointExchange) throws -> Response {
        let request = exchange.request, parameters = exchange.parameters
        // The pages' language: §2 ui_locales ("End-User's preferred languages
        // and scripts for the user interface"), then Accept-Language.
        let messages = catalogue.messages(for: request, uiLocales: (try? parameters.single("ui_locales")) ?? nil)
        // Anything invalid is a LogoutRequestFailure: an error page, no
        // redirect, nothing changed.
        do {
            return try respond(to: request, logout: try validator.validate(parameters), posted: exchange.parametersFromBody, messages: messages)
        } catch let failure as LogoutRequestFailure {
            return failure.response(messages)
        }
    }

    /// A valid request: end what it may end, or ask first.
    func respond(to request: Request, logout: LogoutRequest, posted: Bool, messages: Messages) throws -> Response {
        let cookieSecret = request.cookies[SSOSessions.cookieName]
        let browserSession = try cookieSecret.flatMap { try sessions.find(secret: $0) }
        // The confirmation counts only as the confirmation page's POST.
        let confirmation = posted ? logout.confirmation : nil
        if let browserSession, let cookieSecret,
           try !mayEnd(browserSession, hint: logout.hint, confirmation: confirmation, cookieSecret: cookieSecret) {
            return LogoutPages.confirm(fields: logout.parameters + [("confirm", LogoutResponder.confirmation(for: cookieSecret))],
                                       app: logout.client?.shownName, messages)
        }
        // The browser's session and the hint's may be one (sids are ours: ASCII).
        let ending = Dictionary([browserSession, try session(namedBy: logout.hint)].compactMap { $0 }.map { ($0.sid, $0) },
                                uniquingKeysWith: { first, _ in first })
        try signOut.end(Set(ending.keys))
        for (sid, session) in ending.sorted(by: { $0.key < $1.key }) {
            SecurityEvents.logout(user: try users.find(id: session.userID)?.email, client: logout.client?.clientID,
                                  ip: request.remoteAddress, sid: sid)
        }
        var response = finish(logout, messages, fromConfirmationPage: confirmation != nil)
        // Cleared whether or not it named a live session: a stale cookie is
        // worth nothing but is still the user's "signed in" marker.
        response.addCookie(.expired(name: SSOSessions.cookieName))
        return response
    }

    /// The live session a verified hint names, if it is the hint user's.
    func session(namedBy hint: IDTokenHint?) throws -> SSOSession? {
        guard let hint, let sid = hint.sid, let session = try sessions.find(sid: sid),
              try users.find(id: session.userID)?.subject.bytesEqual(hint.subject) == true else { return nil }
        return session
    }

    /// RP-Initiated Logout §6 (see the type's comment): the browser's session
    /// ends without asking when a valid hint speaks for its user, or when the
    /// user confirmed on this browser.
    func mayEnd(_ browserSession: SSOSession, hint: IDTokenHint?, confirmation: String?, cookieSecret: String) throws -> Bool {
        if let hint, try users.find(id: browserSession.userID)?.subject.bytesEqual(hint.subject) == true { return true }
        guard let confirmation else { return false }
        return ConstantTime.equals(Array(confirmation.utf8), Array(LogoutResponder.confirmation(for: cookieSecret).utf8))
    }

    /// RP-Initiated Logout §3: "the OP SHOULD redirect the User Agent to the
    /// post_logout_redirect_uri" and §2 state: "If state is included in the
    /// logout request, the OP passes this value back to the RP using the
    /// state parameter when redirecting the User Agent back to the RP."
    ///
    /// After the confirmation page's form, only a return to the issuer's
    /// own origin can be a redirect: browsers apply the page's CSP
    /// `form-action 'self'` to the redirects that follow a form's post too,
    /// so they would block one to an app's custom scheme or another origin.
    /// Those get the signed-out page with a link back instead.
    func finish(_ logout: LogoutRequest, _ messages: Messages, fromConfirmationPage: Bool) -> Response {
        guard let redirectURI = logout.postLogoutRedirectURI else { return LogoutPages.signedOut(messages) }
        let location = logout.state.map { AuthorizationResponse.location(redirectURI: redirectURI, parameters: [("state", $0)]) } ?? redirectURI
        if fromConfirmationPage && !location.utf8.starts(with: (issuer + "/").utf8) {
            return LogoutPages.signedOut(messages, returnTo: location)
        }
        return .redirect(to: location)
    }
}
