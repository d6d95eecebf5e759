import IssuerStorage
import SSOCore

/// Builds the redirect back to the client (RFC 6749 §4.1.2).
public enum AuthorizationResponse {
    /// Adds the parameters to the redirect URI's query, keeping any query it
    /// already has (RFC 6749 §3.1.2: "MUST retain the query component").
    /// Every value is percent-encoded, so nothing can break out of the URI.
    public static func location(redirectURI: String, parameters: [(String, String)]) -> String {
        let separator = redirectURI.contains("?") ? "&" : "?"
        return redirectURI + separator + FormParser.encode(parameters)
    }

    /// RFC 9207 §2: every response, success or error, carries `iss`.
    public static func success(redirectURI: String, code: String, state: String?, issuer: String) -> Response {
        .redirect(to: successLocation(redirectURI: redirectURI, code: code, state: state, issuer: issuer))
    }

    public static func error(redirectURI: String, error: OAuthError, state: String?, issuer: String) -> Response {
        .redirect(to: errorLocation(redirectURI: redirectURI, error: error, state: state, issuer: issuer))
    }

    /// Where `success` sends the browser (a page's script follows it itself).
    static func successLocation(redirectURI: String, code: String, state: String?, issuer: String) -> String {
        var parameters = [("code", code)]
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return location(redirectURI: redirectURI, parameters: parameters)
    }

    static func errorLocation(redirectURI: String, error: OAuthError, state: String?, issuer: String) -> String {
        var parameters = [("error", error.code.rawValue), ("error_description", error.description)]
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return location(redirectURI: redirectURI, parameters: parameters)
    }
}

/// The issuer's own HTML error page for requests it must not redirect, in
/// the request's language (PageShell).
public enum ErrorPage {
    /// `title`: a catalogue key ("error.signin_title"); `detail` goes to the
    /// request log only (why, exactly, in English; never a secret);
    /// `integrator`: what the app's developer needs beside the user's text.
    public static func render(title: String, message: PageText, messages: Messages, status: Int = 400, detail: String,
                              integrator: IntegratorErrorDetails? = nil) -> Response {
        PageShell.response(title: messages.text(title), body: """
            <main class="card">
              <h1>\(messages.html(title))</h1>
              <p role="alert">\(message.html(messages))</p>
              <p>\(messages.html("error.back_to_app"))</p>
            \(integrator?.html(messages) ?? "")
            </main>
            """, messages: messages, referrer: .none, status: status).logging(detail)
    }

    /// HTML escaping for the pages built here and in LogoutPages.
    public static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
