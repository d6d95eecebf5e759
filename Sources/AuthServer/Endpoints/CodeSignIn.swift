import IssuerStorage
import SSOCore

/// `POST /login` from the code page (login-otp.html: `req`, `otp`), the
/// second step for an account with TOTP (RFC 6238): who signs in comes
/// from the mark the password step left on the pending request, never from
/// the form; wrong codes count against the account like wrong passwords.
struct CodeSignIn {
    let users: UserAccounts
    let throttle: LoginThrottle
    let totp: TOTPEnrolments
    let marks: PasswordVerifiedMarks
    let completion: SignInCompletion
    let answer: SignInAnswer
    let clock: Clock

    func verify(_ exchange: EndpointExchange) throws -> Response {
        let step = try exchange.signIn()
        guard let userID = try marks.verifiedUserID(cookieSecret: step.cookieSecret),
              let user = try users.find(id: userID), !user.disabled,
              let credential = try totp.credential(userID: user.id) else {
            return step.codePage(error: "expired")
        }
        guard let code = try? exchange.parameters.single("otp"), TOTPVerifier.isWellFormed(code) else {
            return step.codePage(error: "invalid_code").logging("TOTP code missing or not six digits")
        }
        let attempt: LoginAttempt
        switch try throttle.admit(.user(id: user.id), address: step.address) {
        case .admitted(let admitted): attempt = admitted
        case .locked(let retryAfter, let key):
            step.record(.locked, user: user)
            return step.lockedCodePage(retryAfter: retryAfter, key: key, user: user)
        }
        guard let timeStep = TOTPVerifier.matchingStep(code: code, secret: credential.secret, at: clock(),
                                                       after: credential.lastUsedStep) else {
            try step.failed(.wrongTOTP, user: user, throttle: throttle)
            return step.codePage(error: "invalid_code").logging("sign-in failed: wrong or reused TOTP code for user \(user.id)")
        }
        let amr = AuthenticationMethods.passwordAndTOTP
        let outcome = try completion.complete(user: user, amr: amr, proof: .passwordAndCode(step: timeStep, attempt), browser: step.browser)
        return answer.redirect(answer.next(outcome, user: user, amr: amr, step: step, expired: step.codePageLocation(error: "expired"),
                                           codeAlreadyUsed: step.codePageLocation(error: "invalid_code")))
    }
}
