import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// The token endpoint's client authentication: client_secret_post beside
/// Basic, private_key_jwt's checks (RFC 7523 §3) in the order they refuse,
/// exactly one method per request, the assertion's jti used once.
final class ClientAuthenticatorTests: XCTestCase {
    var issuer: TemporaryIssuer!
    let key = try! ES256PrivateKey.generate()
    let stranger = try! ES256PrivateKey.generate()
    var now: Int64 = 1_800_000_000
    static let secret = "a-client-secret-of-some-length"

    override func setUpWithError() throws {
        issuer = try TemporaryIssuer()
        try issuer.services.apis.add(audience: "https://api-a.example", name: nil, scopes: ["api:serverA"])
        let jwks = String(decoding: try UpstreamFixture.jwks([UpstreamFixture.ecJWK(kid: "k1", key: key)]), as: UTF8.self)
        try issuer.clients.add(ClientRegistration(clientID: "keyed", scopes: ["api:serverA"], grantTypes: ["client_credentials"],
                                                  authMethod: "private_key_jwt", jwks: jwks))
        try issuer.clients.add(ClientRegistration(clientID: "secretive", scopes: ["api:serverA"], secret: Self.secret,
                                                  grantTypes: ["client_credentials"]))
        try issuer.clients.add(ClientRegistration(clientID: "basic-only", scopes: ["api:serverA"], secret: Self.secret,
                                                  grantTypes: ["client_credentials"], authMethod: "client_secret_basic"))
    }

    override func tearDown() { issuer.cleanUp() }

    var authenticator: ClientAuthenticator {
        let storage = issuer.storage, clock = { [unowned self] in self.now }
        return ClientAuthenticator(clients: issuer.clients, hasher: TemporaryIssuer.fastHasher, issuer: issuer.config.issuer, clock: clock,
                                   firstUse: { hash, until in try storage.write { try $0.dpopProofs.remember(jtiHash: hash, expiresAt: until, now: clock()) } })
    }

    struct AssertionClaims: Encodable {
        var iss: String? = "keyed", sub: String? = "keyed", aud: String? = nil, exp: Int64? = nil, nbf: Int64? = nil, jti: String? = UUID().uuidString
    }

    func assertion(_ claims: AssertionClaims? = nil, key: ES256PrivateKey? = nil, kid: String = "k1") throws -> String {
        var claims = claims ?? AssertionClaims()
        claims.aud = claims.aud ?? issuer.config.issuer
        claims.exp = claims.exp ?? now + 60
        return try JWTSigner.sign(claims, header: JWTHeader(alg: "ES256", kid: kid, typ: "JWT"), key: key ?? self.key)
    }

    func authenticate(_ pairs: [(String, String)], basic: (String, String)? = nil) throws -> Client {
        var headers: [String: String] = [:]
        if let (id, secret) = basic { headers["authorization"] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString() }
        let request = Request(method: "POST", path: "/token", headers: headers)
        return try authenticator.authenticate(request, form: FormParameters(pairs: pairs))
    }

    func withAssertion(_ value: String, _ extra: [(String, String)] = []) -> [(String, String)] {
        [("client_assertion_type", ClientAssertion.type), ("client_assertion", value)] + extra
    }

