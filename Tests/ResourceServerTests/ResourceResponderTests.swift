import Foundation
import XCTest
@testable import ResourceServer
import SQLiteClient
import SSOCore

/// The two APIs in-process, as nginx would reach them, with a real SQLite
/// file and a fake JWKS source: exact statuses, headers and bodies.
final class ResourceResponderTests: XCTestCase {
    var directory: TemporaryDirectory!
    var database: SQLiteDatabase!
    var fetcher: FakeJWKSFetcher!
    var serverA: ProtectedAPIResponder!
    var serverB: ProtectedAPIResponder!
    var now = TokenFactory.now

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        let config = GatehouseConfig.test(home: directory.path)
        database = try SQLiteDatabase(path: config.databasePath)
        fetcher = FakeJWKSFetcher()
        let keys = JWKSCache(fetcher: fetcher, store: nil)
        let replayCache = try SQLiteDPoPReplayCache(database: SQLiteDatabase(path: ResourceServerSetup.dpopReplayDatabasePath(config: config)))
        let policyA = ServerA.policy(config: config), policyB = ServerB.policy(config: config)
        serverA = ServerA.responder(policy: policyA, keys: keys, store: try ServerAItemStore(database: database),
                                    dpop: DPoPResourceGuard(policy: policyA, path: ServerA.path, replayCache: replayCache),
                                    clock: { [unowned self] in now })
        serverB = ServerB.responder(policy: policyB, keys: keys, store: try ServerBRecordStore(database: database),
                                    dpop: DPoPResourceGuard(policy: policyB, path: ServerB.path, replayCache: replayCache),
                                    clock: { [unowned self] in now })
    }

    override func tearDown() {
        database = nil
        directory.remove()
    }

    func get(_ responder: ProtectedAPIResponder, authorization: String?, method: String = "GET", path: String? = nil) -> Response {
        var headers: [String: String] = [:]
        if let authorization { headers["authorization"] = authorization }
        return ResponderOutcome.run(responder, Request(method: method, path: path ?? responder.path, headers: headers)).0
    }

    func json(_ response: Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    // MARK: success

    func testServerAReturnsAlicesItems() throws {
        let response = get(serverA, authorization: "Bearer " + TokenFactory.issuerToken())
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertNil(response.header("WWW-Authenticate"))
        let body = json(response)
        XCTAssertEqual(body["user"] as? String, "alice@example.com")
        XCTAssertEqual(body["source"] as? String, "ServerA")
        let items = try XCTUnwrap(body["data"] as? [[String: Any]])
        XCTAssertEqual(items.count, 3)
        XCTAssertEqual(items.first?["title"] as? String, "Quarterly report")
    }

    func testServerBReturnsAlicesRecords() throws {
        let response = get(serverB, authorization: "Bearer " + TokenFactory.issuerToken())
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let body = json(response)
        XCTAssertEqual(Set(body.keys), ["records", "source"])
        XCTAssertEqual(body["source"] as? String, "ServerB")
        let records = try XCTUnwrap(body["records"] as? [[String: Any]])
        XCTAssertEqual(records.count, 3)
        XCTAssertEqual(records.first?["label"] as? String, "Invoice INV-1001")
    }

    func testEmailIsMatchedCaseInsensitivelyAndOtherUsersSeeNothingOfAlice() throws {
        let shouting = TokenFactory.token(claims: TokenFactory.changing("email", to: "ALICE@example.com"))
        XCTAssertEqual((json(get(serverA, authorization: "Bearer " + shouting))["data"] as? [Any])?.count, 3)
        let bob = TokenFactory.token(claims: TokenFactory.changing("email", to: "bob@example.com"))
        let body = json(get(serverA, authorization: "Bearer " + bob))
        XCTAssertEqual(body["user"] as? String, "bob@example.com")
        XCTAssertEqual((body["data"] as? [Any])?.count, 0)
        XCTAssertEqual((json(get(serverB, authorization: "Bearer " + bob))["records"] as? [Any])?.count, 0)
        let sqlish = TokenFactory.token(claims: TokenFactory.changing("email", to: "' OR 1=1 --"))
        XCTAssertEqual((json(get(serverA, authorization: "Bearer " + sqlish))["data"] as? [Any])?.count, 0)
    }

    /// Swift's `String` equality is Unicode's canonical equivalence; the
    /// issuer and the database tell "é" from "e" + U+0301 by their bytes,
    /// so the cached body of one must never answer the other.
    func testCanonicallyEquivalentEmailsAreDifferentUsersInTheBodyCache() throws {
        let composed = "jos\u{E9}@example.com", decomposed = "jose\u{301}@example.com"
        XCTAssertEqual(composed, decomposed, "Swift compares them as equal")
        try database.execute("INSERT INTO api_a_items (email, title, detail) VALUES (?, 'Secret', 'Row')", [.text(composed)])
        try database.execute("INSERT INTO api_b_records (email, label, amount_cents, currency) VALUES (?, 'Secret', 1, 'EUR')",
                             [.text(composed)])
        let owner = "Bearer " + TokenFactory.token(claims: TokenFactory.changing("email", to: .string(composed)))
        let other = "Bearer " + TokenFactory.token(claims: TokenFactory.changing("email", to: .string(decomposed)))
        XCTAssertEqual((json(get(serverA, authorization: owner))["data"] as? [Any])?.count, 1)
        XCTAssertEqual((json(get(serverB, authorization: owner))["records"] as? [Any])?.count, 1)
        let body = json(get(serverA, authorization: other))
        XCTAssertEqual((body["user"] as? String).map { Array($0.utf8) }, Array(decomposed.utf8))
        XCTAssertEqual((body["data"] as? [Any])?.count, 0)
        XCTAssertEqual((json(get(serverB, authorization: other))["records"] as? [Any])?.count, 0)
    }

    func testACommitByAnotherProcessShowsInTheNextResponse() throws {
        let token = "Bearer " + TokenFactory.issuerToken()
        XCTAssertEqual((json(get(serverA, authorization: token))["data"] as? [Any])?.count, 3)
        XCTAssertEqual((json(get(serverB, authorization: token))["records"] as? [Any])?.count, 3)
        let otherProcess = try SQLiteDatabase(path: directory.path + "/gatehouse.sqlite")
        try otherProcess.execute("INSERT INTO api_a_items (email, title, detail) VALUES ('alice@example.com', 'New', 'Row')")
        try otherProcess.execute("DELETE FROM api_b_records WHERE label = 'Refund RF-0007'")
        let items = try XCTUnwrap(json(get(serverA, authorization: token))["data"] as? [[String: Any]])
        XCTAssertEqual(items.last?["title"] as? String, "New")
        XCTAssertEqual((json(get(serverB, authorization: token))["records"] as? [Any])?.count, 2)
    }

    func testWithoutEmailTheUserIsTheSubject() {
        let token = TokenFactory.token(claims: TokenFactory.changing("email", to: nil))
        let body = json(get(serverA, authorization: "Bearer " + token))
        XCTAssertEqual(body["user"] as? String, "user-123")
        XCTAssertEqual((body["data"] as? [Any])?.count, 0)
    }

    // MARK: the exact wire format of every failure

    func assertFailure(_ response: Response, status: Int, error: String, description: String, challenge: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        assertFailure(response, status: status, error: error, description: description, challenges: [challenge], file: file, line: line)
    }

    /// Every `WWW-Authenticate` field, in order, exactly.
    func assertFailure(_ response: Response, status: Int, error: String, description: String, challenges: [String],
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", file: file, line: line)
        XCTAssertEqual(response.headers.filter { $0.name == "WWW-Authenticate" }.map(\.value), challenges, file: file, line: line)
        XCTAssertNil(response.header("DPoP-Nonce"), "no nonce unless nonces are on", file: file, line: line)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self),
                       "{\"error\":\"\(error)\",\"error_description\":\"\(description)\"}", file: file, line: line)
    }

    /// Both schemes are offered, each without error information (RFC 6750
    /// §3.1, RFC 9449 §7.1), in two header fields.
    func testNoTokenChallengesCarryNoErrorAndOfferBothSchemes() {
        let description = "an access token is required (Authorization: Bearer, or DPoP with a DPoP proof)"
        for authorization in [nil, "Basic YWxpY2U6c2VjcmV0", "Digest username=\"alice\""] {
            assertFailure(get(serverA, authorization: authorization), status: 401, error: "missing_token", description: description,
                          challenges: ["Bearer realm=\"https://localhost:8444\"",
                                       "DPoP realm=\"https://localhost:8444\", algs=\"ES256 EdDSA RS256\""])
        }
        assertFailure(get(serverB, authorization: nil), status: 401, error: "missing_token", description: description,
                      challenges: ["Bearer realm=\"https://localhost:8445\"",
                                   "DPoP realm=\"https://localhost:8445\", algs=\"ES256 EdDSA RS256\""])
    }

    func invalidToken(_ description: String, realm: String = "https://localhost:8444") -> String {
        "Bearer realm=\"\(realm)\", error=\"invalid_token\", error_description=\"\(description)\""
    }

    func testEveryInvalidTokenFailure() {
        let cases: [(String, Int, String, String)] = [
            ("Bearer ", 401, "malformed_token", "the Authorization header is not a valid Bearer credential"),
            ("Bearer not-a-jwt", 401, "malformed_token", "the access token is not a well-formed JWT"),
            ("Bearer " + TokenFactory.token(header: TokenFactory.header(typ: "JWT")), 401, "malformed_token",
             "the token is not a JWT access token (typ at+jwt)"),
            ("Bearer " + TokenFactory.token(claims: TokenFactory.changing("exp", to: nil)), 401, "malformed_token",
             "the access token claims are missing or of the wrong type"),
            ("Bearer " + TokenFactory.token(claims: TokenFactory.claims(now: now - 7200)), 401, "token_expired",
             "the access token has expired"),
            ("Bearer " + TokenFactory.token(claims: TokenFactory.changing("nbf", to: .integer(now + 3600))), 401, "token_expired",
             "the access token is not valid yet"),
            ("Bearer " + TokenFactory.token(key: TestKeys.stranger), 401, "invalid_signature",
             "the access token signature does not verify"),
            ("Bearer " + TokenFactory.token(header: TokenFactory.header(alg: "HS256")), 401, "invalid_signature",
             "the access token is not signed with RS256, ES256 or EdDSA"),
            ("Bearer " + TokenFactory.token(header: TokenFactory.header(kid: "gone")), 401, "unknown_signing_key",
             "the access token is signed with a key the issuer does not publish"),
            ("Bearer " + TokenFactory.token(claims: TokenFactory.changing("iss", to: "https://evil.example")), 401, "invalid_issuer",
             "the access token was not issued by https://localhost:8443"),
            ("Bearer " + TokenFactory.token(claims: TokenFactory.changing("aud", to: "https://localhost:8445")), 403, "invalid_audience",
             "the access token is not meant for https://localhost:8444"),
        ]
        for (authorization, status, error, description) in cases {
            assertFailure(get(serverA, authorization: authorization), status: status, error: error, description: description,
                          challenge: invalidToken(description))
        }
    }

    func testInsufficientScopeNamesTheScope() {
        let token = TokenFactory.token(claims: TokenFactory.changing("scope", to: "openid api:serverB"))
        assertFailure(get(serverA, authorization: "Bearer " + token), status: 403, error: "insufficient_scope",
                      description: "the access token does not grant api:serverA",
                      challenge: "Bearer realm=\"https://localhost:8444\", error=\"insufficient_scope\", scope=\"api:serverA\"")
        XCTAssertEqual(get(serverB, authorization: "Bearer " + token).status, 200)
        let onlyA = TokenFactory.token(claims: TokenFactory.changing("scope", to: "api:serverA"))
        assertFailure(get(serverB, authorization: "Bearer " + onlyA), status: 403, error: "insufficient_scope",
                      description: "the access token does not grant api:serverB",
                      challenge: "Bearer realm=\"https://localhost:8445\", error=\"insufficient_scope\", scope=\"api:serverB\"")
    }

    func testTokenForServerAIsRefusedByServerB() {
        let token = TokenFactory.token(claims: TokenFactory.changing("aud", to: [.string(TokenFactory.apiA)]))
        let response = get(serverB, authorization: "Bearer " + token)
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(json(response)["error"] as? String, "invalid_audience")
        XCTAssertEqual(response.header("WWW-Authenticate"), invalidToken("the access token is not meant for https://localhost:8445",
                                                                        realm: "https://localhost:8445"))
    }

    func testWrongMethodIs405AndUnknownPathIs404() {
        for method in ["POST", "PUT", "DELETE", "HEAD", "OPTIONS", "get"] {
            let response = get(serverA, authorization: "Bearer " + TokenFactory.issuerToken(), method: method)
            XCTAssertEqual(response.status, 405, method)
            XCTAssertEqual(response.header("Allow"), "GET")
            XCTAssertEqual(response.header("Cache-Control"), "no-store")
        }
        XCTAssertEqual(get(serverA, authorization: nil, path: "/api/records").status, 404)
        XCTAssertEqual(get(serverB, authorization: nil, path: "/api/data").status, 404)
    }

    func testNoKeySetEverGives503WithRetryAfter() {
        fetcher.result = FakeJWKSFetcher.unreachable
        let response = get(serverA, authorization: "Bearer " + TokenFactory.issuerToken())
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(response.header("Retry-After"), "5")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertEqual(json(response)["error"] as? String, "temporarily_unavailable")
        XCTAssertEqual(fetcher.calls, 1)
        _ = get(serverA, authorization: "Bearer " + TokenFactory.issuerToken())
        XCTAssertEqual(fetcher.calls, 1, "no second attempt within the retry interval")
        fetcher.result = .success(TestKeys.issuerSet)
        now += 5
        XCTAssertEqual(get(serverA, authorization: "Bearer " + TokenFactory.issuerToken()).status, 200)
    }

    func testHostileAuthorizationHeadersNeverGiveA5xx() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("AZaz09-._~+/= \t\"\\,;:{}[]%\u{00e9}\u{0000}".unicodeScalars)
        for round in 0..<300 {
            let length = Int.random(in: 0...200, using: &generator)
            var text = String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            if round % 3 == 0 { text = "Bearer " + text }
            if round % 5 == 0 { text = "Bearer " + Base64URL.encode(Array(text.utf8)) + "." + Base64URL.encode(Array(text.utf8)) + ".x" }
            let response = get(serverA, authorization: text)
            XCTAssertTrue([401, 403].contains(response.status), "\(response.status) for \(text.debugDescription)")
        }
    }

    func testLogDetailNeverHoldsTheToken() {
        let token = TokenFactory.token(claims: TokenFactory.claims(now: now - 7200))
        let (_, detail) = ResponderOutcome.run(serverA, Request(method: "GET", path: "/api/data", headers: ["authorization": "Bearer " + token]))
        XCTAssertTrue(detail?.hasPrefix("token_expired") ?? false, detail ?? "")
        XCTAssertFalse(detail?.contains(token.split(separator: ".")[2]) ?? true)
    }

    func testMigrationsAreIdempotentAcrossProcesses() throws {
        // A second process (another connection) on the same file migrates nothing twice.
        let other = try SQLiteDatabase(path: directory.path + "/gatehouse.sqlite")
        _ = try ServerAItemStore(database: other)
        _ = try ServerBRecordStore(database: other)
        XCTAssertEqual(try other.queryOne("SELECT count(*) FROM api_a_items")?.int(0), 3)
        XCTAssertEqual(try other.queryOne("SELECT count(*) FROM api_b_records")?.int(0), 3)
        let versions = try other.query("SELECT component, version FROM schema_migrations ORDER BY component")
            .map { "\($0.string(0))=\($0.int(1))" }
        XCTAssertEqual(versions, ["api-a=1", "api-b=1"])
    }
}
