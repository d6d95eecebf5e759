import IssuerStorage
import SSOCore

/// `POST /account/email` (form `csrf`, `email`, and `current` unless the
/// confirmed window is open): a link to the new address (GettingIn's
/// requestEmailChange); the account moves only when it is used. Inside
/// the window, like the other sensitive changes: a browser left signed in
/// must not be able to send the account's reset links elsewhere.
struct AccountEmailChange {
    let changes: AccountChangeEndpoints
    let gettingIn: GettingIn
    let catalogue: MessageCatalogue

    func request(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user
        switch try changes.confirmIdentity(exchange) {
        case .confirmed: break
        case .missing: return AccountResponder.back("password_missing", "email change without the current password")
        case .locked(let detail): return AccountResponder.back("password_locked", "email change refused: \(detail)")
        case .wrong: return AccountResponder.back("confirm_wrong", "email change refused: wrong current password for user \(user.id)")
        }
        let newEmail = ((try? exchange.parameters.single("email")) ?? nil) ?? ""
        switch try gettingIn.requestEmailChange(user: user, newEmail: newEmail, messages: catalogue.messages(for: exchange.request),
                                                ip: exchange.request.remoteAddress) {
        case .invalid: return AccountResponder.back("email_invalid", "email change refused: not an address (user \(user.id))")
        case .same: return AccountResponder.back("email_same", "email change refused: the account's own address (user \(user.id))")
        case .sent: return AccountResponder.back("email_sent", "email change asked for user \(user.id)")
        }
    }

    /// The section: the address and whether it is verified; inside the
    /// confirmed window, the form for a new one.
    static func section(user: User, formToken: String, confirmed: Bool, messages: Messages) -> String {
        let escape = HTMLEscaping.escape
        let state = messages.html(user.emailVerified ? "email.verified" : "email.unverified")
        let form = confirmed ? """
              <form method="post" action="\(AccountResponder.emailPath)" class="account-email">
                \(AccountPage.tokenField(formToken))
                <div class="field">
                  <label for="new-email">\(messages.html("email.new"))</label>
                  <input id="new-email" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required>
                </div>
                <p class="small">\(messages.html("email.how"))</p>
                <button type="submit" class="secondary" id="change-email">\(messages.html("email.submit"))</button>
              </form>
            """ : ""
        return """
              <h2>\(messages.html("email.heading"))</h2>
              <p><strong id="email-address">\(escape(user.email))</strong> <span class="small" id="email-state">\(state)</span></p>
            \(form)
            """
    }
}
