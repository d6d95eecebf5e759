import Foundation

/// What the token file holds: the tokens, and enough about the issuer and
/// the client to refresh, call and sign out without asking again.
struct StoredTokens: Codable {
    var version = 1
    var issuer: String
    var clientID: String
    /// Absolute path of the CA file given at login, if any.
    var caFile: String?
    var tokenEndpoint: String
    var jwksURI: String
    var revocationEndpoint: String?
    var endSessionEndpoint: String?
    var scope: String?
    var accessToken: String
    /// Seconds since 1970.
    var accessTokenExpiresAt: Int64
    var refreshToken: String?
    var idToken: String?
    var subject: String?
    var email: String?
    var signedInAt: Int64
    var refreshedAt: Int64?
    /// The access token's `token_type`: "DPoP" when it is bound to
    /// `dpopKey` (RFC 9449 §5); nil (files from before DPoP) means Bearer.
    var tokenType: String?
    /// This sign-in's DPoP private key (PEM): the tokens are worthless
    /// without it. nil when signed in with `--no-dpop`.
    var dpopKey: String?
    /// The token endpoint's latest `DPoP-Nonce`, for the next proof.
    var dpopNonce: String?

    enum CodingKeys: String, CodingKey {
        case version, issuer, scope, subject, email
        case clientID = "client_id"
        case caFile = "ca_file"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case accessToken = "access_token"
        case accessTokenExpiresAt = "access_token_expires_at"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case signedInAt = "signed_in_at"
        case refreshedAt = "refreshed_at"
        case tokenType = "token_type"
        case dpopKey = "dpop_key"
        case dpopNonce = "dpop_nonce"
    }

    /// RFC 9449 §7.1: a DPoP-bound access token goes out under the DPoP scheme.
    var isDPoPBound: Bool { tokenType?.lowercased() == "dpop" }

    /// Expired, or about to: a request sent now might arrive too late.
    func accessTokenExpired(now: Date = Date(), margin: Int64 = 30) -> Bool {
        Int64(now.timeIntervalSince1970) + margin >= accessTokenExpiresAt
    }

    /// Takes the tokens of a token endpoint reply. A reply without a refresh
    /// token or an ID token leaves the stored ones in place (RFC 6749 §6:
    /// the server "MAY issue a new refresh token").
    mutating func take(_ response: TokenResponse, now: Date = Date()) {
        accessToken = response.accessToken
        tokenType = response.tokenType
        accessTokenExpiresAt = Self.expiry(of: response, now: now)
        if let refreshToken = response.refreshToken { self.refreshToken = refreshToken }
        if let idToken = response.idToken { self.idToken = idToken }
        if let scope = response.scope { self.scope = scope }
    }

    /// `expires_in` when the server sent it (RFC 6749 §5.1), else the access
    /// token's own `exp` if it is a JWT, else one minute.
    static func expiry(of response: TokenResponse, now: Date) -> Int64 {
        let issued = Int64(now.timeIntervalSince1970)
        if let seconds = response.expiresIn { return issued + Int64(seconds) }
        if let exp = (try? UnverifiedJWT(response.accessToken))?.claims["exp"] as? NSNumber { return exp.int64Value }
        return issued + 60
    }
}
