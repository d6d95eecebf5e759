import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `POST /revoke` in-process (RFC 7009): families, access tokens by jti,
/// client binding, and the 200 that never reveals anything.
final class RevocationResponderTests: SessionEndpointsTestCase {
    func assertRevocationOK(_ response: Response, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 200, "\(message): \(response.bodyText)", file: file, line: line)
        XCTAssertTrue(response.body.isEmpty, message, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", message, file: file, line: line)
    }

    func revokedJTIs() throws -> [String: Int64] {
        var rows: [String: Int64] = [:]
        for row in try harness.database.query("SELECT jti, expires_at FROM revoked_access_tokens") { rows[row.string(0)] = row.int(1) }
        return rows
    }

    // MARK: Refresh tokens

    func testRefreshTokenRevokesItsWholeFamilyOnly() throws {
        let tokens = try signInAndExchange()
        let refresh = try XCTUnwrap(tokens.refreshToken)
        let family = try XCTUnwrap(refreshRow(refresh)?.familyID)
        // A rotation of the same grant, as the refresh grant would issue it.
        let store = harness.services.refreshTokens
        let rotated = try issuer.storage.write {
            try store.issue(familyID: family, clientID: "mobile-app-001", userID: harness.alice.id, sid: tokens.sid,
                            scope: ["openid", "offline_access"], authTime: clock.now, lifetime: 3600, $0).token
        }
        let unrelated = try signInAndExchange(cookies: [SSOSessions.cookieName: tokens.sessionSecret])

        assertRevocationOK(revoke(refresh))
        XCTAssertNotNil(try refreshRow(refresh)?.revokedAt)
        XCTAssertNotNil(try refreshRow(rotated)?.revokedAt, "RFC 7009 §2.1: the family goes with it")
        XCTAssertNil(try refreshRow(try XCTUnwrap(unrelated.refreshToken))?.revokedAt, "another grant of the same session stays")
        XCTAssertFalse(try sessionEnded(tokens.sid), "revocation is not logout")
        XCTAssertEqual(introspect(refresh).bodyText, #"{"active":false}"#)
        XCTAssertEqual(introspect(rotated).bodyText, #"{"active":false}"#)
        XCTAssertEqual(introspect(unrelated.accessToken).jsonObject()["active"] as? Bool, true)
    }

    /// RFC 7009 §2.1: revoking a refresh token "SHOULD also invalidate all
    /// access tokens based on the same authorization grant". They carry the
    /// grant as `grant_id`; the issuer refuses them at once (the resource
    /// servers, offline, until they expire).
    func testARevokedRefreshTokenTakesItsGrantsAccessTokensWithIt() throws {
        let tokens = try signInAndExchange()
        let family = try XCTUnwrap(refreshRow(try XCTUnwrap(tokens.refreshToken))?.familyID)
        XCTAssertEqual(try harness.verifiedJWT(tokens.accessToken).claims["grant_id"] as? String, family)
        let other = try signInAndExchange(cookies: [SSOSessions.cookieName: tokens.sessionSecret])
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 200)
        assertRevocationOK(revoke(try XCTUnwrap(tokens.refreshToken)))
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 401)
        XCTAssertEqual(introspect(tokens.accessToken).bodyText, #"{"active":false}"#)
        XCTAssertEqual(try revokedJTIs()["grant:" + family], clock.now + Int64(harness.services.settings.lifetimes.accessToken))
        XCTAssertEqual(userinfoGET(other.accessToken).status, 200, "another grant of the same session stays")
        XCTAssertFalse(try sessionEnded(tokens.sid), "revocation is not logout")
    }

    func testHintsOnlyOrderTheSearch() throws {
        for hint in ["access_token", "refresh_token", "something_else"] {
            let tokens = try signInAndExchange()
            assertRevocationOK(revoke(try XCTUnwrap(tokens.refreshToken), hint: hint), hint)
            XCTAssertNotNil(try refreshRow(try XCTUnwrap(tokens.refreshToken))?.revokedAt, hint)
            assertRevocationOK(revoke(tokens.accessToken, hint: hint == "access_token" ? "refresh_token" : hint), hint)
            XCTAssertNotNil(try revokedJTIs()[try XCTUnwrap(harness.verifiedJWT(tokens.accessToken).claims["jti"] as? String)], hint)
        }
    }

    func testRevokingTwiceIsFine() throws {
        let tokens = try signInAndExchange()
        assertRevocationOK(revoke(try XCTUnwrap(tokens.refreshToken)))
        assertRevocationOK(revoke(tokens.accessToken))
        try assertDatabaseUnchanged("second revocation") {
            assertRevocationOK(revoke(try XCTUnwrap(tokens.refreshToken)))
            assertRevocationOK(revoke(tokens.accessToken))
        }
    }

    func testConfidentialClientRevokesItsOwnTokenWithBasic() throws {
        let store = harness.services.refreshTokens
        let sid = try signInAndExchange().sid
        let token = try issuer.storage.write {
            try store.issue(familyID: nil, clientID: Self.serviceID, userID: harness.alice.id, sid: sid, scope: ["openid"],
                            authTime: clock.now, lifetime: 3600, $0).token
        }
        try assertDatabaseUnchanged("wrong secret") {
            let wrong = post(revoke, "/revoke", RequestParameters([("token", token)]),
                             headers: ["authorization": H.basic(Self.serviceID, Self.serviceSecret + "x")])
            assertJSONError(wrong, status: 401, error: "invalid_client")
            XCTAssertTrue(wrong.header("WWW-Authenticate")?.hasPrefix("Basic") ?? false)
            let noSecret = post(revoke, "/revoke", RequestParameters([("token", token), ("client_id", Self.serviceID)]))
            assertJSONError(noSecret, status: 401, error: "invalid_client", "confidential client without its secret")
        }
        assertRevocationOK(post(revoke, "/revoke", RequestParameters([("token", token)]), headers: serviceAuthorization))
        XCTAssertNotNil(try refreshRow(token)?.revokedAt)
    }

    // MARK: Access tokens

    func testAccessTokenIsRevokedByJTIUntilItsExpiry() throws {
        let tokens = try signInAndExchange()
        let claims = try harness.verifiedJWT(tokens.accessToken).claims
        let jti = try XCTUnwrap(claims["jti"] as? String)
        let exp = try XCTUnwrap(claims["exp"] as? Int64)
        assertRevocationOK(revoke(tokens.accessToken))
        XCTAssertEqual(try revokedJTIs(), [jti: exp], "the Sweeper keeps the row until exp plus the leeway")
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 401)
        XCTAssertEqual(introspect(tokens.accessToken).bodyText, #"{"active":false}"#)
        XCTAssertNil(try refreshRow(try XCTUnwrap(tokens.refreshToken))?.revokedAt, "an access token does not take the grant with it")
        XCTAssertFalse(try sessionEnded(tokens.sid), "revocation is not logout")
    }

    func testExpiredAccessTokensNeedNoRowUnlessStillWithinTheLeeway() throws {
        let tokens = try signInAndExchange()
        let now = clock.now
        let dead = try resigned(tokens.accessToken) { $0["exp"] = now - IssuerAccessTokenVerifier.leeway; $0["jti"] = "dead" }
        try assertDatabaseUnchanged("a token refused everywhere already") {
            assertRevocationOK(revoke(dead))
        }
        let recent = try resigned(tokens.accessToken) { $0["exp"] = now - 10; $0["jti"] = "recent" }
        assertRevocationOK(revoke(recent))
        XCTAssertEqual(try revokedJTIs(), ["recent": now - 10], "still accepted with leeway, so remembered")
    }

    // MARK: What is never revoked

    func testTokensOfAnotherClientAreNotRevokedAndTheAnswerIsTheSame() throws {
        let tokens = try signInAndExchange(clientID: "mobile-app-001")
        try assertDatabaseUnchanged("mobile-app-002 revoking mobile-app-001's tokens") {
            assertRevocationOK(revoke(try XCTUnwrap(tokens.refreshToken), clientID: "mobile-app-002"))
            assertRevocationOK(revoke(tokens.accessToken, clientID: "mobile-app-002"))
            assertRevocationOK(post(revoke, "/revoke", RequestParameters([("token", tokens.accessToken)]), headers: serviceAuthorization))
        }
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 200)
    }

