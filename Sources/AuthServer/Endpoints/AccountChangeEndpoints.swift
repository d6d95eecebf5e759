import IssuerStorage
import SSOCore

/// What every change at `/account` shares: a POST with two proofs that it
/// comes from the account page (SameOriginBrowser; AccountFormToken, after
/// SignedInAccount), refused in the account page's words (AccountErrors),
/// never cached. The account responders declare their rows with `row`.
struct AccountChangeEndpoints {
    let guards: [any EndpointGuard]
    let errors: AccountErrors
    let selfService: AccountSelfService
    let reauthentication: AccountReauthentication

    init(issuer: String, sessions: SSOSessions, users: UserAccounts, catalogue: MessageCatalogue, selfService: AccountSelfService,
         reauthentication: AccountReauthentication) {
        guards = [SameOriginBrowser(issuer: issuer), SignedInAccount(sessions: sessions, users: users), AccountFormToken()]
        errors = AccountErrors(catalogue: catalogue)
        self.selfService = selfService
        self.reauthentication = reauthentication
    }

    /// `handler`: a method of a handler struct, never of the responder
    /// class: that would capture the responder in the row its route table
    /// holds, a cycle never freed (ResponderLifetimeTests).
    func row(_ path: String, _ handler: @escaping (EndpointExchange) throws -> Response) -> Endpoint {
        Endpoint(path, .post, input: .form, guards: guards, errors: errors, cache: .noStore, handler: handler)
    }

    /// Whether a sensitive change may go ahead, and what it settles.
    enum Identity {
        /// Go ahead; settle `attempt` with the change when there is one (a
        /// right `current` in the form; none inside the confirmed window).
        case confirmed(LoginAttempt?)
        /// No window open and no (or an empty, or an over-long) `current`.
        case missing
        /// A wrong `current`, counted as a failed sign-in.
        case wrong
        /// The throttle is locking: nothing checked; `detail` is for the log.
        case locked(detail: String)
    }

    /// A sensitive change's check: the confirmed window (AccountReauthentication)
    /// if it is open, else the form's `current` through the login throttle,
    /// so scripts and pages without the window still work as before.
    /// `settleNow`: a right password's attempt is settled here, for a step
    /// that stores nothing with it (a passkey's options, a TOTP setup).
    func confirmIdentity(_ exchange: EndpointExchange, settleNow: Bool = true) throws -> Identity {
        let signedIn = try exchange.signedIn()
        if reauthentication.secondsLeft(exchange.request, for: signedIn) != nil { return .confirmed(nil) }
        return try checkCurrentPassword(exchange, settleNow: settleNow)
    }

    /// The form's `current` alone, through the login throttle (never the
    /// window: `POST /account/confirm` must not stretch an open one);
    /// missing, empty or over 1024 bytes counts nothing.
    func checkCurrentPassword(_ exchange: EndpointExchange, settleNow: Bool = true) throws -> Identity {
        let signedIn = try exchange.signedIn()
        guard let current = try exchange.parameters.singleAllowingControlCharacters("current"), !current.isEmpty,
              current.utf8.count <= 1024 else { return .missing }
        switch try selfService.checkCurrentPassword(current, of: signedIn.user, address: exchange.request.remoteAddress) {
        case .wrong: return .wrong
        case .locked(let detail): return .locked(detail: detail)
        case .verified(let attempt):
            guard settleNow else { return .confirmed(attempt) }
            try selfService.settle(attempt)
            return .confirmed(nil)
        }
    }
}
