import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `POST /token` with `grant_type=authorization_code`, in-process: the token
/// set and its JWTs, every refusal with its exact code and status, and what
/// a refusal may (reuse) or may not (everything else) change.
final class TokenResponderTests: SignInTestCase {
    typealias H = SignInHarness

    /// Signs Alice in and returns a fresh code for mobile-app-001.
    func freshCode(_ parameters: RequestParameters = H.authorizationParameters(), file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try harness.signIn(parameters, file: file, line: line).code
    }

    func assertOAuthError(_ response: Response, status: Int, error: String, _ message: String = "",
                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, "\(message): \(response.bodyText)", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", message, file: file, line: line)
        XCTAssertEqual(response.header("Cache-Control"), "no-store", message, file: file, line: line)
        let body = response.jsonObject(file: file, line: line)
        XCTAssertEqual(body["error"] as? String, error, message, file: file, line: line)
        XCTAssertNotNil(body["error_description"] as? String, message, file: file, line: line)
        XCTAssertNil(body["access_token"], message, file: file, line: line)
    }

    func assertExchangeSucceeds(_ code: String, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        let response = harness.tokenPOST(H.codeExchange(code: code), file: file, line: line)
        XCTAssertEqual(response.status, 200, "\(message): \(response.bodyText)", file: file, line: line)
        XCTAssertNotNil(response.jsonObject(file: file, line: line)["access_token"] as? String, message, file: file, line: line)
    }

    // MARK: Transport

