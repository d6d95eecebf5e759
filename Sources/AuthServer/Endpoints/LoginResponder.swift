import SSOCore

/// `POST /login`: the static login form's target.
public final class LoginResponder: Responder {
    let config: GatehouseConfig
    let database: SQLiteDatabase
    let users: UserStore
    let sessions: SSOSessionStore
    let pending: PendingAuthorizationStore
    let codes: AuthorizationCodeStore
    let hasher: PasswordHasher
    /// Verified when the email is unknown, so a wrong email costs the same
    /// time as a wrong password and does not reveal which accounts exist.
    let decoyHash: String

    public init(config: GatehouseConfig, database: SQLiteDatabase, hasher: PasswordHasher = PasswordHasher(),
                clock: @escaping Clock = systemClock) throws {
        self.config = config
        self.database = database
        self.hasher = hasher
        users = UserStore(database: database, hasher: hasher, clock: clock)
        sessions = SSOSessionStore(database: database, clock: clock)
        pending = PendingAuthorizationStore(database: database, clock: clock)
        codes = AuthorizationCodeStore(database: database, clock: clock)
        decoyHash = try hasher.hash(password: SecureRandom.token())
    }

    public func respond(to request: Request) throws -> Response {
        guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        // Login CSRF, first line of defence (the SameSite=Strict cookie and the
        // form token are the others). Fetch Metadata: browsers mark the form's
        // own post `Sec-Fetch-Site: same-origin`. Origin: a cross-site post names
        // its origin; the page's own post says `null`, because the page is
        // served with Referrer-Policy: no-referrer (Fetch §"append a request
        // Origin header"), so `null` alone proves nothing either way.
        if let site = request.header("sec-fetch-site"), site != "same-origin" {
            return ErrorPage.render(title: "Sign-in error", message: "This form was sent from another site.", status: 403)
        }
        if let origin = request.header("origin"), origin != "null", origin != config.issuer {
            return ErrorPage.render(title: "Sign-in error", message: "This form was sent from another site.", status: 403)
        }
        let form: FormParameters
        do { form = try request.formParameters() } catch let error as FormError {
            return ErrorPage.render(title: "Sign-in error", message: "The sign-in form is malformed (\(error.code.rawValue)).",
                                    status: error.code == .unsupportedMediaType ? 415 : 400)
        }
        guard let cookieSecret = request.cookies[PendingAuthorizationStore.cookieName],
              let waiting = try pending.find(cookieSecret: cookieSecret) else {
            return .redirect(to: "/login.html?error=expired")
        }
        guard let formToken = try? form.single("req"), ConstantTime.equals(SecretHash.of(formToken), waiting.formTokenHash) else {
            return ErrorPage.render(title: "Sign-in error", message: "This sign-in form does not belong to your sign-in request.", status: 403)
        }
        guard let user = try authenticate(email: try? form.single("email"), password: try? form.single("password")) else {
            return .redirect(to: "/login.html?req=" + FormParser.encodeComponent(formToken) + "&error=invalid_credentials")
        }
        let outcome: (secret: String, code: String, request: AuthorizationRequest)? = try database.transaction {
            guard let consumed = try pending.consume(cookieSecret: cookieSecret) else { return nil }
            if let replaced = consumed.replacesSID { try sessions.end(sid: replaced) }
            let (session, secret) = try sessions.create(userID: user.id, lifetime: config.ssoSessionLifetime)
            let authorization = consumed.request
            let code = try codes.issue(AuthorizationCodeGrantRecord(
                clientID: authorization.clientID, redirectURI: authorization.redirectURI, codeChallenge: authorization.codeChallenge,
                scope: authorization.scope, nonce: authorization.nonce, sid: session.sid, userID: user.id, authTime: session.authTime),
                lifetime: config.authorizationCodeLifetime)
            return (secret, code, authorization)
        }
        guard let outcome else { return .redirect(to: "/login.html?error=expired") }
        var response = AuthorizationResponse.success(redirectURI: outcome.request.redirectURI, code: outcome.code,
                                                     state: outcome.request.state, issuer: config.issuer)
        response.addCookie(SetCookie(name: SSOSessionStore.cookieName, value: outcome.secret, maxAge: config.ssoSessionLifetime))
        response.addCookie(.expired(name: PendingAuthorizationStore.cookieName, path: "/login"))
        return response
    }

    /// The user when the password matches and the account is enabled.
    func authenticate(email: String??, password: String??) throws -> User? {
        guard let email = email.flatMap({ $0 }), let password = password.flatMap({ $0 }), email.utf8.count <= 254 else { return nil }
        guard let user = try users.find(email: email) else {
            _ = hasher.verify(password: password, against: decoyHash)
            return nil
        }
        guard hasher.verify(password: password, against: user.passwordHash), !user.disabled else { return nil }
        return user
    }
}
