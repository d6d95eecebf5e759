import IssuerStorage
import SSOCore

/// What the issuer's logic needs to know about its deployment, and nothing
/// else: no paths, no ports, no app-link ids. Made once from the
/// configuration by the composition root.
public struct IssuerSettings: Sendable {
    /// The issuer identifier (`iss`), an https origin.
    public var issuer: String
    /// The APIs' origins: the audiences of their scopes.
    public var apiAOrigin: String
    public var apiBOrigin: String
    public var lifetimes: TokenLifetimes

    public init(issuer: String, apiAOrigin: String, apiBOrigin: String, lifetimes: TokenLifetimes) {
        self.issuer = issuer
        self.apiAOrigin = apiAOrigin
        self.apiBOrigin = apiBOrigin
        self.lifetimes = lifetimes
    }

    public init(config: GatehouseConfig) {
        self.init(issuer: config.issuer, apiAOrigin: config.apiAOrigin, apiBOrigin: config.apiBOrigin, lifetimes: TokenLifetimes(config: config))
    }
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

    /// How long a superseded signing key stays published: the longest token
    /// lifetime it may have signed, plus a minute of clock leeway.
    public var signingKeyRetention: Int { max(accessToken, idToken) + 60 }
}
