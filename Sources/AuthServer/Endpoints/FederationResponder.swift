import IssuerStorage
import SSOCore

/// Signing in through an upstream OpenID Connect provider, three rows:
///
/// | path | what |
/// | --- | --- |
/// | `POST /login/federation` | the login page's "Continue with LABEL" (`req`, `lang`, `provider`): the trip out |
/// | `GET\|POST /federation/callback` | the provider's answer (query, or Apple's form_post): the way back |
/// | `GET /login/providers` | the controls for the login page's SSI (nginx: internal) |
///
/// The trip out passes the sign-in form's prologue (cross-site refusal,
/// the pending request and its form token). The callback cannot: it comes
/// from the provider's origin, with Apple as a cross-site POST, so it is
/// bound by `state` and the `gh_federation` cookie instead (FederatedSignIn).
public final class FederationResponder: RoutedEndpointGroup {
    public static let startPath = "/login/federation"
    public static let callbackPath = "/federation/callback"
    public static let controlsPath = "/login/providers"

    public let table: RouteTable

    public init(services: IssuerServices) {
        let handlers = FederationHandlers(
            federation: services.federatedSignIn, providers: services.identityProviders,
            answer: SignInAnswer(issuer: services.settings.issuer, sessionLifetime: services.settings.lifetimes.ssoSession),
            catalogue: services.messages, issuer: services.settings.issuer)
        let errors = SignInPageErrors(catalogue: services.messages)
        table = RouteTable([
            Endpoint(Self.startPath, .post, input: .form,
                     guards: [SameOriginBrowser(issuer: services.settings.issuer),
                              PendingSignIn(pending: services.pendingAuthorizations, catalogue: services.messages)],
                     errors: errors, cache: .noStore, handler: handlers.start),
            Endpoint(Self.callbackPath, .getAndPost, input: .formOrQuery, errors: errors, cache: .noStore, handler: handlers.callback),
            Endpoint(Self.controlsPath, .get, input: .query, cache: .noStore, handler: handlers.controls),
        ])
    }
}

/// The three rows' handlers.
struct FederationHandlers {
    let federation: FederatedSignIn
    let providers: IdentityProviderRegistry
    let answer: SignInAnswer
    let catalogue: MessageCatalogue
    let issuer: String

    func start(_ exchange: EndpointExchange) throws -> Response {
        let step = try exchange.signIn()
        guard let name = try? exchange.parameters.single("provider"),
              let (location, trip) = try federation.start(provider: name, step: step) else {
            return step.passwordPage(error: "federation_failed").logging("no identity provider by the name posted")
        }
        var response = Response.redirect(to: location)
        response.addCookie(trip.cookie)
        return response.logging("sign-in sent to identity provider \(name)")
    }

    func callback(_ exchange: EndpointExchange) throws -> Response {
        let request = exchange.request, parameters = exchange.parameters
        func value(_ name: String) -> String? { (try? parameters.single(name)) ?? nil }
        let found = try federation.finish(
            FederatedSignIn.Answer(state: value("state"), code: value("code"), error: value("error"), issuer: value("iss"), appleUser: value("user"),
                                   cookie: request.cookies[FederationTrip.cookieName]),
            browser: SignInCompletion.Browser(cookieSecret: "", address: request.remoteAddress, userAgent: request.header("user-agent")))
        let messages = catalogue.messages(for: request)
        var response: Response
        switch found {
        case .completed(let outcome, let user, let amr, let result):
            let step = LoginStep(cookieSecret: "", formToken: "", address: request.remoteAddress, clientID: clientID(outcome) ?? "",
                                 userAgent: request.header("user-agent"), language: nil, messages: messages)
            if case .signedIn(_, _, let authorization, let sid, _) = outcome {
                SecurityEvents.federatedSignIn(result, provider: AuthenticationMethods.identityProvider(in: amr), user: user.email,
                                               client: authorization.clientID, ip: request.remoteAddress, sid: sid)
            }
            response = answer.redirect(answer.next(outcome, user: user, amr: amr, step: step, expired: step.expiredLocation,
                                                   codeAlreadyUsed: step.expiredLocation))
        case .cancelled(let authorization, let provider):
            SecurityEvents.federatedSignIn(.cancelled, provider: provider, user: nil, client: authorization.clientID, ip: request.remoteAddress)
            // RFC 6749 §4.1.2.1, with `state` and RFC 9207's `iss` as every answer.
            let error = OAuthError(.accessDenied, "the user cancelled the sign-in at \(provider)")
            response = Response.redirect(to: AuthorizationResponse.errorLocation(redirectURI: authorization.redirectURI, error: error,
                                                                                 state: authorization.state, issuer: issuer))
            response.addCookie(SetCookie.expired(name: PendingAuthorizations.cookieName, path: "/login"))
            response = response.logging("the user cancelled at identity provider \(provider)")
        case .proveAccount(let email, let trip, let clientID, let provider):
            SecurityEvents.federatedSignIn(.linkOffered, provider: provider, user: email, client: clientID, ip: request.remoteAddress)
            response = Response.redirect(to: LoginPageLocation.page(clientID: clientID, formToken: trip.formToken) + "&error=federation_link"
                                         + LoginPageLocation.email(email))
                .logging("identity provider \(provider) vouches for an existing account's address; its owner signs in to link it")
        case .refused(let result, let trip, let clientID, let provider, let detail):
            SecurityEvents.federatedSignIn(result, provider: provider, user: nil, client: clientID, ip: request.remoteAddress)
            if let trip, let clientID {
                let error = result == .noVerifiedEmail ? "federation_no_email" : "federation_failed"
                response = Response.redirect(to: LoginPageLocation.page(clientID: clientID, formToken: trip.formToken) + "&error=" + error)
                    .logging("federated sign-in refused (\(result.rawValue)): \(detail)")
            } else {
                response = ErrorPage.render(title: "error.signin_title", message: PageText("error.federation_state"), messages: messages,
                                            detail: "federated sign-in refused (\(result.rawValue)): \(detail)")
            }
        }
        response.addCookie(FederationTrip.expiredCookie)
        return response
    }

    func clientID(_ outcome: SignInCompletion.Outcome) -> String? {
        switch outcome {
        case .signedIn(_, _, let request, _, _), .otherUserThanHinted(let request): request.clientID
        default: nil
        }
    }

    /// One form per provider, for login.html's SSI: plain forms, so they
    /// work without JavaScript; nothing when no provider is configured.
    func controls(_ exchange: EndpointExchange) throws -> Response {
        // The login page's language and its req (a token's shape), as the
        // getting-in pages read them.
        let page = GettingInPage(exchange, catalogue: catalogue)
        let list = try providers.list()
        guard !list.isEmpty, page.req != nil else {
            return Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: [])
        }
        let escape = ErrorPage.escape
        let buttons = list.map { provider in
            """
              <form method="post" action="\(FederationResponder.startPath)" class="provider">
                \(page.carried)
                <input type="hidden" name="provider" value="\(escape(provider.name))">
                <button type="submit" class="secondary" id="provider-\(escape(provider.name))">\(page.html("login.continue_with", ["provider": provider.label]))</button>
              </form>
            """
        }
        let html = """
              <div class="providers" id="providers">
                <p class="small or">\(page.html("login.or"))</p>
            \(buttons.joined(separator: "\n"))
              </div>
            """
        return Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(html.utf8))
    }
}
