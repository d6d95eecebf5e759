import IssuerStorage
import SSOCore

/// `POST /login`: the target of the static sign-in pages; and the login
/// page's passkey sign-in (`POST /login/passkey/options`, `/login/passkey`,
/// LoginResponder+Passkeys.swift), which share its checks: the same
/// cross-site refusal, pending request and form token.
///
/// One step for a password-only account: the password form (login.html)
/// completes the pending authorization request. Two steps for an account
/// with TOTP: a right password only marks the pending request and sends the
/// browser to login-otp.html, whose form (`req`, `otp`) posts here again;
/// the code then completes the request. Both steps go through the login
/// throttle, per account and per client address.
public final class LoginResponder: Responder {
    let services: IssuerServices
    /// Verified when the email is unknown, so a wrong email costs the same
    /// time as a wrong password and does not reveal which accounts exist.
    let decoyHash: String

    var issuer: String { services.settings.issuer }
    var hasher: PasswordHasher { services.hasher }
    var clock: Clock { services.clock }
    var users: UserAccounts { services.users }
    var pending: PendingAuthorizations { services.pendingAuthorizations }
    var throttle: LoginThrottle { services.loginThrottle }
    var totp: TOTPEnrolments { services.totp }
    var marks: PasswordVerifiedMarks { services.passwordMarks }

    /// Checks the pending request against the client's registration as it
    /// is when the sign-in completes.
    let validator: AuthorizationRequestValidator

    public init(services: IssuerServices) throws {
        self.services = services
        decoyHash = try services.hasher.hash(password: SecureRandom.token())
        validator = AuthorizationRequestValidator(clients: services.clients, hints: services.idTokenHints, apis: services.apis,
                                                  issuer: services.settings.issuer)
    }

