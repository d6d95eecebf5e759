import IssuerStorage
import SSOCore

/// The account page's own client: `/account` signs a browser in through
/// the issuer's ordinary authorization code flow with PKCE, as any app
/// does (Keycloak's account console is the model), so the page needs no
/// sign-in path of its own.
///
/// What keeps it from being more than that:
/// - one redirect URI, `ISSUER/account/callback`, matched exactly;
/// - public (the browser holds no secret), the authorization_code grant
///   only, scope `openid` only: no refresh token, no offline access, no
///   device secret; its codes are redeemed by the callback itself, which
///   issues no token at all (the SSO cookie is the account page's proof);
/// - so it never holds a refresh token or device secret, and the account
///   page's "Sessions and devices" never lists it among a session's apps;
/// - `ssoctl setup` (every start) creates it, and puts its redirect URI,
///   grant and scope back if they differ (a new `GATEHOUSE_ISSUER`, say);
///   `ssoctl client` may give it another `--name`, and refuses to change
///   anything else or to delete it (ClientRegistry).
public enum AccountClient {
    public static let id = "gatehouse-account"
    /// Shown in `ssoctl client list`; the login page has a text of its own
    /// for this client, in the page's language.
    public static let displayName = "Account page"
    public static let callbackPath = "/account/callback"
    public static let scope = ["openid"]

    public static func isAccountClient(_ clientID: String) -> Bool { clientID.bytesEqual(id) }

    public static func redirectURI(issuer: String) -> String { issuer + callbackPath }

    static func registration(issuer: String) -> Client {
        Client(clientID: id, secretHash: nil, scopes: scope, nativeSSOGroup: nil, redirectURIs: [redirectURI(issuer: issuer)],
               postLogoutRedirectURIs: [], grantTypes: ["authorization_code"], displayName: displayName)
    }

    /// Creates the client or puts back what setup owns; true when it was
    /// created now.
    @discardableResult
    public static func ensure(_ services: IssuerServices) throws -> Bool {
        try services.clients.ensureManaged(registration(issuer: services.settings.issuer))
    }
}
