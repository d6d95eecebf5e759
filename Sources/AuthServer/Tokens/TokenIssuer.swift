import IssuerStorage
import SSOCore

/// Access token claims (RFC 9068 §2.2, plus sid, auth_time, email, roles
/// for a user's token). A machine client's token (client_credentials)
/// speaks for no user: `sub` is the client id and the user's claims are
/// absent (RFC 9068 §2.2: "In cases of access tokens obtained through
/// grants where no resource owner is involved, such as the client
/// credentials grant, the value of sub SHOULD correspond to an identifier
/// the authorization server uses to indicate the client application").
public struct AccessTokenClaims: Codable, Equatable, Sendable {
    public let iss: String
    public let sub: String
    public let aud: [String]
    public let exp: Int64
    public let iat: Int64
    public let nbf: Int64
    public let jti: String
    public let client_id: String
    public let scope: String
    public let sid: String?
    public let auth_time: Int64?
    public let email: String?
    public let roles: [String]?
    /// RFC 9449 §6.1: the key a DPoP-bound token is bound to.
    public var cnf: Confirmation? = nil
    /// The grant the token was issued in (its refresh token family, also
    /// chosen for a code exchange without a refresh token): revoking the
    /// grant's refresh token revokes this token at the issuer too (RFC
    /// 7009 §2.1). Absent from a machine client's token.
    public var grant_id: String? = nil
    /// The registration of `client_id` it was issued under
    /// (Client.registrationID): a client deleted and registered again
    /// under the same id does not bring it back at the issuer.
    public var client_registration: String? = nil
}

/// RFC 7800 `cnf` with RFC 9449 §6.1's `jkt`: the JWK SHA-256 thumbprint.
public struct Confirmation: Codable, Equatable, Sendable {
    public let jkt: String
    public init(jkt: String) { self.jkt = jkt }
}

/// ID token claims (OIDC Core §2, §5.1 for email/name by scope).
public struct IDTokenClaims: Codable, Equatable, Sendable {
    public let iss: String
    public let sub: String
    public let aud: String
    public let exp: Int64
    public let iat: Int64
    public let auth_time: Int64
    public let nonce: String?
    public let sid: String
    public let email: String?
    public let email_verified: Bool?
    public let name: String?
    /// OIDC Core §2: how the user authenticated ("pwd", "otp") and the
    /// resulting level (urn:gatehouse:pwd or urn:gatehouse:mfa).
    public let amr: [String]?
    public let acr: String?
    /// The upstream provider the user signed in through (its name, as
    /// `ssoctl idp add` gave it), absent otherwise.
    public var idp: String? = nil
    /// Native SSO: the device id (seed profile) and the device secret
    /// (current draft) this ID token is bound to, as NativeSSOHash computes them.
    public var di_hash: String? = nil
    public var ds_hash: String? = nil
}

/// What a grant decided to issue; the issuer turns it into signed tokens.
public struct TokenGrant: Sendable {
    public let user: User
    public let clientID: String
    public let scope: [String]
    public let sid: String
    public let authTime: Int64
    public let nonce: String?
    public let jti: String
    public let amr: [String]
    /// The access token's audience and scope (TokenTarget.select).
    public let target: TokenTarget
    /// Seconds (TokenLifetimes.accessToken(for:)).
    public let accessTokenLifetime: Int
    /// RFC 9449 §6.1: the DPoP key the access token is bound to.
    public var confirmationJKT: String? = nil
    /// Native SSO bindings for the ID token (NativeSSOHash values).
    public var diHash: String? = nil
    public var dsHash: String? = nil
    /// The refresh token family the tokens are issued in (`grant_id`).
    public var grantID: String? = nil
    /// The client's registration (`client_registration`).
    public var clientRegistration: String? = nil
}

/// Mints the signed access and ID tokens. Signing happens after the
/// database work has committed, outside any transaction.
public final class TokenIssuer {
    let settings: IssuerSettings
    let signingKeys: ActiveSigningKeyCache
    /// The algorithm a client's tokens are signed with: its
    /// `--id-token-alg` (OIDC Dynamic Client Registration §2
    /// `id_token_signed_response_alg`), RS256 by default.
    let algorithm: (String) throws -> JWSAlgorithm
    let clock: Clock

    public init(settings: IssuerSettings, signingKeys: ActiveSigningKeyCache, clock: @escaping Clock = systemClock,
                algorithm: @escaping (String) throws -> JWSAlgorithm = { _ in .rs256 }) {
        self.settings = settings
        self.signingKeys = signingKeys
        self.algorithm = algorithm
        self.clock = clock
    }