    public func respond(to request: Request) throws -> Response {
        guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        // Login CSRF, first line of defence (the SameSite=Strict cookie and the
        // form token are the others). Fetch Metadata: browsers mark the form's
        // own post `Sec-Fetch-Site: same-origin`. Origin: a cross-site post names
        // its origin; the login pages' own post names the issuer (they set
        // `<meta name="referrer" content="same-origin">`), but under the
        // server's Referrer-Policy: no-referrer it says `null` (Fetch §"append
        // a request Origin header"), so `null` alone proves nothing either way.
        let browserLanguage = services.messages.messages(for: request)
        if let site = request.header("sec-fetch-site"), site != "same-origin" {
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.cross_site_form"), messages: browserLanguage,
                                    status: 403, detail: "login CSRF refused: Sec-Fetch-Site \(site.prefix(32))")
        }
        if let origin = request.header("origin"), origin != "null", !origin.bytesEqual(issuer) {
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.cross_site_form"), messages: browserLanguage,
                                    status: 403, detail: "login CSRF refused: Origin is not the issuer")
        }
        let form: FormParameters
        do { form = try request.formParameters() } catch let error as FormError {
            return ErrorPage.render(title: "error.signin_title",
                                    message: PageText("error.login_form_malformed", ["reason": error.code.rawValue]), messages: browserLanguage,
                                    status: error.code == .unsupportedMediaType ? 415 : 400, detail: error.description)
        }
        let language = pageLanguage(form)
        let messages = language.map(services.messages.messages) ?? browserLanguage
        guard let cookieSecret = request.cookies[PendingAuthorizations.cookieName],
              let waiting = try pending.find(cookieSecret: cookieSecret) else {
            return .redirect(to: "/login.html?error=expired" + LoginStep.languageParameter(language))
                .logging("no live pending request behind the gh_login cookie")
        }
        guard let formToken = try? form.single("req"), ConstantTime.equals(SecretHash.of(formToken), waiting.formTokenHash) else {
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.foreign_form"), messages: messages, status: 403,
                                    detail: "the form's req does not match the pending request")
        }
        let step = LoginStep(cookieSecret: cookieSecret, formToken: formToken, address: request.remoteAddress,
                             clientID: waiting.request.clientID, userAgent: request.header("user-agent"), language: language,
                             messages: messages)
        switch request.path {
        case Self.passkeyOptionsPath: return try passkeyOptions(step)
        case Self.passkeyPath: return try verifyPasskey(form, step)
        default: break
        }
        // The TOTP page's form is the one with an `otp` field.
        if form.names.contains("otp") { return try verifySecondFactor(form, step) }
        return try verifyPassword(form, step)
    }

    /// The sign-in pages post their own language (a hidden `lang`), so the
    /// next page, or an error page, stays in it. Only a language there are
    /// pages in counts; anything else is ignored (then Accept-Language).
    func pageLanguage(_ form: FormParameters) -> String? {
        guard let given = (try? form.single("lang")) ?? nil, let tag = LanguagePreferences.normalisedTag(given),
              services.messages.available.contains(tag) else { return nil }
        return tag
    }

    static func controlCharacterError(in form: FormParameters, _ name: String) -> FormError? {
        do { _ = try form.single(name) } catch let error as FormError where error.code == .controlCharacter { return error } catch {}
        return nil
    }

    /// What both steps know about the request they answer.
    struct LoginStep {
        let cookieSecret: String
        let formToken: String
        let address: String
        /// The client the pending request is for (audit events).
        let clientID: String
        /// The browser's User-Agent, kept with the session it makes (/account).
        var userAgent: String? = nil
        /// The language the sign-in page was in (its `lang`, checked), kept
        /// for the pages this step sends the browser to.
        var language: String? = nil
        /// For an error page: that language, else the browser's.
        var messages: Messages = MessageCatalogue.empty.defaultMessages

        /// `&lang=…` for a redirect to a sign-in page, when the form named one.
        static func languageParameter(_ language: String?) -> String { language.map { "&lang=" + $0 } ?? "" }

        /// The password page with an error, starting over: the request is gone.
        var expiredPage: Response { .redirect(to: "/login.html?error=expired" + Self.languageParameter(language)) }

        /// Counts and audits how this attempt ended.
        func record(_ result: LoginResult, user: User?) {
            SecurityEvents.signIn(result, user: user, client: clientID, ip: address)
        }

        /// The password page again, with `error`, the app's name (its
        /// `client_id`, LoginPageLocation) and the address just typed, so
        /// only the password needs typing again.
        func passwordPage(error: String, email: String? = nil) -> Response {
            .redirect(to: LoginPageLocation.page(clientID: clientID, formToken: formToken) + "&error=" + error
                      + LoginPageLocation.email(email) + Self.languageParameter(language))
        }

        func codePage(error: String? = nil, extra: String = "") -> Response {
            .redirect(to: "/login-otp.html?req=" + FormParser.encodeComponent(formToken) + (error.map { "&error=" + $0 } ?? "") + extra
                      + Self.languageParameter(language))
        }

        /// The page says how long to wait, in whole minutes (rounded up; the
        /// lock grows from one minute to an hour), never which key is locked:
        /// that would tell whether an account exists.
        func lockedPage(retryAfter: Int, key: LoginAdmission.LockedKey, user: User?, email: String) -> Response {
            .redirect(to: LoginPageLocation.page(clientID: clientID, formToken: formToken) + "&error=too_many_attempts"
                      + "&retry_minutes=\(Self.minutes(retryAfter))" + LoginPageLocation.email(email) + Self.languageParameter(language))
                .logging("sign-in refused: \(key.rawValue) locked for \(retryAfter) s" + (user.map { " (user \($0.id))" } ?? ""))
        }

        func lockedCodePage(retryAfter: Int, key: LoginAdmission.LockedKey, user: User) -> Response {
            codePage(error: "too_many_attempts", extra: "&retry_minutes=\(Self.minutes(retryAfter))")
                .logging("TOTP step refused: \(key.rawValue) locked for \(retryAfter) s (user \(user.id))")
        }

        static func minutes(_ seconds: Int) -> Int { max(1, (seconds + 59) / 60) }
    }

    // MARK: Step 1: password

    func verifyPassword(_ form: FormParameters, _ step: LoginStep) throws -> Response {
        // A control character in the email is refused before any lookup or
        // counter sees it (FormParameters.single); the password is hashed as
        // typed, so it may hold any character.
        if let error = Self.controlCharacterError(in: form, "email") {
            return ErrorPage.render(title: "error.signin_title", message: PageText("error.email_control_character"), messages: step.messages,
                                    status: 400, detail: error.description)
        }
        let email = try? form.single("email"), password = try? form.singleAllowingControlCharacters("password")
        // Nothing to guess with: refused without counting.
        guard let email, let password, email.utf8.count <= 254, password.utf8.count <= 1024 else {
            return step.passwordPage(error: "invalid_credentials", email: email)
                .logging("sign-in refused: email or password missing or too long")
        }
        // The account is the stored one, found first: its lock is keyed by
        // its id, whatever spelling of the address was typed.
        let user = try users.find(email: email)
        // Counted before the password is checked; while locked it is not checked at all.
        let attempt: LoginAttempt
        switch try throttle.admit(user.map { .user(id: $0.id) } ?? .unknown(email: email), address: step.address) {
        case .admitted(let admitted): attempt = admitted
        case .locked(let retryAfter, let key):
            step.record(.locked, user: user)
            return step.lockedPage(retryAfter: retryAfter, key: key, user: user, email: email)
        }
        guard let user else {
            _ = hasher.verify(password: password, against: decoyHash)
            step.record(.unknownUser, user: nil)
            return step.passwordPage(error: "invalid_credentials", email: email).logging("sign-in failed: unknown email")
        }
        guard hasher.verify(password: password, against: user.passwordHash) else {
            try failed(.wrongPassword, user: user, step)
            return step.passwordPage(error: "invalid_credentials", email: email)
                .logging("sign-in failed: wrong password for user \(user.id)")
        }
        guard !user.disabled else {
            step.record(.disabled, user: user)
            return step.passwordPage(error: "invalid_credentials", email: email).logging("sign-in failed: user \(user.id) is disabled")
        }
        if try totp.isEnrolled(userID: user.id) {
            try throttle.passedFirstFactor(attempt)
            guard try marks.mark(cookieSecret: step.cookieSecret, userID: user.id) else { return step.expiredPage }
            return step.codePage().logging("password right for user \(user.id); TOTP code asked")
        }
        return try complete(user: user, amr: AuthenticationMethods.passwordOnly, step: step, expired: step.expiredPage) { tx in
            try throttle.succeeded(attempt, tx)
            return try pending.consume(cookieSecret: step.cookieSecret, tx)
        }
    }

    // MARK: Step 2: TOTP code

    func verifySecondFactor(_ form: FormParameters, _ step: LoginStep) throws -> Response {
        // Who signs in comes from the pending request's mark, never the form.
        guard let userID = try marks.verifiedUserID(cookieSecret: step.cookieSecret),
              let user = try users.find(id: userID), !user.disabled,
              let credential = try totp.credential(userID: user.id) else {
            return step.codePage(error: "expired")
        }
        guard let code = try? form.single("otp"), TOTPVerifier.isWellFormed(code) else {
            return step.codePage(error: "invalid_code").logging("TOTP code missing or not six digits")
        }
        // Wrong codes count against the account like wrong passwords.
        let attempt: LoginAttempt
        switch try throttle.admit(.user(id: user.id), address: step.address) {
        case .admitted(let admitted): attempt = admitted
        case .locked(let retryAfter, let key):
            step.record(.locked, user: user)
            return step.lockedCodePage(retryAfter: retryAfter, key: key, user: user)
        }
        guard let timeStep = TOTPVerifier.matchingStep(code: code, secret: credential.secret, at: clock(),
                                                       after: credential.lastUsedStep) else {
            try failed(.wrongTOTP, user: user, step)
            return step.codePage(error: "invalid_code").logging("sign-in failed: wrong or reused TOTP code for user \(user.id)")
        }
        return try complete(user: user, amr: AuthenticationMethods.passwordAndTOTP, step: step, expired: step.codePage(error: "expired")) { tx in
            // RFC 6238 §5.2: one-time use, enforced atomically (two concurrent
            // posts of one code: only one raises last_used_step).
            guard try tx.totp.accept(step: timeStep, userID: user.id) else { throw Abandon(response: step.codePage(error: "invalid_code")) }
            try throttle.succeeded(attempt, tx)
            return try marks.consume(cookieSecret: step.cookieSecret, userID: user.id, tx)
        }
    }

    /// A counted failure of a known account: recorded, and if it was the
    /// one that locked the account (admitted a moment ago, locked now),
    /// that too. The extra read is on the failure path only.
    func failed(_ result: LoginResult, user: User, _ step: LoginStep) throws {
        step.record(result, user: user)
        if try throttle.isLocked(.user(id: user.id)) {
            SecurityEvents.accountLocked(user: user, client: step.clientID, ip: step.address)
        }
    }

    // MARK: Completion

    /// Thrown inside the completion transaction to roll it back and answer `response`.
    struct Abandon: Error { let response: Response }

    /// What the completion transaction decided.
    enum Completion {
        case signedIn(secret: String, code: String, request: AuthorizationRequest, sid: String)
        /// The request's id_token_hint named someone else: it is consumed and
        /// answered with an error, and no session is made for this user.
        case otherUserThanHinted(AuthorizationRequest)
        /// The client's registration no longer allows the request (review
        /// R6): it is consumed and refused, and no session is made.
        case refusedByRegistration(AuthorizationFailure)
    }

    /// One transaction: `claim` takes the pending request (nil: it is gone,
    /// answer `expired`), then the session it replaces ends, a new session
    /// and a code are created, and the browser goes back to the client.
    func complete(user: User, amr: [String], step: LoginStep, expired: Response,
                  claim: (any IssuerWrites) throws -> PendingAuthorization?) throws -> Response {
        let completion: Completion
        do {
            completion = try services.storage.write { tx in
                guard let consumed = try claim(tx) else { throw Abandon(response: expired) }
                let authorization = consumed.request
                // OIDC Core §3.1.2.1 id_token_hint: "If the End-User identified
                // by the ID Token is logged in or is logged in by the request,
                // then the Authorization Server returns a positive response;
                // otherwise, it SHOULD return an error, such as login_required."
                if let expected = authorization.expectedSubject, !expected.bytesEqual(user.subject) {
                    return .otherUserThanHinted(authorization)
                }
                do { try validator.recheckRegistration(authorization) } catch let failure as AuthorizationFailure {
                    return .refusedByRegistration(failure)
                }
                let lifetimes = services.settings.lifetimes
                // The browser's earlier sign-in ends with everything bound to
                // it (its apps' refresh tokens and device secrets), as at logout.
                if let replaced = consumed.replacesSID { try SessionBoundCredentials.endSession(replaced, tx, now: clock()) }
                let (session, secret) = try services.sessions.create(userID: user.id, lifetime: lifetimes.ssoSession, amr: amr,
                                                                     address: step.address, userAgent: step.userAgent, tx)
                let code = try services.codes.issue(AuthorizationCodeGrantRecord(
                    request: authorization, sid: session.sid, userID: user.id, authTime: session.authTime, amr: session.amr),
                    lifetime: lifetimes.authorizationCode, tx)
                return .signedIn(secret: secret, code: code, request: authorization, sid: session.sid)
            }
        } catch let abandon as Abandon {
            return abandon.response
        }
        switch completion {
        case .signedIn(let secret, let code, let request, let sid):
            SecurityEvents.signIn(.success, user: user, client: request.clientID, ip: step.address, sid: sid)
            var response = AuthorizationResponse.success(redirectURI: request.redirectURI, code: code, state: request.state,
                                                         issuer: issuer)
            response.addCookie(SetCookie(name: SSOSessions.cookieName, value: secret, maxAge: services.settings.lifetimes.ssoSession))
            response.addCookie(.expired(name: PendingAuthorizations.cookieName, path: "/login"))
            response.addCookie(InterstitialSignInMethod.cookie(after: amr))
            return response
        case .otherUserThanHinted(let request):
            var response = AuthorizationResponse.error(
                redirectURI: request.redirectURI, error: OAuthError(.loginRequired, "the user who signed in is not the one id_token_hint names"),
                state: request.state, issuer: issuer)
                .logging("signed in as user \(user.id), but id_token_hint named another subject; no session made")
            response.addCookie(.expired(name: PendingAuthorizations.cookieName, path: "/login"))
            return response
        case .refusedByRegistration(let failure):
            var response: Response
            switch failure {
            case .errorPage(let message, _, let detail, _, _):
                response = ErrorPage.render(title: "error.signin_title", message: message, messages: step.messages,
                                            detail: "signed in, but the client's registration changed: \(detail)")
            case .redirect(let redirectURI, let state, let error):
                response = AuthorizationResponse.error(redirectURI: redirectURI, error: error, state: state, issuer: issuer)
                    .logging("signed in, but the client's registration changed: \(error.logDetail)")
            }
            response.addCookie(.expired(name: PendingAuthorizations.cookieName, path: "/login"))
            return response
        }
    }
}
