import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// The admin API in-process: the token a caller needs, strict bodies,
/// problem documents, entity tags, keyset pages, and path templates.
/// Tests/e2e/test_admin_api.py drives every operation through nginx.
final class AdminAPITests: SignInTestCase {
    var responder: AdminAPIResponder!
    static let secret = "an-admin-client-secret-long-enough"

    override func setUpWithError() throws {
        try super.setUpWithError()
        try AdminAPIScopes.ensureRegistered(harness.services.apis, issuer: harness.issuerOrigin)
        for (clientID, scope) in [("provisioning", AdminAPIScopes.write), ("auditor", AdminAPIScopes.read)] {
            try issuer.clients.add(ClientRegistration(clientID: clientID, scopes: [scope], secret: Self.secret, grantTypes: ["client_credentials"]))
        }
        responder = try AdminAPIResponder(services: harness.services, config: issuer.config)
    }

    func token(_ clientID: String, scope: String) throws -> String {
        let basic = "Basic " + Data("\(clientID):\(Self.secret)".utf8).base64EncodedString()
        let response = harness.run(harness.token, SignInHarness.formRequest("/token", RequestParameters([("grant_type", "client_credentials"),
                                                                                                         ("scope", scope)]),
                                                                           headers: ["authorization": basic]))
        XCTAssertEqual(response.status, 200, response.bodyText)
        return try XCTUnwrap(response.jsonObject()["access_token"] as? String)
    }

    func call(_ method: String, _ path: String, query: String = "", token: String?, json: String? = nil, headers: [String: String] = [:]) -> Response {
        var all = headers
        if let token { all["authorization"] = "Bearer " + token }
        if json != nil { all["content-type"] = all["content-type"] ?? "application/json" }
        return harness.run(responder, Request(method: method, path: "/admin/v1" + path, query: query, headers: all, body: Array((json ?? "").utf8)))
    }

    func assertProblem(_ response: Response, _ status: Int, _ type: String, member: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/problem+json", file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        XCTAssertEqual(body["type"] as? String, type, file: file, line: line)
        XCTAssertEqual(body["status"] as? Int, status, file: file, line: line)
        XCTAssertNotNil(body["title"] as? String, file: file, line: line)
        XCTAssertNotNil(body["detail"] as? String, file: file, line: line)
        if let member { XCTAssertEqual(body["member"] as? String, member, file: file, line: line) }
    }

