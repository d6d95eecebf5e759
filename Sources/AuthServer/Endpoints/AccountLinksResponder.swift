import IssuerStorage
import SSOCore

/// `/account`'s "Sign-in providers" (AccountLinksResponder.section): the
/// upstream accounts linked to this one, each with an "Unlink" form.
///
/// - `POST /account/links/remove` (`csrf`, `issuer`, `subject`): unlinks one
///   of the signed-in user's links while another way in remains (a
///   password, a passkey or another link); back to
///   `/account?done=provider_unlinked`, or `provider_not_unlinked` with
///   nothing changed. Another user's link, or none, changes nothing.
///
/// It passes AccountChangeEndpoints' guards (Fetch Metadata, Origin, the
/// session's form token), as every change on the page does.
public final class AccountLinksResponder: RoutedEndpointGroup {
    public static let removePath = "/account/links/remove"
    public static let paths = [removePath]

    public let table: RouteTable

    public init(services: IssuerServices) {
        let changes = services.accountChangeEndpoints, links = services.providerLinks
        table = RouteTable([changes.row(Self.removePath) { exchange in
            let signedIn = try exchange.signedIn(), user = signedIn.user, form = exchange.parameters
            guard let issuer = try? form.single("issuer"), let subject = try? form.single("subject"),
                  issuer.utf8.count <= 2048, subject.utf8.count <= 255 else {
                return AccountResponder.back("provider_not_found", "no link named to unlink for user \(user.id)")
            }
            switch try links.unlink(user: user, issuer: issuer, subject: subject) {
            case .unlinked(let link):
                SecurityEvents.providerUnlinked(user: user.email, provider: link.provider, ip: exchange.request.remoteAddress,
                                                sid: signedIn.session.sid)
                return AccountResponder.back("provider_unlinked", "user \(user.id) unlinked identity provider \(link.provider)")
            case .onlyWayIn:
                return AccountResponder.back("provider_not_unlinked", "user \(user.id) tried to unlink their only way in")
            case .notLinked:
                return AccountResponder.back("provider_not_found", "user \(user.id) has no such link")
            }
        }])
    }

    /// The section; nothing for a user with no link (most users).
    static func section(_ links: [FederatedIdentity], formToken: String, messages: Messages) -> String? {
        guard !links.isEmpty else { return nil }
        let escape = ErrorPage.escape
        let rows = links.map { link in
            """
                <li class="provider-link">
                  <div><strong>\(escape(link.provider))</strong>
                  <span class="small">\(messages.html("links.linked", ["email": link.email, "date": AccountPage.date(link.linkedAt)]))</span></div>
                  <form method="post" action="\(removePath)" class="inline">
                    \(AccountPage.tokenField(formToken))
                    <input type="hidden" name="issuer" value="\(escape(link.issuer))">
                    <input type="hidden" name="subject" value="\(escape(link.subject))">
                    <button type="submit" class="secondary">\(messages.html("links.unlink"))</button>
                  </form>
                </li>
            """
        }
        return """
              <h2 id="links-heading">\(messages.html("links.heading"))</h2>
              <p class="small">\(messages.html("links.lead"))</p>
              <ul class="provider-links" id="provider-links" aria-labelledby="links-heading">
            \(rows.joined(separator: "\n"))
              </ul>
            """
    }
}
