import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SQLiteClient
import SSOCore

/// Pushed authorization requests (RFC 9126), in-process: `POST /par`
/// (client authentication, validation at push time, the 201 reply) and
/// /authorize with the `request_uri` (single use, client binding, only the
/// pushed parameters), plus `--require-par` and `GATEHOUSE_REQUIRE_PAR`.
final class PushedAuthorizationTests: SignInTestCase {
    typealias H = SignInHarness
    var par: PushedAuthorizationResponder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        par = try PushedAuthorizationResponder(services: harness.services)
    }

    func push(_ parameters: RequestParameters = H.authorizationParameters(), headers: [String: String] = [:],
              file: StaticString = #filePath, line: UInt = #line) -> Response {
        harness.run(par, SignInHarness.formRequest("/par", parameters, headers: headers), file: file, line: line)
    }

    /// A successful push's request_uri.
    func pushed(_ parameters: RequestParameters = H.authorizationParameters(), headers: [String: String] = [:],
                file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let response = push(parameters, headers: headers, file: file, line: line)
        XCTAssertEqual(response.status, 201, response.bodyText, file: file, line: line)
        return try XCTUnwrap(response.jsonObject(file: file, line: line)["request_uri"] as? String, file: file, line: line)
    }

    static func byReference(_ requestURI: String, clientID: String? = "mobile-app-001") -> RequestParameters {
        RequestParameters((clientID.map { [("client_id", $0)] } ?? []) + [("request_uri", requestURI)])
    }

    func assertErrorPage(_ response: Response, logDetail: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 400, file: file, line: line)
        XCTAssertNil(response.location, "nothing is trusted yet: no redirect", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8", file: file, line: line)
        XCTAssertTrue(response.bodyText.hasPrefix("<!doctype html>"), file: file, line: line)
        XCTAssertEqual(response.logDetail, logDetail, file: file, line: line)
    }

    func assertOAuthError(_ response: Response, status: Int = 400, _ error: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", file: file, line: line)
        XCTAssertNil(response.location, "never a redirect (RFC 9126 §2.3)", file: file, line: line)
        XCTAssertEqual(response.jsonObject(file: file, line: line)["error"] as? String, error, file: file, line: line)
        XCTAssertNotNil(response.jsonObject(file: file, line: line)["error_description"] as? String, file: file, line: line)
    }

    // MARK: POST /par

    func testAPushIsStoredByTheHashOfARandomURNAndAnswered201NoStore() throws {
        let response = push()
        XCTAssertEqual(response.status, 201, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertEqual(response.header("Pragma"), "no-cache")
        XCTAssertTrue(Response.serialized(response).hasPrefix("Status: 201 Created\r\n"))
        let body = response.jsonObject()
        XCTAssertEqual(Set(body.keys), ["request_uri", "expires_in"])
        XCTAssertEqual(body["expires_in"] as? Int, 90)
        XCTAssertTrue((60...600).contains(PushedAuthorizations.lifetime))
        let requestURI = try XCTUnwrap(body["request_uri"] as? String)
        XCTAssertTrue(requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:"), requestURI)
        let reference = String(requestURI.dropFirst("urn:ietf:params:oauth:request_uri:".count))
        XCTAssertEqual(reference.utf8.count, 43, "256 random bits, base64url")
        XCTAssertNotEqual(try pushed(), requestURI, "every push gets a URI of its own")

        let row = try XCTUnwrap(harness.database.queryOne("""
            SELECT request_uri_hash, client_id, parameters, created_at, expires_at, used_at FROM pushed_authorizations
            WHERE request_uri_hash = ?
            """, [.blob(SecretHash.of(requestURI))]))
        XCTAssertEqual(row.string(1), "mobile-app-001")
        XCTAssertEqual(row.int(3), clock.now)
        XCTAssertEqual(row.int(4), clock.now + 90)
        XCTAssertNil(row.optionalInt(5))
        let stored = try FormParser.parse(Array(row.string(2).utf8))
        XCTAssertEqual(try stored.single("state"), "state-123")
        XCTAssertEqual(try stored.single("redirect_uri"), H.customSchemeRedirect)
        XCTAssertEqual(try stored.single("code_challenge"), H.challenge)
        let dump = try harness.database.query("SELECT * FROM pushed_authorizations").map { "\($0.values)" }.joined()
        XCTAssertFalse(dump.contains(reference), "the request_uri is never stored in clear")
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0, "nothing else is written at push time")
    }

    func testAConfidentialClientPushesWithBasicAndNoBodyClientID() throws {
        try harness.services.clients.add(ClientRegistration(clientID: "web-app", redirectURIs: ["https://web.example/cb"],
                                                            scopes: ["openid", "profile"], secret: "a-long-enough-secret-0123"))
        let parameters = H.authorizationParameters(clientID: "web-app", redirectURI: "https://web.example/cb", scope: "openid profile")
            .removing("client_id")
        let requestURI = try pushed(parameters, headers: ["authorization": H.basic("web-app", "a-long-enough-secret-0123")])
        let row = try XCTUnwrap(harness.database.queryOne("SELECT client_id, parameters FROM pushed_authorizations"))
        XCTAssertEqual(row.string(0), "web-app")
        XCTAssertEqual(try FormParser.parse(Array(row.string(1).utf8)).single("client_id"), "web-app",
                       "the stored request names the authenticated client")
        let login = harness.authorizeGET(Self.byReference(requestURI, clientID: "web-app"))
        XCTAssertEqual(login.locationBase, "/login.html")
    }

    func testRefusedPushesAnswerTheTokenEndpointsJSONAndChangeNothing() throws {
        try harness.services.clients.add(ClientRegistration(clientID: "web-app", redirectURIs: ["https://web.example/cb"],
                                                            secret: "a-long-enough-secret-0123"))
        let valid = H.authorizationParameters()
        let cases: [(String, RequestParameters, [String: String], Int, String)] = [
            ("unregistered redirect_uri", valid.setting("redirect_uri", "myapp:evil"), [:], 400, "invalid_request"),
            ("missing redirect_uri", valid.removing("redirect_uri"), [:], 400, "invalid_request"),
            ("unknown scope", valid.setting("scope", "openid nosuch:scope"), [:], 400, "invalid_scope"),
            ("scope without openid", valid.setting("scope", "profile"), [:], 400, "invalid_scope"),
            ("missing code_challenge", valid.removing("code_challenge"), [:], 400, "invalid_request"),
            ("plain PKCE", valid.setting("code_challenge_method", "plain"), [:], 400, "invalid_request"),
            ("response_type=token", valid.setting("response_type", "token"), [:], 400, "unsupported_response_type"),
            ("request object", valid.adding("request", "eyJhbGciOiJub25lIn0.e30."), [:], 400, "invalid_request_object"),
            ("request_uri in the body", valid.adding("request_uri", "urn:ietf:params:oauth:request_uri:x"), [:], 400, "invalid_request"),
            ("empty request_uri in the body", valid.adding("request_uri", ""), [:], 400, "invalid_request"),
            ("client_id not the Basic client", valid, ["authorization": H.basic("web-app", "a-long-enough-secret-0123")], 400,
             "invalid_request"),
            ("no client at all", valid.removing("client_id"), [:], 401, "invalid_client"),
            ("unknown client", valid.setting("client_id", "nosuch-app"), [:], 401, "invalid_client"),
            ("confidential client without its secret", valid.setting("client_id", "web-app"), [:], 401, "invalid_client"),
            ("confidential client, wrong secret", valid.removing("client_id"), ["authorization": H.basic("web-app", "wrong")], 401,
             "invalid_client"),
            ("a secret for a public client", valid.adding("client_secret", "x"), [:], 401, "invalid_client"),
            ("repeated client_id", valid.adding("client_id", "mobile-app-001"), [:], 400, "invalid_request"),
            ("repeated state", valid.adding("state", "again"), [:], 400, "invalid_request"),
        ]
        for (name, parameters, headers, status, error) in cases {
            try assertDatabaseUnchanged(name) {
                assertOAuthError(push(parameters, headers: headers), status: status, error)
            }
        }
    }

    /// Review R1: a public client id let anyone store 56 KB of unknown
    /// parameters, re-encoded to 168 KB, for 90 s. Only what an
    /// authorization request has is kept (RFC 6749 §3.1: unrecognized
    /// parameters are ignored).
    func testOnlyTheParametersOfAnAuthorizationRequestAreStored() throws {
        var parameters = H.authorizationParameters().adding("ui_locales", "de en")
        for index in 0..<40 { parameters = parameters.adding("junk\(index)", String(repeating: "\u{e9}", count: 200)) }
        let requestURI = try pushed(parameters)
        let row = try XCTUnwrap(harness.database.queryOne("SELECT parameters FROM pushed_authorizations"))
        let stored = try FormParser.parse(Array(row.string(0).utf8))
        XCTAssertEqual(Set(stored.pairs.map(\.name)),
                       ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge",
                        "code_challenge_method", "ui_locales"])
        XCTAssertLessThan(row.string(0).utf8.count, 1024)
        XCTAssertEqual(harness.authorizeGET(Self.byReference(requestURI)).locationBase, "/login.html")
    }

    /// Review R1: a request larger than a `GET /authorize` could carry
    /// (16 KiB of query) is refused, not stored.
    func testARequestLargerThanAnAuthorizeRedirectIsRefusedAndNotStored() throws {
        let long = H.authorizationParameters().setting("state", String(repeating: "s", count: 1024))
            .setting("nonce", String(repeating: "n", count: 1024))
        var resources = long
        for index in 0..<20 { resources = resources.adding("resource", "https://api-\(index).example/" + String(repeating: "r", count: 800)) }
        try assertDatabaseUnchanged("oversized") {
            let response = push(resources)
            assertOAuthError(response, "invalid_request")
            XCTAssertEqual(response.jsonObject()["error_description"] as? String,
                           "the pushed request is larger than an authorization request may be")
        }
        XCTAssertEqual(push(long).status, 201, "the largest state and nonce are well within the bound")
    }

    func testOnlyPOSTIsAllowed() throws {
        for method in ["GET", "PUT", "DELETE", "HEAD"] {
            try assertDatabaseUnchanged(method) {
                let response = harness.run(par, Request(method: method, path: "/par", query: H.authorizationParameters().encoded))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "POST", method)
            }
        }
    }

    func testABodyThatIsNotAFormIsInvalidRequest() throws {
        try assertDatabaseUnchanged("JSON body") {
            let request = Request(method: "POST", path: "/par", headers: ["content-type": "application/json"],
                                  body: Array(#"{"client_id":"mobile-app-001"}"#.utf8))
            assertOAuthError(harness.run(par, request), "invalid_request")
        }
    }

    // MARK: /authorize with request_uri

    func testAuthorizeUsesOnlyThePushedParameters() throws {
        let pushedRequest = H.authorizationParameters(redirectURI: H.loopbackRedirect, scope: "openid profile", state: "pushed-state",
                                                      nonce: "pushed-nonce")
        let requestURI = try pushed(pushedRequest)
        // The query's own request is ignored but for client_id and request_uri (§4).
        let query = Self.byReference(requestURI).adding("redirect_uri", H.customSchemeRedirect).adding("scope", "openid email")
            .adding("state", "query-state").adding("prompt", "none").adding("code_challenge", "x")
        let pending = try harness.startLogin(query)
        let row = try XCTUnwrap(harness.database.queryOne("SELECT redirect_uri, scope, state, nonce, code_challenge FROM pending_authorizations"))
        XCTAssertEqual(row.string(0), H.loopbackRedirect)
        XCTAssertEqual(row.string(1), "openid profile")
        XCTAssertEqual(row.optionalString(2), "pushed-state")
        XCTAssertEqual(row.optionalString(3), "pushed-nonce")
        XCTAssertEqual(row.string(4), H.challenge)

        let login = harness.submitLogin(pending)
        XCTAssertEqual(login.locationBase, H.loopbackRedirect)
        XCTAssertEqual(login.locationQuery["state"], "pushed-state")
        let code = try XCTUnwrap(login.locationQuery["code"])
        let tokens = harness.tokenPOST(SignInHarness.codeExchange(code: code, redirectURI: H.loopbackRedirect))
        XCTAssertEqual(tokens.status, 200, tokens.bodyText)
        XCTAssertEqual(tokens.jsonObject()["scope"] as? String, "openid profile")
        XCTAssertNotNil(try harness.database.queryOne("SELECT used_at FROM pushed_authorizations")?.optionalInt(0))
    }

    func testARequestURIWorksOnceThenShowsTheErrorPage() throws {
        let requestURI = try pushed()
        XCTAssertEqual(harness.authorizeGET(Self.byReference(requestURI)).locationBase, "/login.html")
        try assertDatabaseUnchanged("second use") {
            assertErrorPage(harness.authorizeGET(Self.byReference(requestURI)), logDetail: "request_uri refused: used")
            assertErrorPage(harness.authorizePOST(Self.byReference(requestURI)), logDetail: "request_uri refused: used")
        }
    }

    func testAnExpiredRequestURIIsRefused() throws {
        let requestURI = try pushed()
        clock.advance(Int64(PushedAuthorizations.lifetime))
        try assertDatabaseUnchanged("expired") {
            assertErrorPage(harness.authorizeGET(Self.byReference(requestURI)), logDetail: "request_uri refused: expired")
        }
    }

    func testAnotherClientsRequestURIIsRefusedAndStaysUsableByItsOwn() throws {
        let requestURI = try pushed()
        try assertDatabaseUnchanged("other client") {
            assertErrorPage(harness.authorizeGET(Self.byReference(requestURI, clientID: "mobile-app-002")),
                            logDetail: "request_uri refused: other client")
        }
        XCTAssertEqual(harness.authorizeGET(Self.byReference(requestURI)).locationBase, "/login.html", "not spent by the refusal")
    }

    func testUnknownOrIncompleteReferencesShowTheErrorPage() throws {
        let requestURI = try pushed()
        try assertDatabaseUnchanged("bad references") {
            assertErrorPage(harness.authorizeGET(Self.byReference("urn:ietf:params:oauth:request_uri:nosuch")),
                            logDetail: "request_uri refused: unknown")
            assertErrorPage(harness.authorizeGET(Self.byReference("https://evil.example/request.jwt")),
                            logDetail: "request_uri refused: unknown")
            // A request_uri that was not ours, beside a whole valid request: still no redirect.
            assertErrorPage(harness.authorizeGET(H.authorizationParameters().adding("request_uri", "https://evil.example/r")),
                            logDetail: "request_uri refused: unknown")
            assertErrorPage(harness.authorizeGET(Self.byReference(requestURI, clientID: nil)), logDetail: "client_id missing")
            assertErrorPage(harness.authorizeGET(Self.byReference("")), logDetail: "request_uri missing")
            assertErrorPage(harness.authorizeGET(Self.byReference(requestURI).adding("request_uri", requestURI)),
                            logDetail: "repeatedParameter: request_uri")
        }
        XCTAssertEqual(harness.authorizeGET(Self.byReference(requestURI)).locationBase, "/login.html")
    }

    func testThePushedRequestIsValidatedAgainAtAuthorize() throws {
        // §4: validated "as it would any other authorization request": the
        // client's registration changed after the push.
        let requestURI = try pushed(H.authorizationParameters(redirectURI: H.loopbackRedirect))
        var changes = ClientChanges()
        changes.removeRedirectURIs = [H.loopbackRedirect]
        try harness.services.clients.update(clientID: "mobile-app-001", changes)
        let response = harness.authorizeGET(Self.byReference(requestURI))
        XCTAssertEqual(response.status, 400)
        XCTAssertNil(response.location)
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0)
    }

    func testPromptConsentIsAcceptedAtPushAndAnsweredAtAuthorize() throws {
        // §2.3: no user-interaction error codes (consent_required) at push time.
        let requestURI = try pushed(H.authorizationParameters().adding("prompt", "consent"))
        let response = harness.authorizeGET(Self.byReference(requestURI))
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        XCTAssertEqual(response.locationQuery["error"], "consent_required")
        XCTAssertEqual(response.locationQuery["state"], "state-123")
    }

    // MARK: Requiring PAR

    func testAClientThatRequiresPARIsRefusedWithoutItAndServedWithIt() throws {
        var changes = ClientChanges()
        changes.requirePAR = true
        try harness.services.clients.update(clientID: "mobile-app-001", changes)
        try assertDatabaseUnchanged("direct request of a --require-par client") {
            let refused = harness.authorizeGET(H.authorizationParameters())
            XCTAssertEqual(refused.status, 303)
            XCTAssertEqual(refused.locationBase, H.customSchemeRedirect)
            XCTAssertEqual(refused.locationQuery["error"], "invalid_request")
            XCTAssertEqual(refused.locationQuery["state"], "state-123")
            XCTAssertEqual(refused.logDetail, "authorization error redirect: invalid_request: client mobile-app-001 requires PAR")
        }
        XCTAssertEqual(harness.authorizeGET(H.authorizationParameters(clientID: "mobile-app-002")).locationBase, "/login.html",
                       "other clients are not affected")
        let requestURI = try pushed()
        let pending = try harness.startLogin(Self.byReference(requestURI))
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
    }

    func testGATEHOUSE_REQUIRE_PARRequiresItOfEveryClient() throws {
        let config = try GatehouseConfig(home: issuer.home, values: ["GATEHOUSE_REQUIRE_PAR": "1"])
        XCTAssertTrue(config.requirePushedAuthorizationRequests)
        let services = IssuerServices(settings: IssuerSettings(config: config), storage: issuer.storage, sealingKeys: issuer.services.sealingKeys,
                                      hasher: H.hasher, clock: clock.clock, messages: PageCatalogues.real)
        let authorize = AuthorizeResponder(services: services)
        for client in ["mobile-app-001", "mobile-app-002"] {
            let refused = harness.run(authorize, Request(method: "GET", path: "/authorize",
                                                         query: H.authorizationParameters(clientID: client).encoded))
            XCTAssertEqual(refused.locationQuery["error"], "invalid_request", client)
            XCTAssertEqual(refused.logDetail, "authorization error redirect: invalid_request: GATEHOUSE_REQUIRE_PAR: every client must push")
        }
        let pushedHere = harness.run(try PushedAuthorizationResponder(services: services), SignInHarness.formRequest("/par", H.authorizationParameters()))
        let requestURI = try XCTUnwrap(pushedHere.jsonObject()["request_uri"] as? String)
        let served = harness.run(authorize, Request(method: "GET", path: "/authorize", query: Self.byReference(requestURI).encoded))
        XCTAssertEqual(served.locationBase, "/login.html")

        let document = DiscoveryDocument(config: config)
        XCTAssertEqual(document.pushed_authorization_request_endpoint, config.issuer + "/par")
        XCTAssertEqual(document.require_pushed_authorization_requests, true)
        XCTAssertEqual(DiscoveryDocument(config: issuer.config).require_pushed_authorization_requests, false, "off by default")
    }

    func testTheSettingTakesOnOrOffAndRefusesAnythingElse() throws {
        for (value, expected) in [("1", true), ("true", true), ("YES", true), ("on", true), ("0", false), ("false", false), ("", false),
                                  ("off", false), ("no", false)] {
            XCTAssertEqual(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_REQUIRE_PAR": value]).requirePushedAuthorizationRequests,
                           expected, value)
        }
        XCTAssertFalse(try GatehouseConfig(home: "/tmp", values: [:]).requirePushedAuthorizationRequests)
        for value in ["2", "maybe", "enabled", " 1"] {
            XCTAssertThrowsError(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_REQUIRE_PAR": value]), value) { error in
                XCTAssertTrue("\(error)".contains("GATEHOUSE_REQUIRE_PAR"), "\(error)")
            }
        }
    }
}

extension Response {
    static func serialized(_ response: Response) -> String { String(decoding: response.serialized(), as: UTF8.self) }
}
