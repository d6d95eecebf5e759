import Glibc
import IssuerStorage
import SSOCore

/// The HTML of `/account`, built on the server (the page shows the user's
/// own data) in the style of the static pages: CSP `script-src 'self'`, so
/// no inline script; `/js/account.js` adds the passkey button's ceremony.
/// Removing a passkey is a plain form and works without JavaScript.
enum AccountPage {
    /// A sign-in through the account page's client that did not complete
    /// (AccountSignIn): still signed out, and a way to start again.
    static func signInFailed(_ messages: Messages) -> Response {
        page(title: "account.title", messages: messages, body: """
            <main class="card">
              <h1>\(messages.html("account.title"))</h1>
              <p class="lead" id="signed-out">\(messages.html("account.signed_out"))</p>
              <p class="alert" role="alert">\(messages.html("account.sign_in_failed"))</p>
              <p><a class="button" id="sign-in" href="\(AccountResponder.pagePath)">\(messages.html("account.sign_in"))</a></p>
            </main>
            """, status: 400)
    }

    /// The page: who is signed in, what the last action did, then each
    /// section (passkeys, sessions, ...) as its own HTML fragment.
    static func render(user: User, formToken: String, notice: String?, sections: [String], messages: Messages) -> Response {
        let escape = HTMLEscaping.escape
        let signedInAs = messages.html("account.signed_in_as", [
            "name": "<strong id=\"account-name\">\(escape(user.name))</strong>",
            "email": "<span id=\"account-email\">\(escape(user.email))</span>",
        ])
        return page(title: "account.title", messages: messages, body: """
            <main class="card" data-csrf="\(escape(formToken))">
              <h1>\(messages.html("account.title"))</h1>
              <p class="lead">\(signedInAs)</p>
              \(noticeLine(notice, messages))
            \(sections.joined(separator: "\n"))
            </main>
            """)
    }

    /// What each `?done=` reports: its text, and whether it is a failure
    /// (an alert) or news (a status).
    static let notices: [String: (key: String, alert: Bool)] = [
        "removed": ("passkeys.removed", false),
        "renamed": ("passkeys.renamed", false),
        "name_refused": ("passkeys.name_refused", true),
        "not_found": ("passkeys.not_found", true),
        "session_not_found": ("sessions.not_found", true),
        "session_ended": ("sessions.ended", false),
        "provider_unlinked": ("links.unlinked", false),
        "provider_not_unlinked": ("links.not_unlinked", true),
        "provider_not_found": ("links.not_found", true),
        "password_changed": ("password.changed", false),
        "password_wrong": ("password.wrong", true),
        "password_mismatch": ("password.mismatch", true),
        "password_weak": ("password.weak", true),
        "password_too_short": ("password_rule.too_short", true),
        "password_too_long": ("password_rule.too_long", true),
        "password_common": ("password_rule.common", true),
        "password_email": ("password_rule.email", true),
        "password_missing": ("password.missing", true),
        "password_locked": ("password.locked", true),
        "totp_on": ("totp.turned_on", false),
        "totp_off": ("totp.turned_off", false),
        "totp_expired": ("totp.setup_expired", true),
        "totp_already_on": ("totp.already_on", true),
        "totp_password_wrong": ("totp.password_wrong", true),
        "totp_start_password_wrong": ("totp.start_password_wrong", true),
        "recovery_password_wrong": ("totp.recovery_password_wrong", true),
        "confirmed": ("confirm.done", false),
        "confirm_wrong": ("confirm.wrong", true),
        "delete_unconfirmed": ("delete.unconfirmed", true),
        "email_sent": ("email.sent", false),
        "email_invalid": ("email.invalid", true),
        "email_same": ("email.same", true),
    ]

    /// What `?done=` reports; an unknown value shows nothing.
    static func noticeLine(_ notice: String?, _ messages: Messages) -> String {
        guard let notice, let entry = notices[notice] else { return "" }
        return entry.alert ? "<p class=\"alert\" role=\"alert\">\(messages.html(entry.key))</p>"
            : "<p class=\"notice\" role=\"status\">\(messages.html(entry.key))</p>"
    }

