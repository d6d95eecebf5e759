import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `POST /introspect` in-process (RFC 7662): who may ask, what an active
/// token reports, and exactly `{"active":false}` for everything else.
final class IntrospectionResponderTests: SessionEndpointsTestCase {
    static let inactive = #"{"active":false}"#

    func assertInactive(_ token: String, hint: String? = nil, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try assertDatabaseUnchanged(message, file: file, line: line) {
            let response = introspect(token, hint: hint, file: file, line: line)
            XCTAssertEqual(response.status, 200, message, file: file, line: line)
            XCTAssertEqual(response.bodyText, Self.inactive, message, file: file, line: line)
            XCTAssertEqual(response.header("Cache-Control"), "no-store", message, file: file, line: line)
        }
    }

    // MARK: Active tokens

    func testActiveAccessTokenReportsItsClaims() throws {
        let tokens = try signInAndExchange()
        let claims = try harness.verifiedJWT(tokens.accessToken).claims
        var body: [String: Any] = [:]
        try assertDatabaseUnchanged("introspection") {
            let response = introspect(tokens.accessToken)
            XCTAssertEqual(response.status, 200, response.bodyText)
            XCTAssertEqual(response.header("Content-Type"), "application/json")
            XCTAssertEqual(response.header("Cache-Control"), "no-store")
            body = response.jsonObject()
        }
        XCTAssertEqual(body["active"] as? Bool, true)
        XCTAssertEqual(body["token_type"] as? String, "Bearer", "RFC 7662 §2.2: the RFC 6749 §5.1 token type")
        XCTAssertEqual(body["token_use"] as? String, "access_token")
        XCTAssertEqual(body["client_id"] as? String, "mobile-app-001")
        XCTAssertEqual(body["sub"] as? String, harness.alice.subject)
        XCTAssertEqual(body["username"] as? String, DemoData.email)
        XCTAssertEqual(body["scope"] as? String, H.fullScope)
        for name in ["exp", "iat", "nbf", "jti", "sid", "iss"] {
            XCTAssertEqual("\(body[name] ?? "missing")", "\(claims[name] ?? "absent")", name)
        }
        XCTAssertEqual(body["aud"] as? [String], [issuer.config.apiAOrigin, issuer.config.apiBOrigin])
        XCTAssertEqual(body["auth_time"] as? Int64, claims["auth_time"] as? Int64)
    }

    func testActiveRefreshTokenReportsItsGrant() throws {
        let tokens = try signInAndExchange()
        let response = introspect(try XCTUnwrap(tokens.refreshToken))
        let body = response.jsonObject()
        XCTAssertEqual(body["active"] as? Bool, true, response.bodyText)
        XCTAssertNil(body["token_type"], "a refresh token has no RFC 6749 §5.1 type")
        XCTAssertEqual(body["token_use"] as? String, "refresh_token")
        XCTAssertEqual(body["client_id"] as? String, "mobile-app-001")
        XCTAssertEqual(body["sub"] as? String, harness.alice.subject)
        XCTAssertEqual(body["username"] as? String, DemoData.email)
        XCTAssertEqual(body["scope"] as? String, H.fullScope)
        XCTAssertEqual(body["sid"] as? String, tokens.sid)
        XCTAssertEqual(body["iss"] as? String, harness.issuerOrigin)
        XCTAssertEqual(body["iat"] as? Int64, clock.now)
        XCTAssertEqual(body["exp"] as? Int64, clock.now + Int64(issuer.config.refreshTokenLifetime))
        XCTAssertNil(body["jti"])
    }

    func testHintsOnlyOrderTheSearch() throws {
        let tokens = try signInAndExchange()
        for hint in ["access_token", "refresh_token", "unknown_kind"] {
            XCTAssertEqual(introspect(tokens.accessToken, hint: hint).jsonObject()["token_use"] as? String, "access_token", hint)
            XCTAssertEqual(introspect(try XCTUnwrap(tokens.refreshToken), hint: hint).jsonObject()["token_use"] as? String, "refresh_token", hint)
        }
    }

