import SSOCore

/// OpenID Connect Back-Channel Logout 1.0 §2.4: the Logout Token's claims.
/// "iss, aud, iat, jti, events REQUIRED; exp REQUIRED; sub OPTIONAL and
/// sid OPTIONAL, but at least one of them; nonce PROHIBITED". Gatehouse
/// always sends both `sub` and `sid` (discovery says
/// `backchannel_logout_session_supported`), so a receiver that keys its
/// sessions by either finds them.
public struct LogoutTokenClaims: Codable, Equatable, Sendable {
    public let iss: String
    public let sub: String
    public let aud: String
    public let iat: Int64
    public let exp: Int64
    public let jti: String
    public let events: [String: EmptyEvent]
    public let sid: String

    /// §2.4: "a JSON object that MUST contain the name
    /// http://schemas.openid.net/event/backchannel-logout ... The value
    /// ... MUST be a JSON object and SHOULD be the empty JSON object {}."
    public struct EmptyEvent: Codable, Equatable, Sendable {}

    public static let event = "http://schemas.openid.net/event/backchannel-logout"
    /// §2.4: "it is RECOMMENDED that Logout Tokens be explicitly typed"
    /// with `logout+jwt`, so it cannot pass for an ID token (§4.1).
    public static let type = "logout+jwt"
    /// The token is made at each delivery attempt (an attempt an hour
    /// later gets a fresh one), so two minutes cover the POST and a
    /// receiver's clock skew; a captured token is useless soon after.
    public static let lifetime: Int64 = 120
}

extension TokenIssuer {
    /// A logout token for `clientID` about session `sid` of the user whose
    /// subject is `subject`, signed now with the active key (in the JWKS).
    public func signLogoutToken(clientID: String, subject: String, sid: String) throws -> String {
        let now = clock()
        let claims = LogoutTokenClaims(iss: settings.issuer, sub: subject, aud: clientID, iat: now, exp: now + LogoutTokenClaims.lifetime,
                                       jti: SecureRandom.token(byteCount: 16), events: [LogoutTokenClaims.event: .init()], sid: sid)
        // Back-Channel Logout 1.0 §2.4: signed as the client's ID tokens are.
        let (kid, key) = try signingKey(for: clientID)
        return try JWTSigner.sign(claims, kid: kid, typ: LogoutTokenClaims.type, key: key)
    }
}
