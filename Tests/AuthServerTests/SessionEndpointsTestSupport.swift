import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The token set of one sign-in, as the token endpoint returned it.
struct IssuedTokens {
    let accessToken: String
    let idToken: String?
    let refreshToken: String?
    /// The `sso_session` cookie the sign-in left in the browser.
    let sessionSecret: String
    let sid: String
}

/// The session endpoints (userinfo, logout, revoke, introspect) on top of a
/// `SignInHarness`: same temporary home, same database, same test clock.
class SessionEndpointsTestCase: SignInTestCase {
    typealias H = SignInHarness
    static let serviceID = "resource-server"
    static let serviceSecret = "a-long-enough-service-secret"

    var userinfo: UserInfoResponder!
    var logout: LogoutResponder!
    var revoke: RevocationResponder!
    var introspect: IntrospectionResponder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let config = issuer.config, database = harness.database, clock = harness.clock.clock
        userinfo = try UserInfoResponder(services: harness.services)
        logout = LogoutResponder(services: harness.services)
        revoke = try RevocationResponder(services: harness.services)
        introspect = IntrospectionResponder(services: harness.services)
        // A confidential client, as `ssoctl client add ... --secret-stdin` makes one.
        try issuer.clients.add(clientID: Self.serviceID, redirectURIs: ["https://rs.example/cb"], scopes: ["openid"], secret: Self.serviceSecret)
    }

    var serviceAuthorization: [String: String] { ["authorization": H.basic(Self.serviceID, Self.serviceSecret)] }

    // MARK: Signing in

    /// Signs Alice in for `clientID` and exchanges the code.
    func signInAndExchange(clientID: String = "mobile-app-001", scope: String = H.fullScope, cookies: [String: String] = [:],
                           file: StaticString = #filePath, line: UInt = #line) throws -> IssuedTokens {
        let parameters = H.authorizationParameters(clientID: clientID, scope: scope)
        let code: String
        let sessionSecret: String
        if let existing = cookies[SSOSessions.cookieName] {
            // SSO: the browser's session answers /authorize with a code at once.
            let response = harness.authorizeGET(parameters, cookies: cookies, file: file, line: line)
            code = try XCTUnwrap(response.locationQuery["code"], "no code in \(response.location ?? "nil")", file: file, line: line)
            sessionSecret = existing
        } else {
            let signIn = try harness.signIn(parameters, file: file, line: line)
            code = signIn.code
            sessionSecret = signIn.sessionSecret
        }
        let response = harness.tokenPOST(H.codeExchange(code: code, clientID: clientID), file: file, line: line)
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        let accessToken = try XCTUnwrap(body["access_token"] as? String, file: file, line: line)
        let sid = try XCTUnwrap(harness.verifiedJWT(accessToken).claims["sid"] as? String, file: file, line: line)
        return IssuedTokens(accessToken: accessToken, idToken: body["id_token"] as? String, refreshToken: body["refresh_token"] as? String,
                            sessionSecret: sessionSecret, sid: sid)
    }

    // MARK: Requests

    func get(_ responder: Responder, _ path: String, query: String = "", headers: [String: String] = [:],
             file: StaticString = #filePath, line: UInt = #line) -> Response {
        harness.run(responder, Request(method: "GET", path: path, query: query, headers: headers), file: file, line: line)
    }

    func post(_ responder: Responder, _ path: String, _ parameters: RequestParameters, headers: [String: String] = [:],
              file: StaticString = #filePath, line: UInt = #line) -> Response {
        harness.run(responder, H.formRequest(path, parameters, headers: headers), file: file, line: line)
    }

    func bearer(_ token: String) -> [String: String] { ["authorization": "Bearer " + token] }

    func userinfoGET(_ token: String?, file: StaticString = #filePath, line: UInt = #line) -> Response {
        get(userinfo, "/userinfo", headers: token.map(bearer) ?? [:], file: file, line: line)
    }

    func introspect(_ token: String, hint: String? = nil, headers: [String: String]? = nil,
                    file: StaticString = #filePath, line: UInt = #line) -> Response {
        var parameters = RequestParameters([("token", token)])
        if let hint { parameters = parameters.adding("token_type_hint", hint) }
        return post(introspect, "/introspect", parameters, headers: headers ?? serviceAuthorization, file: file, line: line)
    }

    /// `POST /revoke` as a public client naming itself in the body.
    func revoke(_ token: String, hint: String? = nil, clientID: String = "mobile-app-001", headers: [String: String] = [:],
                file: StaticString = #filePath, line: UInt = #line) -> Response {
        var parameters = RequestParameters([("token", token), ("client_id", clientID)])
        if let hint { parameters = parameters.adding("token_type_hint", hint) }
        return post(revoke, "/revoke", parameters, headers: headers, file: file, line: line)
    }

    func logoutGET(_ parameters: RequestParameters, cookies: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) -> Response {
        get(logout, "/logout", query: parameters.encoded, headers: H.cookieHeader(cookies), file: file, line: line)
    }

    // MARK: Tokens made by hand

    /// The issuer's active private key (what TokenIssuer signs with).
    func activeKey() throws -> (kid: String, key: RSAKey) {
        let active = try issuer.keys.activeSigningKey()
        return (active.kid, try XCTUnwrap(active.key.rsaKey))
    }

    /// A JWT signed with `key` (the active key unless given) after the
    /// claims of `base` were edited: tests forge exactly one difference.
    func resigned(_ base: String, key: RSAKey? = nil, kid: String? = nil, typ: String?? = nil, alg: String = "RS256",
                  edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
        let jwt = try CompactJWT(parsing: base)
        // A forgery in the making: the base token's claims, read unverified.
        let payload = try XCTUnwrap(Base64URL.decode(String(base.split(separator: ".")[1])))
        var claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        edit(&claims)
        let active = try activeKey()
        var header: [String: Any] = ["alg": alg, "kid": kid ?? jwt.header.kid ?? active.kid]
        if let type = typ ?? jwt.header.typ { header["typ"] = type }
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
            + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signature = try (key ?? active.key).signRS256(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    // MARK: Database

    /// Another connection to the same file: changes through it move PRAGMA
    /// data_version for the responders, as another process (ssoctl) would.
    func otherConnection() throws -> SQLiteDatabase { try SQLiteDatabase(path: issuer.config.databasePath) }

    func refreshRow(_ token: String) throws -> (revokedAt: Int64?, familyID: String)? {
        try harness.database.queryOne("SELECT revoked_at, family_id FROM refresh_tokens WHERE token_hash = ?",
                                      [.blob(SecretHash.of(token))]).map { ($0.optionalInt(0), $0.string(1)) }
    }

    func sessionEnded(_ sid: String) throws -> Bool {
        try harness.database.queryOne("SELECT ended_at FROM sso_sessions WHERE sid = ?", [.text(sid)])?.optionalInt(0) != nil
    }

    func assertJSONError(_ response: Response, status: Int, error: String, _ message: String = "",
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, "\(message): \(response.bodyText)", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", message, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", message, file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        XCTAssertEqual(body["error"] as? String, error, message, file: file, line: line)
        XCTAssertNotNil(body["error_description"] as? String, message, file: file, line: line)
    }
}