    // MARK: Inactive tokens

    func testRevokedAccessTokenIsInactive() throws {
        let tokens = try signInAndExchange()
        XCTAssertEqual(revoke(tokens.accessToken).status, 200)
        try assertInactive(tokens.accessToken, "revoked access token")
        try assertInactive(tokens.accessToken, hint: "access_token", "revoked access token, with hint")
    }

    func testAccessTokenIsActiveExactlyUntilItsExpiry() throws {
        let tokens = try signInAndExchange()
        clock.advance(Int64(issuer.config.accessTokenLifetime) - 1)
        XCTAssertEqual(introspect(tokens.accessToken).jsonObject()["active"] as? Bool, true, "one second left")
        clock.advance(1)
        try assertInactive(tokens.accessToken, "at exp: no leeway for the issuer's own clock")
        let future = try resigned(tokens.accessToken) { $0["nbf"] = self.clock.now + 5 }
        try assertInactive(future, "not before")
    }

    func testAccessTokenOfAnEndedSessionOrDisabledUserIsInactive() throws {
        let tokens = try signInAndExchange()
        XCTAssertEqual(logoutGET(RequestParameters([("id_token_hint", try XCTUnwrap(tokens.idToken))])).status, 200)
        try assertInactive(tokens.accessToken, "after logout")
        try assertInactive(try XCTUnwrap(tokens.refreshToken), "refresh token after logout")

        let second = try signInAndExchange()
        try issuer.users.disable(email: DemoData.email)
        try assertInactive(second.accessToken, "user disabled")
        try assertInactive(try XCTUnwrap(second.refreshToken), "refresh token of a disabled user")
    }

    func testRefreshTokenStatesThatAreInactive() throws {
        let expired = try signInAndExchange()
        clock.advance(Int64(issuer.config.refreshTokenLifetime))
        try assertInactive(try XCTUnwrap(expired.refreshToken), "expired refresh token")

        let spent = try signInAndExchange()
        try harness.database.execute("UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ?",
                                     [.integer(clock.now), .blob(SecretHash.of(try XCTUnwrap(spent.refreshToken)))])
        try assertInactive(try XCTUnwrap(spent.refreshToken), "rotated (spent) refresh token")

        let revoked = try signInAndExchange()
        XCTAssertEqual(revoke(try XCTUnwrap(revoked.refreshToken)).status, 200)
        try assertInactive(try XCTUnwrap(revoked.refreshToken), "revoked refresh token")

        let orphan = try signInAndExchange()
        try harness.endSession(orphan.sid)
        try assertInactive(try XCTUnwrap(orphan.refreshToken), "refresh token of an ended session")
    }

    func testGarbageForgedAndForeignTokensAreInactive() throws {
        let tokens = try signInAndExchange()
        let stranger = try RSAKey.generate()
        let cases: [(String, String)] = [
            ("unknown opaque", "unknown-token"),
            ("garbage", "a.b.c"),
            ("long garbage", String(repeating: "x", count: 5000)),
            ("non-ASCII", "ü∂ƒ"),
            ("signed by another key", try resigned(tokens.accessToken, key: stranger)),
            ("unknown kid", try resigned(tokens.accessToken, key: stranger, kid: "nope")),
            ("another issuer", try resigned(tokens.accessToken) { $0["iss"] = "https://evil.example" }),
            ("ID token", try XCTUnwrap(tokens.idToken)),
            ("alg none", Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + tokens.accessToken.split(separator: ".")[1] + "."),
        ]
        for (name, token) in cases { try assertInactive(token, name) }
    }

    // MARK: Who may ask

