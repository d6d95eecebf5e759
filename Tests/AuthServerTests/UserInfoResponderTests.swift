import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `GET|POST /userinfo` in-process: the claims by scope, RFC 6750 errors for
/// every way a token can be wrong, and a database no request changes.
final class UserInfoResponderTests: SessionEndpointsTestCase {
    func assertBearerError(_ response: Response, status: Int, error: String, challengeError: String?, _ message: String = "",
                           file: StaticString = #filePath, line: UInt = #line) {
        assertJSONError(response, status: status, error: error, message, file: file, line: line)
        let challenge = response.header("WWW-Authenticate") ?? ""
        XCTAssertTrue(challenge.hasPrefix("Bearer realm=\"\(harness.issuerOrigin)\""), "\(message): \(challenge)", file: file, line: line)
        if let challengeError {
            XCTAssertTrue(challenge.contains("error=\"\(challengeError)\""), "\(message): \(challenge)", file: file, line: line)
        } else {
            XCTAssertFalse(challenge.contains("error="), "\(message): \(challenge)", file: file, line: line)
        }
    }

    func assertInvalidToken(_ token: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try assertDatabaseUnchanged(message, file: file, line: line) {
            assertBearerError(userinfoGET(token, file: file, line: line), status: 401, error: "invalid_token",
                              challengeError: "invalid_token", message, file: file, line: line)
        }
    }

    // MARK: Success

    func testFullScopeReturnsSubEmailAndNameWithNoStore() throws {
        let tokens = try signInAndExchange()
        let response = userinfoGET(tokens.accessToken)
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let body = response.jsonObject()
        let idToken = try harness.verifiedJWT(try XCTUnwrap(tokens.idToken)).claims
        XCTAssertEqual(body["sub"] as? String, harness.alice.subject)
        XCTAssertEqual(body["sub"] as? String, idToken["sub"] as? String, "OIDC Core §5.3.2: sub matches the ID token")
        XCTAssertEqual(body["email"] as? String, DemoData.email)
        XCTAssertEqual(body["email_verified"] as? Bool, true)
        XCTAssertEqual(body["name"] as? String, DemoData.name)
        XCTAssertEqual(Set(body.keys), ["sub", "email", "email_verified", "name"])
    }

    func testClaimsFollowTheTokensScope() throws {
        let cases: [(String, Set<String>)] = [
            ("openid", ["sub"]),
            ("openid email", ["sub", "email", "email_verified"]),
            ("openid profile", ["sub", "name"]),
            ("openid offline_access api:serverA", ["sub"]),
        ]
        for (scope, keys) in cases {
            let tokens = try signInAndExchange(scope: scope)
            let response = userinfoGET(tokens.accessToken)
            XCTAssertEqual(response.status, 200, scope)
            XCTAssertEqual(Set(response.jsonObject().keys), keys, scope)
        }
    }

    func testClaimsAreTheUsersCurrentValues() throws {
        let tokens = try signInAndExchange()
        try harness.database.execute("UPDATE users SET name = 'Alice Renamed' WHERE id = ?", [.integer(harness.alice.id)])
        XCTAssertEqual(userinfoGET(tokens.accessToken).jsonObject()["name"] as? String, "Alice Renamed")
    }