    func assertRefused(_ pairs: [(String, String)], basic: (String, String)? = nil, code: OAuthError.Code = .invalidClient,
                       _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try authenticate(pairs, basic: basic), message, file: file, line: line) { error in
            XCTAssertEqual((error as? OAuthError)?.code, code, "\(message): \(error)", file: file, line: line)
        }
    }

    func testClientSecretPostAndBasicAuthenticateAClientWithASecret() throws {
        XCTAssertEqual(try authenticate([("client_id", "secretive"), ("client_secret", Self.secret)]).clientID, "secretive")
        XCTAssertEqual(try authenticate([], basic: ("secretive", Self.secret)).clientID, "secretive")
        assertRefused([("client_id", "secretive"), ("client_secret", "wrong-secret-of-some-length")], "a wrong secret")
        assertRefused([("client_id", "basic-only"), ("client_secret", Self.secret)], "registered for Basic only")
        XCTAssertEqual(try authenticate([], basic: ("basic-only", Self.secret)).clientID, "basic-only")
        assertRefused([("client_id", "secretive"), ("client_secret", Self.secret)], basic: ("secretive", Self.secret), "two methods")
    }

    func testAGoodAssertionAuthenticatesOnceAndOnlyOnce() throws {
        let value = try assertion()
        XCTAssertEqual(try authenticate(withAssertion(value)).clientID, "keyed")
        assertRefused(withAssertion(value), "the same jti again")
        XCTAssertEqual(try authenticate(withAssertion(try assertion(), [("client_id", "keyed")])).clientID, "keyed")
        var toEndpoint = AssertionClaims()
        toEndpoint.aud = issuer.config.issuer + "/token"
        XCTAssertEqual(try authenticate(withAssertion(try assertion(toEndpoint))).clientID, "keyed", "aud: the token endpoint")
    }

    func testEachCheckOfRFC7523Section3Refuses() throws {
        func claims(_ change: (inout AssertionClaims) -> Void) -> AssertionClaims {
            var claims = AssertionClaims()
            change(&claims)
            return claims
        }
        assertRefused(withAssertion(try assertion(key: stranger)), "a key that is not the client's")
        assertRefused(withAssertion(try assertion(kid: "k2")), "a kid the client has not")
        assertRefused(withAssertion(try assertion(claims { $0.iss = "secretive"; $0.sub = "secretive" })), "a client without keys")
        assertRefused(withAssertion(try assertion(claims { $0.iss = "nobody"; $0.sub = "nobody" })), "an unknown client")
        assertRefused(withAssertion(try assertion(claims { $0.sub = "secretive" })), "iss is not sub")
        assertRefused(withAssertion(try assertion(claims { $0.aud = "https://elsewhere.example" })), "another audience")
        assertRefused(withAssertion(try assertion(claims { $0.exp = now - 61 })), "expired")
        assertRefused(withAssertion(try assertion(claims { $0.exp = now + 361 })), "over five minutes ahead")
        assertRefused(withAssertion(try assertion(claims { $0.nbf = now + 120 })), "not yet valid")
        assertRefused(withAssertion(try assertion(claims { $0.jti = nil })), "no jti")
        assertRefused(withAssertion(try assertion(claims { $0.jti = String(repeating: "j", count: 257) })), "a jti too long")
        assertRefused(withAssertion("not-a-jwt"), "not a JWT")
        assertRefused([("client_assertion_type", "urn:example"), ("client_assertion", try assertion())], "the wrong assertion type")
        assertRefused(withAssertion(try assertion(), [("client_secret", Self.secret)]), "an assertion and a secret")
        assertRefused(withAssertion(try assertion()), basic: ("keyed", "a-basic-password"), "an assertion and Basic")
        assertRefused(withAssertion(try assertion(), [("client_id", "secretive")]), code: .invalidRequest, "client_id names another")
        assertRefused([("client_id", "keyed")], "a private_key_jwt client without its assertion")
        // An unsigned token (alg none) and an HMAC: no such algorithm here.
        let payload = Base64URL.encode(try JSONEncoder().encode(claims { $0.aud = issuer.config.issuer; $0.exp = now + 60 }))
        assertRefused(withAssertion(Base64URL.encode(Array(#"{"alg":"none","kid":"k1"}"#.utf8)) + "." + payload + "."), "alg none")
        assertRefused(withAssertion(Base64URL.encode(Array(#"{"alg":"HS256","kid":"k1"}"#.utf8)) + "." + payload + ".c2ln"), "HS256")
    }

    func testRegistrationHoldsTheMethodToWhatTheClientHas() throws {
        let jwks = String(decoding: try UpstreamFixture.jwks([UpstreamFixture.ecJWK(kid: "k1", key: key)]), as: UTF8.self)
        let refused: [(ClientRegistration, String)] = [
            (ClientRegistration(clientID: "a", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "private_key_jwt"), "needs the client's keys"),
            (ClientRegistration(clientID: "b", scopes: ["api:serverA"], secret: Self.secret, grantTypes: ["client_credentials"], authMethod: "private_key_jwt",
                                jwks: jwks), "has no secret"),
            (ClientRegistration(clientID: "c", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "client_secret_post"), "needs a secret"),
            (ClientRegistration(clientID: "d", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "private_key_jwt", jwks: jwks,
                                jwksURI: "https://keys.example/jwks"), "not both"),
            (ClientRegistration(clientID: "e", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "private_key_jwt",
                                jwks: #"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"x"}]}"#), "no usable signing key"),
            (ClientRegistration(clientID: "f", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "private_key_jwt",
                                jwksURI: "http://keys.example/jwks"), "https"),
            (ClientRegistration(clientID: "h", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "private_key_jwt",
                                jwks: #"{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}]}"#), "holds a private key"),
            (ClientRegistration(clientID: "g", scopes: ["api:serverA"], grantTypes: ["client_credentials"], authMethod: "self_signed_tls_client_auth"), "one of"),
        ]
        // A key whose kid is "d" is a public key like any other.
        let named = String(decoding: try UpstreamFixture.jwks([UpstreamFixture.ecJWK(kid: "d", key: key)]), as: UTF8.self)
        XCTAssertNoThrow(try issuer.clients.add(ClientRegistration(clientID: "kid-d", scopes: ["api:serverA"], grantTypes: ["client_credentials"],
                                                                   authMethod: "private_key_jwt", jwks: named)))
        for (registration, message) in refused {
            XCTAssertThrowsError(try issuer.clients.add(registration), message) { error in
                XCTAssertTrue("\(error)".contains(message), "\(registration.clientID): \(error)")
            }
        }
    }

    /// `--profile fapi2`: the registration must be private_key_jwt with
    /// ES256 or EdDSA tokens; an assertion must use PS256, ES256 or EdDSA
    /// (§5.4.1) and name the issuer as a string in aud (§5.3.2.1).
    func testAFAPI2ClientsAssertionsAreHeldToTheProfile() throws {
        try issuer.keys.rotate(algorithm: .es256)
        let jwks = String(decoding: try UpstreamFixture.jwks([UpstreamFixture.ecJWK(kid: "k1", key: key)]), as: UTF8.self)
        var registration = ClientRegistration(clientID: "bank", scopes: ["api:serverA"], grantTypes: ["client_credentials"],
                                              authMethod: "private_key_jwt", jwks: jwks, profile: "fapi2")
        XCTAssertThrowsError(try issuer.clients.add(registration), "RS256 tokens are not FAPI 2.0") { error in
            XCTAssertTrue("\(error)".contains("--id-token-alg"), "\(error)")
        }
        registration.idTokenAlgorithm = "ES256"
        try issuer.clients.add(registration)
        XCTAssertTrue(try XCTUnwrap(issuer.clients.find(clientID: "bank")).mustUseDPoP, "FAPI 2.0 tokens are sender-constrained")
        XCTAssertTrue(try XCTUnwrap(issuer.clients.find(clientID: "bank")).mustPushRequests, "and its requests pushed")

        var claims = AssertionClaims(iss: "bank", sub: "bank")
        XCTAssertEqual(try authenticate(withAssertion(try assertion(claims))).clientID, "bank", "aud: the issuer, as a string")
        struct ArrayAudience: Encodable { let iss = "bank", sub = "bank", aud: [String], exp: Int64, jti = UUID().uuidString }
        let array = try JWTSigner.sign(ArrayAudience(aud: [issuer.config.issuer], exp: now + 60),
                                       header: JWTHeader(alg: "ES256", kid: "k1", typ: "JWT"), key: key)
        assertRefused(withAssertion(array), "aud as an array")
        claims.aud = issuer.config.issuer + "/token"
        assertRefused(withAssertion(try assertion(claims)), "aud the token endpoint")
        XCTAssertEqual(try authenticate(withAssertion(try assertion(AssertionClaims()))).clientID, "keyed",
                       "another client keeps the wider rules")
    }

    /// RFC 9101 §10.8: a request object (it went through the browser) signed
    /// by the client's key, with every claim an assertion needs, is still
    /// no client assertion.
    func testARequestObjectIsNeverTakenForAnAssertion() throws {
        struct RequestObjectClaims: Encodable {
            let iss = "keyed", sub = "keyed", aud: String, exp: Int64, jti = UUID().uuidString, client_id = "keyed",
                response_type = "code", redirect_uri = "https://rp.example/cb"
        }
        let object = try JWTSigner.sign(RequestObjectClaims(aud: issuer.config.issuer, exp: now + 60),
                                        header: JWTHeader(alg: "ES256", kid: "k1", typ: nil), key: key)
        assertRefused(withAssertion(object), "a request object as client_assertion")
    }
}
