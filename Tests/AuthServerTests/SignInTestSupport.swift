import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// A clock the tests move by hand; every store and responder of a
/// `SignInHarness` reads it, so expiry is tested without sleeping.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Int64

    init(_ start: Int64 = 1_700_000_000) { current = start }

    var now: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(_ seconds: Int64) {
        lock.lock()
        current += seconds
        lock.unlock()
    }

    var clock: SSOCore.Clock { { [self] in self.now } }
}

extension TemporaryIssuer {
    /// Every table the sign-in flow can touch, so a refused request can be
    /// shown to leave the database exactly as it was.
    static let signInTables = ["users", "clients", "client_redirect_uris", "signing_keys", "sso_sessions", "pending_authorizations",
                               "authorization_codes", "refresh_tokens", "revoked_access_tokens", "pushed_authorizations"]

    func fullSnapshot() throws -> [String] {
        var rows: [String] = []
        for table in Self.signInTables {
            rows += try database.query("SELECT * FROM \(table) ORDER BY 1").map { "\(table): \($0.values)" }
        }
        return rows
    }

    func count(_ table: String, _ condition: String = "1", _ values: [SQLiteValue] = []) throws -> Int64 {
        try database.queryOne("SELECT COUNT(*) FROM \(table) WHERE \(condition)", values)?.int(0) ?? -1
    }
}

/// Ordered request parameters with small editing helpers (OAuth forbids
/// repeats, so tests need exact control over what is sent).
struct RequestParameters {
    var pairs: [(String, String)]

    init(_ pairs: [(String, String)]) { self.pairs = pairs }

    func setting(_ name: String, _ value: String) -> RequestParameters {
        var copy = self
        if let index = copy.pairs.firstIndex(where: { $0.0 == name }) {
            copy.pairs[index].1 = value
        } else {
            copy.pairs.append((name, value))
        }
        return copy
    }

    func removing(_ name: String) -> RequestParameters {
        var copy = self
        copy.pairs.removeAll { $0.0 == name }
        return copy
    }

    func adding(_ name: String, _ value: String) -> RequestParameters {
        var copy = self
        copy.pairs.append((name, value))
        return copy
    }

    var encoded: String { FormParser.encode(pairs) }

    func value(_ name: String) -> String? { pairs.first { $0.0 == name }?.1 }
}

/// A `Set-Cookie` header split into its value and attributes.
struct ParsedSetCookie {
    let name: String
    let value: String
    /// Attribute names in lower case; flags (`secure`, `httponly`) map to "".
    let attributes: [String: String]

    init?(_ header: String) {
        let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, let equals = first.firstIndex(of: "=") else { return nil }
        name = String(first[..<equals])
        value = String(first[first.index(after: equals)...])
        var attributes: [String: String] = [:]
        for part in parts.dropFirst() {
            if let equals = part.firstIndex(of: "=") {
                attributes[part[..<equals].lowercased()] = String(part[part.index(after: equals)...])
            } else {
                attributes[part.lowercased()] = ""
            }
        }
        self.attributes = attributes
    }

    var isSecure: Bool { attributes["secure"] != nil }
    var isHttpOnly: Bool { attributes["httponly"] != nil }
    var sameSite: String? { attributes["samesite"] }
    var path: String? { attributes["path"] }
    var domain: String? { attributes["domain"] }
    var maxAge: Int? { attributes["max-age"].flatMap { Int($0) } }
}

extension Response {
    var location: String? { header("Location") }

