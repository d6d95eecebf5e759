import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `POST /login`, in-process: the pending-request cookie, the form token,
/// the login-CSRF origin check, credentials, and what a success creates.
final class LoginResponderTests: SignInTestCase {
    typealias H = SignInHarness

    // MARK: Transport

    func testGETIsRefusedWith405() throws {
        let pending = try harness.startLogin()
        try assertDatabaseUnchanged("GET /login") {
            for method in ["GET", "HEAD", "PUT"] {
                var request = harness.loginRequest(pending)
                request.method = method
                let response = harness.run(harness.login, request)
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "POST", method)
                XCTAssertTrue(response.setCookieHeaders.isEmpty, method)
            }
        }
    }

    func testWrongContentTypeIsRefusedWith415() throws {
        let pending = try harness.startLogin()
        try assertDatabaseUnchanged("JSON login") {
            for contentType in ["application/json", "text/plain", "multipart/form-data; boundary=x"] {
                var request = harness.loginRequest(pending)
                request.headers["content-type"] = contentType
                let response = harness.run(harness.login, request)
                XCTAssertEqual(response.status, 415, contentType)
                XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8")
                XCTAssertNil(response.location, contentType)
                XCTAssertNil(response.cookie("sso_session"), contentType)
            }
            var missing = harness.loginRequest(pending)
            missing.headers["content-type"] = nil
            XCTAssertEqual(harness.run(harness.login, missing).status, 415)
        }
        // The pending request survives the refused posts.
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
    }

    func testMalformedFormEncodingIsRefusedWith400() throws {
        let pending = try harness.startLogin()
        try assertDatabaseUnchanged("bad form") {
            var request = harness.loginRequest(pending)
            request.body = Array("req=\(pending.formToken)&email=alice%40example.com&password=%ZZ".utf8)
            let response = harness.run(harness.login, request)
            XCTAssertEqual(response.status, 400)
            XCTAssertNil(response.cookie("sso_session"))
        }
    }

    // MARK: The pending request (gh_login cookie)

    func testMissingUnknownOrExpiredPendingCookieRedirectsToExpired() throws {
        let pending = try harness.startLogin()
        let cases: [(String, [String: String])] = [
            ("no cookie at all", [:]),
            ("another cookie only", ["sso_session": "whatever"]),
            ("empty gh_login", ["gh_login": ""]),
            ("unknown gh_login", ["gh_login": SecureRandom.token()]),
            ("gh_login with a suffix", ["gh_login": pending.cookieSecret + "x"]),
            ("form token used as cookie", ["gh_login": pending.formToken]),
            ("oversized gh_login", ["gh_login": String(repeating: "a", count: 4000)]),
        ]
        for (name, cookies) in cases {
            try assertDatabaseUnchanged(name) {
                var request = harness.loginRequest(pending)
                request.headers["cookie"] = H.cookieHeader(cookies)["cookie"]
                let response = harness.run(harness.login, request)
                XCTAssertEqual(response.status, 303, name)
                XCTAssertEqual(response.location, "/login.html?error=expired", name)
                XCTAssertTrue(response.setCookieHeaders.isEmpty, name)
            }
        }
        // The real cookie, 599 s later, still works.
        clock.advance(599)
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
    }

    func testPendingRequestExpiresAfterTenMinutes() throws {
        let pending = try harness.startLogin()
        clock.advance(600)
        try assertDatabaseUnchanged("login 600 s after /authorize") {
            let response = harness.submitLogin(pending)
            XCTAssertEqual(response.status, 303)
            XCTAssertEqual(response.location, "/login.html?error=expired")
            XCTAssertNil(response.cookie("sso_session"))
        }
        clock.advance(1)
        try assertDatabaseUnchanged("login 601 s after /authorize") {
            XCTAssertEqual(harness.submitLogin(pending).location, "/login.html?error=expired")
        }
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
        XCTAssertEqual(try issuer.count("authorization_codes"), 0)
    }

    func testWrongFormTokenIsRefusedWith403AndLeavesPendingRequestUsable() throws {
        let pending = try harness.startLogin()
        let other = try harness.startLogin(H.authorizationParameters(state: "other"))
        let cases: [(String, String?)] = [
            ("missing req", ""),
            ("random req", SecureRandom.token(byteCount: 24)),
            ("req of another pending request", other.formToken),
            ("cookie secret as req", pending.cookieSecret),
            ("req with a suffix", pending.formToken + "A"),
        ]
        for (name, req) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.submitLogin(pending, req: req)
                XCTAssertEqual(response.status, 403, name)
                XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8", name)
                XCTAssertNil(response.location, name)
                XCTAssertNil(response.cookie("sso_session"), name)
            }
        }
        try assertDatabaseUnchanged("repeated req") {
            var request = harness.loginRequest(pending)
            request.body += Array("&req=\(pending.formToken)".utf8)
            XCTAssertEqual(harness.run(harness.login, request).status, 403)
        }
        // Both pending requests still complete, each with its own state.
        XCTAssertEqual(harness.submitLogin(pending).locationQuery["state"], "state-123")
        XCTAssertEqual(harness.submitLogin(other).locationQuery["state"], "other")
    }

    // MARK: Login CSRF: Origin

    func testPostFromAnotherOriginIsRefusedWith403() throws {
        let pending = try harness.startLogin()
        // Browsers without Fetch Metadata: the Origin header decides.
        let origins = ["https://evil.example", "https://localhost:8444", "https://localhost:8446", "http://localhost:8443",
                       "https://localhost:8443.evil.example", "https://LOCALHOST:8443x", "https://localhost:8443/", ""]
        // Browsers with Fetch Metadata: anything but same-origin is refused, whatever Origin says.
        let fetchSites: [(String, String)] = [("cross-site", "https://evil.example"), ("same-site", "https://localhost:8444"),
                                              ("cross-site", "null"), ("same-site", "null"), ("none", harness.issuerOrigin),
                                              ("cross-site", harness.issuerOrigin)]
        let requests = origins.map { (origin: String) in (origin, harness.loginRequest(pending, origin: origin)) }
            + fetchSites.map { site, origin in
                ("\(site) from \(origin)", harness.loginRequest(pending, origin: origin, extraHeaders: ["sec-fetch-site": site]))
            }
        for (name, request) in requests {
            try assertDatabaseUnchanged(name) {
                let response = harness.run(harness.login, request)
                XCTAssertEqual(response.status, 403, name)
                XCTAssertNil(response.location, name)
                XCTAssertNil(response.cookie("sso_session"), name)
                XCTAssertTrue(response.bodyText.contains("another site"), name)
            }
        }
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"], "the pending request was not consumed")
    }

    /// login.html is served with Referrer-Policy: no-referrer, so a browser
    /// posts its form with `Origin: null` (Fetch, "append a request Origin
    /// header"; headless Chromium 156 sends `Origin: null`,
    /// `Sec-Fetch-Site: same-origin`). That post must sign in.
    func testBrowserFormPostWithNullOriginFromTheNoReferrerLoginPageSignsIn() throws {
        let pending = try harness.startLogin()
        let request = harness.loginRequest(pending, origin: "null", extraHeaders: ["sec-fetch-site": "same-origin"])
        let response = harness.run(harness.login, request)
        XCTAssertEqual(response.status, 303, "a real browser's login post is refused: \(response.bodyText.prefix(300))")
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        XCTAssertNotNil(response.locationQuery["code"])
        XCTAssertNotNil(response.cookie("sso_session"))
    }

    func testSameOriginPostWithIssuerOriginAndFetchMetadataSignsIn() throws {
        let pending = try harness.startLogin()
        let request = harness.loginRequest(pending, extraHeaders: ["sec-fetch-site": "same-origin"])
        XCTAssertNotNil(harness.run(harness.login, request).locationQuery["code"])
    }

    func testPostWithoutOriginHeaderIsAcceptedForCurl() throws {
        let pending = try harness.startLogin()
        let response = harness.run(harness.login, harness.loginRequest(pending, useIssuerOrigin: false))
        XCTAssertEqual(response.status, 303)
        XCTAssertNotNil(response.locationQuery["code"])
    }

    // MARK: Credentials

    func testBadCredentialsRedirectBackToTheSameFormWithoutSession() throws {
        try issuer.users.add(email: "bob@example.com", name: "Bob", password: "bobs password 1")
        try issuer.users.disable(email: "bob@example.com")
        let pending = try harness.startLogin()
        let cases: [(String, String?, String?)] = [
            ("wrong password", DemoData.email, "not the password"),
            ("password with different case", DemoData.email, H.password.uppercased()),
            ("password with trailing space", DemoData.email, H.password + " "),
            ("unknown email", "mallory@example.com", H.password),
            ("disabled user, right password", "bob@example.com", "bobs password 1"),
            ("empty email", "", H.password),
            ("empty password", DemoData.email, ""),
            ("missing email", nil, H.password),
            ("missing password", DemoData.email, nil),
            ("both missing", nil, nil),
            ("overlong email", String(repeating: "a", count: 250) + "@example.com", H.password),
        ]
        for (name, email, password) in cases {
            try assertDatabaseUnchanged(name) {
                let response = harness.submitLogin(pending, email: email, password: password)
                XCTAssertEqual(response.status, 303, name)
                // The address typed comes back for the form (when the URL can carry it as it is); the password never does.
                let kept = email.flatMap { LoginPageLocation.isVerbatim($0) ? $0 : nil }
                XCTAssertEqual(response.location, harness.passwordPage(pending, error: "invalid_credentials", email: kept), name)
                XCTAssertTrue(response.setCookieHeaders.isEmpty, "\(name): no session cookie, gh_login kept")
            }
        }
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
        XCTAssertEqual(try issuer.count("authorization_codes"), 0)
        // A later right answer on the same form still succeeds.
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
    }

    func testEmailIsMatchedCaseInsensitively() throws {
        let pending = try harness.startLogin()
        let response = harness.submitLogin(pending, email: "Alice@Example.COM")
        XCTAssertNotNil(response.locationQuery["code"])
    }

    // MARK: Success

    func testSuccessfulLoginCreatesSessionAndRedirectsWithCodeStateAndIss() throws {
        let pending = try harness.startLogin()
        clock.advance(42)
        let response = harness.submitLogin(pending)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")

        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        let query = response.locationQuery
        let code = try XCTUnwrap(query["code"])
        XCTAssertEqual(code.utf8.count, 43)
        XCTAssertEqual(query["state"], "state-123")
        XCTAssertEqual(query["iss"], harness.issuerOrigin)
        XCTAssertEqual(Set(query.keys), ["code", "state", "iss"])

        XCTAssertEqual(response.setCookieHeaders.count, 3)
        // The interstitial page may offer to save the password: one was typed.
        let method = try XCTUnwrap(response.cookie(InterstitialSignInMethod.cookieName))
        XCTAssertEqual(method.value, "password")
        XCTAssertEqual(method.path, "/mobile/postlogin.html")
        XCTAssertTrue(method.isHttpOnly && method.isSecure)
        XCTAssertEqual(method.maxAge, 120)
        let session = try XCTUnwrap(response.cookie("sso_session"))
        XCTAssertTrue(session.isHttpOnly)
        XCTAssertTrue(session.isSecure)
        XCTAssertEqual(session.sameSite, "Lax")
        XCTAssertEqual(session.path, "/")
        XCTAssertNil(session.domain, "host-only")
        XCTAssertEqual(session.maxAge, issuer.config.ssoSessionLifetime)
        XCTAssertEqual(session.value.utf8.count, 43)
        let cleared = try XCTUnwrap(response.cookie("gh_login"))
        XCTAssertEqual(cleared.value, "")
        XCTAssertEqual(cleared.maxAge, 0)
        XCTAssertEqual(cleared.path, "/login", "cleared at the path it was set on")

        // One session row with auth_time = now; the pending request is gone; one code row bound to it.
        let rows = try harness.sessionRows()
        XCTAssertEqual(rows.count, 1)
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row.authTime, clock.now)
        XCTAssertNil(row.endedAt)
        let stored = try XCTUnwrap(harness.database.queryOne("""
            SELECT s.secret_hash, s.user_id, s.expires_at FROM sso_sessions s WHERE s.sid = ?
            """, [.text(row.sid)]))
        XCTAssertEqual(stored.bytes(0), SecretHash.of(session.value))
        XCTAssertEqual(stored.int(1), harness.alice.id)
        XCTAssertEqual(stored.int(2), clock.now + Int64(issuer.config.ssoSessionLifetime))
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0)
        let codeRow = try XCTUnwrap(harness.database.queryOne("""
            SELECT client_id, redirect_uri, code_challenge, scope, nonce, sid, user_id, auth_time, created_at, expires_at, used_at
            FROM authorization_codes WHERE code_hash = ?
            """, [.blob(SecretHash.of(code))]))
        XCTAssertEqual(codeRow.string(0), "mobile-app-001")
        XCTAssertEqual(codeRow.string(1), H.customSchemeRedirect)
        XCTAssertEqual(codeRow.string(2), H.challenge)
        XCTAssertEqual(codeRow.string(3), H.fullScope)
        XCTAssertEqual(codeRow.optionalString(4), "nonce-456")
        XCTAssertEqual(codeRow.string(5), row.sid)
        XCTAssertEqual(codeRow.int(6), harness.alice.id)
        XCTAssertEqual(codeRow.int(7), clock.now)
        XCTAssertEqual(codeRow.int(9) - codeRow.int(8), 60, "codes live 60 s")
        XCTAssertNil(codeRow.optionalInt(10))

        // The new cookie is a live session for /authorize.
        let next = harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": session.value])
        XCTAssertNotNil(next.locationQuery["code"])
    }

    func testLoginToLoopbackRedirectKeepsThePort() throws {
        let redirect = "http://127.0.0.1:53682/callback"
        let pending = try harness.startLogin(H.authorizationParameters(redirectURI: redirect))
        let response = harness.submitLogin(pending)
        XCTAssertEqual(response.locationBase, redirect)
        XCTAssertNotNil(response.locationQuery["code"])
    }

    func testPendingRequestIsSingleUse() throws {
        let pending = try harness.startLogin()
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
        try assertDatabaseUnchanged("second POST with the same gh_login") {
            let again = harness.submitLogin(pending)
            XCTAssertEqual(again.status, 303)
            XCTAssertEqual(again.location, "/login.html?error=expired")
            XCTAssertTrue(again.setCookieHeaders.isEmpty)
        }
        XCTAssertEqual(try issuer.count("sso_sessions"), 1)
        XCTAssertEqual(try issuer.count("authorization_codes"), 1)
    }

    func testSignInAgainReplacesTheSessionItWasAskedToReplace() throws {
        let first = try harness.signIn()
        let firstSID = try XCTUnwrap(harness.sessionRows().first?.sid)
        clock.advance(120)
        let pending = try harness.startLogin(H.authorizationParameters().adding("prompt", "login"),
                                             cookies: ["sso_session": first.sessionSecret])
        let response = harness.submitLogin(pending)
        let newSecret = try XCTUnwrap(response.cookie("sso_session")).value
        XCTAssertNotEqual(newSecret, first.sessionSecret, "a fresh secret: no session fixation")
        let rows = try harness.sessionRows()
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows.first { $0.sid == firstSID }?.endedAt, clock.now, "the replaced session ended")
        let fresh = try XCTUnwrap(rows.first { $0.sid != firstSID })
        XCTAssertNil(fresh.endedAt)
        XCTAssertEqual(fresh.authTime, clock.now, "auth_time is the new sign-in")
        // The old cookie no longer signs anyone in.
        XCTAssertEqual(harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": first.sessionSecret]).locationBase, "/login.html")
    }

    /// Found by the code review: the replaced session ended, but its
    /// refresh tokens and device secrets stayed alive (a bare end of the
    /// session row); they end with it, as at logout.
    func testTheReplacedSessionsRefreshTokensEndWithIt() throws {
        let first = try harness.signIn()
        let issued = harness.tokenPOST(H.codeExchange(code: first.code)).jsonObject()
        let refreshToken = try XCTUnwrap(issued["refresh_token"] as? String)
        let pending = try harness.startLogin(H.authorizationParameters().adding("prompt", "login"),
                                             cookies: ["sso_session": first.sessionSecret])
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"])
        XCTAssertEqual(try issuer.count("refresh_tokens", "revoked_at IS NULL AND used_at IS NULL"), 0)
        let refreshed = harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", refreshToken),
                                                             ("client_id", "mobile-app-001")]))
        XCTAssertEqual(refreshed.jsonObject()["error"] as? String, "invalid_grant")
    }

    /// Review R6: a sign-in that waited at /login while an administrator
    /// changed the client completes under the registration as it is then.
    func testAPendingSignInIsAnsweredUnderTheRegistrationAsItIsWhenItCompletes() throws {
        var removeRedirect = ClientChanges()
        removeRedirect.removeRedirectURIs = [H.customSchemeRedirect]
        var pending = try harness.startLogin()
        _ = try harness.services.clients.update(clientID: "mobile-app-001", removeRedirect)
        var response = harness.submitLogin(pending)
        XCTAssertEqual(response.status, 400)
        XCTAssertNil(response.location, "never redirected to a URI no longer registered")
        XCTAssertEqual(response.logDetail, "signed in, but the client's registration changed: redirect_uri is not registered for client mobile-app-001")
        XCTAssertEqual(try issuer.count("authorization_codes"), 0)
        XCTAssertEqual(try issuer.count("sso_sessions"), 0)
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0, "the request is spent")

        var removeScope = ClientChanges()
        removeScope.removeScopes = ["api:serverB"]
        pending = try harness.startLogin(H.authorizationParameters(redirectURI: H.loopbackRedirect))
        _ = try harness.services.clients.update(clientID: "mobile-app-001", removeScope)
        response = harness.submitLogin(pending)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationQuery["error"], "invalid_scope")
        XCTAssertEqual(response.locationQuery["state"], "state-123")
        XCTAssertNil(response.locationQuery["code"])
        XCTAssertEqual(try issuer.count("authorization_codes"), 0)

        pending = try harness.startLogin(H.authorizationParameters(redirectURI: H.loopbackRedirect, scope: "openid profile"))
        XCTAssertNotNil(harness.submitLogin(pending).locationQuery["code"], "what the registration still allows completes")
    }

    func testCodesSessionSecretsAndFormTokensAreNeverStoredInClear() throws {
        let pending = try harness.startLogin()
        let response = harness.submitLogin(pending)
        let code = try XCTUnwrap(response.locationQuery["code"])
        let session = try XCTUnwrap(response.cookie("sso_session")).value
        let tokens = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        let refresh = try XCTUnwrap(tokens["refresh_token"] as? String)
        let secrets = ["code": code, "session": session, "gh_login": pending.cookieSecret, "req": pending.formToken, "refresh": refresh]

        // Every value of every row, text and blob alike.
        var cells: [String] = []
        for table in TemporaryIssuer.signInTables {
            for row in try harness.database.query("SELECT * FROM \(table)") {
                for value in row.values {
                    switch value {
                    case .text(let text): cells.append(text)
                    case .blob(let bytes): cells.append(String(decoding: bytes, as: UTF8.self))
                    default: break
                    }
                }
            }
        }
        for (name, secret) in secrets {
            XCTAssertFalse(cells.contains { $0.contains(secret) }, "\(name) stored in clear")
        }
        // The raw database and WAL bytes too.
        for suffix in ["", "-wal"] {
            guard let data = FileManager.default.contents(atPath: issuer.config.databasePath + suffix) else { continue }
            for (name, secret) in secrets {
                XCTAssertNil(data.range(of: Data(secret.utf8)), "\(name) in the raw \(suffix.isEmpty ? "database" : "WAL") file")
            }
        }
        // What is stored is the SHA-256 of each secret.
        XCTAssertEqual(try issuer.count("authorization_codes", "code_hash = ?", [.blob(SecretHash.of(code))]), 1)
        XCTAssertEqual(try issuer.count("sso_sessions", "secret_hash = ?", [.blob(SecretHash.of(session))]), 1)
        XCTAssertEqual(try issuer.count("refresh_tokens", "token_hash = ?", [.blob(SecretHash.of(refresh))]), 1)
    }
}
