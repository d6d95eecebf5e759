import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

final class WellKnownResponderTests: XCTestCase {
    var issuer: TemporaryIssuer!
    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }

    func testJWKSPublishesKeysThatVerifyIssuerSignatures() throws {
        try issuer.keys.rotate()
        let responder = JWKSResponder(keys: issuer.keys)
        let response = try responder.respond(to: Request(method: "GET", path: "/.well-known/jwks.json"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "public, max-age=60")
        let set = try JSONDecoder().decode(JWKSet.self, from: Data(response.body))
        XCTAssertEqual(set.keys.count, 1)
        let jwk = set.keys[0]
        XCTAssertEqual([jwk.kty, jwk.use, jwk.alg], ["RSA", "sig", "RS256"])

        // A token signed with the issuer's active key verifies with the published JWK.
        let signer = try issuer.keys.activeSigningKey()
        XCTAssertEqual(jwk.kid, signer.kid)
        let token = try JWTSigner.sign(["sub": "alice"], kid: signer.kid, typ: "JWT", key: signer.key)
        let published = try jwk.publicKey()
        XCTAssertNoThrow(try CompactJWT(parsing: token).verify(algorithms: [.rs256], types: .ifPresent(["JWT"], allowingApplicationPrefix: false)) {
            $0 == jwk.kid ? published : nil
        })
    }

    func testJWKSFollowsRotationAndRetirementWithoutRestart() throws {
        let first = try issuer.keys.rotate()
        let responder = JWKSResponder(keys: issuer.keys)
        func kids() throws -> [String?] {
            try JSONDecoder().decode(JWKSet.self, from: Data(responder.respond(to: Request(method: "GET", path: "/")).body)).keys.map(\.kid)
        }
        XCTAssertEqual(try kids(), [first])
        // Another process (ssoctl) rotates: a second connection, as in production.
        let other = try SQLiteDatabase(path: issuer.config.databasePath)
        let otherKeys = try issuer.otherProcess().signingKeys
        let second = try otherKeys.rotate()
        XCTAssertEqual(try kids(), [second, first])
        try otherKeys.retire(kid: first)
        XCTAssertEqual(try kids(), [second])
    }

    func testJWKSConditionalGetAndMethods() throws {
        try issuer.keys.rotate()
        let responder = JWKSResponder(keys: issuer.keys)
        let first = try responder.respond(to: Request(method: "GET", path: "/"))
        let tag = try XCTUnwrap(first.header("ETag"))
        let conditional = try responder.respond(to: Request(method: "GET", path: "/", headers: ["if-none-match": tag]))
        XCTAssertEqual(conditional.status, 304)
        XCTAssertTrue(conditional.body.isEmpty)
        let post = try responder.respond(to: Request(method: "POST", path: "/"))
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.header("Allow"), "GET, HEAD")
    }

    func testDiscoveryIsTruthful() throws {
        let responder = try DiscoveryResponder(document: DiscoveryDocument(config: issuer.config), apis: issuer.services.apis)
        let response = try responder.respond(to: Request(method: "GET", path: "/.well-known/openid-configuration"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Cache-Control"), "public, max-age=300")
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        XCTAssertEqual(document["issuer"] as? String, "https://localhost:8443")
        XCTAssertEqual(document["jwks_uri"] as? String, "https://localhost:8443/.well-known/jwks.json")
        XCTAssertEqual(document["code_challenge_methods_supported"] as? [String], ["S256"])
        XCTAssertEqual(document["response_types_supported"] as? [String], ["code"])
        XCTAssertEqual(document["id_token_signing_alg_values_supported"] as? [String], ["RS256", "ES256", "EdDSA"])
        XCTAssertTrue((document["token_endpoint_auth_methods_supported"] as? [String])?.contains("none") ?? false)
        XCTAssertEqual(document["authorization_response_iss_parameter_supported"] as? Bool, true)
        XCTAssertTrue((document["claims_supported"] as? [String])?.contains("roles") ?? false, "access tokens carry roles")
        XCTAssertNil(document["ui_locales_supported"], "no pages known: not claimed")
        XCTAssertEqual(try responder.respond(to: Request(method: "DELETE", path: "/")).status, 405)
    }

    /// OIDC Discovery §3 ui_locales_supported: the languages there are pages in.
    func testUILocalesSupportedAreTheLanguagesOfThePages() throws {
        let directory = issuer.home + "/messages"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["en.json", "de.json", "pt-BR.json", "notes.txt", "x.json"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("{}".utf8)))
        }
        XCTAssertEqual(MessageCatalogue.languages(directory: directory), ["de", "en", "pt-br"])
        let document = DiscoveryDocument(config: issuer.config, uiLocales: MessageCatalogue.languages(directory: directory))
        let encoded = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(JSON.encode(document))) as? [String: Any])
        XCTAssertEqual(encoded["ui_locales_supported"] as? [String], ["de", "en", "pt-br"])
    }

    func testScopesSupportedFollowTheAPIRegistryWithoutARestart() throws {
        let responder = try DiscoveryResponder(document: DiscoveryDocument(config: issuer.config), apis: issuer.services.apis)
        func scopes() throws -> [String] {
            let body = try responder.respond(to: Request(method: "GET", path: "/.well-known/openid-configuration")).body
            return try XCTUnwrap((JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["scopes_supported"] as? [String])
        }
        XCTAssertEqual(try scopes(), ["openid", "profile", "email", "offline_access", "device_sso"])
        // Another process (ssoctl) registers an API: the running responder lists its scopes.
        try issuer.otherProcess().apis.add(audience: "https://orders.example.com", name: nil, scopes: ["orders:read", "orders:write"])
        XCTAssertEqual(try scopes(), ["openid", "profile", "email", "offline_access", "device_sso", "orders:read", "orders:write"])
        _ = try issuer.otherProcess().apis.remove(audience: "https://orders.example.com")
        XCTAssertEqual(try scopes(), ["openid", "profile", "email", "offline_access", "device_sso"])
    }

    func testConfigRejectsBadValues() {
        XCTAssertThrowsError(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_BASE_PORT": "http"]))
        XCTAssertThrowsError(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_ISSUER": "http://plain.example"]))
        XCTAssertThrowsError(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_ISSUER": "https://a.example/path"]))
        let moved = try? GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_BASE_PORT": "9443"])
        XCTAssertEqual(moved?.issuer, "https://localhost:9443")
        XCTAssertEqual(moved?.apiBOrigin, "https://localhost:9445")
        XCTAssertEqual(moved?.appLinksOrigin, "https://localhost:9446")
    }

    func testAppLinkFilesCarryConfiguredIdentities() throws {
        var config = issuer.config
        config.appleTeamID = "TEAM123456"
        config.iosBundleID = "com.acme.app"
        config.androidPackage = "com.acme.android"
        config.androidCertificateFingerprints = ["AA:BB"]
        let apple = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(AppLinkFiles.appleAppSiteAssociation(config))) as? [String: Any])
        let details = (apple["applinks"] as? [String: Any])?["details"] as? [[String: Any]]
        XCTAssertEqual(details?.first?["appIDs"] as? [String], ["TEAM123456.com.acme.app"])
        let android = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(AppLinkFiles.assetLinks(config))) as? [[String: Any]])
        let target = android.first?["target"] as? [String: Any]
        XCTAssertEqual(target?["package_name"] as? String, "com.acme.android")
        XCTAssertEqual(target?["sha256_cert_fingerprints"] as? [String], ["AA:BB"])
    }
}
