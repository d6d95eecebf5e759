import IssuerStorage
import SSOCore

/// `POST /login` from the password page (login.html: `req`, `email`,
/// `password`): the first step of a sign-in. For an account without TOTP a
/// right password completes the pending authorization request; with TOTP
/// it marks the request and sends the browser to the code page
/// (CodeSignIn). Every attempt goes through the login throttle, per
/// account and per client address.
struct PasswordSignIn {
    let users: UserAccounts
    let hasher: PasswordHasher
    let throttle: LoginThrottle
    let totp: TOTPEnrolments
    let marks: PasswordVerifiedMarks
    let completion: SignInCompletion
    let answer: SignInAnswer
    /// Verified when the email is unknown, so a wrong email costs the same
    /// time as a wrong password and does not reveal which accounts exist.
    let decoyHash: String

    func verify(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, step = try exchange.signIn()
        // A control character in the email is refused before any lookup or
        // counter sees it (FormParameters.single); the password is hashed as
        // typed, so it may hold any character.
        if let error = form.fieldError(["email"]), error.code == .controlCharacter {
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
            try step.failed(.wrongPassword, user: user, throttle: throttle)
            return step.passwordPage(error: "invalid_credentials", email: email)
                .logging("sign-in failed: wrong password for user \(user.id)")
        }
        guard !user.disabled else {
            step.record(.disabled, user: user)
            return step.passwordPage(error: "invalid_credentials", email: email).logging("sign-in failed: user \(user.id) is disabled")
        }
        // A sign-up's address is verified before the account signs in
        // (after the password: only its owner learns it is unverified).
        guard user.emailVerified else {
            step.record(.unverifiedEmail, user: user)
            return SignUpPages.unverified(email: user.email, step: step).logging("sign-in refused: user \(user.id) has not verified the address")
        }
        if try totp.isEnrolled(userID: user.id) {
            try throttle.passedFirstFactor(attempt)
            guard try marks.mark(cookieSecret: step.cookieSecret, userID: user.id) else { return step.expiredPage }
            return step.codePage().logging("password right for user \(user.id); TOTP code asked")
        }
        let amr = AuthenticationMethods.passwordOnly
        let outcome = try completion.complete(user: user, amr: amr, proof: .password(attempt), browser: step.browser)
        return answer.redirect(answer.next(outcome, user: user, amr: amr, step: step, expired: step.expiredLocation,
                                           codeAlreadyUsed: step.expiredLocation))
    }
}