    /// A hidden form field with the session's form token, for every form.
    static func tokenField(_ formToken: String) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLEscaping.escape(formToken))\">"
    }

    static func passkeysSection(_ passkeys: [PasskeyRecord], formToken: String, confirmed: Bool, messages: Messages) -> String {
        let escape = HTMLEscaping.escape
        let rows = passkeys.map { passkey in
            let kind = messages.html(passkey.backupEligible ? "passkeys.synced" : "passkeys.device_only")
            let added = messages.html("passkeys.added", ["date": date(passkey.createdAt)])
            let used = passkey.lastUsedAt.map { messages.html("passkeys.last_used", ["date": date($0)]) } ?? messages.html("passkeys.never_used")
            return """
                <li class="passkey">
                  <div><strong class="passkey-name">\(escape(passkey.name))</strong>
                  <span class="small">\(kind) · \(added) · \(used)</span></div>
                  <form method="post" action="\(AccountResponder.removePath)" class="inline">
                    \(tokenField(formToken))
                    <input type="hidden" name="id" value="\(escape(Base64URL.encode(passkey.credentialID)))">
                    <button type="submit" class="secondary">\(messages.html("passkeys.remove"))</button>
                  </form>
                  <details class="rename">
                    <summary>\(messages.html("passkeys.rename"))</summary>
                    <form method="post" action="\(AccountResponder.renamePath)">
                      \(tokenField(formToken))
                      <input type="hidden" name="id" value="\(escape(Base64URL.encode(passkey.credentialID)))">
                      <label for="rename-\(escape(Base64URL.encode(passkey.credentialID)))">\(messages.html("passkeys.new_name"))</label>
                      <input id="rename-\(escape(Base64URL.encode(passkey.credentialID)))" name="name" type="text" maxlength="64" required \
            value="\(escape(passkey.name))">
                      <button type="submit" class="secondary">\(messages.html("passkeys.save_name"))</button>
                    </form>
                  </details>
                </li>
            """
        }.joined(separator: "\n")
        return """
              <h2>\(messages.html("passkeys.heading"))</h2>
              <p class="small">\(messages.html("passkeys.lead"))</p>
              <ul class="passkeys" id="passkeys">
            \(passkeys.isEmpty ? "    <li class=\"small\" id=\"no-passkeys\">\(messages.html("passkeys.none"))</li>" : rows)
              </ul>
            \(confirmed ? addPasskeyControls(messages) : "")
            """
    }

    /// Adding a passkey, inside the confirmed window only (a passkey signs
    /// in alone): the name, and the button the page's script shows.
    static func addPasskeyControls(_ messages: Messages) -> String {
        """
              <div class="field passkey-add" hidden>
                <label for="passkey-name">\(messages.html("passkeys.name_label"))</label>
                <input id="passkey-name" type="text" maxlength="64" autocomplete="off" placeholder="\(messages.html("passkeys.name_placeholder"))">
              </div>
              <button type="button" id="add-passkey" hidden>\(messages.html("passkeys.add"))</button>
              <p class="alert" id="passkey-error" data-message="\(messages.html("passkeys.add_failed"))" hidden></p>
              <noscript><p class="small">\(messages.html("passkeys.needs_javascript"))</p></noscript>
        """
    }

    /// The frame of every account page: its two scripts (the passkey
    /// button's ceremony), and `same-origin` so its forms' posts name the
    /// issuer as their Origin (SameOriginBrowser).
    static func page(title: String, messages: Messages, body: String, status: Int = 200) -> Response {
        PageShell.response(title: messages.text(title), body: body, messages: messages, referrer: .sameOrigin,
                           scripts: ["/js/webauthn-json.js", "/js/account.js"], status: status)
    }

    /// "2026-11-26 13:05 UTC".
    /// A moment as HTML: `<time datetime=ISO 8601>` around the UTC text.
    static func date(_ seconds: Int64) -> String {
        var time = time_t(seconds), parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))", minute = "\(two(parts.tm_hour)):\(two(parts.tm_min))"
        // UTC as the server knows it; the page's script rewrites each
        // <time> in the browser's own language and time zone.
        return "<time datetime=\"\(day)T\(minute):\(two(parts.tm_sec))Z\">\(day) \(minute) UTC</time>"
    }
}
