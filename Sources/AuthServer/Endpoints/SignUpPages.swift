import IssuerStorage
import SSOCore

extension GettingInHandlers {
    /// `GET|POST /login/signup`: only with GATEHOUSE_SIGNUP=open (otherwise
    /// 404, as if there were no such page).
    func signUp(_ exchange: EndpointExchange) throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        guard signup == .open else {
            return page.response("signup.closed_title", "<p class=\"lead\">\(page.html("signup.closed_lead"))</p>\n\(page.backToSignIn)",
                                 status: 404).logging("sign-up refused: GATEHOUSE_SIGNUP is \(signup.rawValue)")
        }
        guard Self.isPost(exchange) else { return SignUpPages.form(page, email: "", name: "", error: nil) }
        let email = Self.field(exchange, "email") ?? "", name = Self.field(exchange, "name") ?? ""
        // The password is taken as typed, any character (PasswordPolicy).
        let password = ((try? exchange.parameters.singleAllowingControlCharacters("password")) ?? nil) ?? ""
        if let problem = GettingIn.SignUpForm.check(email: email, name: name, password: password) {
            // The fields a control character made unreadable come back empty.
            return SignUpPages.form(page, email: email, name: name, error: problem, status: 400)
                .logging("sign-up refused: \(problem.key)")
        }
        let cookie = exchange.request.cookies[PendingAuthorizations.cookieName]
        try gettingIn.signUp(GettingIn.SignUpForm(email: email, name: name, password: password), messages: page.messages,
                             pendingCookieSecret: page.req == nil ? nil : cookie, ip: exchange.request.remoteAddress)
        return page.checkYourEmail(email)
    }

    /// `POST /login/verify/resend`: from the page an unverified sign-in got.
    func resend(_ exchange: EndpointExchange) throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        let email = Self.field(exchange, "email") ?? ""
        let cookie = exchange.request.cookies[PendingAuthorizations.cookieName]
        try gettingIn.resendVerification(email: email, messages: page.messages, pendingCookieSecret: page.req == nil ? nil : cookie,
                                         ip: exchange.request.remoteAddress)
        return page.checkYourEmail(email)
    }

    /// `GET /login/verify?token=…` shows one button, because mail scanners
    /// open every link in a mail: opening it changes nothing. `POST` (the
    /// button) verifies; when the sign-up began in this browser's pending
    /// sign-in, that sign-in goes on to the app, signed in.
    ///
    /// Opened in any other browser, the page also asks for the password
    /// chosen at sign-up, checked through the login throttle like a
    /// sign-in. Otherwise someone who signed up first with another's
    /// address would have that address's owner verify the account whose
    /// password they hold by one click on a mail the owner never expected
    /// (account pre-hijacking, Sudhodanan and Paverd, USENIX Security
    /// 2022); now the owner, who does not know it, cannot, and signs up
    /// afresh instead (GettingIn.signUp then takes the account over).
    func verify(_ exchange: EndpointExchange) throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        let token = Self.field(exchange, "token") ?? ""
        let invalid = { page.invalidLink(again: "/login.html" + page.query, againKey: "verify.sign_in_to_resend") }
        let cookie = exchange.request.cookies[PendingAuthorizations.cookieName]
        guard let (link, account) = try gettingIn.liveLink(token: token, purpose: .verification) else { return invalid() }
        let asksPassword = !GettingIn.isSignUpBrowser(link, pendingCookieSecret: cookie)
        let form = { (error: PageText?, status: Int) in
            SignUpPages.verifyForm(page, token: token, email: asksPassword ? account.email : nil, error: error, status: status)
        }
        guard Self.isPost(exchange) else { return form(nil, 200) }
        if asksPassword {
            guard let password = try? exchange.parameters.singleAllowingControlCharacters("password"), !password.isEmpty,
                  password.utf8.count <= 1024 else {
                return form(PageText("verify.password_missing"), 400).logging("verification without the sign-up's password")
            }
            switch try selfService.checkCurrentPassword(password, of: account, address: exchange.request.remoteAddress) {
            case .wrong:
                return form(PageText("verify.password_wrong"), 400).logging("verification refused: wrong password for user \(account.id)")
            case .locked(let detail): return form(PageText("password.locked"), 400).logging("verification refused: \(detail)")
            case .verified(let attempt): try selfService.settle(attempt)
            }
        }
        guard let verified = try gettingIn.verify(token: token, pendingCookieSecret: cookie, ip: exchange.request.remoteAddress) else {
            return invalid()
        }
        if verified.continuesSignIn, let cookie {
            let browser = SignInCompletion.Browser(cookieSecret: cookie, address: exchange.request.remoteAddress,
                                                   userAgent: exchange.request.header("user-agent"))
            let amr = AuthenticationMethods.passwordOnly
            let outcome = try completion.complete(user: verified.user, amr: amr, proof: .verifiedAddress, browser: browser)
            if case .signedIn = outcome {
                let step = LoginStep(cookieSecret: cookie, formToken: page.req ?? "", address: exchange.request.remoteAddress, clientID: "",
                                     userAgent: browser.userAgent, language: page.messages.language, messages: page.messages)
                return answer.redirect(answer.next(outcome, user: verified.user, amr: amr, step: step, expired: "/", codeAlreadyUsed: "/"))
                    .logging("address verified for user \(verified.user.id); the sign-in it began in goes on")
            }
        }
        return page.response("verify.done_title", """
              <p class="lead" role="status">\(page.html("verify.done"))</p>
              \(page.backToSignIn)
            """).logging("address verified for user \(verified.user.id)")
    }
}

