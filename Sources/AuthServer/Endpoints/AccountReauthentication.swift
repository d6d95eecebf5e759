import IssuerStorage
import SSOCore

/// "Confirm it's you" on /account, as GitHub's sudo mode: one re-entry of
/// the password (through the login throttle, like a sign-in) opens a few
/// minutes in which the sensitive changes (a new password, TOTP and its
/// recovery codes, adding a passkey, deleting the account) need nothing
/// more, instead of a password field in every form.
///
/// The window is a cookie, not a row: `gh_sudo` holds AES-256-GCM of its
/// expiry, authenticated with this user and this session's sid, so it is
/// worth nothing in another session or after this one ends, cannot be
/// stretched, and is scoped to `/account` (Path), HttpOnly, Secure and
/// SameSite=Strict. Sealed under the TOTP sealing key, as the account
/// page's pending TOTP setup is; the authenticated data's purpose string
/// keeps the two apart.
struct AccountReauthentication {
    static let cookieName = "gh_sudo"
    /// GitHub's sudo mode lasts two hours; a phone left unlocked on a table
    /// argues for less. Five minutes covers a change or two.
    static let lifetime: Int64 = 300
    let seal: SessionBoundSeal
    let clock: Clock

    init(sealingKeys: any SealingKeySource, clock: @escaping Clock) {
        seal = SessionBoundSeal(purpose: "gatehouse-account-sudo-v1", sealingKeys: sealingKeys)
        self.clock = clock
    }

    /// The cookie that opens the window for `signedIn`'s session, from now.
    func cookie(for signedIn: SignedInAccount.Value) throws -> SetCookie {
        let value = try seal.seal(expiresAt: clock() + Self.lifetime, userID: signedIn.user.id, sid: signedIn.session.sid)
        return SetCookie(name: Self.cookieName, value: value, path: AccountResponder.pagePath, maxAge: Int(Self.lifetime), sameSite: .strict)
    }

    /// Seconds left in the window the request's cookie opened for this
    /// session, nil when there is none (no cookie, another session's or
    /// user's, altered, or expired).
    func secondsLeft(_ request: Request, for signedIn: SignedInAccount.Value) -> Int64? {
        guard let value = request.cookies[Self.cookieName],
              let opened = seal.open(value, maximumLength: 128, userID: signedIn.user.id, sid: signedIn.session.sid),
              opened.payload.isEmpty else { return nil }
        let left = opened.expiresAt - clock()
        return left > 0 && left <= Self.lifetime ? left : nil
    }
}

/// `POST /account/confirm` (form `csrf`, `current`): the password again,
/// through the login throttle; a right one opens the window.
struct AccountConfirmation {
    let changes: AccountChangeEndpoints

    func confirm(_ exchange: EndpointExchange) throws -> Response {
        let signedIn = try exchange.signedIn(), user = signedIn.user
        switch try changes.checkCurrentPassword(exchange) {
        case .missing: return AccountResponder.back("password_missing", "confirmation without the current password")
        case .locked(let detail): return AccountResponder.back("password_locked", "confirmation refused: \(detail)")
        case .wrong: return AccountResponder.back("confirm_wrong", "confirmation refused: wrong current password for user \(user.id)")
        case .confirmed:
            var response = AccountResponder.back("confirmed", "user \(user.id) confirmed it's them for \(AccountReauthentication.lifetime) s")
            response.addCookie(try changes.reauthentication.cookie(for: signedIn))
            return response
        }
    }
}

extension AccountReauthentication {
    /// The section that opens the window, or says it is open. With
    /// passkeys, the page's script also shows "Confirm with a passkey"
    /// (AccountPasskeyConfirmation); the password form works without it.
    static func section(formToken: String, secondsLeft: Int64?, hasPasskeys: Bool = false, messages: Messages) -> String {
        if let secondsLeft {
            let minutes = String(max(1, (secondsLeft + 59) / 60))
            return """
                  <p class="notice" id="confirmed-window">\(messages.html("confirm.open", ["minutes": minutes]))</p>
            """
        }
        return """
              <section class="confirm-identity" id="confirm-identity">
                <h2>\(messages.html("confirm.heading"))</h2>
                <p class="small">\(messages.html("confirm.lead", ["minutes": String(lifetime / 60)]))</p>
                <form method="post" action="\(AccountResponder.confirmPath)" class="confirm">
                  \(AccountPage.tokenField(formToken))
                  <div class="field">
                    <label for="confirm-current-password">\(messages.html("password.current"))</label>
                    <input id="confirm-current-password" name="current" type="password" autocomplete="current-password" required>
                  </div>
                  <button type="submit">\(messages.html("confirm.submit"))</button>
                </form>
                \(hasPasskeys ? passkeyButton(messages) : "")
              </section>
        """
    }

    static func passkeyButton(_ messages: Messages) -> String {
        """
                <button type="button" class="secondary" id="confirm-passkey" hidden>\(messages.html("confirm.passkey"))</button>
                <p class="alert" id="confirm-passkey-error" data-message="\(messages.html("confirm.passkey_failed"))" hidden></p>
        """
    }
}
