import SSOCore

/// The small pages the browser sees on the loopback listener.
enum CallbackPage {
    static func signedIn(as who: String?) -> String {
        page(title: "Signed in", message: (who.map { "Signed in as \($0). " } ?? "Signed in. ")
             + "You can close this window and return to the terminal.")
    }

    static func failed(_ reason: String) -> String {
        page(title: "Sign-in failed", message: reason + " You can close this window; the terminal says more.")
    }

    static let notFound = page(title: "Not found", message: "This address only receives the sign-in callback.")

    static func page(title: String, message: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) · gatehouse-login</title>
        <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style>
        </head>
        <body><h1>\(escape(title))</h1><p>\(escape(message))</p></body>
        </html>

        """
    }

    /// Nothing from the query or the issuer's error_description becomes markup.
    static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
