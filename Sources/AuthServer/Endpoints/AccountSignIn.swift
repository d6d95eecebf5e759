import IssuerStorage
import SSOCore

/// How `/account` signs a browser in: as an app would, with the issuer's
/// own authorization code flow and PKCE, as the account page's client
/// (AccountClient). `start` sends a signed-out browser to `/authorize`;
/// the login page signs it in (the SSO cookie); `/authorize` sends it back
/// to `finish` at `/account/callback` with a code, which `finish` redeems
/// (no token is issued: the SSO cookie is what the account page reads) and
/// then shows `/account`, signed in.
///
/// The state and the PKCE verifier live in a short-lived cookie of their
/// own, HttpOnly and scoped to the callback's path, so only the browser
/// that started a sign-in can finish it.
struct AccountSignIn {
    let issuer: String
    let redemption: AccountCodeRedemption
    let whoIsAsking: SignedInAccount
    let catalogue: MessageCatalogue

    static let cookieName = "gh_account"
    /// As long as the sign-in it waits for may take (PendingAuthorizations).
    static let cookieLifetime = PendingAuthorizations.lifetime

    var redirectURI: String { AccountClient.redirectURI(issuer: issuer) }

    /// RFC 6749 §4.1.1 with RFC 7636 §4.3 (S256) and §10.12's `state`
    /// ("a value that binds the authorization request to the user-agent's
    /// authenticated state"), both kept in the cookie for `finish`.
    func start() -> Response {
        let verifier = PKCE.makeVerifier(), state = SecureRandom.token()
        let query = FormParser.encode([
            ("client_id", AccountClient.id), ("redirect_uri", redirectURI), ("response_type", "code"),
            ("scope", AccountClient.scope.joined(separator: " ")), ("state", state),
            ("code_challenge", PKCE.s256Challenge(verifier: verifier)), ("code_challenge_method", "S256"),
        ])
        var response = Response.redirect(to: "/authorize?" + query)
        response.addCookie(SetCookie(name: Self.cookieName, value: state + "." + verifier, path: AccountClient.callbackPath,
                                     maxAge: Self.cookieLifetime))
        return response
    }

    /// `GET /account/callback`: to `/account` once the code is redeemed by
    /// this browser for its own live session; otherwise the signed-out
    /// page saying so, with a link to start again. The cookie goes either way.
    func finish(_ exchange: EndpointExchange) throws -> Response {
        var response: Response
        do {
            try redeem(exchange.request)
            response = Response.redirect(to: AccountResponder.pagePath).logging("account page sign-in finished")
        } catch let failure as AccountSignInFailure {
            response = AccountPage.signInFailed(catalogue.messages(for: exchange.request))
                .logging("account page sign-in refused: \(failure.detail)")
        }
        response.addCookie(.expired(name: Self.cookieName, path: AccountClient.callbackPath))
        return response
    }

    struct AccountSignInFailure: Error { let detail: String }

    /// Each check the client side of the flow owes, in the order the
    /// response is read: whose it is (state), who sent it (iss), what it
    /// says (error or code), then the code itself and the session it is for.
    func redeem(_ request: Request) throws {
        guard let saved = request.cookies[Self.cookieName], let dot = saved.firstIndex(of: "."),
              let parameters = try? request.queryParameters() else {
            throw AccountSignInFailure(detail: "no gh_account cookie, or a malformed callback")
        }
        let (state, verifier) = (String(saved[..<dot]), String(saved[saved.index(after: dot)...]))
        // RFC 6749 §10.12: the response must carry the state this browser's
        // request had, or it is another browser's (login CSRF).
        guard let returned = try? parameters.single("state"), ConstantTime.equals(Array(returned.utf8), Array(state.utf8)) else {
            throw AccountSignInFailure(detail: "state is not this browser's")
        }
        // RFC 9207 §2.4: "Clients MUST ... compare the iss parameter value
        // to the issuer identifier of the authorization server."
        guard (try? parameters.single("iss"))?.bytesEqual(issuer) == true else {
            throw AccountSignInFailure(detail: "iss is not the issuer")
        }
        if let error = try? parameters.single("error") {
            throw AccountSignInFailure(detail: "authorization error \(error.prefix(64).debugDescription)")
        }
        guard let code = try? parameters.single("code"), code.utf8.count <= 128, PKCE.isValidVerifier(verifier) else {
            throw AccountSignInFailure(detail: "no code, or a malformed verifier")
        }
        let record: AuthorizationCodeGrantRecord
        do {
            record = try redemption.redeem(code: code, verifier: verifier, redirectURI: redirectURI)
        } catch let failure as CodeRedemptionFailure {
            throw AccountSignInFailure(detail: "code not redeemed: \(failure)")
        }
        // The code is for a session; the page shows the browser's own. They
        // must be one, and live.
        guard let signedIn = try whoIsAsking.signedIn(request), signedIn.session.sid.bytesEqual(record.sid) else {
            throw AccountSignInFailure(detail: "the code's session is not this browser's live session")
        }
    }
}
