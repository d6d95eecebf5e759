import IssuerStorage
import SSOCore

/// `POST /account/password` (form `csrf`, `current`, `password`,
/// `confirm`): the signed-in user changes their own password. The current
/// password is required (a browser left signed in must not be enough to
/// take the account over) and goes through the login throttle, per account
/// and per address, like a sign-in: guessing it here costs what guessing it
/// at /login does. The change ends every other sign-in of the account with
/// its tokens and keeps this one. A plain form: the page says what happened.
public final class AccountPasswordResponder: RoutedEndpointGroup {
    public static let path = "/account/password"
    public static let paths = [path]

    public let table: RouteTable

    public init(services: IssuerServices) {
        let changes = services.accountChangeEndpoints
        let passwordChange = AccountPasswordChange(accountChanges: services.accountChanges, changes: changes)
        table = RouteTable([changes.row(Self.path, passwordChange.change)])
    }
}

/// `POST /account/password`'s handler.
struct AccountPasswordChange {
    let accountChanges: AccountChanges
    let changes: AccountChangeEndpoints
    var selfService: AccountSelfService { changes.selfService }

    func change(_ exchange: EndpointExchange) throws -> Response {
        let form = exchange.parameters, signedIn = try exchange.signedIn(), address = exchange.request.remoteAddress
        guard let password = try form.singleAllowingControlCharacters("password"), let confirm = try form.singleAllowingControlCharacters("confirm") else {
            return AccountResponder.back("password_missing", "password change without new or confirmation")
        }
        guard password.utf8.elementsEqual(confirm.utf8) else {
            return AccountResponder.back("password_mismatch", "new password and confirmation differ")
        }
        let user = signedIn.user
        let attempt: LoginAttempt?
        switch try changes.confirmIdentity(exchange, settleNow: false) {
        case .confirmed(let admitted): attempt = admitted
        case .missing: return AccountResponder.back("password_missing", "password change without the current password")
        case .locked(let detail): return AccountResponder.back("password_locked", "password change refused: \(detail)")
        case .wrong:
            SecurityEvents.passwordChangeRefused(user: user.email, ip: address, sid: signedIn.session.sid)
            return AccountResponder.back("password_wrong", "password change refused: wrong current password for user \(user.id)")
        }
        do {
            try accountChanges.changeOwnPassword(of: user, to: password, keepingSID: signedIn.session.sid)
        } catch let refusal as PasswordRefusal {
            if let attempt { try selfService.settle(attempt) }
            return AccountResponder.back("password_" + refusal.reason.rawValue, "the new password does not meet the rules: \(refusal)")
        }
        if let attempt { try selfService.settle(attempt) }
        SecurityEvents.passwordChanged(user: user.email, ip: address, sid: signedIn.session.sid)
        return AccountResponder.back("password_changed", "password changed by user \(user.id); other sign-ins ended")
    }
}

extension AccountPasswordResponder {
    /// The section's HTML, inside the confirmed window (which stands for
    /// the current password): a plain form, no script.
    static func section(formToken: String, messages: Messages) -> String {
        """
              <h2>\(messages.html("password.heading"))</h2>
              <form method="post" action="\(path)" class="password-change">
                \(AccountPage.tokenField(formToken))
                <div class="field">
                  <label for="new-password">\(messages.html("password.new"))</label>
                  <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="8" required>
                </div>
                <div class="field">
                  <label for="confirm-password">\(messages.html("password.new_again"))</label>
                  <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="8" required>
                </div>
                <button type="submit" class="secondary">\(messages.html("password.change"))</button>
                <p class="small">\(messages.html("password.change_note"))</p>
              </form>
        """
    }
}
