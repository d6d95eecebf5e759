import IssuerStorage
import SSOCore

/// Who is asking at `/account` and whether a change may go ahead: the one
/// set of checks every account responder runs (AccountResponder's
/// passkeys, the sessions section, ...).
///
/// Every change is a POST with two proofs that it comes from the account
/// page: Fetch Metadata (`Sec-Fetch-Site: same-origin`, sent by every
/// current browser; a foreign `Origin` is refused too) and a form token
/// only this browser's cookie can produce (an HMAC keyed with the cookie's
/// secret, as LogoutResponder's confirmation), so another site cannot make
/// a signed-in browser change anything here.
struct AccountRequestGuard {
    let services: IssuerServices

    /// The live session behind the SSO cookie, its user, and the cookie's
    /// secret (the key of the form token).
    struct SignedIn {
        let session: SSOSession
        let user: User
        let cookieSecret: String
        var formToken: String { AccountRequestGuard.formToken(for: cookieSecret) }
    }

    func signedIn(_ request: Request) throws -> SignedIn? {
        guard let secret = request.cookies[SSOSessions.cookieName], let session = try services.sessions.find(secret: secret),
              let user = try services.users.find(id: session.userID), !user.disabled else { return nil }
        return SignedIn(session: session, user: user, cookieSecret: secret)
    }

    static func formToken(for cookieSecret: String) -> String {
        Base64URL.encode(HMACSHA256.authenticate(Array("gatehouse account form".utf8), key: Array(cookieSecret.utf8)))
    }

    /// A POST that may change something: its signed-in user and form, or
    /// the response that refuses it (403 cross-site or wrong token, 401
    /// signed out, 400/415 malformed, 405 not a POST).
    func admitChange(_ request: Request) throws -> Result<(SignedIn, FormParameters), RefusedChange> {
        guard request.method == "POST" else { return .failure(RefusedChange(.methodNotAllowed(allowed: ["POST"]))) }
        // The page's script shows an error's description to the user, so
        // it is in the browser's language too.
        let messages = services.messages.messages(for: request)
        func crossSite(_ detail: String) -> RefusedChange {
            RefusedChange(ErrorPage.render(title: "account.error_title", message: PageText("account.cross_site"), messages: messages,
                                           status: 403, detail: detail))
        }
        if let site = request.header("sec-fetch-site"), site != "same-origin" {
            return .failure(crossSite("account CSRF refused: Sec-Fetch-Site \(site.prefix(32))"))
        }
        if let origin = request.header("origin"), origin != "null", !origin.bytesEqual(services.settings.issuer) {
            return .failure(crossSite("account CSRF refused: Origin is not the issuer"))
        }
        guard let signedIn = try signedIn(request) else {
            return .failure(RefusedChange(try Self.jsonError(401, "signed_out", messages.text("account.sign_in_again"),
                                                             detail: "no live SSO session")))
        }
        let form: FormParameters
        do { form = try request.formParameters() } catch let error as FormError {
            return .failure(RefusedChange(try Self.jsonError(error.code == .unsupportedMediaType ? 415 : 400, "invalid_request",
                                                             messages.text("account.form_malformed"), detail: error.description)))
        }
        guard let token = try? form.single("csrf"), ConstantTime.equals(Array(token.utf8), Array(signedIn.formToken.utf8)) else {
            return .failure(RefusedChange(try Self.jsonError(403, "invalid_request", messages.text("account.form_foreign"),
                                                             detail: "account form token mismatch")))
        }
        return .success((signedIn, form))
    }

    /// What the throttled current-password check found.
    enum CurrentPassword {
        /// Right: settle `attempt` with `loginThrottle.succeeded` once the change is made.
        case verified(LoginAttempt)
        /// Wrong: counted as a failed sign-in.
        case wrong
        /// Locked (nothing counted, the password not checked); `detail` is for the log.
        case locked(detail: String)
    }

    /// The current password, required before a change a browser left
    /// signed in must not be enough for (a new password, adding a passkey,
    /// setting up or removing TOTP). It
    /// goes through the login throttle, per account and per address, like a
    /// sign-in: guessing it here costs what guessing it at /login does.
    func checkCurrentPassword(_ current: String, of user: User, address: String) throws -> CurrentPassword {
        switch try services.loginThrottle.admit(.user(id: user.id), address: address) {
        case .locked(let retryAfter, let key): return .locked(detail: "\(key.rawValue) locked for \(retryAfter) s (user \(user.id))")
        case .admitted(let attempt):
            return services.hasher.verify(password: current, against: user.passwordHash) ? .verified(attempt) : .wrong
        }
    }

    /// For a step that stores nothing with the password check (a passkey's
    /// options, a TOTP setup): the form's `current` checked as above, a
    /// right one settled at once; nil when it is missing, empty or over
    /// 1024 bytes (then nothing is counted).
    func confirmCurrentPassword(_ form: FormParameters, of user: User, address: String) throws -> CurrentPassword? {
        guard let current = try form.singleAllowingControlCharacters("current"), !current.isEmpty, current.utf8.count <= 1024 else {
            return nil
        }
        let outcome = try checkCurrentPassword(current, of: user, address: address)
        if case .verified(let attempt) = outcome { try services.storage.write { tx in try services.loginThrottle.succeeded(attempt, tx) } }
        return outcome
    }

    struct RefusedChange: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    static func jsonError(_ status: Int, _ error: String, _ description: String, detail: String? = nil) throws -> Response {
        try Response.json(["error": error, "error_description": description], status: status, headers: [("Cache-Control", "no-store")])
            .logging(detail ?? description)
    }
}