    /// The active key of the algorithm `clientID`'s tokens are signed with.
    func signingKey(for clientID: String) throws -> (kid: String, key: IssuerSigningKey) {
        try signingKeys.signingKey(algorithm: algorithm(clientID))
    }

    public func accessTokenClaims(_ grant: TokenGrant) -> AccessTokenClaims {
        let now = clock()
        var claims = AccessTokenClaims(
            iss: settings.issuer, sub: grant.user.subject, aud: grant.target.audience, exp: now + Int64(grant.accessTokenLifetime),
            iat: now, nbf: now, jti: grant.jti, client_id: grant.clientID, scope: grant.target.scope.joined(separator: " "), sid: grant.sid,
            auth_time: grant.authTime, email: grant.user.email, roles: grant.user.roles)
        claims.cnf = grant.confirmationJKT.map(Confirmation.init)
        claims.grant_id = grant.grantID
        claims.client_registration = grant.clientRegistration
        return claims
    }

    /// RFC 6749 §4.4.3 with RFC 9068: a machine client's own access token.
    public func signMachineToken(clientID: String, registration: String, target: TokenTarget, lifetime: Int,
                                 confirmationJKT: String? = nil) throws -> String {
        let now = clock()
        var claims = AccessTokenClaims(
            iss: settings.issuer, sub: clientID, aud: target.audience, exp: now + Int64(lifetime), iat: now, nbf: now,
            jti: SecureRandom.token(byteCount: 16), client_id: clientID, scope: target.scope.joined(separator: " "), sid: nil,
            auth_time: nil, email: nil, roles: nil)
        claims.cnf = confirmationJKT.map(Confirmation.init)
        claims.client_registration = registration
        let (kid, key) = try signingKey(for: clientID)
        return try JWTSigner.sign(claims, kid: kid, typ: "at+jwt", key: key)
    }

    public func idTokenClaims(_ grant: TokenGrant) -> IDTokenClaims {
        let now = clock()
        let email = grant.scope.contains("email")
        var claims = IDTokenClaims(
            iss: settings.issuer, sub: grant.user.subject, aud: grant.clientID, exp: now + Int64(settings.lifetimes.idToken), iat: now,
            auth_time: grant.authTime, nonce: grant.nonce, sid: grant.sid, email: email ? grant.user.email : nil,
            email_verified: email ? grant.user.emailVerified : nil, name: grant.scope.contains("profile") ? grant.user.name : nil,
            amr: Self.presentMethods(grant.amr), acr: AuthenticationMethods.acr(for: grant.amr))
        claims.idp = AuthenticationMethods.identityProvider(in: grant.amr)
        claims.di_hash = grant.diHash
        claims.ds_hash = grant.dsHash
        return claims
    }

    /// RFC 8176's values, absent when an upstream provider named none.
    static func presentMethods(_ amr: [String]) -> [String]? {
        let methods = AuthenticationMethods.methods(amr)
        return methods.isEmpty ? nil : methods
    }

    /// RFC 9068 §2.1: access tokens carry `typ: at+jwt`; ID tokens `JWT`.
    public func sign(_ grant: TokenGrant) throws -> (accessToken: String, idToken: String?) {
        let (kid, key) = try signingKey(for: grant.clientID)
        let accessToken = try JWTSigner.sign(accessTokenClaims(grant), kid: kid, typ: "at+jwt", key: key)
        let idToken = grant.scope.contains("openid") ? try JWTSigner.sign(idTokenClaims(grant), kid: kid, typ: "JWT", key: key) : nil
        return (accessToken, idToken)
    }
}

/// The token endpoint's success body (RFC 6749 §5.1, OIDC Core §3.1.3.3).
public struct TokenResponseBody: Encodable, Sendable {
    public let access_token: String
    public let token_type: String
    public let expires_in: Int
    public let refresh_token: String?
    public let id_token: String?
    public let scope: String
    /// Native SSO §3.4: the device secret, with the `device_sso` scope.
    public var device_secret: String? = nil
    /// RFC 8693 §2.2.1: token exchange responses only.
    public var issued_token_type: String? = nil
    /// draft-ietf-oauth-refresh-token-expiration: "refresh_token_expires_in:
    /// The lifetime in seconds of the refresh token", with every response
    /// that carries one, so an app can plan a silent sign-in before it ends.
    public var refresh_token_expires_in: Int? = nil

    /// RFC 9449 §5: "token_type ... DPoP" for a bound access token.
    public static func tokenType(boundTo jkt: String?) -> String { jkt == nil ? "Bearer" : "DPoP" }
}
