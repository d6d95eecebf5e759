import SSOCore

/// SameOriginBrowser for the posts of an endpoint that also answers GET: a
/// mailed link is opened from a mail program or another site (its GET says
/// `Sec-Fetch-Site: none` or `cross-site`) and only shows a page; the
/// page's POST, which changes something, must come from the issuer's own
/// page. RFC 9110 §9.2.1: GET is safe, so it needs no such proof.
public struct SameOriginBrowserPosts: EndpointGuard {
    let sameOrigin: SameOriginBrowser

    public init(issuer: String) { sameOrigin = SameOriginBrowser(issuer: issuer) }

    public var readsInput: Bool { false }

    public func check(_ exchange: inout EndpointExchange) throws {
        guard exchange.request.method != "GET" && exchange.request.method != "HEAD" else { return }
        try sameOrigin.check(&exchange)
    }
}
