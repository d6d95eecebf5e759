import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// `ssoctl idp add`'s rules and the discovery checks (OpenID Connect
/// Discovery 1.0 §4), against a fetcher that answers from a dictionary
/// (the end-to-end test reads a real provider's document over HTTPS).
final class IdentityProviderRegistryTests: XCTestCase {
    /// Answers each URL from `documents`; every other URL 404.
    final class Documents: ProviderDocumentFetching {
        var documents: [String: String] = [:]
        var asked: [String] = []
        func get(_ url: String) throws -> (status: Int, body: [UInt8]) {
            asked.append(url)
            return documents[url].map { (200, Array($0.utf8)) } ?? (404, [])
        }
        func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)]) throws -> (status: Int, body: [UInt8]) {
            asked.append("POST " + url)
            return (404, [])
        }
    }

    var issuer: TemporaryIssuer!
    var fetcher = Documents()
    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }
    var registry: IdentityProviderRegistry { issuer.services.identityProviders }

    static func discovery(_ issuer: String, extra: String = "") -> String {
        """
        {"issuer": "\(issuer)", "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
         "jwks_uri": "\(issuer)/jwks", "response_types_supported": ["code", "id_token"]\(extra)}
        """
    }

    func corp(_ name: String = "corp", issuer: String = "https://id.corp.example", secret: String? = "s3cret") -> ProviderRegistration {
        ProviderRegistration(name: name, issuer: issuer, clientID: "gatehouse", secret: secret)
    }

    func testAGenericProviderIsFoundByDiscoveryAndItsSecretSealed() throws {
        fetcher.documents["https://id.corp.example/.well-known/openid-configuration"] = Self.discovery("https://id.corp.example")
        let added = try registry.add(corp(), fetcher: fetcher)
        XCTAssertEqual(added.endpoints, ProviderEndpoints(authorization: "https://id.corp.example/authorize",
                                                          token: "https://id.corp.example/token", jwks: "https://id.corp.example/jwks"))
        XCTAssertEqual(added.scopes, ["openid", "email", "profile"])
        XCTAssertEqual(added.label, "corp", "the contract's default label is the name")
        let stored = try XCTUnwrap(try registry.find(name: "corp"))
        XCTAssertEqual(stored, added)
        let sealed = try XCTUnwrap(stored.sealedSecret)
        XCTAssertNil(String(decoding: sealed, as: UTF8.self).range(of: "s3cret"), "sealed, not stored in clear")
        XCTAssertEqual(try registry.sealer.open(sealed, provider: "corp", column: .secret), Array("s3cret".utf8))
        XCTAssertThrowsError(try registry.sealer.open(sealed, provider: "corp2", column: .secret), "bound to the provider's name")
        XCTAssertThrowsError(try registry.sealer.open(sealed, provider: "corp", column: .appleKey), "and to the column")
        // A trailing slash is removed before the well-known path (Discovery §4.1).
        fetcher.documents["https://id2.example/.well-known/openid-configuration"] = Self.discovery("https://id2.example/")
        XCTAssertNoThrow(try registry.add(corp("corp2", issuer: "https://id2.example/"), fetcher: fetcher))
        XCTAssertEqual(fetcher.asked.last, "https://id2.example/.well-known/openid-configuration")
    }

    func testEveryRefusalStoresNothing() throws {
        fetcher.documents["https://id.corp.example/.well-known/openid-configuration"] = Self.discovery("https://id.corp.example")
        fetcher.documents["https://other.example/.well-known/openid-configuration"] = Self.discovery("https://impostor.example")
        fetcher.documents["https://nocode.example/.well-known/openid-configuration"] = """
            {"issuer": "https://nocode.example", "authorization_endpoint": "https://nocode.example/a", "token_endpoint": "https://nocode.example/t",
             "jwks_uri": "https://nocode.example/j", "response_types_supported": ["id_token"]}
            """
        fetcher.documents["https://plainjwks.example/.well-known/openid-configuration"] = """
            {"issuer": "https://plainjwks.example", "authorization_endpoint": "https://plainjwks.example/a", "token_endpoint": "https://plainjwks.example/t",
             "jwks_uri": "http://plainjwks.example/j", "response_types_supported": ["code"]}
            """
        fetcher.documents["https://hs.example/.well-known/openid-configuration"] = Self.discovery(
            "https://hs.example", extra: #", "id_token_signing_alg_values_supported": ["HS256"]"#)
        fetcher.documents["https://notjson.example/.well-known/openid-configuration"] = "<html>"
        let refusals: [(ProviderRegistration, String)] = [
            (corp("Corp"), "the name must be"), (corp("-corp"), "the name must be"), (corp("corp\u{0}"), "the name must be"),
            (corp(String(repeating: "a", count: 33)), "the name must be"),
            (corp(issuer: "http://id.corp.example"), "https URL"), (corp(issuer: "https://id.corp.example?x=1"), "https URL"),
            (corp(issuer: "https://id.corp.example#f"), "https URL"), (corp(issuer: "https://user@id.corp.example"), "https URL"),
            (corp(secret: nil), "client secret is required"), (corp(secret: ""), "client secret is required"),
            (corp(issuer: "https://other.example"), "names the issuer"), (corp(issuer: "https://nocode.example"), "code flow"),
            (corp(issuer: "https://plainjwks.example"), "jwks_uri"), (corp(issuer: "https://hs.example"), "HS256"),
            (corp(issuer: "https://notjson.example"), "not an OpenID Connect discovery document"),
            (corp(issuer: "https://missing.example"), "answered 404"),
            (ProviderRegistration(name: "corp", issuer: "https://id.corp.example", clientID: "gatehouse", secret: "x", scopes: ["email"]),
             "must include openid"),
            (ProviderRegistration(name: "corp", issuer: "https://id.corp.example", clientID: "gate\nhouse", secret: "x"), "client id"),
            (ProviderRegistration(name: "corp", issuer: "https://id.corp.example", clientID: "gatehouse", secret: "x", hostedDomain: "x.com"),
             "--hosted-domain is for --preset google"),
            (ProviderRegistration(name: "corp", preset: IdentityProviderPreset(rawValue: "saml"), issuer: "https://id.corp.example",
                                  clientID: "g", secret: "x"), "unknown preset"),
        ]
        for (registration, message) in refusals {
            XCTAssertThrowsError(try registry.add(registration, fetcher: fetcher), message) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error) should say \(message)")
            }
        }
        XCTAssertEqual(try registry.list(), [])
        _ = try registry.add(corp(), fetcher: fetcher)
        XCTAssertThrowsError(try registry.add(corp(), fetcher: fetcher)) { XCTAssertTrue("\($0)".contains("already exists")) }
        XCTAssertEqual(try registry.list().count, 1)
    }

    func testTheApplePresetKeepsTheSealedKeyAndNeedsNoSecret() throws {
        let apple = "https://appleid.apple.com"
        fetcher.documents[apple + "/.well-known/openid-configuration"] = Self.discovery(apple, extra: #", "response_modes_supported": ["form_post"]"#)
        let pem = try ES256PrivateKey.generate().privateKeyPEM()
        func registration(secret: String? = nil, team: String? = "TEAM123456", key: String? = "KEY1234567", pem given: [UInt8]? = nil) -> ProviderRegistration {
            ProviderRegistration(name: "apple", preset: .apple, clientID: "com.example.web", secret: secret, appleTeamID: team, appleKeyID: key,
                                 appleKeyPEM: given ?? pem)
        }
        for (bad, message) in [(registration(secret: "x"), "takes no secret"), (registration(team: nil), "needs --team-id"),
                               (registration(team: "team123456"), "the team id"), (registration(key: "KEY"), "the key id"),
                               (registration(pem: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)), "P-256"),
                               (registration(pem: try RSAKey.generate().privateKeyPEM()), "P-256")] {
            XCTAssertThrowsError(try registry.add(bad, fetcher: fetcher)) { XCTAssertTrue("\($0)".contains(message), "\($0) should say \(message)") }
        }
        let added = try registry.add(registration(), fetcher: fetcher)
        XCTAssertEqual(added.issuer, apple)
        XCTAssertEqual(added.label, "Apple")
        XCTAssertEqual(added.scopes, ["openid", "email", "name"])
        XCTAssertNil(added.sealedSecret)
        let key = try XCTUnwrap(added.appleKey)
        XCTAssertEqual([key.teamID, key.keyID], ["TEAM123456", "KEY1234567"])
        XCTAssertEqual(try registry.sealer.open(key.sealedPrivateKey, provider: "apple", column: .appleKey), pem)
    }

    func testTheGooglePresetTakesItsIssuerAndAHostedDomain() throws {
        let google = "https://accounts.google.com"
        fetcher.documents[google + "/.well-known/openid-configuration"] = Self.discovery(google)
        let added = try registry.add(ProviderRegistration(name: "google", preset: .google, clientID: "1234.apps.googleusercontent.com",
                                                          secret: "x", hostedDomain: "example.com"), fetcher: fetcher)
        XCTAssertEqual(added.issuer, google)
        XCTAssertEqual(added.label, "Google")
        XCTAssertEqual(added.hostedDomain, "example.com")
        XCTAssertEqual(IdentityProviderRegistry.redirectURI(issuer: "https://id.example.com"), "https://id.example.com/federation/callback")
    }

    func testRemovalIsByExactName() throws {
        fetcher.documents["https://id.corp.example/.well-known/openid-configuration"] = Self.discovery("https://id.corp.example")
        _ = try registry.add(corp(), fetcher: fetcher)
        XCTAssertFalse(try registry.remove(name: "Corp"))
        XCTAssertTrue(try registry.remove(name: "corp"))
        XCTAssertFalse(try registry.remove(name: "corp"))
        XCTAssertEqual(try registry.list(), [])
    }
}