    func testUnknownForgedAndGarbageTokensAre200AndChangeNothing() throws {
        let tokens = try signInAndExchange()
        let stranger = try RSAKey.generate()
        let garbage = ["unknown-token", "a.b.c", String(repeating: "x", count: 4000), "ü∂ƒ", tokens.accessToken + "x",
                       try resigned(tokens.accessToken, key: stranger), try resigned(tokens.accessToken) { $0["iss"] = "https://evil.example" },
                       try XCTUnwrap(tokens.idToken)]
        try assertDatabaseUnchanged("unknown tokens") {
            for token in garbage { assertRevocationOK(revoke(token), String(token.prefix(20))) }
        }
    }

    // MARK: Request errors

    func testRequestErrorsAreOAuthJSONAndChangeNothing() throws {
        let tokens = try signInAndExchange()
        let refresh = try XCTUnwrap(tokens.refreshToken)
        try assertDatabaseUnchanged("request errors") {
            assertJSONError(post(revoke, "/revoke", RequestParameters([("client_id", "mobile-app-001")])), status: 400, error: "invalid_request",
                            "no token")
            assertJSONError(post(revoke, "/revoke", RequestParameters([("client_id", "mobile-app-001"), ("token", "")])), status: 400,
                            error: "invalid_request", "empty token")
            assertJSONError(post(revoke, "/revoke", RequestParameters([("client_id", "mobile-app-001"), ("token", refresh), ("token", refresh)])),
                            status: 400, error: "invalid_request", "repeated token")
            assertJSONError(post(revoke, "/revoke", RequestParameters([("token", refresh)])), status: 401, error: "invalid_client", "no client")
            assertJSONError(revoke(refresh, clientID: "no-such-client"), status: 401, error: "invalid_client", "unknown client")
            assertJSONError(revoke(refresh, headers: ["authorization": H.basic("mobile-app-001", "secret")]), status: 401,
                            error: "invalid_client", "public client with a password")
            let json = harness.run(revoke, Request(method: "POST", path: "/revoke", headers: ["content-type": "application/json"],
                                                   body: Array(#"{"token":"\#(refresh)","client_id":"mobile-app-001"}"#.utf8)))
            assertJSONError(json, status: 400, error: "invalid_request", "JSON body")
            let huge = post(revoke, "/revoke", RequestParameters([("client_id", "mobile-app-001"), ("token", String(repeating: "x", count: 9000))]))
            XCTAssertEqual(huge.status, 413)
            for method in ["GET", "PUT", "DELETE", "HEAD"] {
                let response = harness.run(revoke, Request(method: method, path: "/revoke", query: "token=\(refresh)&client_id=mobile-app-001"))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "POST")
            }
        }
        XCTAssertNil(try refreshRow(refresh)?.revokedAt)
    }
}
