import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// What app #1 holds after its browser sign-in with `device_sso` and a
/// device id: what it shares with app #2 through the vendor's keychain.
struct App1SignIn {
    let idToken: String
    let deviceSecret: String
    let deviceID: String
    /// Empty when the sign-in did not grant offline_access.
    let refreshToken: String
    let sessionSecret: String
    let sid: String
}

/// Native SSO on top of the session endpoints' harness (logout, etc.).
class NativeSSOTestCase: SessionEndpointsTestCase {
    static let deviceID = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    static let nativeScope = H.fullScope + " device_sso"

    /// The browser flow for mobile-app-001 (or `clientID`) with `device_sso`,
    /// then the code exchange with `device_id` (seed profile) as well.
    func signInApp1(clientID: String = "mobile-app-001", deviceID: String? = NativeSSOTestCase.deviceID,
                    scope: String = NativeSSOTestCase.nativeScope, cookies: [String: String] = [:],
                    file: StaticString = #filePath, line: UInt = #line) throws -> App1SignIn {
        let parameters = H.authorizationParameters(clientID: clientID, scope: scope)
        let code: String, sessionSecret: String
        if let existing = cookies[SSOSessions.cookieName] {
            code = try XCTUnwrap(harness.authorizeGET(parameters, cookies: cookies).locationQuery["code"], file: file, line: line)
            sessionSecret = existing
        } else {
            let signIn = try harness.signIn(parameters, file: file, line: line)
            (code, sessionSecret) = (signIn.code, signIn.sessionSecret)
        }
        var exchange = H.codeExchange(code: code, clientID: clientID)
        if let deviceID { exchange = exchange.adding("device_id", deviceID) }
        let response = harness.tokenPOST(exchange, file: file, line: line)
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        let idToken = try XCTUnwrap(body["id_token"] as? String, file: file, line: line)
        let sid = try XCTUnwrap(harness.verifiedJWT(idToken).claims["sid"] as? String, file: file, line: line)
        return App1SignIn(idToken: idToken, deviceSecret: try XCTUnwrap(body["device_secret"] as? String, "no device_secret", file: file, line: line),
                          deviceID: deviceID ?? "", refreshToken: body["refresh_token"] as? String ?? "",
                          sessionSecret: sessionSecret, sid: sid)
    }

    /// A Native SSO token exchange request body (draft 07 §4.2); `clientID`
    /// nil leaves it out of the body (the caller sends HTTP Basic instead).
    func exchangeParameters(_ app1: App1SignIn, clientID: String? = "mobile-app-002", secretProfile: Bool = true,
                            scope: String? = nil) -> RequestParameters {
        var pairs = [("grant_type", TokenExchangeRequest.grantType), ("audience", issuer.config.issuer),
                     ("subject_token", app1.idToken), ("subject_token_type", TokenExchangeRequest.idTokenType),
                     ("actor_token", secretProfile ? app1.deviceSecret : app1.deviceID),
                     ("actor_token_type", secretProfile ? TokenExchangeRequest.deviceSecretType : TokenExchangeRequest.deviceIDType)]
        if let clientID { pairs.append(("client_id", clientID)) }
        if let scope { pairs.append(("scope", scope)) }
        return RequestParameters(pairs)
    }

    /// Every table of the sign-in flow plus the device secrets and the
    /// native-SSO group settings.
    func nativeSnapshot() throws -> [String] {
        try issuer.fullSnapshot() + ["device_secrets", "native_sso_groups"].flatMap { table in
            try harness.database.query("SELECT * FROM \(table) ORDER BY 1").map { "\(table): \($0.values)" }
        }
    }

    /// Sends the request; asserts the error (and its description, when
    /// given), the status, no-store, and an unchanged database (device
    /// secrets and group settings included).
    func assertRefused(_ what: String, _ parameters: RequestParameters, headers: [String: String] = [:], error: String, status: Int = 400,
                       description: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try nativeSnapshot()
        let response = harness.tokenPOST(parameters, headers: headers, file: file, line: line)
        XCTAssertEqual(response.status, status, "\(what): \(response.bodyText)", file: file, line: line)
        XCTAssertEqual(response.jsonObject(file: file, line: line)["error"] as? String, error, "\(what): \(response.bodyText)", file: file, line: line)
        if let description {
            XCTAssertEqual(response.jsonObject()["error_description"] as? String, description, what, file: file, line: line)
        }
        XCTAssertEqual(response.header("Cache-Control"), "no-store", what, file: file, line: line)
        XCTAssertNil(response.jsonObject()["access_token"], what, file: file, line: line)
        XCTAssertEqual(try nativeSnapshot(), before, "database changed by: \(what)", file: file, line: line)
    }

    func deviceSecretRevokedAt(_ secret: String) throws -> Int64?? {
        try harness.database.queryOne("SELECT revoked_at FROM device_secrets WHERE secret_hash = ?", [.blob(SecretHash.of(secret))])
            .map { $0.optionalInt(0) }
    }

    /// Switches the seed profile of `group` through another connection, as
    /// `ssoctl client group` in another process would.
    func switchDeviceIDProfile(_ allowed: Bool, group: String = DemoData.group) throws {
        try issuer.otherProcess(clock: clock.clock).nativeSSOGroups.setAllowsDeviceID(allowed, group: group)
    }

    func claims(_ body: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try harness.verifiedJWT(try XCTUnwrap(body["id_token"] as? String, "no id_token", file: file, line: line), file: file, line: line).claims
    }

    func refresh(_ token: String, clientID: String, extra: [(String, String)] = []) -> Response {
        harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientID)] + extra))
    }
}
