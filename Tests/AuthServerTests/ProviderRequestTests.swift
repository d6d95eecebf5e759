import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
@testable import SSOCore

/// What the issuer sends to an upstream provider: Apple's client secret JWT
/// as Apple's "Creating a client secret" describes it, and the
/// authorization URL with each preset's quirks.
final class ProviderRequestTests: XCTestCase {
    func part(_ jwt: String, _ index: Int) throws -> [String: Any] {
        let data = try XCTUnwrap(Base64URL.decode(jwt.split(separator: ".")[index].description))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
    }

    func testTheAppleClientSecretIsAnES256JWTWithApplesClaims() throws {
        let key = try ES256PrivateKey.generate()
        let secret = try AppleClientSecret.make(key: key, teamID: "TEAM123456", keyID: "KEY1234567", clientID: "com.example.web",
                                                now: 1_800_000_000)
        let header = try part(secret.jwt, 0), claims = try part(secret.jwt, 1)
        XCTAssertEqual(header as NSDictionary, ["alg": "ES256", "kid": "KEY1234567"] as NSDictionary)
        XCTAssertEqual(claims as NSDictionary, ["iss": "TEAM123456", "iat": 1_800_000_000, "exp": 1_800_086_400,
                                               "aud": "https://appleid.apple.com", "sub": "com.example.web"] as NSDictionary)
        // The signature verifies with the key's public half, through the verifier DPoP proofs use.
        let (publicKey, _) = try DPoPProof.publicKey(try key.publicJWK(), for: .es256)
        let pieces = secret.jwt.split(separator: ".")
        let signature = try XCTUnwrap(Base64URL.decode(String(pieces[2])))
        XCTAssertEqual(signature.count, 64, "R || S, 32 bytes each (RFC 7518 §3.4)")
        XCTAssertTrue(publicKey.verify(signature: signature, message: Array((pieces[0] + "." + pieces[1]).utf8)))
        XCTAssertFalse(publicKey.verify(signature: signature, message: Array((pieces[0] + "." + pieces[1] + "x").utf8)))
        XCTAssertFalse(secret.needsRenewal(now: 1_800_000_000 + 86_400 - 3_601))
        XCTAssertTrue(secret.needsRenewal(now: 1_800_000_000 + 86_400 - 3_600), "renewed an hour before it expires")
        XCTAssertLessThanOrEqual(AppleClientSecret.lifetime, AppleClientSecret.longestLifetime)
    }

    static func provider(_ preset: IdentityProviderPreset, authorization: String = "https://id.example/authorize",
                         hostedDomain: String? = nil) -> IdentityProvider {
        IdentityProvider(name: preset.rawValue, issuer: "https://id.example", clientID: "client & co", sealedSecret: nil,
                         scopes: ["openid", "email"], label: "X", preset: preset,
                         endpoints: ProviderEndpoints(authorization: authorization, token: "https://id.example/token", jwks: "https://id.example/jwks"),
                         hostedDomain: hostedDomain, createdAt: 0)
    }

    func query(_ url: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: URLComponents(string: url)!.queryItems!.map { ($0.name, $0.value ?? "") })
    }

    func testTheAuthorizationURLCarriesPKCEStateNonceAndEachPresetsQuirk() {
        let common = ["response_type": "code", "client_id": "client & co", "redirect_uri": "https://gh.example/federation/callback",
                      "scope": "openid email", "state": "st", "nonce": "no", "code_challenge": "ch", "code_challenge_method": "S256"]
        func url(_ provider: IdentityProvider, hint: String? = nil) -> String {
            ProviderAuthorizationURL.make(provider: provider, redirectURI: "https://gh.example/federation/callback", state: "st", nonce: "no",
                                          codeChallenge: "ch", loginHint: hint)
        }
        let generic = url(Self.provider(.generic))
        XCTAssertTrue(generic.hasPrefix("https://id.example/authorize?"))
        XCTAssertEqual(query(generic), common)
        XCTAssertEqual(query(url(Self.provider(.apple))), common.merging(["response_mode": "form_post"]) { $1 })
        XCTAssertEqual(query(url(Self.provider(.google, hostedDomain: "example.com"))), common.merging(["hd": "example.com"]) { $1 })
        XCTAssertEqual(query(url(Self.provider(.google))), common, "no hd without a hosted domain")
        XCTAssertEqual(query(url(Self.provider(.generic), hint: "a+b@example.com"))["login_hint"], "a+b@example.com")
        let withQuery = url(Self.provider(.generic, authorization: "https://id.example/authorize?tenant=7"))
        XCTAssertTrue(withQuery.hasPrefix("https://id.example/authorize?tenant=7&response_type=code&"), withQuery)
    }
}