    func testOnlyAuthenticatedConfidentialClientsMayIntrospect() throws {
        let tokens = try signInAndExchange()
        let token = RequestParameters([("token", tokens.accessToken)])
        let cases: [(String, RequestParameters, [String: String], Bool)] = [
            ("no authentication", token, [:], false),
            ("public client by client_id", token.adding("client_id", "mobile-app-001"), [:], false),
            ("public client over Basic", token, ["authorization": H.basic("mobile-app-001", "")], true),
            ("public client with a password", token, ["authorization": H.basic("mobile-app-001", "x")], true),
            ("wrong secret", token, ["authorization": H.basic(Self.serviceID, Self.serviceSecret + "x")], true),
            ("empty secret", token, ["authorization": H.basic(Self.serviceID, "")], true),
            ("unknown client", token, ["authorization": H.basic("nobody", Self.serviceSecret)], true),
            ("confidential client by client_id only", token.adding("client_id", Self.serviceID), [:], false),
            ("a wrong secret in the body", token.adding("client_id", Self.serviceID).adding("client_secret", Self.serviceSecret + "x"), [:],
             false),
            ("the secret in the body and over Basic", token.adding("client_id", Self.serviceID).adding("client_secret", Self.serviceSecret),
             ["authorization": H.basic(Self.serviceID, Self.serviceSecret)], true),
            ("malformed Basic", token, ["authorization": "Basic !!!"], true),
        ]
        for (name, parameters, headers, basic) in cases {
            try assertDatabaseUnchanged(name) {
                let response = post(introspect, "/introspect", parameters, headers: headers)
                assertJSONError(response, status: 401, error: "invalid_client", name)
                XCTAssertEqual(response.header("WWW-Authenticate")?.hasPrefix("Basic"), basic ? true : nil, name)
                XCTAssertNil(response.jsonObject()["active"], name)
            }
        }
    }

    /// RFC 7662 §2.1: the endpoint MUST require authorization; the outside
    /// review found an empty body answered 400 before the caller was asked
    /// who it is. Now nothing about the body is judged for a stranger.
    func testAnUnauthenticatedCallerGets401WhateverItsBody() throws {
        let bodies: [(String, String?, [UInt8])] = [
            ("empty body", "application/x-www-form-urlencoded", []),
            ("no token", "application/x-www-form-urlencoded", Array("token_type_hint=access_token".utf8)),
            ("repeated token", "application/x-www-form-urlencoded", Array("token=a&token=b".utf8)),
            ("malformed encoding", "application/x-www-form-urlencoded", Array("token=%zz".utf8)),
            ("JSON", "application/json", Array(#"{"token":"x"}"#.utf8)),
            ("no content type", nil, Array("token=x".utf8)),
        ]
        for (name, contentType, body) in bodies {
            let response = harness.run(introspect, Request(method: "POST", path: "/introspect",
                                                           headers: contentType.map { ["content-type": $0] } ?? [:], body: body))
            assertJSONError(response, status: 401, error: "invalid_client", name)
        }
    }

    func testRequestErrors() throws {
        try assertDatabaseUnchanged("request errors") {
            assertJSONError(post(introspect, "/introspect", RequestParameters([]), headers: serviceAuthorization), status: 400,
                            error: "invalid_request", "no token")
            assertJSONError(post(introspect, "/introspect", RequestParameters([("token", "a"), ("token", "b")]), headers: serviceAuthorization),
                            status: 400, error: "invalid_request", "repeated token")
            let json = harness.run(introspect, Request(method: "POST", path: "/introspect",
                                                       headers: serviceAuthorization.merging(["content-type": "application/json"]) { $1 },
                                                       body: Array(#"{"token":"x"}"#.utf8)))
            assertJSONError(json, status: 400, error: "invalid_request", "JSON body")
            for method in ["GET", "PUT", "DELETE", "HEAD"] {
                let response = harness.run(introspect, Request(method: method, path: "/introspect", query: "token=x", headers: serviceAuthorization))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "POST")
            }
        }
    }
}
