import IssuerStorage
import SSOCore

/// Where a sign-in sends the browser once SignInCompletion has decided:
/// back to the app with a code (and the SSO cookie), back to the app with
/// an error, to a sign-in page again, or an error page. The forms get it as
/// a 303; the passkey script as JSON `{"location": …}`, which it follows
/// itself (fetch() cannot follow a redirect to an app's custom scheme).
struct SignInAnswer {
    let issuer: String
    let sessionLifetime: Int

    enum Next {
        case location(String, cookies: [SetCookie], log: String?)
        case page(Response)
    }

    /// `expired` and `codeAlreadyUsed`: the sign-in page the step goes back to then.
    func next(_ outcome: SignInCompletion.Outcome, user: User, amr: [String], step: LoginStep, expired: String, codeAlreadyUsed: String) -> Next {
        // The pending request is spent whatever happened, except when it is
        // still there to try again: its cookie goes.
        let pendingGone = SetCookie.expired(name: PendingAuthorizations.cookieName, path: "/login")
        switch outcome {
        case .signedIn(let secret, let code, let request, let sid, let linked):
            SecurityEvents.signIn(.success, user: user, client: request.clientID, ip: step.address, sid: sid)
            if let linked { SecurityEvents.providerLinked(user: user.email, provider: linked.provider, ip: step.address, sid: sid) }
            return .location(AuthorizationResponse.successLocation(redirectURI: request.redirectURI, code: code, state: request.state, issuer: issuer),
                             cookies: [SetCookie(name: SSOSessions.cookieName, value: secret, maxAge: sessionLifetime), pendingGone,
                                       InterstitialSignInMethod.cookie(after: amr)],
                             log: nil)
        case .otherUserThanHinted(let request):
            let error = OAuthError(.loginRequired, "the user who signed in is not the one id_token_hint names")
            return .location(AuthorizationResponse.errorLocation(redirectURI: request.redirectURI, error: error, state: request.state, issuer: issuer),
                             cookies: [pendingGone],
                             log: "signed in as user \(user.id), but id_token_hint named another subject; no session made")
        case .refusedByRegistration(.errorPage(let message, _, let detail, _, _)):
            var page = ErrorPage.render(title: "error.signin_title", message: message, messages: step.messages,
                                        detail: "signed in, but the client's registration changed: \(detail)")
            page.addCookie(pendingGone)
            return .page(page)
        case .refusedByRegistration(.redirect(let redirectURI, let state, let error)):
            return .location(AuthorizationResponse.errorLocation(redirectURI: redirectURI, error: error, state: state, issuer: issuer),
                             cookies: [pendingGone], log: "signed in, but the client's registration changed: \(error.logDetail)")
        case .expired: return .location(expired, cookies: [], log: nil)
        case .codeAlreadyUsed: return .location(codeAlreadyUsed, cookies: [], log: nil)
        }
    }

    /// For a form's post: 303 See Other.
    func redirect(_ next: Next) -> Response {
        switch next {
        case .page(let page): return page
        case .location(let location, let cookies, let log):
            var response = Response.redirect(to: location)
            for cookie in cookies { response.addCookie(cookie) }
            return log.map(response.logging) ?? response
        }
    }

    /// For the passkey script: 200 `{"location": …}` with the same cookies.
    func json(_ next: Next, log: String) throws -> Response {
        switch next {
        case .page(let page): return page
        case .location(let location, let cookies, let detail):
            var response = try Response.json(["location": location])
            for cookie in cookies { response.addCookie(cookie) }
            return response.logging(detail ?? log)
        }
    }
}