    /// Review R4: a client deleted and registered again under the same id
    /// is another client; the old registration's tokens stay dead at the
    /// issuer, the new one's work.
    func testATokenOfAnEarlierRegistrationOfTheSameClientIDIsRefused() throws {
        let old = try signInAndExchange()
        let registration = try XCTUnwrap(harness.services.clients.find(clientID: "mobile-app-001"))
        XCTAssertEqual(try harness.verifiedJWT(old.accessToken).claims["client_registration"] as? String, registration.registrationID)
        XCTAssertEqual(registration.registrationID.utf8.count, 22)
        try harness.services.clients.delete(clientID: "mobile-app-001")
        _ = try harness.services.clients.add(ClientRegistration(clientID: "mobile-app-001", redirectURIs: registration.redirectURIs,
                                                                scopes: registration.scopes))
        XCTAssertEqual(userinfoGET(old.accessToken).status, 401)
        XCTAssertEqual(introspect(old.accessToken).bodyText, #"{"active":false}"#)
        let new = try signInAndExchange()
        XCTAssertEqual(userinfoGET(new.accessToken).status, 200)
    }

    func testPOSTAcceptsTheHeaderOrTheFormBodyButNotBoth() throws {
        let tokens = try signInAndExchange()
        let viaHeader = harness.run(userinfo, Request(method: "POST", path: "/userinfo", headers: bearer(tokens.accessToken)))
        XCTAssertEqual(viaHeader.status, 200, viaHeader.bodyText)
        let viaBody = post(userinfo, "/userinfo", RequestParameters([("access_token", tokens.accessToken)]))
        XCTAssertEqual(viaBody.status, 200, viaBody.bodyText)
        XCTAssertEqual(viaBody.jsonObject()["sub"] as? String, harness.alice.subject)
        // RFC 6750 §2: "Clients MUST NOT use more than one method to transmit the token in each request."
        let both = post(userinfo, "/userinfo", RequestParameters([("access_token", tokens.accessToken)]), headers: bearer(tokens.accessToken))
        assertBearerError(both, status: 400, error: "invalid_request", challengeError: "invalid_request")
        let repeated = post(userinfo, "/userinfo", RequestParameters([("access_token", tokens.accessToken), ("access_token", tokens.accessToken)]))
        assertBearerError(repeated, status: 400, error: "invalid_request", challengeError: "invalid_request")
    }

    func testWrongMethodsAre405() throws {
        let tokens = try signInAndExchange()
        try assertDatabaseUnchanged("wrong methods") {
            for method in ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"] {
                let response = harness.run(userinfo, Request(method: method, path: "/userinfo", headers: bearer(tokens.accessToken)))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "GET, POST", method)
            }
        }
    }

    // MARK: Missing or malformed credentials

    func testNoCredentialsIs401WithABareChallenge() throws {
        try assertDatabaseUnchanged("no credentials") {
            assertBearerError(userinfoGET(nil), status: 401, error: "missing_token", challengeError: nil, "no header")
            let basic = get(userinfo, "/userinfo", headers: ["authorization": H.basic("mobile-app-001", "")])
            assertBearerError(basic, status: 401, error: "missing_token", challengeError: nil, "another scheme")
            let json = harness.run(userinfo, Request(method: "POST", path: "/userinfo", headers: ["content-type": "application/json"],
                                                     body: Array(#"{"access_token":"x"}"#.utf8)))
            assertBearerError(json, status: 401, error: "missing_token", challengeError: nil, "JSON body is not a token carrier")
        }
    }

    func testTokenInTheQueryStringIsRefused() throws {
        let tokens = try signInAndExchange()
        try assertDatabaseUnchanged("query token") {
            let response = get(userinfo, "/userinfo", query: "access_token=" + tokens.accessToken)
            assertBearerError(response, status: 400, error: "invalid_request", challengeError: "invalid_request")
        }
    }

    func testMalformedBearerHeaders() throws {
        try assertDatabaseUnchanged("malformed headers") {
            assertBearerError(get(userinfo, "/userinfo", headers: ["authorization": "Bearer"]), status: 400, error: "invalid_request",
                              challengeError: "invalid_request", "scheme without a token")
            assertBearerError(get(userinfo, "/userinfo", headers: ["authorization": "Bearer    "]), status: 400, error: "invalid_request",
                              challengeError: "invalid_request", "scheme with spaces")
            for garbage in ["a b", "abc\"def", "=abc", "abc=def", "tok\u{7F}en", "ünïcode"] {
                assertBearerError(get(userinfo, "/userinfo", headers: ["authorization": "Bearer " + garbage]), status: 401,
                                  error: "invalid_token", challengeError: "invalid_token", garbage)
            }
            for garbage in ["abc", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", String(repeating: "A", count: 20_000)] {
                assertBearerError(userinfoGET(garbage), status: 401, error: "invalid_token", challengeError: "invalid_token", String(garbage.prefix(20)))
            }
        }
    }

    func testChallengeNeverEchoesTheToken() throws {
        let tokens = try signInAndExchange()
        clock.advance(3600)
        let response = userinfoGET(tokens.accessToken)
        XCTAssertEqual(response.status, 401)
        XCTAssertFalse(response.bodyText.contains(tokens.accessToken))
        XCTAssertFalse((response.header("WWW-Authenticate") ?? "").contains(tokens.accessToken))
    }

    // MARK: Time

    func testExpiryHonoursSixtySecondsOfLeeway() throws {
        let tokens = try signInAndExchange()
        clock.advance(Int64(issuer.config.accessTokenLifetime) + 59)
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 200, "inside the leeway")
        clock.advance(2)
        try assertInvalidToken(tokens.accessToken, "61 s after exp")
        XCTAssertTrue(userinfoGET(tokens.accessToken).jsonObject()["error_description"].map { "\($0)".contains("expired") } ?? false)
    }

    func testTokensFromTheFutureAreRefused() throws {
        let tokens = try signInAndExchange()
        let now = clock.now
        try assertInvalidToken(try resigned(tokens.accessToken) { $0["nbf"] = now + 120 }, "nbf 120 s ahead")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0["iat"] = now + 120 }, "iat 120 s ahead")
        XCTAssertEqual(userinfoGET(try resigned(tokens.accessToken) { $0["nbf"] = now + 50 }).status, 200, "nbf within the leeway")
    }

    // MARK: Signature, kind, issuer

    func testForgedAndTamperedTokensAreRefused() throws {
        let tokens = try signInAndExchange()
        let stranger = try RSAKey.generate()
        try assertInvalidToken(try resigned(tokens.accessToken, key: stranger), "signed by another key under our kid")
        try assertInvalidToken(try resigned(tokens.accessToken, key: stranger, kid: "unknown-kid"), "unknown kid")
        try assertInvalidToken(try resigned(tokens.accessToken, alg: "RS512"), "another alg")
        let parts = tokens.accessToken.split(separator: ".").map(String.init)
        var claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64URL.decode(parts[1])))) as? [String: Any])
        claims["sub"] = "someone-else"
        let tampered = parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims)) + "." + parts[2]
        try assertInvalidToken(tampered, "payload changed after signing")
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "."
        try assertInvalidToken(none, "alg none")
        let hs256 = Base64URL.encode(Array(#"{"alg":"HS256","typ":"at+jwt","kid":"x"}"#.utf8)) + "." + parts[1] + "."
            + Base64URL.encode(HMACSHA256.authenticate(Array((Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + parts[1]).utf8), key: Array("k".utf8)))
        try assertInvalidToken(hs256, "HS256")
        try assertInvalidToken(parts[0] + "." + parts[1] + "." + String(parts[2].reversed()), "garbage signature")
    }

    func testOnlyAccessTokensOfThisIssuerAreAccepted() throws {
        let tokens = try signInAndExchange()
        try assertInvalidToken(try XCTUnwrap(tokens.idToken), "an ID token (typ JWT)")
        try assertInvalidToken(try resigned(tokens.accessToken, typ: .some(nil)), "no typ")
        try assertInvalidToken(try resigned(tokens.accessToken, typ: "JWT"), "typ JWT")
        XCTAssertEqual(userinfoGET(try resigned(tokens.accessToken, typ: "application/at+jwt")).status, 200, "RFC 9068 long form")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0["iss"] = "https://evil.example" }, "another issuer")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0.removeValue(forKey: "jti") }, "no jti")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0.removeValue(forKey: "sid") }, "no sid")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0["exp"] = "tomorrow" }, "exp of the wrong type")
        try assertInvalidToken(try resigned(tokens.accessToken) { $0["sub"] = "no-such-subject" }, "unknown subject")
        let criticalHeader = try resigned(tokens.accessToken)
        var parts = criticalHeader.split(separator: ".").map(String.init)
        let (kid, key) = try activeKey()
        parts[0] = Base64URL.encode(Array(#"{"alg":"RS256","crit":["exp"],"kid":"\#(kid)","typ":"at+jwt"}"#.utf8))
        let input = parts[0] + "." + parts[1]
        try assertInvalidToken(input + "." + Base64URL.encode(try key.signRS256(Array(input.utf8))), "crit header")
    }

    func testAccessTokenWithoutOpenIDScopeIsInsufficientScope() throws {
        let tokens = try signInAndExchange()
        let apiOnly = try resigned(tokens.accessToken) { $0["scope"] = "api:serverA email profile" }
        try assertDatabaseUnchanged("no openid") {
            let response = userinfoGET(apiOnly)
            assertBearerError(response, status: 403, error: "insufficient_scope", challengeError: "insufficient_scope")
            XCTAssertTrue(response.header("WWW-Authenticate")?.contains("scope=\"openid\"") ?? false)
        }
    }

    func testKeyRotationAndRetirementByAnotherProcess() throws {
        let before = try signInAndExchange()
        let other = try otherConnection()
        let store = try issuer.otherProcess(clock: clock.clock).signingKeys
        let oldKID = try XCTUnwrap(store.activeKID())
        let newKID = try store.rotate(activationDelay: 300)
        XCTAssertEqual(userinfoGET(before.accessToken).status, 200, "the old key signs until the new one activates")
        clock.advance(300)
        XCTAssertEqual(userinfoGET(before.accessToken).status, 200, "the old key stays published")
        let after = try signInAndExchange()
        XCTAssertEqual(try harness.verifiedJWT(after.accessToken).header.kid, newKID)
        XCTAssertEqual(userinfoGET(after.accessToken).status, 200, "a token signed by the new key")
        try store.retire(kid: oldKID)
        try assertInvalidToken(before.accessToken, "signed by a retired key")
        let still = userinfoGET(after.accessToken)
        XCTAssertEqual(still.status, 200, still.bodyText)
    }

    // MARK: What only the issuer knows

    func testRevokedTokenIsRefused() throws {
        let tokens = try signInAndExchange()
        let other = try signInAndExchange()
        let response = revoke(tokens.accessToken, hint: "access_token")
        XCTAssertEqual(response.status, 200)
        try assertInvalidToken(tokens.accessToken, "revoked by jti")
        XCTAssertTrue("\(userinfoGET(tokens.accessToken).jsonObject()["error_description"] ?? "")".contains("revoked"))
        XCTAssertEqual(userinfoGET(other.accessToken).status, 200, "other tokens are unaffected")
    }

    func testEndedSessionOrDisabledUserMakesTheTokenUseless() throws {
        let tokens = try signInAndExchange()
        try harness.endSession(tokens.sid)
        try assertInvalidToken(tokens.accessToken, "session ended")

        let second = try signInAndExchange()
        XCTAssertEqual(userinfoGET(second.accessToken).status, 200)
        clock.advance(Int64(issuer.config.ssoSessionLifetime))
        try assertInvalidToken(second.accessToken, "session expired")

        clock.advance(-Int64(issuer.config.ssoSessionLifetime))
        let third = try signInAndExchange()
        try issuer.users.disable(email: DemoData.email)
        try assertInvalidToken(third.accessToken, "user disabled")
    }

    func testTokenBoundToAnotherUsersSessionIsRefused() throws {
        try issuer.users.add(email: "bob@example.com", name: "Bob Stone", password: H.password)
        let alice = try signInAndExchange()
        let bob = try XCTUnwrap(issuer.users.find(email: "bob@example.com"))
        // A token naming Bob but Alice's live session: never issued, refused.
        try assertInvalidToken(try resigned(alice.accessToken) { $0["sub"] = bob.subject }, "sub and sid of different users")
    }
}
