import SSOCore

/// Every change at the account page carries a form token only this
/// browser's cookie can produce: an HMAC keyed with the SSO cookie's
/// secret (as the logout confirmation's), so another site, which cannot
/// read the page, cannot make a signed-in browser change anything; and it
/// reveals nothing about the cookie. After SignedInAccount.
public struct AccountFormToken: EndpointGuard {
    public init() {}

    public var readsInput: Bool { true }

    public func check(_ exchange: inout EndpointExchange) throws {
        let signedIn = try exchange.signedIn()
        guard let token = try? exchange.parameters.single("csrf"),
              ConstantTime.equals(Array(token.utf8), Array(signedIn.formToken.utf8)) else { throw ForeignForm() }
    }

    static func expected(for cookieSecret: String) -> String {
        Base64URL.encode(HMACSHA256.authenticate(Array("gatehouse account form".utf8), key: Array(cookieSecret.utf8)))
    }

    /// Refused by AccountFormToken.
    struct ForeignForm: Error {}
}
