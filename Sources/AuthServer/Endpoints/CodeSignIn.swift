import IssuerStorage
import SSOCore

/// `POST /login` from the code page (login-otp.html: `req`, `otp`), the
/// second step for an account with TOTP (RFC 6238), or from its recovery
/// form (`req`, `recovery_code`) in place of a code: who signs in comes
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
        guard let (user, credential) = try markedUser(step) else { return step.codePage(error: "expired") }
        guard let code = try? exchange.parameters.single("otp"), TOTPVerifier.isWellFormed(code) else {
            return step.codePage(error: "invalid_code").logging("TOTP code missing or not six digits")
        }
        let attempt: LoginAttempt
        switch try admit(user, step) {
        case .admitted(let admitted): attempt = admitted
        case .refused(let page): return page
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

    /// A recovery code in place of the TOTP code: the same mark, throttle
    /// and completion; the code is spent in the write unit that signs in.
    func recover(_ exchange: EndpointExchange) throws -> Response {
        let step = try exchange.signIn()
        let recoveryPage = "&recovery=1"
        guard let (user, _) = try markedUser(step) else { return step.codePage(error: "expired") }
        // Anything that cannot be a code is refused before the throttle
        // (as a malformed TOTP code is): nothing was guessed.
        guard let typed = try? exchange.parameters.single("recovery_code"), let hash = RecoveryCodes.hash(typed) else {
            return step.codePage(error: "invalid_recovery_code", extra: recoveryPage).logging("recovery code missing or malformed")
        }
        let attempt: LoginAttempt
        switch try admit(user, step, extra: recoveryPage) {
        case .admitted(let admitted): attempt = admitted
        case .refused(let page): return page
        }
        let amr = AuthenticationMethods.passwordAndRecoveryCode
        let wrong = step.codePageLocation(error: "invalid_recovery_code", extra: recoveryPage)
        let outcome = try completion.complete(user: user, amr: amr, proof: .passwordAndRecoveryCode(hash: hash, attempt), browser: step.browser)
        if case .codeAlreadyUsed = outcome {
            // Not one of the account's unused codes: a failure like a wrong TOTP code.
            try step.failed(.wrongRecoveryCode, user: user, throttle: throttle)
            return Response.redirect(to: wrong).logging("sign-in failed: wrong or used recovery code for user \(user.id)")
        }
        if case .signedIn = outcome {
            SecurityEvents.recoveryCodeUsed(user: user.email, client: step.clientID, ip: step.address,
                                            left: (try? totp.recoveryCodesLeft(userID: user.id)) ?? 0)
        }
        return answer.redirect(answer.next(outcome, user: user, amr: amr, step: step, expired: step.codePageLocation(error: "expired"),
                                           codeAlreadyUsed: wrong))
    }

    /// The account the password step marked, still enabled and enrolled; nil when gone.
    func markedUser(_ step: LoginStep) throws -> (User, TOTPCredential)? {
        guard let userID = try marks.verifiedUserID(cookieSecret: step.cookieSecret),
              let user = try users.find(id: userID), !user.disabled,
              let credential = try totp.credential(userID: user.id) else { return nil }
        return (user, credential)
    }

    enum Admission {
        case admitted(LoginAttempt)
        case refused(Response)
    }

    /// The login throttle for the marked account: a locked one gets the
    /// code page with the wait, and the attempt is recorded.
    func admit(_ user: User, _ step: LoginStep, extra: String = "") throws -> Admission {
        switch try throttle.admit(.user(id: user.id), address: step.address) {
        case .admitted(let admitted): return .admitted(admitted)
        case .locked(let retryAfter, let key):
            step.record(.locked, user: user)
            return .refused(step.lockedCodePage(retryAfter: retryAfter, key: key, user: user, extra: extra))
        }
    }
}
