import IssuerStorage
import SSOCore

extension GettingInHandlers {
    /// `GET /login/email-change?token=…` shows the new address and one
    /// button (mail scanners open links; opening changes nothing); `POST`
    /// (the button) moves the account there. Nobody needs to be signed in:
    /// the link, mailed to the new address, is the proof; the request was
    /// made from a confirmed session.
    func emailChange(_ exchange: EndpointExchange) throws -> Response {
        let page = GettingInPage(exchange, catalogue: catalogue)
        let token = Self.field(exchange, "token") ?? ""
        let invalid = { page.invalidLink(again: "/account", againKey: "email_change.ask_again") }
        guard Self.isPost(exchange) else {
            guard let newEmail = try gettingIn.liveLink(token: token, purpose: .emailChange)?.link.targetEmail else { return invalid() }
            return page.response("email_change.title", """
                  <p class="lead">\(page.html("email_change.lead", ["email": "<strong>" + HTMLEscaping.escape(newEmail) + "</strong>"]))</p>
                  <form method="post" action="\(GettingInResponder.emailChangePath)">
                    \(page.carried)
                    <input type="hidden" name="token" value="\(HTMLEscaping.escape(token))">
                    <button type="submit">\(page.html("email_change.submit"))</button>
                  </form>
                """)
        }
        switch try gettingIn.changeEmail(token: token, messages: page.messages, ip: exchange.request.remoteAddress) {
        case .invalidLink: return invalid()
        case .taken:
            return page.response("email_change.taken_title", "<p class=\"lead\" role=\"alert\">\(page.html("email_change.taken"))</p>",
                                 status: 409).logging("email change refused: the address has another account now")
        case .changed(let user, _):
            let address = "<strong>" + HTMLEscaping.escape(user.email) + "</strong>"
            return page.response("email_change.done_title", """
                  <p class="lead" role="status">\(page.html("email_change.done", ["email": address]))</p>
                  <p class="small"><a href="/account">\(page.html("email_change.to_account"))</a></p>
                """).logging("user \(user.id) moved to a new address")
        }
    }
}
