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

    init(issuer: String, sessions: SSOSessions, users: UserAccounts, catalogue: MessageCatalogue, selfService: AccountSelfService) {
        guards = [SameOriginBrowser(issuer: issuer), SignedInAccount(sessions: sessions, users: users), AccountFormToken()]
        errors = AccountErrors(catalogue: catalogue)
        self.selfService = selfService
    }

    /// `handler`: a method of a handler struct, never of the responder
    /// class: that would capture the responder in the row its route table
    /// holds, a cycle never freed (ResponderLifetimeTests).
    func row(_ path: String, _ handler: @escaping (EndpointExchange) throws -> Response) -> Endpoint {
        Endpoint(path, .post, input: .form, guards: guards, errors: errors, cache: .noStore, handler: handler)
    }

    /// For a step that stores nothing with the password check (a passkey's
    /// options, a TOTP setup): the form's `current` checked
    /// (AccountSelfService.checkCurrentPassword), a right one settled at
    /// once; nil when it is missing, empty or over 1024 bytes (then nothing
    /// is counted).
    func confirmCurrentPassword(_ form: FormParameters, of user: User, address: String) throws -> AccountSelfService.CurrentPassword? {
        guard let current = try form.singleAllowingControlCharacters("current"), !current.isEmpty, current.utf8.count <= 1024 else {
            return nil
        }
        let outcome = try selfService.checkCurrentPassword(current, of: user, address: address)
        if case .verified(let attempt) = outcome { try selfService.settle(attempt) }
        return outcome
    }
}
