import IssuerStorage
import SSOCore

/// What every getting-in page shares: its language (the form's or link's
/// `lang` when there are pages in it, else Accept-Language), the pending
/// sign-in it came from (`req`, the login page's form token, passed on only
/// to lead back to that page), and the frame: PageShell's, a card, plain
/// forms that work without script.
struct GettingInPage {
    let messages: Messages
    /// The login page's `req`, checked to be a token's shape; nil for none.
    let req: String?

    init(_ exchange: EndpointExchange, catalogue: MessageCatalogue) {
        let parameters = exchange.parameters
        messages = catalogue.pageLanguage(parameters).map(catalogue.messages) ?? catalogue.messages(for: exchange.request)
        let req = (try? parameters.single("req")) ?? nil
        self.req = req.flatMap { $0.utf8.count <= 128 && $0.utf8.allSatisfy(Self.isTokenByte) && !$0.isEmpty ? $0 : nil }
    }

    init(messages: Messages, req: String?) {
        self.messages = messages
        self.req = req
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    func html(_ key: String, _ values: [String: String] = [:]) -> String { messages.html(key, values) }

    /// Hidden fields every form carries on: the language, and `req`.
    var carried: String {
        "<input type=\"hidden\" name=\"lang\" value=\"\(HTMLEscaping.escape(messages.language))\">"
            + (req.map { "<input type=\"hidden\" name=\"req\" value=\"\(HTMLEscaping.escape($0))\">" } ?? "")
    }

    /// `?lang=…&req=…` for a link to another getting-in page or the login page.
    var query: String {
        "?lang=" + FormParser.encodeComponent(messages.language) + (req.map { "&req=" + FormParser.encodeComponent($0) } ?? "")
    }

    /// "Back to sign in" when the journey began on the login page.
    var backToSignIn: String {
        guard req != nil else { return "<p class=\"small\">\(html("getting_in.back_to_app"))</p>" }
        return "<p class=\"small\"><a href=\"/login.html\(HTMLEscaping.escape(query))\">\(html("getting_in.back_to_sign_in"))</a></p>"
    }

    func alert(_ text: PageText?) -> String {
        text.map { "<p class=\"alert\" role=\"alert\">\($0.html(messages))</p>" } ?? ""
    }

    /// A whole page: `titleKey`'s text as the title and heading, then `body`.
    func response(_ titleKey: String, _ body: String, status: Int = 200) -> Response {
        PageShell.response(title: messages.text(titleKey), body: """
            <main class="card">
              <h1>\(html(titleKey))</h1>
            \(body)
            </main>
            """, messages: messages, referrer: .sameOrigin, status: status)
    }

    /// "Check your email": the one answer to every sign-up, reset request
    /// and resend, whether or not the address has an account, whether or
    /// not a mail went (the hourly limit): the same status and the same
    /// bytes for the same typed address.
    func checkYourEmail(_ email: String) -> Response {
        response("getting_in.check_email_title", """
              <p class="lead" role="status">\(html("getting_in.check_email_lead", ["email": "<strong>" + HTMLEscaping.escape(email) + "</strong>"]))</p>
              <p class="small">\(html("getting_in.check_email_note"))</p>
              \(backToSignIn)
            """)
    }

    /// A link that is used, replaced by a newer one, expired, or was never
    /// ours: one page for all (which of them is nobody's business but the
    /// database's), with the way to a new link.
    func invalidLink(again: String, againKey: String) -> Response {
        response("getting_in.link_invalid_title", """
              <p class="lead" role="alert">\(html("getting_in.link_invalid_lead"))</p>
              <p><a href="\(HTMLEscaping.escape(again))">\(html(againKey))</a></p>
            """, status: 410).logging("getting-in link refused: used, voided, expired or unknown")
    }

    /// The email field of the forgot and sign-up forms, as the login page's.
    func emailField(_ email: String) -> String {
        """
        <div class="field">
                  <label for="email">\(html("login.email"))</label>
                  <input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required \
        value="\(HTMLEscaping.escape(email))">
                </div>
        """
    }

    /// The new-password form of the reset and invitation links.
    func newPasswordForm(action: String, titleKey: String, token: String, email: String, error: PageText?, status: Int = 200,
                         leadKey: String = "getting_in.new_password_lead") -> Response {
        response(titleKey, """
              <p class="lead">\(html(leadKey, ["email": "<strong>" + HTMLEscaping.escape(email) + "</strong>"]))</p>
              \(alert(error))
              <form method="post" action="\(action)">
                \(carried)
                <input type="hidden" name="token" value="\(HTMLEscaping.escape(token))">
                <input type="hidden" name="username" value="\(HTMLEscaping.escape(email))" autocomplete="username">
                <div class="field">
                  <label for="password">\(html("password.new"))</label>
                  <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required>
                </div>
                <div class="field">
                  <label for="confirm">\(html("password.new_again"))</label>
                  <input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="8" required>
                </div>
                <p class="small">\(html("password_rule.hint"))</p>
                <button type="submit">\(html("getting_in.set_password"))</button>
              </form>
            """, status: status)
    }
}
