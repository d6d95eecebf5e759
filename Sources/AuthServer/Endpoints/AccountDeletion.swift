import IssuerStorage
import SSOCore

/// `POST /account/delete` (form `csrf`, `confirm=delete`, and `current`
/// unless the confirmed window is open): the signed-in user erases their
/// own account, exactly as `ssoctl user delete` does (AccountChanges.delete:
/// sessions, tokens, device secrets, TOTP, passkeys, then the user row, in
/// one write unit). The box to tick keeps a stray click from doing it; the
/// confirmation keeps a browser left signed in from doing it.
struct AccountDeletion {
    let changes: AccountChangeEndpoints
    let accountChanges: AccountChanges
    let catalogue: MessageCatalogue

    func delete(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user, address = exchange.request.remoteAddress
        guard (try? exchange.parameters.single("confirm")) == "delete" else {
            return AccountResponder.back("delete_unconfirmed", "account deletion without the box ticked (user \(user.id))")
        }
        switch try changes.confirmIdentity(exchange) {
        case .confirmed: break
        case .missing: return AccountResponder.back("password_missing", "account deletion without the current password")
        case .locked(let detail): return AccountResponder.back("password_locked", "account deletion refused: \(detail)")
        case .wrong: return AccountResponder.back("confirm_wrong", "account deletion refused: wrong current password for user \(user.id)")
        }
        let erased = try accountChanges.delete(email: user.email)
        SecurityEvents.accountDeleted(user: user.email, ip: address, sid: signedIn.session.sid)
        let messages = catalogue.messages(for: exchange.request)
        var page = AccountPage.page(title: "delete.done_title", messages: messages, body: """
            <main class="card">
              <h1>\(messages.html("delete.done_title"))</h1>
              <p class="lead" id="account-deleted">\(messages.html("delete.done"))</p>
            </main>
            """)
        page.addCookie(.expired(name: SSOSessions.cookieName))
        page.addCookie(.expired(name: AccountReauthentication.cookieName, path: AccountResponder.pagePath))
        return page.logging("user \(user.id) deleted their account: \(erased.endedSessions) sessions ended, "
                            + "\(erased.refreshTokens) refresh tokens, \(erased.passkeys) passkeys")
    }
}

extension AccountDeletion {
    /// The section's HTML, inside the confirmed window: a plain form.
    static func section(formToken: String, messages: Messages) -> String {
        """
              <h2>\(messages.html("delete.heading"))</h2>
              <form method="post" action="\(AccountResponder.deletePath)" class="account-delete">
                \(AccountPage.tokenField(formToken))
                <p class="small">\(messages.html("delete.lead"))</p>
                <div class="field checkbox">
                  <input id="delete-confirm" name="confirm" type="checkbox" value="delete" required>
                  <label for="delete-confirm">\(messages.html("delete.understand"))</label>
                </div>
                <button type="submit" class="danger" id="delete-account">\(messages.html("delete.submit"))</button>
              </form>
        """
    }
}