    var setCookieHeaders: [String] { headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value) }

    func cookie(_ name: String) -> ParsedSetCookie? {
        setCookieHeaders.compactMap(ParsedSetCookie.init).first { $0.name == name }
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The decoded query of the Location header (empty when there is none).
    var locationQuery: [String: String] {
        guard let location, let mark = location.firstIndex(of: "?") else { return [:] }
        let query = location[location.index(after: mark)...]
        guard let parameters = try? FormParser.parse(Array(query.utf8)) else { return [:] }
        var result: [String: String] = [:]
        for pair in parameters.pairs { result[pair.name] = pair.value }
        return result
    }

    /// GET /account's answer to a browser that is not signed in: the
    /// account page's own sign-in (AccountSignIn).
    var sendsToAccountSignIn: Bool {
        status == 303 && locationBase == "/authorize" && locationQuery["client_id"] == AccountClient.id
    }

    /// The Location without its query.
    var locationBase: String? { location.map { String($0.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]) } }

    func jsonObject(file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            XCTFail("body is not a JSON object: \(bodyText)", file: file, line: line)
            return [:]
        }
        return object
    }

    /// True when no header name or value holds a raw CR or LF.
    var headersAreFreeOfLineBreaks: Bool {
        headers.allSatisfy { !$0.name.utf8.contains(13) && !$0.name.utf8.contains(10) && !$0.value.utf8.contains(13) && !$0.value.utf8.contains(10) }
    }
}

/// A pending sign-in: what the browser holds between /authorize and /login.
struct PendingLogin {
    let cookieSecret: String
    let formToken: String
    let response: Response
}

/// A completed sign-in: the code in the redirect and the session cookie.
struct CompletedSignIn {
    let code: String
    let sessionSecret: String
    let response: Response
}

