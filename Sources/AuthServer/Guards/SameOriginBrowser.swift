import SSOCore

/// Cross-site request forgery, first line of defence for the browser's
/// forms (/login, the account page; the SameSite cookies and the form
/// tokens are the others).
///
/// Fetch Metadata §2.1: browsers send `Sec-Fetch-Site`, `same-origin` for
/// a page's post to its own origin; anything else is refused. Fetch
/// §"append a request Origin header": a cross-site post names its origin,
/// which must be the issuer; the pages' own post names it too (they set
/// `<meta name="referrer" content="same-origin">`), but under the server's
/// Referrer-Policy: no-referrer it may say `null`, so `null` alone proves
/// nothing either way.
public struct SameOriginBrowser: EndpointGuard {
    let issuer: String

    public init(issuer: String) { self.issuer = issuer }

    public var readsInput: Bool { false }

    public func check(_ exchange: inout EndpointExchange) throws {
        let request = exchange.request
        if let site = request.header("sec-fetch-site"), site != "same-origin" {
            throw CrossSiteRequest(detail: "Sec-Fetch-Site \(site.prefix(32))")
        }
        if let origin = request.header("origin"), origin != "null", !origin.bytesEqual(issuer) {
            throw CrossSiteRequest(detail: "Origin is not the issuer")
        }
    }
}

/// Refused by SameOriginBrowser; `detail` is for the log.
public struct CrossSiteRequest: Error {
    let detail: String
}