enum SignUpPages {
    /// The verification link's page: one button, and, outside the browser
    /// that signed up (`email` given), the sign-up's password first.
    static func verifyForm(_ page: GettingInPage, token: String, email: String?, error: PageText?, status: Int) -> Response {
        let escape = HTMLEscaping.escape
        let password = email.map { email in
            """
                <p class="small">\(page.html("verify.password_lead"))</p>
                <input type="hidden" name="username" value="\(escape(email))" autocomplete="username">
                <div class="field">
                  <label for="password">\(page.html("login.password"))</label>
                  <input id="password" name="password" type="password" autocomplete="current-password" required>
                </div>
            """
        } ?? ""
        return page.response("verify.title", """
              <p class="lead">\(page.html("verify.lead"))</p>
              \(page.alert(error))
              <form method="post" action="\(GettingInResponder.verifyPath)">
                \(page.carried)
                <input type="hidden" name="token" value="\(escape(token))">
            \(password)
                <button type="submit">\(page.html("verify.submit"))</button>
              </form>
            """, status: status)
    }

    static func form(_ page: GettingInPage, email: String, name: String, error: PageText?, status: Int = 200) -> Response {
        let escape = HTMLEscaping.escape
        return page.response("signup.title", """
              <p class="lead">\(page.html("signup.lead"))</p>
              \(page.alert(error))
              <form method="post" action="\(GettingInResponder.signUpPath)">
                \(page.carried)
                \(page.emailField(email))
                <div class="field">
                  <label for="name">\(page.html("signup.name"))</label>
                  <input id="name" name="name" type="text" autocomplete="name" required maxlength="200" value="\(escape(name))">
                </div>
                <div class="field">
                  <label for="password">\(page.html("login.password"))</label>
                  <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required>
                </div>
                <p class="small">\(page.html("password_rule.hint"))</p>
                <button type="submit">\(page.html("signup.submit"))</button>
              </form>
              \(page.backToSignIn)
            """, status: status)
    }

    /// What a right password for an unverified account gets instead of a
    /// sign-in: the reason, and a button for a new link (the pending
    /// sign-in's `req` goes along, so verifying continues it).
    static func unverified(email: String, step: LoginStep) -> Response {
        let messages = step.messages, escape = HTMLEscaping.escape
        return PageShell.response(title: messages.text("unverified.title"), body: """
            <main class="card">
              <h1>\(messages.html("unverified.title"))</h1>
              <p class="lead" role="alert">\(messages.html("unverified.lead", ["email": "<strong>" + escape(email) + "</strong>"]))</p>
              <form method="post" action="\(GettingInResponder.resendPath)">
                <input type="hidden" name="lang" value="\(escape(messages.language))">
                <input type="hidden" name="req" value="\(escape(step.formToken))">
                <input type="hidden" name="email" value="\(escape(email))">
                <button type="submit">\(messages.html("unverified.resend"))</button>
              </form>
            </main>
            """, messages: messages, referrer: .sameOrigin, status: 403)
    }
}
