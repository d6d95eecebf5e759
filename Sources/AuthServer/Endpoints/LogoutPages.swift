import IssuerStorage
import SSOCore

/// The two pages /logout shows itself, in the look of the static pages.
/// Every dynamic value goes through `ErrorPage.escape`; there is no script
/// (the issuer's CSP allows none inline).
enum LogoutPages {
    /// After a logout without a post-logout redirect.
    static func signedOut() -> Response {
        page(title: "You are signed out", body: """
              <p class="status status-ok" aria-hidden="true">✓</p>
              <h1>You are signed out</h1>
              <p class="lead">Your session on this device has ended. You can close this page.</p>
            """)
    }

    /// Asks before ending a session the request could not prove it speaks
    /// for. The confirmation is a link, not a form: the issuer's CSP has
    /// `form-action 'self'`, which browsers also apply to the redirect after
    /// a form post, and that would block the return to a custom scheme.
    static func confirm(link: String) -> Response {
        page(title: "Sign out?", body: """
              <h1>Sign out?</h1>
              <p class="lead">An app asked to sign you out of this sign-in service on this device.</p>
              <p><a class="button" id="confirm-logout" href="\(ErrorPage.escape(link))">Sign out</a></p>
              <p>To stay signed in, close this page.</p>
            """)
    }

    private static func page(title: String, body: String) -> Response {
        .html("""
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(ErrorPage.escape(title)) · Gatehouse</title>
            <link rel="stylesheet" href="/css/gatehouse.css">
            </head>
            <body>
            <main class="card">
            \(body)
            </main>
            </body>
            </html>
            """)
    }
}
