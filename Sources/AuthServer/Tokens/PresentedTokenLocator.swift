import IssuerStorage
import SSOCore

/// What a token presented to /revoke or /introspect turned out to be.
public enum PresentedToken: Sendable {
    /// A refresh token the issuer stored (in any state).
    case refreshToken(RefreshTokenDetails)
    /// An access token the issuer signed (signature, typ and iss verified;
    /// time window and revocation not checked yet).
    case accessToken(PresentedAccessToken)
    /// Anything else: unknown, garbage, or signed by someone else.
    case unknown
}

/// Finds a presented token among the two kinds the issuer hands out.
///
/// RFC 7009 §2.1 and RFC 7662 §2.1 on `token_type_hint`: "If the server is
/// unable to locate the token using the given hint, it MUST extend its
/// search across all of its supported token types. An authorization server
/// MAY ignore this parameter". The hint only orders the two lookups, and an
/// unknown hint value is treated as no hint (it is not an error).
public struct PresentedTokenLocator {
    public enum Hint: String, Sendable { case accessToken = "access_token", refreshToken = "refresh_token" }

    let refreshTokens: RefreshTokens
    let accessTokens: IssuerAccessTokenVerifier

    public init(refreshTokens: RefreshTokens, accessTokens: IssuerAccessTokenVerifier) {
        self.refreshTokens = refreshTokens
        self.accessTokens = accessTokens
    }

    public func locate(_ token: String, hint: String?) throws -> PresentedToken {
        if Hint(rawValue: hint ?? "") == .accessToken {
            if let access = try accessToken(token) { return .accessToken(access) }
            if let refresh = try refreshTokens.details(of: token) { return .refreshToken(refresh) }
        } else {
            if let refresh = try refreshTokens.details(of: token) { return .refreshToken(refresh) }
            if let access = try accessToken(token) { return .accessToken(access) }
        }
        return .unknown
    }

    /// A JWT that fails any check is simply not one of ours; database
    /// errors still propagate (they are not the token's fault).
    func accessToken(_ token: String) throws -> PresentedAccessToken? {
        do { return try accessTokens.signedClaims(token) } catch is TokenRejection { return nil }
    }
}