/// The issuer's sign-in responders on one temporary home and one test clock,
/// with the demo clients and the demo user (cheap scrypt parameters).
final class SignInHarness {
    static let password = "correct horse battery staple"
    static let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))
    /// RFC 7636 Appendix B's verifier and challenge (a known answer).
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let customSchemeRedirect = "myapp:auth/callback"
    static let loopbackRedirect = "http://127.0.0.1/callback"
    static let fullScope = "openid profile email offline_access api:serverA api:serverB"

    let issuer: TemporaryIssuer
    let clock: TestClock
    let authorize: AuthorizeResponder
    let login: LoginResponder
    let token: TokenResponder
    let alice: User

    init() throws {
        clock = TestClock()
        issuer = try TemporaryIssuer(clock: clock.clock)
        try issuer.keys.rotate()
        try DemoData.ensure(issuer.services, config: issuer.config, password: Self.password)
        alice = try XCTUnwrap(issuer.users.find(email: DemoData.email))
        authorize = AuthorizeResponder(services: issuer.services)
        login = try LoginResponder(services: issuer.services)
        token = try TokenResponder(services: issuer.services)
    }

    func cleanUp() { issuer.cleanUp() }

    /// Everything on the harness's storage, test clock and fast hasher.
    var services: IssuerServices { issuer.services }

    /// Ends a session as logout does (and nothing bound to it).
    func endSession(_ sid: String) throws {
        try services.storage.write { try $0.sessions.end(sid: sid, at: clock.now) }
    }

    var issuerOrigin: String { issuer.config.issuer }
    var database: SQLiteDatabase { issuer.database }

    /// A valid authorization request for mobile-app-001.
    static func authorizationParameters(clientID: String = "mobile-app-001", redirectURI: String = customSchemeRedirect,
                                        scope: String = fullScope, state: String = "state-123", nonce: String? = "nonce-456",
                                        challenge: String = SignInHarness.challenge) -> RequestParameters {
        var pairs = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scope),
                     ("state", state), ("code_challenge", challenge), ("code_challenge_method", "S256")]
        if let nonce { pairs.append(("nonce", nonce)) }
        return RequestParameters(pairs)
    }

    // MARK: Running responders

    /// The production path: thrown HTTP errors become their responses. A
    /// 5xx is always a test failure (bad input must never cause one).
    func run(_ responder: Responder, _ request: Request, file: StaticString = #filePath, line: UInt = #line) -> Response {
        let (response, detail) = ResponderOutcome.run(responder, request)
        if response.status >= 500 { XCTFail("server error \(response.status): \(detail ?? "")", file: file, line: line) }
        XCTAssertTrue(response.headersAreFreeOfLineBreaks, "raw CR/LF in a response header", file: file, line: line)
        return response
    }

    static func cookieHeader(_ cookies: [String: String]) -> [String: String] {
        cookies.isEmpty ? [:] : ["cookie": cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    static func formRequest(_ path: String, _ parameters: RequestParameters, headers: [String: String] = [:]) -> Request {
        var allHeaders = ["content-type": "application/x-www-form-urlencoded"]
        for (name, value) in headers { allHeaders[name] = value }
        return Request(method: "POST", path: path, headers: allHeaders, body: Array(parameters.encoded.utf8))
    }

    func authorizeGET(_ parameters: RequestParameters, cookies: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> Response {
        run(authorize, Request(method: "GET", path: "/authorize", query: parameters.encoded, headers: Self.cookieHeader(cookies)), file: file, line: line)
    }

    func authorizePOST(_ parameters: RequestParameters, cookies: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> Response {
        run(authorize, Self.formRequest("/authorize", parameters, headers: Self.cookieHeader(cookies)), file: file, line: line)
    }

    /// GET /authorize without a session: returns the pending cookie and the form token.
    func startLogin(_ parameters: RequestParameters = authorizationParameters(), cookies: [String: String] = [:],
                    file: StaticString = #filePath, line: UInt = #line) throws -> PendingLogin {
        let response = authorizeGET(parameters, cookies: cookies, file: file, line: line)
        XCTAssertEqual(response.status, 303, file: file, line: line)
        XCTAssertEqual(response.locationBase, "/login.html", file: file, line: line)
        let cookie = try XCTUnwrap(response.cookie(PendingAuthorizations.cookieName), "no gh_login cookie", file: file, line: line)
        let req = try XCTUnwrap(response.locationQuery["req"], "no req in \(response.location ?? "nil")", file: file, line: line)
        return PendingLogin(cookieSecret: cookie.value, formToken: req, response: response)
    }

    func loginRequest(_ pending: PendingLogin?, email: String? = DemoData.email, password: String? = SignInHarness.password,
                      req: String? = nil, origin: String? = nil, useIssuerOrigin: Bool = true,
                      extraHeaders: [String: String] = [:]) -> Request {
        var pairs: [(String, String)] = []
        if let formToken = req ?? pending?.formToken { pairs.append(("req", formToken)) }
        if let email { pairs.append(("email", email)) }
        if let password { pairs.append(("password", password)) }
        var headers = pending.map { Self.cookieHeader([PendingAuthorizations.cookieName: $0.cookieSecret]) } ?? [:]
        if let origin { headers["origin"] = origin } else if useIssuerOrigin { headers["origin"] = issuerOrigin }
        for (name, value) in extraHeaders { headers[name] = value }
        return Self.formRequest("/login", RequestParameters(pairs), headers: headers)
    }

    func submitLogin(_ pending: PendingLogin?, email: String? = DemoData.email, password: String? = SignInHarness.password,
                     req: String? = nil, origin: String? = nil, file: StaticString = #filePath, line: UInt = #line) -> Response {
        run(login, loginRequest(pending, email: email, password: password, req: req, origin: origin), file: file, line: line)
    }

    /// The whole browser part: /authorize, then /login with Alice's password.
    func signIn(_ parameters: RequestParameters = authorizationParameters(), file: StaticString = #filePath, line: UInt = #line) throws -> CompletedSignIn {
        let pending = try startLogin(parameters, file: file, line: line)
        let response = submitLogin(pending, file: file, line: line)
        XCTAssertEqual(response.status, 303, file: file, line: line)
        let code = try XCTUnwrap(response.locationQuery["code"], "no code in \(response.location ?? "nil")", file: file, line: line)
        let session = try XCTUnwrap(response.cookie(SSOSessions.cookieName), "no sso_session cookie", file: file, line: line)
        return CompletedSignIn(code: code, sessionSecret: session.value, response: response)
    }

    // MARK: Token endpoint

    static func codeExchange(code: String, clientID: String? = "mobile-app-001", redirectURI: String = customSchemeRedirect,
                             verifier: String = SignInHarness.verifier) -> RequestParameters {
        var pairs = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        if let clientID { pairs.append(("client_id", clientID)) }
        return RequestParameters(pairs)
    }

    func tokenPOST(_ parameters: RequestParameters, headers: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> Response {
        run(token, Self.formRequest("/token", parameters, headers: headers), file: file, line: line)
    }

    static func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    }

    // MARK: Token verification

    /// The JWKS as the jwks responder publishes it.
    func publishedKeys() throws -> JWKSet {
        let response = try JWKSResponder(keys: issuer.keys).respond(to: Request(method: "GET", path: "/.well-known/jwks.json"))
        return try JSONDecoder().decode(JWKSet.self, from: Data(response.body))
    }

    /// Verifies the RS256 signature with the published JWK named by `kid`,
    /// then returns the header and the claims.
    func verifiedJWT(_ token: String, file: StaticString = #filePath, line: UInt = #line) throws -> (header: JWTHeader, claims: [String: Any]) {
        let keys = try publishedKeys().keys
        // Either of the issuer's types: the tests check which from the header returned.
        let issuerTypes = JWTTypes.ifPresent(["at+jwt", "JWT"], allowingApplicationPrefix: false)
        let jwt = try CompactJWT(parsing: token).verify(algorithms: IssuerSigningKey.algorithms, types: issuerTypes) { kid in
            keys.first { $0.kid == kid }?.verificationKey()
        }
        // Verified, so its payload may be read, here as untyped JSON.
        let payload = try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[1])), file: file, line: line)
        let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any], file: file, line: line)
        return (jwt.header, claims)
    }

    // MARK: Database

    func sessionRows() throws -> [(sid: String, authTime: Int64, endedAt: Int64?)] {
        try database.query("SELECT sid, auth_time, ended_at FROM sso_sessions ORDER BY created_at, sid").map {
            ($0.string(0), $0.int(1), $0.optionalInt(2))
        }
    }
}

