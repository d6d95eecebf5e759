import IssuerStorage
import SSOCore

/// What the issuer's logic needs to know about its deployment, and nothing
/// else: no paths, no ports, no app-link ids, no API (those are registered). Made once from the
/// configuration by the composition root.
public struct IssuerSettings: Sendable {
    /// The issuer identifier (`iss`), an https origin.
    public var issuer: String
    public var lifetimes: TokenLifetimes
    /// RFC 9449 §8: the token endpoint requires server nonces in proofs.
    public var dpopNonceRequired: Bool
    /// Every client must push its authorization requests (RFC 9126 §4);
    /// `GATEHOUSE_REQUIRE_PAR`.
    public var requirePushedAuthorizationRequests: Bool
    /// `GATEHOUSE_BRAND_NAME`: what users see the issuer called outside its
    /// pages too (the authenticator app's entry, the passkey dialog).
    public var brandName: String
    /// `GATEHOUSE_SIGNUP`: whether the login page offers "Create an account".
    public var signup: SignupMode
    /// `GATEHOUSE_MAIL_FROM`, else `no-reply@` the issuer's host.
    public var mailFrom: String

    public init(issuer: String, lifetimes: TokenLifetimes, dpopNonceRequired: Bool = true, requirePushedAuthorizationRequests: Bool = false,
                brandName: String = BrandSettings.standardName, signup: SignupMode = .closed, mailFrom: String? = nil) {
        self.issuer = issuer
        self.lifetimes = lifetimes
        self.dpopNonceRequired = dpopNonceRequired
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.brandName = brandName
        self.signup = signup
        self.mailFrom = mailFrom ?? "no-reply@" + Self.host(of: issuer)
    }

    public init(config: GatehouseConfig) {
        self.init(issuer: config.issuer, lifetimes: TokenLifetimes(config: config), dpopNonceRequired: config.dpopNonceRequired,
                  requirePushedAuthorizationRequests: config.requirePushedAuthorizationRequests, brandName: config.brand.name,
                  signup: config.signup, mailFrom: config.mailFrom)
    }

    /// The host of an https origin (`https://id.example.com:8443` →
    /// `id.example.com`): the configuration has checked its form.
    static func host(of origin: String) -> String {
        var rest = Substring(origin)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") { rest = rest[..<colon] }
        return String(rest)
    }

    /// The issuer's host, the right-hand side of its mails' Message-IDs.
    public var host: String { Self.host(of: issuer) }
}

/// Seconds each credential lives.
public struct TokenLifetimes: Sendable {
    public var accessToken: Int
    public var idToken: Int
    public var refreshToken: Int
    public var authorizationCode: Int
    public var ssoSession: Int
    /// A rotated refresh token may be presented again this long and get the
    /// same successor back (a reply lost on a mobile network).
    public var refreshGracePeriod: Int

    public init(config: GatehouseConfig) {
        accessToken = config.accessTokenLifetime
        idToken = config.idTokenLifetime
        refreshToken = config.refreshTokenLifetime
        authorizationCode = config.authorizationCodeLifetime
        ssoSession = config.ssoSessionLifetime
        refreshGracePeriod = config.refreshGracePeriod
    }

    /// A client's own access token lifetime, never above the issuer's.
    public func accessToken(for client: Client) -> Int { min(client.accessTokenLifetime ?? accessToken, accessToken) }
    /// A client's own refresh token lifetime, never above the issuer's.
    public func refreshToken(for client: Client) -> Int { min(client.refreshTokenLifetime ?? refreshToken, refreshToken) }

    /// How long a superseded signing key stays published: the longest token
    /// lifetime it may have signed, plus a minute of clock leeway.
    public var signingKeyRetention: Int { max(accessToken, idToken) + 60 }
}
