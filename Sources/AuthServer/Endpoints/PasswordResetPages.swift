import IssuerStorage
import SSOCore

/// The handlers of GettingInResponder's rows (this file: the password
/// reset; SignUpPages.swift: sign-up and verification; the invitation's
/// page at the end).
struct GettingInHandlers {
    let gettingIn: GettingIn
    /// The sign-up's password on a verification page opened elsewhere,
    /// checked through the login throttle.
    let selfService: AccountSelfService
    let catalogue: MessageCatalogue
    let signup: SignupMode
    let completion: SignInCompletion
    let answer: SignInAnswer

    /// A field of the form, or of the query for a GET; nil when absent or
    /// malformed (a repeated field, a control character).
    static func field(_ exchange: EndpointExchange, _ name: String) -> String? {
        (try? exchange.parameters.single(name)) ?? nil
    }

    static func isPost(_ exchange: EndpointExchange) -> Bool { exchange.request.method == "POST" }

    /// `GET|POST /login/forgot`.
    func forgot(_ exchange: EndpointExchange) throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        guard Self.isPost(exchange) else { return PasswordResetPages.forgotForm(page, email: Self.field(exchange, "email") ?? "", error: nil) }
        guard let email = Self.field(exchange, "email"), !email.isEmpty, email.utf8.count <= 254,
              (try? UserAccounts.validate(email: email)) != nil else {
            return PasswordResetPages.forgotForm(page, email: "", error: PageText("signup.invalid_email"), status: 400)
                .logging("reset request refused: not an email address")
        }
        try gettingIn.requestPasswordReset(email: email, messages: page.messages, ip: exchange.request.remoteAddress)
        return page.checkYourEmail(email)
    }

    /// `GET|POST /login/reset` (`token` from the mailed link).
    func reset(_ exchange: EndpointExchange) throws -> Response {
        try newPassword(exchange, purpose: .passwordReset, action: GettingInResponder.resetPath, titleKey: "reset.title",
                        doneKey: "reset.done", again: GettingInResponder.forgotPath, againKey: "reset.ask_again")
    }

    /// `GET|POST /login/invitation` (`token` from the invitation mail).
    func invitation(_ exchange: EndpointExchange) throws -> Response {
        try newPassword(exchange, purpose: .invitation, action: GettingInResponder.invitationPath, titleKey: "invitation.title",
                        doneKey: "invitation.done", again: GettingInResponder.forgotPath, againKey: "reset.ask_again")
    }

    /// `GET|POST /login/email-revert` (`token` from the mail to the old
    /// address after an email change).
    func emailRevert(_ exchange: EndpointExchange) throws -> Response {
        try newPassword(exchange, purpose: .emailRevert, action: GettingInResponder.emailRevertPath, titleKey: "email_revert.title",
                        doneKey: "email_revert.done", again: GettingInResponder.forgotPath, againKey: "reset.ask_again",
                        leadKey: "email_revert.lead")
    }

    /// The page of a link that sets a password (reset, invitation, revert):
    /// the form while the link lives, then the new password set (nobody
    /// signed in: the app signs in with it, the usual way).
    func newPassword(_ exchange: EndpointExchange, purpose: AccountLinkPurpose, action: String, titleKey: String, doneKey: String,
                     again: String, againKey: String, leadKey: String = "getting_in.new_password_lead") throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        let token = Self.field(exchange, "token") ?? ""
        let invalid = { page.invalidLink(again: again + page.query, againKey: againKey) }
        /// The form again (with `error`), or the invalid-link page when the link died meanwhile.
        func form(_ error: PageText?, status: Int) throws -> Response {
            guard let (_, email) = try gettingIn.linkedAccountAndAddress(token: token, purpose: purpose) else { return invalid() }
            return page.newPasswordForm(action: action, titleKey: titleKey, token: token, email: email, error: error, status: status,
                                        leadKey: leadKey)
        }
        guard Self.isPost(exchange) else { return try form(nil, status: 200) }
        guard let password = try? exchange.parameters.singleAllowingControlCharacters("password"),
              let confirm = try? exchange.parameters.singleAllowingControlCharacters("confirm"), password.utf8.count <= 1024 else {
            return try form(PageText("password.missing"), status: 400)
        }
        guard password.utf8.elementsEqual(confirm.utf8) else { return try form(PageText("getting_in.mismatch"), status: 400) }
        switch try gettingIn.setPassword(token: token, purpose: purpose, password: password, ip: exchange.request.remoteAddress) {
        case .invalidLink: return invalid()
        case .refused(let refusal): return try form(PageText(refusal.messageKey), status: 400).logging("new password refused: \(refusal)")
        case .addressTaken:
            return page.response("email_change.taken_title", "<p class=\"lead\" role=\"alert\">\(page.html("email_change.taken"))</p>",
                                 status: 409).logging("email revert refused: the address has another account now")
        case .set(let user, let ended):
            return page.response(titleKey, """
                  <p class="lead" role="status">\(page.html(doneKey))</p>
                  \(page.backToSignIn)
                """).logging("password set from a \(purpose.rawValue) link for user \(user.id); ended \(ended.count) session(s)")
        }
    }
}

/// The reset's own pages.
enum PasswordResetPages {
    /// Where the login page's "Forgot your password?" and the sign-up notice lead.
    static let formPath = GettingInResponder.forgotPath

    static func forgotForm(_ page: GettingInPage, email: String, error: PageText?, status: Int = 200) -> Response {
        page.response("forgot.title", """
              <p class="lead">\(page.html("forgot.lead"))</p>
              \(page.alert(error))
              <form method="post" action="\(GettingInResponder.forgotPath)">
                \(page.carried)
                \(page.emailField(email))
                <button type="submit">\(page.html("forgot.submit"))</button>
              </form>
              \(page.backToSignIn)
            """, status: status)
    }
}
