import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// An upstream OpenID Connect provider as the federation tests play it: a
/// real RSA key (RS256) and a real P-256 key (ES256), the JWK Set that
/// publishes them, and ID tokens signed with either, with exactly the
/// header and claims a test gives.
enum UpstreamFixture {
    static let issuer = "https://id.upstream.example"
    static let clientID = "gatehouse-at-upstream"
    static let rsaKID = "rsa-2026"
    static let ecKID = "ec-2026"
    /// Made once: 2048-bit generation costs most of a second.
    static let rsa = try! RSAKey.generate()
    static let p256 = try! ES256PrivateKey.generate()
    static let endpoints = ProviderEndpoints(authorization: issuer + "/authorize", token: issuer + "/token", jwks: issuer + "/jwks")

    /// The provider as `ssoctl idp add` would have stored it (not stored here).
    static func provider(hostedDomain: String? = nil, issuer: String = UpstreamFixture.issuer) -> IdentityProvider {
        IdentityProvider(name: "corp", issuer: issuer, clientID: clientID, sealedSecret: nil, scopes: ["openid", "email", "profile"],
                         label: "Corp", preset: hostedDomain == nil ? .generic : .google, endpoints: endpoints, hostedDomain: hostedDomain,
                         createdAt: 0)
    }

    // MARK: Keys and the JWK Set

    static func rsaJWK(kid: String? = rsaKID, key: RSAKey = rsa, extra: [String: Any] = [:]) throws -> [String: Any] {
        let (n, e) = try key.publicComponents()
        var jwk: [String: Any] = ["kty": "RSA", "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
        if let kid { jwk["kid"] = kid }
        return jwk.merging(extra) { $1 }
    }

    static func ecJWK(kid: String? = ecKID, key: ES256PrivateKey = p256, extra: [String: Any] = [:]) throws -> [String: Any] {
        let public_ = try key.publicJWK()
        var jwk: [String: Any] = ["kty": "EC", "crv": "P-256", "x": public_.x ?? "", "y": public_.y ?? ""]
        if let kid { jwk["kid"] = kid }
        return jwk.merging(extra) { $1 }
    }

    static func jwks(_ members: [[String: Any]]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: ["keys": members], options: [.sortedKeys]))
    }

    /// Both signing keys, published as a provider does (`use: sig`, `alg`).
    static func standardJWKS() throws -> [UInt8] {
        try jwks([rsaJWK(extra: ["use": "sig", "alg": "RS256"]), ecJWK(extra: ["use": "sig", "alg": "ES256"])])
    }

    /// The public halves, as the verifier's key lookup hands them out.
    static let verificationKeys: [String: any JWSVerificationKey] = {
        let (n, e) = try! rsa.publicComponents()
        let ec = try! p256.publicJWK()
        return [rsaKID: try! RSAKey.publicKey(modulus: n, exponent: e),
                ecKID: try! ProofVerificationKey.p256(x: Base64URL.decode(ec.x![...])!, y: Base64URL.decode(ec.y![...])!)]
    }()

    static func lookUp(_ kid: String) -> (any JWSVerificationKey)? { verificationKeys[kid] }

    // MARK: Tokens

    enum Signer {
        case rs256(RSAKey)
        case es256(ES256PrivateKey)
        /// HMAC-SHA-256 with this secret (RFC 8725 §2.1's attack uses the
        /// provider's public key as the secret).
        case hs256([UInt8])
        /// These bytes as the signature (`alg: none`, HS256 ...).
        case bytes([UInt8])
    }

    /// The claims of a good ID token for this sign-in, with `changes`
    /// applied (a nil value removes the claim).
    static func claims(now: Int64, nonce: String, _ changes: [String: Any?] = [:]) -> [String: Any] {
        var claims: [String: Any] = ["iss": issuer, "aud": clientID, "sub": "248289761001", "exp": now + 300, "iat": now, "nonce": nonce,
                                     "email": "jane@upstream.example", "email_verified": true, "name": "Jane Doe"]
        for (name, value) in changes {
            if let value { claims[name] = value } else { claims[name] = nil }
        }
        return claims
    }

    /// A compact JWS with exactly `header` and `claims`.
    static func token(header: [String: Any], claims: [String: Any], signer: Signer) throws -> String {
        let input = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])))
            + "." + Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])))
        let signature: [UInt8]
        switch signer {
        case .rs256(let key): signature = try key.signRS256(Array(input.utf8))
        case .es256(let key): signature = try key.sign(Array(input.utf8))
        case .hs256(let secret): signature = HMACSHA256.authenticate(Array(input.utf8), key: secret)
        case .bytes(let bytes): signature = bytes
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// An RS256 token under the fixture's RSA key.
    static func rs256(_ claims: [String: Any], header: [String: Any] = [:]) throws -> String {
        try token(header: ["alg": "RS256", "kid": rsaKID, "typ": "JWT"].merging(header) { $1 }, claims: claims, signer: .rs256(rsa))
    }

    /// An ES256 token under the fixture's P-256 key.
    static func es256(_ claims: [String: Any], header: [String: Any] = [:]) throws -> String {
        try token(header: ["alg": "ES256", "kid": ecKID].merging(header) { $1 }, claims: claims, signer: .es256(p256))
    }
}

/// A provider's JWKS and token endpoints, answered from what the test sets,
/// every request counted.
final class FakeProviderHTTP: ProviderDocumentFetching {
    var documents: [String: (status: Int, body: [UInt8])] = [:]
    /// What the token endpoint answers; nil: 400 invalid_grant.
    var tokenResponse: ((_ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]))?
    /// Every GET fails (a network error) while set.
    var unreachable = false
    private(set) var gets: [String] = []
    private(set) var posts: [(url: String, fields: [(String, String)], headers: [(name: String, value: String)])] = []

    func get(_ url: String) throws -> (status: Int, body: [UInt8]) {
        gets.append(url)
        if unreachable { throw ValidationError("the provider could not be reached") }
        return documents[url] ?? (404, [])
    }

    func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8]) {
        posts.append((url, fields, headers))
        if let tokenResponse { return try tokenResponse(fields) }
        return (400, Array(#"{"error":"invalid_grant"}"#.utf8))
    }
}