/// Every test of the sign-in flow shares this set-up and tear-down.
class SignInTestCase: XCTestCase {
    var harness: SignInHarness!

    override func setUpWithError() throws { harness = try SignInHarness() }
    override func tearDown() { harness?.cleanUp() }

    var issuer: TemporaryIssuer { harness.issuer }
    var clock: TestClock { harness.clock }

    /// Runs `body`, then asserts the database did not change.
    func assertDatabaseUnchanged(_ what: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) throws {
        let before = try issuer.fullSnapshot()
        XCTAssertFalse(before.isEmpty, file: file, line: line)
        try body()
        let after = try issuer.fullSnapshot()
        if after != before {
            // Name only the rows that differ, not the whole database.
            let removed = before.filter { !after.contains($0) }
            let added = after.filter { !before.contains($0) }
            XCTFail("database changed by: \(what)\n- \(removed.joined(separator: "\n- "))\n+ \(added.joined(separator: "\n+ "))", file: file, line: line)
        }
    }
}

/// The harness itself: a snapshot sees every change, and the responders
/// read the test clock (otherwise the other tests would prove nothing).
final class SignInHarnessTests: SignInTestCase {
    func testSnapshotSeesEveryTableTheSignInFlowWrites() throws {
        let empty = try issuer.fullSnapshot()
        let pending = try harness.startLogin()
        let afterAuthorize = try issuer.fullSnapshot()
        XCTAssertNotEqual(afterAuthorize, empty, "pending_authorizations is in the snapshot")
        let code = try XCTUnwrap(harness.submitLogin(pending).locationQuery["code"])
        let afterLogin = try issuer.fullSnapshot()
        XCTAssertTrue(afterLogin.contains { $0.hasPrefix("sso_sessions:") })
        XCTAssertTrue(afterLogin.contains { $0.hasPrefix("authorization_codes:") })
        XCTAssertEqual(harness.tokenPOST(SignInHarness.codeExchange(code: code)).status, 200)
        let afterToken = try issuer.fullSnapshot()
        XCTAssertTrue(afterToken.contains { $0.hasPrefix("refresh_tokens:") })
        XCTAssertNotEqual(afterToken.filter { $0.hasPrefix("authorization_codes:") }, afterLogin.filter { $0.hasPrefix("authorization_codes:") },
                          "a spent code is a visible change")
    }

    func testRespondersReadTheInjectedClock() throws {
        clock.advance(1234)
        _ = try harness.startLogin()
        XCTAssertEqual(try harness.database.queryOne("SELECT created_at FROM pending_authorizations")?.int(0), clock.now)
        XCTAssertEqual(SignInHarness.challenge, PKCE.s256Challenge(verifier: SignInHarness.verifier), "RFC 7636 Appendix B")
    }
}
