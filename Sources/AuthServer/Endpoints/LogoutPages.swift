import IssuerStorage
import SSOCore

/// The two pages /logout shows itself, in the look of the static pages
/// (PageShell) and the request's language. Every dynamic value is
/// HTML-escaped; there is no script (the issuer's CSP allows none inline).
enum LogoutPages {
    /// After a logout without a post-logout redirect.
    static func signedOut(_ messages: Messages) -> Response {
        page(title: "logout.signed_out", messages: messages, body: """
              <p class="status status-ok" aria-hidden="true">✓</p>
              <h1>\(messages.html("logout.signed_out"))</h1>
              <p class="lead">\(messages.html("logout.signed_out_lead"))</p>
            """)
    }

    /// Asks before ending a session the request could not prove it speaks
    /// for. The confirmation is a link, not a form: the issuer's CSP has
    /// `form-action 'self'`, which browsers also apply to the redirect after
    /// a form post, and that would block the return to a custom scheme.
    static func confirm(link: String, _ messages: Messages) -> Response {
        page(title: "logout.confirm_title", messages: messages, body: """
              <h1>\(messages.html("logout.confirm_title"))</h1>
              <p class="lead">\(messages.html("logout.confirm_lead"))</p>
              <p><a class="button" id="confirm-logout" href="\(ErrorPage.escape(link))">\(messages.html("logout.confirm_button"))</a></p>
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