    func testTheCallerNeedsTheAdminAPIsTokenWithTheScopeItsMethodNeeds() throws {
        let none = call("GET", "/users", token: nil)
        assertProblem(none, 401, "about:blank")
        XCTAssertEqual(none.header("WWW-Authenticate"), "Bearer realm=\"\(harness.issuerOrigin)\"")
        let garbage = call("GET", "/users", token: "not-a-token")
        assertProblem(garbage, 401, "about:blank")
        XCTAssertTrue(garbage.header("WWW-Authenticate")?.contains("error=\"invalid_token\"") == true)

        let reader = try token("auditor", scope: AdminAPIScopes.read)
        XCTAssertEqual(call("GET", "/users", token: reader).status, 200)
        try assertDatabaseUnchanged("a read-only token writing") {
            let refused = call("POST", "/users", token: reader, json: #"{"email":"x@example.com","name":"X","password":"a long enough password"}"#)
            assertProblem(refused, 403, "about:blank")
            XCTAssertTrue(refused.header("WWW-Authenticate")?.contains("error=\"insufficient_scope\", scope=\"gatehouse:admin\"") == true,
                          refused.header("WWW-Authenticate") ?? "")
        }
        // A token for another API (the client holds both scopes, asks for one).
        try issuer.clients.add(ClientRegistration(clientID: "machine", scopes: ["api:serverA"], secret: Self.secret, grantTypes: ["client_credentials"]))
        assertProblem(call("GET", "/users", token: try token("machine", scope: "api:serverA")), 401, "about:blank")
        // Taking the scope away stops the token at once.
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        XCTAssertEqual(call("GET", "/keys", token: writer).status, 200)
        try issuer.clients.update(clientID: "provisioning", { var changes = ClientChanges(); changes.addScopes = ["api:serverA"]
            changes.removeScopes = [AdminAPIScopes.write]; return changes }())
        assertProblem(call("GET", "/keys", token: writer), 403, "about:blank")
    }

    func testAUserIsMadeReadAndChangedOnlyWithTheCurrentETag() throws {
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        let created = call("POST", "/users", token: writer,
                           json: #"{"email":"ada@example.com","name":"Ada","password":"correct horse battery staple","roles":["user","ops"]}"#)
        XCTAssertEqual(created.status, 201, created.bodyText)
        let id = try XCTUnwrap(created.jsonObject()["id"] as? String)
        XCTAssertEqual(created.header("Location"), harness.issuerOrigin + "/admin/v1/users/" + id)
        XCTAssertEqual(created.header("Cache-Control"), "no-store")
        let read = call("GET", "/users/" + id, token: writer)
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(read.jsonObject()["roles"] as? [String], ["user", "ops"])
        let tag = try XCTUnwrap(read.header("ETag"))
        XCTAssertEqual(tag, created.header("ETag"))

        let renamed = call("PATCH", "/users/" + id, token: writer, json: #"{"name":"Ada Lovelace"}"#, headers: ["if-match": tag])
        XCTAssertEqual(renamed.status, 200, renamed.bodyText)
        XCTAssertNotEqual(renamed.header("ETag"), tag)
        try assertDatabaseUnchanged("a stale If-Match") {
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: #"{"disabled":true}"#, headers: ["if-match": tag]), 412, "about:blank")
            assertProblem(call("DELETE", "/users/" + id, token: writer, headers: ["if-match": tag]), 412, "about:blank")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: #"{"rolez":["admin"]}"#), 400, "urn:gatehouse:admin:unknown-member",
                          member: "rolez")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: #"{"disabled":"yes"}"#), 400, "urn:gatehouse:admin:wrong-type",
                          member: "disabled")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: #"{"email":"eve@example.com"}"#), 400,
                          "urn:gatehouse:admin:unknown-member", member: "email")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: #"{"name":"Ada","password":"short"}"#), 400,
                          "urn:gatehouse:admin:invalid-value")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: "[1]"), 400, "urn:gatehouse:admin:malformed-body")
            assertProblem(call("PATCH", "/users/" + id, token: writer, json: "{", headers: ["content-type": "text/plain"]), 415, "about:blank")
            assertProblem(call("POST", "/users", token: writer, json: #"{"email":"ADA@example.com","name":"Ada","password":"another long password"}"#),
                          409, "urn:gatehouse:admin:conflict")
            assertProblem(call("GET", "/users/nobody", token: writer), 404, "about:blank")
            assertProblem(call("GET", "/users", query: "emial=ada@example.com", token: writer), 400, "urn:gatehouse:admin:invalid-query")
        }
        let disabled = call("PATCH", "/users/" + id, token: writer, json: #"{"disabled":true}"#,
                            headers: ["if-match": try XCTUnwrap(renamed.header("ETag"))])
        XCTAssertEqual(disabled.status, 200, disabled.bodyText)
        XCTAssertEqual(try issuer.users.find(email: "ada@example.com")?.disabled, true, "ssoctl sees it")
        XCTAssertEqual(call("DELETE", "/users/" + id, token: writer).status, 204)
        XCTAssertNil(try issuer.users.find(email: "ada@example.com"))
    }

    func testAListIsWalkedByCursorEachUserOnceWhileUsersAreAdded() throws {
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        for index in 0..<5 { try issuer.users.add(email: "u\(index)@example.com", name: "U", password: "a long enough password") }
        var seen: [String] = []
        var query = "limit=2"
        for round in 0..<10 {
            let page = call("GET", "/users", query: query, token: writer)
            XCTAssertEqual(page.status, 200, page.bodyText)
            seen += (page.jsonObject()["items"] as? [[String: Any]] ?? []).compactMap { $0["email"] as? String }
            if round == 0 { try issuer.users.add(email: "a-late@example.com", name: "Late", password: "a long enough password") }
            guard let next = page.jsonObject()["next"] as? String else {
                XCTAssertNil(page.header("Link"))
                break
            }
            XCTAssertEqual(page.header("Link"), "<\(harness.issuerOrigin)/admin/v1/users?limit=2&next=\(next)>; rel=\"next\"")
            query = "limit=2&next=" + next
        }
        let existing = try issuer.users.list().map(\.email).filter { $0 != "a-late@example.com" }
        XCTAssertEqual(seen.filter { $0 != "a-late@example.com" }.sorted(), existing.sorted())
        XCTAssertEqual(seen.count, Set(seen).count, "no user twice: \(seen)")
        assertProblem(call("GET", "/users", query: "next=garbage", token: writer), 400, "urn:gatehouse:admin:invalid-query")
        assertProblem(call("GET", "/users", query: "limit=0", token: writer), 400, "urn:gatehouse:admin:invalid-query")
        assertProblem(call("GET", "/users", query: "limit=201", token: writer), 400, "urn:gatehouse:admin:invalid-query")
    }

    func testAClientsListsAreReplacedAndAnUnknownScopeChangesNothing() throws {
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        let created = call("POST", "/clients", token: writer, json: """
            {"client_id":"orders","grant_types":["client_credentials"],"scopes":["api:serverA"],"token_endpoint_auth_method":"client_secret_basic"}
            """)
        XCTAssertEqual(created.status, 201, created.bodyText)
        let secret = try XCTUnwrap(created.jsonObject()["client_secret"] as? String, "a secret method without one gets one made")
        XCTAssertGreaterThanOrEqual(secret.count, 40)
        XCTAssertEqual(created.jsonObject()["type"] as? String, "confidential")
        let changed = call("PATCH", "/clients/orders", token: writer, json: #"{"scopes":["api:serverB"],"access_token_ttl":60}"#)
        XCTAssertEqual(changed.status, 200, changed.bodyText)
        XCTAssertEqual(try issuer.clients.find(clientID: "orders")?.scopes, ["api:serverB"])
        XCTAssertEqual(call("PATCH", "/clients/orders", token: writer, json: #"{"access_token_ttl":null}"#).jsonObject()["access_token_ttl"] as? NSNull,
                       NSNull())
        try assertDatabaseUnchanged("an unknown scope") {
            let refused = call("PATCH", "/clients/orders", token: writer, json: #"{"scopes":["api:serverB","api:nowhere"]}"#)
            assertProblem(refused, 400, "urn:gatehouse:admin:invalid-value")
            XCTAssertTrue((refused.jsonObject()["detail"] as? String ?? "").contains("api:nowhere"))
            assertProblem(call("PATCH", "/clients/orders", token: writer, json: #"{"type":"public"}"#), 400, "urn:gatehouse:admin:unknown-member",
                          member: "type")
        }
        // The admin API's scopes are for machine clients only, whoever asks.
        XCTAssertThrowsError(try issuer.clients.add(ClientRegistration(clientID: "app", redirectURIs: ["com.example.app:/cb"],
                                                                       scopes: ["openid", AdminAPIScopes.write])))
        // And the admin API itself stays registered.
        XCTAssertThrowsError(try harness.services.apis.remove(audience: harness.issuerOrigin + "/admin"))
        assertProblem(call("DELETE", "/apis", query: "audience=" + FormParser.encodeComponent(harness.issuerOrigin + "/admin"), token: writer),
                      400, "urn:gatehouse:admin:invalid-value")
    }

    func testALiteralSegmentWinsOverANamedOne() throws {
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        let rotated = call("POST", "/keys/rotate", token: writer, json: #"{"alg":"ES256"}"#)
        XCTAssertEqual(rotated.status, 201, rotated.bodyText)
        let kid = try XCTUnwrap(rotated.jsonObject()["kid"] as? String)
        XCTAssertEqual(rotated.jsonObject()["alg"] as? String, "ES256")
        XCTAssertEqual(call("GET", "/keys/" + kid, token: writer).status, 200)
        assertProblem(call("GET", "/keys/rotate", token: writer), 405, "about:blank")
        assertProblem(call("GET", "/nothing/here", token: writer), 404, "about:blank")
        XCTAssertEqual(PathTemplate("/admin/v1/users/{id}")?.match("/admin/v1/users/abc"), ["id": "abc"])
        XCTAssertNil(PathTemplate("/admin/v1/users/{id}")?.match("/admin/v1/users/"))
        XCTAssertNil(PathTemplate("/admin/v1/users/{id}")?.match("/admin/v1/users/a/b"))
        XCTAssertNil(PathTemplate("/admin/v1/users"))
    }

    func testAMemberGivenTwiceIsRefusedAtAnyDepth() throws {
        XCTAssertEqual(JSONDuplicateMembers.first(in: Array(#"{"a":{"b":1,"b":2}}"#.utf8)), "b")
        XCTAssertEqual(JSONDuplicateMembers.first(in: Array(#"{"\u0061":1,"a":2}"#.utf8)), "a", "the same name, escaped")
        XCTAssertNil(JSONDuplicateMembers.first(in: Array(#"{"x":"\"b\"","b":[{"b":1},{"b":1}],"c":{"b":1}}"#.utf8)))
        XCTAssertNil(JSONDuplicateMembers.first(in: Array(#"[{"a":1},{"a":1}]"#.utf8)))
        let writer = try token("provisioning", scope: AdminAPIScopes.write)
        try assertDatabaseUnchanged("a member given twice") {
            assertProblem(call("POST", "/users", token: writer,
                               json: #"{"email":"x@example.com","name":"X","password":"a long enough password","roles":["admin"],"roles":["user"]}"#),
                          400, "urn:gatehouse:admin:malformed-body")
            assertProblem(call("POST", "/users", token: writer, json: #"{"email":"x@example.com","name":"X","password":"a long enough password","roles":[]}"#),
                          400, "urn:gatehouse:admin:invalid-value")
        }
    }

    func testAClientLeftWithTheReadScopeStillReads() throws {
        try issuer.clients.add(ClientRegistration(clientID: "both", scopes: AdminAPIScopes.all, secret: Self.secret, grantTypes: ["client_credentials"]))
        let both = try token("both", scope: AdminAPIScopes.all.joined(separator: " "))
        var changes = ClientChanges()
        changes.removeScopes = [AdminAPIScopes.write]
        try issuer.clients.update(clientID: "both", changes)
        XCTAssertEqual(call("GET", "/keys", token: both).status, 200)
        assertProblem(call("POST", "/keys/rotate", token: both), 403, "about:blank")
        // Only a machine client may hold the scopes: never one that signs users in.
        XCTAssertThrowsError(try issuer.clients.add(ClientRegistration(clientID: "hybrid", redirectURIs: ["https://app.example/cb"],
                                                                       scopes: ["openid", AdminAPIScopes.read], secret: Self.secret,
                                                                       grantTypes: ["authorization_code", "client_credentials"])))
    }

    func testOffMeansNoRows() throws {
        var config = issuer.config
        config.adminAPI = false
        let off = try AdminAPIResponder(services: harness.services, config: config)
        XCTAssertEqual(off.endpoints.count, 0)
        XCTAssertEqual(try off.respond(to: Request(method: "GET", path: "/admin/v1/users")).status, 404)
    }
}
