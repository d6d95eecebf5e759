import IssuerStorage
import SSOCore

/// The pages /logout shows itself, in the look of the static pages
/// (PageShell) and the request's language. Every dynamic value is
/// HTML-escaped; there is no script (the issuer's CSP allows none inline).
enum LogoutPages {
    /// After a logout without a post-logout redirect; with `returnTo` (the
    /// app's post-logout redirect URI, when a redirect cannot be used), a
    /// link back to the app.
    static func signedOut(_ messages: Messages, returnTo: String? = nil) -> Response {
        let next = returnTo.map { """
              <p class="lead">\(messages.html("logout.signed_out_return_lead"))</p>
              <p><a class="button" id="return-to-app" href="\(ErrorPage.escape($0))">\(messages.html("logout.return_to_app"))</a></p>
            """ } ?? "  <p class=\"lead\">\(messages.html("logout.signed_out_lead"))</p>"
        return page(title: "logout.signed_out", messages: messages, body: """
              <p class="status status-ok" aria-hidden="true">✓</p>
              <h1>\(messages.html("logout.signed_out"))</h1>
            \(next)
            """)
    }

    /// Asks before ending a session the request could not prove it speaks
    /// for: a form that posts `fields` (the request's own parameters and
    /// the confirmation) back to /logout. It names the app that asked
    /// (`app`: its display name), or none when nobody did (the user typed
    /// /logout, with neither `client_id` nor `id_token_hint`).
    static func confirm(fields: [(String, String)], app: String?, _ messages: Messages) -> Response {
        let escape = ErrorPage.escape
        let lead = app.map { messages.html("logout.confirm_lead_app", ["app": "<strong id=\"logout-app\">\(escape($0))</strong>"]) }
            ?? messages.html("logout.confirm_lead")
        let hidden = fields.map { "    <input type=\"hidden\" name=\"\(escape($0.0))\" value=\"\(escape($0.1))\">" }.joined(separator: "\n")
        return page(title: "logout.confirm_title", messages: messages, body: """
              <h1>\(messages.html("logout.confirm_title"))</h1>
              <p class="lead" id="logout-lead">\(lead)</p>
              <form method="post" action="/logout" class="logout-confirm">
            \(hidden)
                <button type="submit" id="confirm-logout">\(messages.html("logout.confirm_button"))</button>
              </form>
              <p>\(messages.html("logout.stay_signed_in"))</p>
            """)
    }

    private static func page(title: String, messages: Messages, body: String) -> Response {
        PageShell.response(title: messages.text(title), body: """
            <main class="card">
            \(body)
            </main>
            """, messages: messages, referrer: .none)
    }
}
