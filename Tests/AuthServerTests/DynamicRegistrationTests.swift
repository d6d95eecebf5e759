import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// Dynamic client registration (RFC 7591) and management (RFC 7592),
/// in-process: initial access tokens (uses, expiry), the metadata rules
/// (RFC 8252 redirect URIs for native apps, https for web clients), the
/// registration access token, and that a refused request spends nothing.
final class DynamicRegistrationTests: SignInTestCase {
    var responder: RegistrationResponder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        responder = RegistrationResponder(services: harness.services)
    }

    var registration: DynamicRegistration { harness.services.dynamicRegistration }

    func request(_ method: String, _ path: String, query: String? = nil, token: String?, body: [String: Any]? = nil) -> Response {
        var headers: [String: String] = [:]
        if let token { headers["authorization"] = "Bearer " + token }
        var bytes: [UInt8] = []
        if let body {
            headers["content-type"] = "application/json"
            bytes = Array(try! JSONSerialization.data(withJSONObject: body))
        }
        return harness.run(responder, Request(method: method, path: path, query: query ?? "", headers: headers, body: bytes))
    }

    func register(_ body: [String: Any], token: String) -> Response { request("POST", "/register", token: token, body: body) }

    static let native: [String: Any] = ["redirect_uris": ["com.example.app:/callback", "http://127.0.0.1/callback"],
                                        "token_endpoint_auth_method": "none", "application_type": "native",
                                        "client_name": "Example App", "scope": "openid offline_access",
                                        "grant_types": ["authorization_code", "refresh_token"], "unknown_member": ["ignored"]]

    func testANativeAppRegistersReadsUpdatesAndDeletesItself() throws {
        let token = try registration.issueInitialAccessToken(lifetime: 600, uses: 1)
        let created = register(Self.native, token: token)
        XCTAssertEqual(created.status, 201, created.bodyText)
        XCTAssertEqual(created.header("Cache-Control"), "no-store")
        let body = created.jsonObject()
        let clientID = try XCTUnwrap(body["client_id"] as? String)
        let accessToken = try XCTUnwrap(body["registration_access_token"] as? String)
        XCTAssertNil(body["client_secret"], "a public client gets no secret")
        XCTAssertEqual(body["token_endpoint_auth_method"] as? String, "none")
        XCTAssertEqual(body["client_name"] as? String, "Example App")
        XCTAssertEqual(body["redirect_uris"] as? [String], ["com.example.app:/callback", "http://127.0.0.1/callback"])
        XCTAssertNil(body["unknown_member"], "RFC 7591 §2: unknown metadata is ignored")
        let uri = try XCTUnwrap(body["registration_client_uri"] as? String)
        XCTAssertEqual(uri, harness.issuerOrigin + "/register/client?client_id=" + clientID)
        let stored = try XCTUnwrap(issuer.clients.find(clientID: clientID))
        XCTAssertEqual(stored.registrationAccessTokenHash, SHA256.hash(accessToken), "only the token's hash is kept")

        let query = "client_id=" + clientID
        let read = request("GET", "/register/client", query: query, token: accessToken)
        XCTAssertEqual(read.status, 200, read.bodyText)
        XCTAssertEqual(read.jsonObject()["client_id"] as? String, clientID)
        XCTAssertEqual(request("GET", "/register/client", query: query, token: "not-the-token").status, 401)
        XCTAssertEqual(request("GET", "/register/client", query: "client_id=mobile-app-001", token: accessToken).status, 401,
                       "another client's (or an ssoctl client's) configuration is never reachable")

        var changed = read.jsonObject()
        changed["redirect_uris"] = ["com.example.app:/other"]
        changed.removeValue(forKey: "registration_access_token")
        changed.removeValue(forKey: "registration_client_uri")
        let updated = request("PUT", "/register/client", query: query, token: accessToken, body: changed)
        XCTAssertEqual(updated.status, 200, updated.bodyText)
        XCTAssertEqual(try issuer.clients.find(clientID: clientID)?.redirectURIs, ["com.example.app:/other"])
        changed["client_id"] = "mobile-app-001"
        XCTAssertEqual(request("PUT", "/register/client", query: query, token: accessToken, body: changed).status, 400,
                       "RFC 7592 §2.2: client_id must be the client's")

        XCTAssertEqual(request("DELETE", "/register/client", query: query, token: accessToken).status, 204)
        XCTAssertNil(try issuer.clients.find(clientID: clientID))
        XCTAssertEqual(request("GET", "/register/client", query: query, token: accessToken).status, 401)
    }

    func testAConfidentialClientGetsASecretShownOnce() throws {
        let token = try registration.issueInitialAccessToken(lifetime: 600, uses: 1)
        let created = register(["redirect_uris": ["https://rp.example/cb"], "client_name": "RP"], token: token)
        XCTAssertEqual(created.status, 201, created.bodyText)
        let body = created.jsonObject()
        let secret = try XCTUnwrap(body["client_secret"] as? String)
        XCTAssertEqual(body["client_secret_expires_at"] as? Int, 0)
        XCTAssertEqual(body["token_endpoint_auth_method"] as? String, "client_secret_basic", "RFC 7591 §2's default")
        let client = try XCTUnwrap(issuer.clients.find(clientID: try XCTUnwrap(body["client_id"] as? String)))
        XCTAssertTrue(TemporaryIssuer.fastHasher.verify(password: secret, against: try XCTUnwrap(client.secretHash)))
        let read = request("GET", "/register/client", query: "client_id=" + client.clientID,
                           token: try XCTUnwrap(body["registration_access_token"] as? String))
        XCTAssertNil(read.jsonObject()["client_secret"], "the secret is shown once, at registration")
        var changed = read.jsonObject()
        changed["client_name"] = "RP v2"
        let updated = request("PUT", "/register/client", query: "client_id=" + client.clientID,
                              token: try XCTUnwrap(body["registration_access_token"] as? String), body: changed)
        XCTAssertEqual(updated.status, 200, updated.bodyText)
        let kept = try XCTUnwrap(issuer.clients.find(clientID: client.clientID))
        XCTAssertEqual(kept.displayName, "RP v2")
        XCTAssertEqual(kept.secretHash, client.secretHash, "RFC 7592 §2.2: the secret stays")
        // What the operator decided stays: a client cannot drop a requirement or take a scope back.
        var byOperator = ClientChanges()
        byOperator.requireDPoP = true
        byOperator.addScopes = ["api:serverA"]
        try issuer.clients.update(clientID: client.clientID, byOperator)
        changed["dpop_bound_access_tokens"] = false
        changed["scope"] = "openid"
        XCTAssertEqual(request("PUT", "/register/client", query: "client_id=" + client.clientID,
                               token: try XCTUnwrap(body["registration_access_token"] as? String), body: changed).status, 200)
        XCTAssertEqual(try issuer.clients.find(clientID: client.clientID)?.requireDPoP, true, "an operator's requirement stays")
        changed["scope"] = "openid api:serverA api:serverB"
        XCTAssertEqual(request("PUT", "/register/client", query: "client_id=" + client.clientID,
                               token: try XCTUnwrap(body["registration_access_token"] as? String), body: changed).status, 400,
                       "an update cannot add a scope")
        changed["scope"] = "openid"
        changed["token_endpoint_auth_method"] = "none"
        XCTAssertEqual(request("PUT", "/register/client", query: "client_id=" + client.clientID,
                               token: try XCTUnwrap(body["registration_access_token"] as? String), body: changed).status, 400,
                       "no move from a secret to a public client")
    }

    func testInitialAccessTokensAreCountedAndExpire() throws {
        XCTAssertEqual(register(Self.native, token: "made-up").status, 401)
        let missing = request("POST", "/register", token: nil, body: Self.native)
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.header("WWW-Authenticate"), "Bearer")
        let twice = try registration.issueInitialAccessToken(lifetime: 600, uses: 2)
        XCTAssertEqual(register(Self.native, token: twice).status, 201)
        XCTAssertEqual(register(Self.native, token: twice).status, 201)
        let spent = register(Self.native, token: twice)
        XCTAssertEqual(spent.status, 401)
        XCTAssertEqual(spent.header("WWW-Authenticate"), "Bearer error=\"invalid_token\"")
        let shortLived = try registration.issueInitialAccessToken(lifetime: 60, uses: 1)
        clock.advance(61)
        XCTAssertEqual(register(Self.native, token: shortLived).status, 401, "expired")
        XCTAssertThrowsError(try registration.issueInitialAccessToken(lifetime: 10, uses: 1))
        XCTAssertThrowsError(try registration.issueInitialAccessToken(lifetime: 600, uses: 0))
    }

    func testRefusedMetadataIsInvalidAndSpendsNothing() throws {
        let token = try registration.issueInitialAccessToken(lifetime: 600, uses: 1)
        func with(_ name: String, _ value: Any?) -> [String: Any] {
            var body = Self.native
            body[name] = value
            return body
        }
        let cases: [(String, [String: Any], String)] = [
            ("a private-use scheme that is no reverse domain (RFC 8252 §7.1)", with("redirect_uris", ["myapp:/cb"]), "invalid_redirect_uri"),
            ("http to another host", with("redirect_uris", ["http://example.com/cb"]), "invalid_redirect_uri"),
            ("localhost (RFC 8252 §8.3)", with("redirect_uris", ["http://localhost/cb"]), "invalid_redirect_uri"),
            ("a fragment", with("redirect_uris", ["https://rp.example/cb#x"]), "invalid_redirect_uri"),
            ("a web client's private-use scheme", ["redirect_uris": ["com.example.app:/cb"]], "invalid_redirect_uri"),
            ("a web client's loopback", ["redirect_uris": ["http://127.0.0.1/cb"]], "invalid_redirect_uri"),
            ("no redirect URI for the code flow", with("redirect_uris", nil), "invalid_client_metadata"),
            ("an unknown grant", with("grant_types", ["password"]), "invalid_client_metadata"),
            ("implicit", with("response_types", ["token"]), "invalid_client_metadata"),
            ("an unknown scope", with("scope", "openid admin"), "invalid_client_metadata"),
            ("redirect_uris of the wrong type", with("redirect_uris", "com.example.app:/cb"), "invalid_client_metadata"),
            ("a software statement", with("software_statement", "eyJ.x.y"), "invalid_software_statement"),
            ("an unknown auth method", with("token_endpoint_auth_method", "tls_client_auth"), "invalid_client_metadata"),
            ("private_key_jwt without keys", with("token_endpoint_auth_method", "private_key_jwt"), "invalid_client_metadata"),
            ("an id_token alg without a key", with("id_token_signed_response_alg", "ES256"), "invalid_client_metadata"),
            ("HS256 tokens", with("id_token_signed_response_alg", "HS256"), "invalid_client_metadata"),
            ("a control character in the name", with("client_name", "App\u{0}"), "invalid_client_metadata"),
            ("an API scope (the operator grants those)", with("scope", "openid api:serverA"), "invalid_client_metadata"),
            ("client_credentials (the operator grants it)", with("grant_types", ["client_credentials"]), "invalid_client_metadata"),
            ("keys at a URL the issuer would fetch", with("jwks_uri", "https://keys.example/jwks"), "invalid_client_metadata"),
            ("a back-channel URI the issuer would post to", with("backchannel_logout_uri", "https://rp.example/bcl"),
             "invalid_client_metadata"),
        ]
        let before = try issuer.clients.list().count
        for (name, body, error) in cases {
            let response = register(body, token: token)
            XCTAssertEqual(response.status, 400, "\(name): \(response.bodyText)")
            XCTAssertEqual(response.jsonObject()["error"] as? String, error, name)
        }
        let notJSON = harness.run(responder, Request(method: "POST", path: "/register", headers: [
            "authorization": "Bearer " + token, "content-type": "application/x-www-form-urlencoded"], body: Array("a=b".utf8)))
        XCTAssertEqual(notJSON.status, 400)
        XCTAssertEqual(try issuer.clients.list().count, before)
        XCTAssertEqual(register(Self.native, token: token).status, 201, "the token's one use was not spent by any refusal")
    }
}
