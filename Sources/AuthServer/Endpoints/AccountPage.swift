import Glibc
import IssuerStorage
import SSOCore

/// The HTML of `/account`, built on the server (the page shows the user's
/// own data) in the style of the static pages: CSP `script-src 'self'`, so
/// no inline script; `/js/account.js` adds the passkey button's ceremony.
/// Removing a passkey is a plain form and works without JavaScript.
enum AccountPage {
    static func signedOut() -> Response {
        page(title: "Your account", body: """
            <main class="card">
              <h1>Your account</h1>
              <p class="lead" id="signed-out">You are not signed in on this browser.</p>
              <p>Sign in from one of your apps, then come back to this page.</p>
            </main>
            """)
    }

    /// The page: who is signed in, what the last action did, then each
    /// section (passkeys, sessions, ...) as its own HTML fragment.
    static func render(user: User, formToken: String, notice: String?, sections: [String]) -> Response {
        let escape = HTMLEscaping.escape
        return page(title: "Your account", body: """
            <main class="card" data-csrf="\(escape(formToken))">
              <h1>Your account</h1>
              <p class="lead">Signed in as <strong id="account-name">\(escape(user.name))</strong> (<span id="account-email">\(escape(user.email))</span>).</p>
              \(noticeLine(notice))
            \(sections.joined(separator: "\n"))
            </main>
            """)
    }

    /// What `?done=` reports; an unknown value shows nothing.
    static func noticeLine(_ notice: String?) -> String {
        switch notice {
        case "removed": "<p class=\"notice\" role=\"status\">The passkey was removed.</p>"
        case "renamed": "<p class=\"notice\" role=\"status\">The passkey was renamed.</p>"
        case "name_refused": "<p class=\"alert\" role=\"alert\">That name cannot be used: up to 64 characters, no control characters.</p>"
        case "not_found": "<p class=\"alert\" role=\"alert\">That passkey was not found.</p>"
        case "session_not_found": "<p class=\"alert\" role=\"alert\">That session was not found; it may have ended already.</p>"
        case "session_ended": "<p class=\"notice\" role=\"status\">The session was signed out, with the apps that used it.</p>"
        case "password_changed": "<p class=\"notice\" role=\"status\">Your password was changed. Your other sign-ins have ended.</p>"
        case "password_wrong": "<p class=\"alert\" role=\"alert\">The current password is wrong. The password was not changed.</p>"
        case "password_mismatch": "<p class=\"alert\" role=\"alert\">The two new passwords differ. The password was not changed.</p>"
        case "password_weak": "<p class=\"alert\" role=\"alert\">The new password needs at least 8 characters. The password was not changed.</p>"
        case "password_missing": "<p class=\"alert\" role=\"alert\">Fill in every password field.</p>"
        case "password_locked": "<p class=\"alert\" role=\"alert\">Too many attempts. Try again later.</p>"
        case "totp_on": "<p class=\"notice\" role=\"status\">Two-step sign-in is on: signing in now asks for a code from your app.</p>"
        case "totp_off": "<p class=\"notice\" role=\"status\">Two-step sign-in is off: signing in asks for your password only.</p>"
        case "totp_expired": "<p class=\"alert\" role=\"alert\">That setup has expired or is not valid here. Start again.</p>"
        case "totp_already_on": "<p class=\"alert\" role=\"alert\">Two-step sign-in is already on. Remove the app first to set up another.</p>"
        case "totp_password_wrong": "<p class=\"alert\" role=\"alert\">The current password is wrong. Two-step sign-in stays on.</p>"
        default: ""
        }
    }

    /// A hidden form field with the session's form token, for every form.
    static func tokenField(_ formToken: String) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLEscaping.escape(formToken))\">"
    }

    static func passkeysSection(_ passkeys: [PasskeyRecord], formToken: String) -> String {
        let escape = HTMLEscaping.escape
        let rows = passkeys.map { passkey in
            """
                <li class="passkey">
                  <div><strong class="passkey-name">\(escape(passkey.name))</strong>
                  <span class="small">\(passkey.backupEligible ? "synced" : "this device only") · added \(date(passkey.createdAt)) · \
            \(passkey.lastUsedAt.map { "last used " + date($0) } ?? "never used")</span></div>
                  <form method="post" action="\(AccountResponder.removePath)" class="inline">
                    \(tokenField(formToken))
                    <input type="hidden" name="id" value="\(escape(Base64URL.encode(passkey.credentialID)))">
                    <button type="submit" class="secondary">Remove</button>
                  </form>
                  <details class="rename">
                    <summary>Rename</summary>
                    <form method="post" action="\(AccountResponder.renamePath)">
                      \(tokenField(formToken))
                      <input type="hidden" name="id" value="\(escape(Base64URL.encode(passkey.credentialID)))">
                      <label for="rename-\(escape(Base64URL.encode(passkey.credentialID)))">New name</label>
                      <input id="rename-\(escape(Base64URL.encode(passkey.credentialID)))" name="name" type="text" maxlength="64" required \
            value="\(escape(passkey.name))">
                      <button type="submit" class="secondary">Save the name</button>
                    </form>
                  </details>
                </li>
            """
        }.joined(separator: "\n")
        return """
              <h2>Passkeys</h2>
              <p class="small">A passkey signs you in with your device's screen lock instead of a password.</p>
              <ul class="passkeys" id="passkeys">
            \(passkeys.isEmpty ? "    <li class=\"small\" id=\"no-passkeys\">You have no passkeys yet.</li>" : rows)
              </ul>
              <div class="field passkey-add" hidden>
                <label for="passkey-name">Name of the new passkey</label>
                <input id="passkey-name" type="text" maxlength="64" autocomplete="off" placeholder="e.g. My phone">
              </div>
              <button type="button" id="add-passkey" hidden>Add a passkey</button>
              <p class="alert" id="passkey-error" hidden></p>
              <noscript><p class="small">Adding a passkey needs JavaScript.</p></noscript>
            """
    }

    static func page(title: String, body: String) -> Response {
        var response = Response.html("""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <meta name="referrer" content="same-origin">
            <title>\(HTMLEscaping.escape(title)) · Gatehouse</title>
            <link rel="icon" href="/img/gatehouse.svg" type="image/svg+xml">
            <link rel="stylesheet" href="/css/gatehouse.css">
            <script src="/js/webauthn-json.js" defer></script>
            <script src="/js/account.js" defer></script>
            </head>
            <body>
            <header class="brand"><img src="/img/gatehouse.svg" alt="" width="32" height="32"><span>Gatehouse</span></header>
            \(body)
            </body>
            </html>
            """)
        response.setHeader("Cache-Control", "no-store")
        return response
    }

    /// "2026-11-26 13:05 UTC".
    static func date(_ seconds: Int64) -> String {
        var time = time_t(seconds), parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }
}
