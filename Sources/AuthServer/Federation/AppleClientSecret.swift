import IssuerStorage
import SSOCore

/// Sign in with Apple's client secret: not a stored secret but an ES256 JWT
/// the client signs with its team's key (Apple, "Creating a client secret":
/// header `alg` ES256 and `kid` the key id; claims `iss` the team id, `iat`,
/// `exp` "not greater than 15777000" seconds after `iat`, `aud`
/// `https://appleid.apple.com`, `sub` the client id). The issuer makes a
/// short-lived one and renews it well before it expires, so a secret that
/// leaks from a log or a proxy is worth little.
public struct AppleClientSecret: Sendable {
    public static let audience = "https://appleid.apple.com"
    /// Apple's ceiling for `exp - iat` (about six months).
    public static let longestLifetime: Int64 = 15_777_000
    /// The issuer's choice: a day, renewed after 23 hours.
    public static let lifetime: Int64 = 86_400
    public static let renewBefore: Int64 = 3_600

    public let jwt: String
    public let expiresAt: Int64

    struct Header: Encodable {
        let alg = "ES256"
        let kid: String
    }

    struct Claims: Encodable {
        let iss: String
        let iat: Int64
        let exp: Int64
        let aud: String
        let sub: String
    }

    /// A new secret for `clientID`, signed with `key` (the team's .p8).
    public static func make(key: ES256PrivateKey, teamID: String, keyID: String, clientID: String, now: Int64,
                            lifetime: Int64 = lifetime) throws -> AppleClientSecret {
        precondition(lifetime > 0 && lifetime <= longestLifetime, "Apple refuses a client secret that lives longer than 15777000 s")
        let claims = Claims(iss: teamID, iat: now, exp: now + lifetime, aud: audience, sub: clientID)
        return AppleClientSecret(jwt: try JWTSigner.sign(claims, header: Header(kid: keyID), key: key), expiresAt: now + lifetime)
    }

    /// Whether it is time to make a new one.
    public func needsRenewal(now: Int64) -> Bool { now >= expiresAt - Self.renewBefore }
}