    func testOtherMethodsThanPOSTAreRefusedWith405() throws {
        let code = try freshCode()
        try assertDatabaseUnchanged("GET /token") {
            for method in ["GET", "PUT", "DELETE", "HEAD"] {
                let request = Request(method: method, path: "/token", query: H.codeExchange(code: code).encoded)
                let response = harness.run(harness.token, request)
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "POST", method)
            }
        }
        assertExchangeSucceeds(code)
    }

    func testBodiesOtherThanFormEncodingAreInvalidRequest() throws {
        let code = try freshCode()
        let json = Array(#"{"grant_type":"authorization_code","code":"\#(code)","client_id":"mobile-app-001"}"#.utf8)
        let cases: [(String, String?, [UInt8])] = [
            ("JSON body", "application/json", json),
            ("form body labelled JSON", "application/json", Array(H.codeExchange(code: code).encoded.utf8)),
            ("text/plain", "text/plain", Array(H.codeExchange(code: code).encoded.utf8)),
            ("no content type", nil, Array(H.codeExchange(code: code).encoded.utf8)),
            ("bad percent escape", "application/x-www-form-urlencoded", Array((H.codeExchange(code: code).encoded + "&x=%G1").utf8)),
            ("invalid UTF-8", "application/x-www-form-urlencoded", Array((H.codeExchange(code: code).encoded + "&x=%FF").utf8)),
        ]
        for (name, contentType, body) in cases {
            try assertDatabaseUnchanged(name) {
                var headers: [String: String] = [:]
                if let contentType { headers["content-type"] = contentType }
                let response = harness.run(harness.token, Request(method: "POST", path: "/token", headers: headers, body: body))
                assertOAuthError(response, status: 400, error: "invalid_request", name)
                XCTAssertEqual(response.header("Pragma"), "no-cache", name)
            }
        }
        // A charset parameter on the right media type is fine.
        let response = harness.tokenPOST(H.codeExchange(code: code), headers: ["content-type": "application/x-www-form-urlencoded; charset=UTF-8"])
        XCTAssertEqual(response.status, 200)
    }

    func testOversizedOrOverlongFormsAreRefusedWithoutTouchingTheCode() throws {
        let code = try freshCode()
        try assertDatabaseUnchanged("oversized forms") {
            let huge = H.codeExchange(code: code).adding("padding", String(repeating: "x", count: 8 * 1024 + 1))
            let tooLong = harness.tokenPOST(huge)
            XCTAssertEqual(tooLong.status, 413, "a value over 8 KiB")
            let manyParameters = (0..<70).reduce(H.codeExchange(code: code)) { $0.adding("p\($1)", "v") }
            assertOAuthError(harness.tokenPOST(manyParameters), status: 400, error: "invalid_request", "over 64 parameters")
            var body = Array(H.codeExchange(code: code).encoded.utf8)
            body += Array(repeating: UInt8(ascii: "&"), count: 70 * 1024)
            let request = Request(method: "POST", path: "/token", headers: ["content-type": "application/x-www-form-urlencoded"], body: body)
            XCTAssertEqual(harness.run(harness.token, request).status, 413, "a body over 64 KiB")
        }
        assertExchangeSucceeds(code)
    }

    // MARK: Success

    func testCodeExchangeReturnsTheTokenSetWithNoStoreHeaders() throws {
        let code = try freshCode()
        let response = harness.tokenPOST(H.codeExchange(code: code))
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertEqual(response.header("Pragma"), "no-cache")
        let body = response.jsonObject()
        XCTAssertEqual(Set(body.keys), ["access_token", "token_type", "expires_in", "refresh_token", "id_token", "scope",
                                           "refresh_token_expires_in"])
        XCTAssertEqual(body["token_type"] as? String, "Bearer")
        XCTAssertEqual(body["expires_in"] as? Int, 900)
        XCTAssertEqual(body["scope"] as? String, H.fullScope)
        let refresh = try XCTUnwrap(body["refresh_token"] as? String)
        XCTAssertEqual(refresh.utf8.count, 43, "opaque, 256 bits")
        XCTAssertEqual((body["access_token"] as? String)?.split(separator: ".").count, 3)
        XCTAssertEqual((body["id_token"] as? String)?.split(separator: ".").count, 3)

        // The refresh token is stored hashed, in a new family bound to client and session.
        let sid = try XCTUnwrap(harness.sessionRows().first?.sid)
        let row = try XCTUnwrap(harness.database.queryOne("""
            SELECT family_id, client_id, user_id, sid, scope, expires_at, created_at, used_at, revoked_at FROM refresh_tokens WHERE token_hash = ?
            """, [.blob(SecretHash.of(refresh))]))
        XCTAssertFalse(row.string(0).isEmpty)
        XCTAssertEqual(row.string(1), "mobile-app-001")
        XCTAssertEqual(row.int(2), harness.alice.id)
        XCTAssertEqual(row.string(3), sid)
        XCTAssertEqual(row.string(4), H.fullScope)
        XCTAssertEqual(row.int(5) - row.int(6), Int64(issuer.config.refreshTokenLifetime))
        XCTAssertNil(row.optionalInt(7))
        XCTAssertNil(row.optionalInt(8))
        // The code is spent, and remembers what it issued (for revocation on reuse).
        let codeRow = try XCTUnwrap(harness.database.queryOne("SELECT used_at, issued_family_id, issued_jti FROM authorization_codes WHERE code_hash = ?",
                                                              [.blob(SecretHash.of(code))]))
        XCTAssertEqual(codeRow.optionalInt(0), clock.now)
        XCTAssertEqual(codeRow.optionalString(1), row.string(0))
        XCTAssertNotNil(codeRow.optionalString(2))
    }

    func testAccessTokenIsRS256AtJWTWithTheGrantedClaims() throws {
        let signInTime = clock.now
        let code = try freshCode()
        clock.advance(5)
        let body = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        let (header, claims) = try harness.verifiedJWT(try XCTUnwrap(body["access_token"] as? String))
        XCTAssertEqual(header.alg, "RS256")
        XCTAssertEqual(header.typ, "at+jwt")
        XCTAssertEqual(header.kid, try issuer.keys.activeKID())

        let sid = try XCTUnwrap(harness.sessionRows().first?.sid)
        XCTAssertEqual(claims["iss"] as? String, "https://localhost:8443")
        XCTAssertEqual(claims["sub"] as? String, harness.alice.subject)
        XCTAssertEqual(claims["aud"] as? [String], ["https://localhost:8444", "https://localhost:8445"], "the API origins of api:serverA/api:serverB")
        let iat = try XCTUnwrap(claims["iat"] as? Int)
        XCTAssertEqual(Int64(iat), clock.now)
        XCTAssertEqual(claims["exp"] as? Int, iat + 900)
        XCTAssertEqual(claims["nbf"] as? Int, iat)
        let jti = try XCTUnwrap(claims["jti"] as? String)
        XCTAssertGreaterThanOrEqual(jti.utf8.count, 22, "at least 128 bits")
        XCTAssertEqual(claims["client_id"] as? String, "mobile-app-001")
        XCTAssertEqual(claims["scope"] as? String, H.fullScope)
        XCTAssertEqual(claims["sid"] as? String, sid)
        XCTAssertEqual((claims["auth_time"] as? Int).map(Int64.init), signInTime)
        XCTAssertEqual(claims["email"] as? String, DemoData.email)
        XCTAssertEqual(claims["roles"] as? [String], ["user"])
        XCTAssertNil(claims["nonce"], "nonce belongs in the ID token only")
        // The jti is the one recorded against the code.
        XCTAssertEqual(try issuer.count("authorization_codes", "issued_jti = ?", [.text(jti)]), 1)

        // A second exchange gets a different jti.
        let other = harness.tokenPOST(H.codeExchange(code: try freshCode())).jsonObject()
        let otherClaims = try harness.verifiedJWT(try XCTUnwrap(other["access_token"] as? String)).claims
        XCTAssertNotEqual(otherClaims["jti"] as? String, jti)
    }

    func testIDTokenIsRS256JWTForTheClientWithNonceSidAndScopedClaims() throws {
        let signInTime = clock.now
        let code = try freshCode()
        clock.advance(3)
        let body = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        let (header, claims) = try harness.verifiedJWT(try XCTUnwrap(body["id_token"] as? String))
        XCTAssertEqual(header.alg, "RS256")
        XCTAssertEqual(header.typ, "JWT")
        XCTAssertEqual(header.kid, try issuer.keys.activeKID())
        XCTAssertEqual(claims["iss"] as? String, "https://localhost:8443")
        XCTAssertEqual(claims["sub"] as? String, harness.alice.subject)
        XCTAssertEqual(claims["aud"] as? String, "mobile-app-001")
        let iat = try XCTUnwrap(claims["iat"] as? Int)
        XCTAssertEqual(Int64(iat), clock.now)
        XCTAssertEqual(claims["exp"] as? Int, iat + issuer.config.idTokenLifetime)
        XCTAssertEqual(claims["nonce"] as? String, "nonce-456")
        XCTAssertEqual(claims["sid"] as? String, try harness.sessionRows().first?.sid)
        XCTAssertEqual((claims["auth_time"] as? Int).map(Int64.init), signInTime)
        XCTAssertEqual(claims["email"] as? String, DemoData.email)
        XCTAssertEqual(claims["email_verified"] as? Bool, true)
        XCTAssertEqual(claims["name"] as? String, DemoData.name)
        XCTAssertNil(claims["roles"], "roles are for resource servers")
    }

    func testClaimsAndAudienceFollowTheGrantedScope() throws {
        // openid only, no nonce: no refresh token, audience is the issuer, no profile/email claims.
        let minimal = harness.tokenPOST(H.codeExchange(code: try freshCode(H.authorizationParameters(scope: "openid", nonce: nil)))).jsonObject()
        XCTAssertNil(minimal["refresh_token"], "refresh tokens only with offline_access")
        XCTAssertEqual(minimal["scope"] as? String, "openid")
        let minimalAccess = try harness.verifiedJWT(try XCTUnwrap(minimal["access_token"] as? String)).claims
        XCTAssertEqual(minimalAccess["aud"] as? [String], ["https://localhost:8443"])
        let minimalID = try harness.verifiedJWT(try XCTUnwrap(minimal["id_token"] as? String)).claims
        for absent in ["nonce", "email", "email_verified", "name"] {
            XCTAssertNil(minimalID[absent], "\(absent) without its scope")
        }
        XCTAssertEqual(try issuer.count("refresh_tokens"), 0)

        // email without profile; one API only.
        let partial = harness.tokenPOST(H.codeExchange(code: try freshCode(H.authorizationParameters(scope: "openid email api:serverB")))).jsonObject()
        let partialAccess = try harness.verifiedJWT(try XCTUnwrap(partial["access_token"] as? String)).claims
        XCTAssertEqual(partialAccess["aud"] as? [String], ["https://localhost:8445"])
        let partialID = try harness.verifiedJWT(try XCTUnwrap(partial["id_token"] as? String)).claims
        XCTAssertEqual(partialID["email"] as? String, DemoData.email)
        XCTAssertEqual(partialID["email_verified"] as? Bool, true)
        XCTAssertNil(partialID["name"])

        // profile without email; the other API.
        let profile = harness.tokenPOST(H.codeExchange(code: try freshCode(H.authorizationParameters(scope: "openid profile api:serverA")))).jsonObject()
        XCTAssertEqual(try harness.verifiedJWT(try XCTUnwrap(profile["access_token"] as? String)).claims["aud"] as? [String], ["https://localhost:8444"])
        let profileID = try harness.verifiedJWT(try XCTUnwrap(profile["id_token"] as? String)).claims
        XCTAssertEqual(profileID["name"] as? String, DemoData.name)
        XCTAssertNil(profileID["email"])
    }

    func testKeyRotationByAnotherProcessTakesEffectWithoutRestart() throws {
        let firstKID = try XCTUnwrap(issuer.keys.activeKID())
        let before = harness.tokenPOST(H.codeExchange(code: try freshCode())).jsonObject()
        XCTAssertEqual(try harness.verifiedJWT(try XCTUnwrap(before["access_token"] as? String)).header.kid, firstKID)
        // ssoctl keys rotate: another connection, as another process would.
        let other = try SQLiteDatabase(path: issuer.config.databasePath)
        let rotated = try issuer.otherProcess(clock: clock.clock).signingKeys.rotate()
        let after = harness.tokenPOST(H.codeExchange(code: try freshCode())).jsonObject()
        XCTAssertEqual(try harness.verifiedJWT(try XCTUnwrap(after["access_token"] as? String)).header.kid, rotated)
        XCTAssertEqual(try harness.verifiedJWT(try XCTUnwrap(after["id_token"] as? String)).header.kid, rotated)
        // Tokens signed before still verify: the old key stays published.
        XCTAssertNoThrow(try harness.verifiedJWT(try XCTUnwrap(before["access_token"] as? String)))
    }

    // MARK: Request errors

    func testMalformedRequestsGetExactErrorCodesAndLeaveTheCodeUsable() throws {
        let code = try freshCode()
        let valid = H.codeExchange(code: code)
        let cases: [(String, RequestParameters, String)] = [
            ("missing grant_type", valid.removing("grant_type"), "invalid_request"),
            ("empty grant_type", valid.setting("grant_type", ""), "invalid_request"),
            ("grant_type=password", valid.setting("grant_type", "password"), "unsupported_grant_type"),
            ("grant_type=client_credentials by a public client", valid.setting("grant_type", "client_credentials"), "unauthorized_client"),
            ("grant_type=password", valid.setting("grant_type", "password"), "unsupported_grant_type"),
            ("grant_type=implicit", valid.setting("grant_type", "implicit"), "unsupported_grant_type"),
            ("grant_type case changed", valid.setting("grant_type", "Authorization_Code"), "unsupported_grant_type"),
            ("repeated grant_type", valid.adding("grant_type", "authorization_code"), "invalid_request"),
            ("missing code", valid.removing("code"), "invalid_request"),
            ("repeated code", valid.adding("code", code), "invalid_request"),
            ("missing redirect_uri", valid.removing("redirect_uri"), "invalid_request"),
            ("missing code_verifier", valid.removing("code_verifier"), "invalid_request"),
            ("verifier of 42 characters", valid.setting("code_verifier", String(H.verifier.prefix(42))), "invalid_request"),
            ("verifier of 129 characters", valid.setting("code_verifier", String(repeating: "a", count: 129)), "invalid_request"),
            ("verifier with '+'", valid.setting("code_verifier", "+" + H.verifier), "invalid_request"),
            ("verifier with a space", valid.setting("code_verifier", " " + H.verifier), "invalid_request"),
            ("verifier with '='", valid.setting("code_verifier", H.verifier + "="), "invalid_request"),
            ("verifier with non-ASCII", valid.setting("code_verifier", H.verifier + "é"), "invalid_request"),
            ("the challenge as verifier (43 chars, wrong)", valid.setting("code_verifier", H.challenge), "invalid_grant"),
        ]
        for (name, parameters, expected) in cases {
            try assertDatabaseUnchanged(name) {
                assertOAuthError(harness.tokenPOST(parameters), status: 400, error: expected, name)
            }
        }
        assertExchangeSucceeds(code, "the code survives every refused request")
    }

    // MARK: Grant mismatches

    func testMismatchedRedemptionsAreInvalidGrantAndLeaveTheCodeUsable() throws {
        let code = try freshCode()
        let valid = H.codeExchange(code: code)
        let cases: [(String, RequestParameters)] = [
            ("wrong verifier", valid.setting("code_verifier", PKCE.makeVerifier())),
            ("verifier off by one character", valid.setting("code_verifier", String(H.verifier.dropLast()) + "l")),
            ("another registered redirect_uri", valid.setting("redirect_uri", "https://localhost:8443/mobile/postlogin.html")),
            ("redirect_uri with a trailing slash", valid.setting("redirect_uri", H.customSchemeRedirect + "/")),
            ("unregistered redirect_uri", valid.setting("redirect_uri", "https://evil.example/cb")),
            ("another client (mobile-app-002)", valid.setting("client_id", "mobile-app-002")),
            ("unknown code", valid.setting("code", SecureRandom.token())),
            ("code with a suffix", valid.setting("code", code + "x")),
            ("code prefix", valid.setting("code", String(code.prefix(42)))),
            ("overlong code", valid.setting("code", String(repeating: code, count: 4))),
        ]
        for (name, parameters) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.tokenPOST(parameters)
                assertOAuthError(response, status: 400, error: "invalid_grant", name)
                XCTAssertFalse(response.bodyText.contains(code), "\(name): the code is not echoed")
            }
        }
        XCTAssertNil(try harness.database.queryOne("SELECT used_at FROM authorization_codes WHERE code_hash = ?", [.blob(SecretHash.of(code))])?.optionalInt(0))
        assertExchangeSucceeds(code, "the right request after all the wrong ones")
    }

    func testCodeIssuedToOneClientIsRefusedToAnotherAndNotBurnt() throws {
        let code = try freshCode()
        try assertDatabaseUnchanged("mobile-app-002 presents mobile-app-001's code") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code, clientID: "mobile-app-002")), status: 400, error: "invalid_grant")
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code, clientID: nil), headers: ["authorization": H.basic("mobile-app-002", "")]),
                             status: 400, error: "invalid_grant", "via Basic")
        }
        let row = try harness.database.queryOne("SELECT used_at, issued_jti FROM authorization_codes WHERE code_hash = ?", [.blob(SecretHash.of(code))])
        XCTAssertNil(row?.optionalInt(0), "not burnt")
        XCTAssertNil(row?.optionalString(1))
        assertExchangeSucceeds(code, "the rightful client still redeems it")
    }

    func testLoopbackCodeIsBoundToTheExactRedirectURIIncludingPort() throws {
        let redirect = "http://127.0.0.1:61000/callback"
        let code = try freshCode(H.authorizationParameters(redirectURI: redirect))
        for wrong in [H.loopbackRedirect, "http://127.0.0.1:61001/callback", "http://127.0.0.1:61000/callback/"] {
            try assertDatabaseUnchanged(wrong) {
                assertOAuthError(harness.tokenPOST(H.codeExchange(code: code, redirectURI: wrong)), status: 400, error: "invalid_grant", wrong)
            }
        }
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: code, redirectURI: redirect)).status, 200)
    }

    func testExpiredCodeIsInvalidGrant() throws {
        let code = try freshCode()
        clock.advance(61)
        try assertDatabaseUnchanged("code 61 s old") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code)), status: 400, error: "invalid_grant")
        }
        // The same exchange within the lifetime succeeds.
        let young = try freshCode()
        clock.advance(59)
        assertExchangeSucceeds(young, "code 59 s old")
    }

    func testEndedSessionOrDisabledUserMakesTheCodeUnusable() throws {
        let code = try freshCode()
        let sid = try XCTUnwrap(harness.sessionRows().last?.sid)
        try harness.endSession(sid)
        try assertDatabaseUnchanged("session ended before the exchange") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code)), status: 400, error: "invalid_grant")
        }
        let second = try freshCode()
        try issuer.users.disable(email: DemoData.email)
        try assertDatabaseUnchanged("user disabled before the exchange") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: second)), status: 400, error: "invalid_grant")
        }
    }

    // MARK: Reuse

    func testCodeReuseIsRefusedAndRevokesEverythingTheFirstUseIssued() throws {
        let code = try freshCode()
        let first = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        let refresh = try XCTUnwrap(first["refresh_token"] as? String)
        let jti = try XCTUnwrap(harness.verifiedJWT(try XCTUnwrap(first["access_token"] as? String)).claims["jti"] as? String)
        let family = try XCTUnwrap(harness.database.queryOne("SELECT family_id FROM refresh_tokens WHERE token_hash = ?",
                                                             [.blob(SecretHash.of(refresh))])?.string(0))
        XCTAssertEqual(try issuer.count("revoked_access_tokens"), 0)
        XCTAssertEqual(try issuer.count("refresh_tokens", "revoked_at IS NOT NULL"), 0)

        clock.advance(10)
        let replay = harness.tokenPOST(H.codeExchange(code: code))
        assertOAuthError(replay, status: 400, error: "invalid_grant", "replayed code")
        XCTAssertEqual(try issuer.count("refresh_tokens", "family_id = ? AND revoked_at = ?", [.text(family), .integer(clock.now)]), 1,
                       "the refresh token family from the first use is revoked")
        XCTAssertEqual(try issuer.count("refresh_tokens", "revoked_at IS NULL"), 0)
        let revoked = try XCTUnwrap(harness.database.queryOne("SELECT expires_at FROM revoked_access_tokens WHERE jti = ?", [.text(jti)]),
                                    "the first access token's jti is revoked")
        XCTAssertGreaterThanOrEqual(revoked.int(0), clock.now - 10 + 900, "kept at least until the access token expires")
        XCTAssertTrue(try harness.services.storage.read.revokedAccessTokens.isRevoked(jti: jti))

        // Further replays stay refused and change nothing more.
        clock.advance(1)
        try assertDatabaseUnchanged("third use") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code)), status: 400, error: "invalid_grant")
        }
    }

    func testCodeReuseWithoutOfflineAccessStillRevokesTheAccessToken() throws {
        let code = try freshCode(H.authorizationParameters(scope: "openid api:serverA"))
        let first = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        XCTAssertNil(first["refresh_token"])
        let jti = try XCTUnwrap(harness.verifiedJWT(try XCTUnwrap(first["access_token"] as? String)).claims["jti"] as? String)
        assertOAuthError(harness.tokenPOST(H.codeExchange(code: code)), status: 400, error: "invalid_grant")
        XCTAssertTrue(try harness.services.storage.read.revokedAccessTokens.isRevoked(jti: jti))
    }

    func testSpentCodePresentedByAnotherClientIsRefusedWithoutRevoking() throws {
        let code = try freshCode()
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: code)).status, 200)
        try assertDatabaseUnchanged("mobile-app-002 replays mobile-app-001's spent code") {
            assertOAuthError(harness.tokenPOST(H.codeExchange(code: code, clientID: "mobile-app-002")), status: 400, error: "invalid_grant")
        }
        XCTAssertEqual(try issuer.count("revoked_access_tokens"), 0, "only the client the code was issued to can trigger revocation")
    }

    // MARK: Client authentication

    func testClientAuthenticationFailuresAreInvalidClient() throws {
        let code = try freshCode()
        let valid = H.codeExchange(code: code)
        let noClient = valid.removing("client_id")
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        // (name, parameters, Authorization header, status, error, Basic challenge expected)
        let cases: [(String, RequestParameters, String?, Int, String, Bool)] = [
            ("no client at all", noClient, nil, 401, "invalid_client", false),
            ("unknown client_id", valid.setting("client_id", "mobile-app-999"), nil, 401, "invalid_client", false),
            ("client_secret in the body", valid.adding("client_secret", "anything-at-all-123"), nil, 401, "invalid_client", false),
            ("client_secret in the body without client_id", noClient.adding("client_secret", "anything-at-all-123"), nil, 401, "invalid_client", false),
            ("repeated client_id", valid.adding("client_id", "mobile-app-001"), nil, 400, "invalid_request", false),
            ("Basic with a password for a public client", noClient, H.basic("mobile-app-001", "secret"), 401, "invalid_client", true),
            ("Basic with a password and matching body client_id", valid, H.basic("mobile-app-001", "secret"), 401, "invalid_client", true),
            ("Basic for an unknown client", noClient, H.basic("mobile-app-999", ""), 401, "invalid_client", true),
            ("Basic that is not base64", noClient, "Basic !!!not-base64!!!", 401, "invalid_client", true),
            ("Basic without a colon", noClient, "Basic " + base64("mobile-app-001"), 401, "invalid_client", true),
            ("Basic with a bad percent escape", noClient, "Basic " + base64("mobile-app-001%ZZ:"), 401, "invalid_client", true),
            ("Basic with invalid UTF-8", noClient, "Basic " + Data([0xFF, 0xFE, 0x3A]).base64EncodedString(), 401, "invalid_client", true),
            ("Basic plus client_secret in the body", noClient.adding("client_secret", "anything-at-all-123"), H.basic("mobile-app-001", ""),
             401, "invalid_client", true),
            ("Basic and body name different clients", valid.setting("client_id", "mobile-app-002"), H.basic("mobile-app-001", ""),
             400, "invalid_request", false),
        ]
        for (name, parameters, authorization, status, error, challenge) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.tokenPOST(parameters, headers: authorization.map { ["authorization": $0] } ?? [:])
                assertOAuthError(response, status: status, error: error, name)
                if challenge {
                    XCTAssertTrue(response.header("WWW-Authenticate")?.hasPrefix("Basic ") ?? false,
                                  "\(name): 401 after Basic carries a Basic challenge, got \(response.header("WWW-Authenticate") ?? "nil")")
                    XCTAssertTrue(response.header("WWW-Authenticate")?.contains("realm=") ?? false, name)
                } else {
                    XCTAssertNil(response.header("WWW-Authenticate"), name)
                }
            }
        }
        assertExchangeSucceeds(code, "after every refused client")
    }

    func testPublicClientMayUseBasicWithAnEmptyPassword() throws {
        let first = try freshCode()
        let viaBasic = harness.tokenPOST(H.codeExchange(code: first, clientID: nil), headers: ["authorization": H.basic("mobile-app-001", "")])
        XCTAssertEqual(viaBasic.status, 200, viaBasic.bodyText)
        let claims = try harness.verifiedJWT(try XCTUnwrap(viaBasic.jsonObject()["access_token"] as? String)).claims
        XCTAssertEqual(claims["client_id"] as? String, "mobile-app-001")

        // Basic plus the same client_id in the body is one identity, not two methods.
        let second = try freshCode()
        let both = harness.tokenPOST(H.codeExchange(code: second), headers: ["authorization": H.basic("mobile-app-001", "")])
        XCTAssertEqual(both.status, 200, both.bodyText)

        // The scheme name is case-insensitive (RFC 9110 §11.1).
        let third = try freshCode()
        let lower = harness.tokenPOST(H.codeExchange(code: third, clientID: nil),
                                      headers: ["authorization": "basic " + Data("mobile-app-001:".utf8).base64EncodedString()])
        XCTAssertEqual(lower.status, 200, lower.bodyText)
    }

    func testConfidentialClientMustAuthenticateWithItsSecretOverBasicOrInTheBody() throws {
        let secret = "a-long-enough-client-secret"
        try issuer.clients.add(clientID: "svc", redirectURIs: ["https://svc.example/cb"], scopes: ["openid", "offline_access"], secret: secret)
        let code = try freshCode(H.authorizationParameters(clientID: "svc", redirectURI: "https://svc.example/cb", scope: "openid offline_access"))
        let valid = H.codeExchange(code: code, clientID: nil, redirectURI: "https://svc.example/cb")
        let cases: [(String, RequestParameters, String?)] = [
            ("no authentication", valid.adding("client_id", "svc"), nil),
            ("a wrong secret in the body", valid.adding("client_id", "svc").adding("client_secret", secret + "x"), nil),
            ("the secret in the body and over Basic", valid.adding("client_id", "svc").adding("client_secret", secret), H.basic("svc", secret)),
            ("Basic with an empty password", valid, H.basic("svc", "")),
            ("Basic with a wrong secret", valid, H.basic("svc", secret + "x")),
        ]
        for (name, parameters, authorization) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.tokenPOST(parameters, headers: authorization.map { ["authorization": $0] } ?? [:])
                assertOAuthError(response, status: 401, error: "invalid_client", name)
                XCTAssertEqual(response.header("WWW-Authenticate") != nil, authorization != nil, name)
            }
        }
        // client_secret_post (RFC 6749 §2.3.1), on a code of its own.
        let second = try freshCode(H.authorizationParameters(clientID: "svc", redirectURI: "https://svc.example/cb", scope: "openid"))
        let posted = harness.tokenPOST(H.codeExchange(code: second, clientID: "svc", redirectURI: "https://svc.example/cb")
            .adding("client_secret", secret))
        XCTAssertEqual(posted.status, 200, posted.bodyText)
        let response = harness.tokenPOST(valid, headers: ["authorization": H.basic("svc", secret)])
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertNotNil(response.jsonObject()["refresh_token"])
    }
}
