import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `GET|POST /authorize`, in-process: every check of the authorization
/// request, each refusal, and the three outcomes (login page, code, error).
final class AuthorizeResponderTests: SignInTestCase {
    typealias H = SignInHarness

    // MARK: No session: the login page

    func testGETWithoutSessionSendsBrowserToLoginPageWithStrictPendingCookie() throws {
        let response = harness.authorizeGET(H.authorizationParameters())
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertEqual(response.locationBase, "/login.html")
        let req = try XCTUnwrap(response.locationQuery["req"])
        XCTAssertEqual(req.utf8.count, 32, "24 random bytes, base64url")
        XCTAssertEqual(response.locationQuery.count, 2, "req and the app's client_id, no login_hint: \(response.location ?? "")")
        XCTAssertEqual(response.locationQuery["client_id"], "mobile-app-001", "the login page asks for the app's name by it")

        XCTAssertEqual(response.setCookieHeaders.count, 1)
        let cookie = try XCTUnwrap(response.cookie("gh_login"))
        XCTAssertTrue(cookie.isHttpOnly)
        XCTAssertTrue(cookie.isSecure)
        XCTAssertEqual(cookie.sameSite, "Strict")
        XCTAssertEqual(cookie.path, "/login")
        XCTAssertNil(cookie.domain, "host-only")
        XCTAssertEqual(cookie.maxAge, 600)
        XCTAssertEqual(cookie.value.utf8.count, 43, "32 random bytes, base64url")
        XCTAssertNotEqual(cookie.value, req, "cookie secret and form token are independent")

        // The pending request is stored under hashes of both secrets, with what was validated.
        let row = try XCTUnwrap(harness.database.queryOne("""
            SELECT secret_hash, form_token_hash, client_id, redirect_uri, scope, state, nonce, code_challenge, max_age, replaces_sid,
                   created_at, expires_at FROM pending_authorizations
            """))
        XCTAssertEqual(row.bytes(0), SecretHash.of(cookie.value))
        XCTAssertEqual(row.bytes(1), SecretHash.of(req))
        XCTAssertEqual(row.string(2), "mobile-app-001")
        XCTAssertEqual(row.string(3), H.customSchemeRedirect)
        XCTAssertEqual(row.string(4), H.fullScope)
        XCTAssertEqual(row.optionalString(5), "state-123")
        XCTAssertEqual(row.optionalString(6), "nonce-456")
        XCTAssertEqual(row.string(7), H.challenge)
        XCTAssertNil(row.optionalInt(8))
        XCTAssertNil(row.optionalString(9))
        XCTAssertEqual(row.int(10), clock.now)
        XCTAssertEqual(row.int(11), clock.now + 600)
        XCTAssertEqual(try issuer.count("authorization_codes"), 0, "no code before the user signs in")
    }

    func testPOSTFormBodyIsHandledLikeGET() throws {
        let response = harness.authorizePOST(H.authorizationParameters())
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, "/login.html")
        XCTAssertNotNil(response.locationQuery["req"])
        XCTAssertEqual(response.cookie("gh_login")?.sameSite, "Strict")
        XCTAssertEqual(try issuer.count("pending_authorizations"), 1)

        // And the pending request it made completes a sign-in.
        let pending = PendingLogin(cookieSecret: try XCTUnwrap(response.cookie("gh_login")).value,
                                   formToken: try XCTUnwrap(response.locationQuery["req"]), response: response)
        let login = harness.submitLogin(pending)
        XCTAssertEqual(login.locationBase, H.customSchemeRedirect)
        XCTAssertNotNil(login.locationQuery["code"])
    }

    func testPOSTWithAnotherContentTypeShows415ErrorPageWithoutRedirect() throws {
        try assertDatabaseUnchanged("POST /authorize with JSON") {
            let request = Request(method: "POST", path: "/authorize", headers: ["content-type": "application/json"],
                                  body: Array(#"{"client_id":"mobile-app-001"}"#.utf8))
            let response = harness.run(harness.authorize, request)
            XCTAssertEqual(response.status, 415)
            XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8")
            XCTAssertNil(response.location)
            XCTAssertTrue(response.setCookieHeaders.isEmpty)
        }
    }

    func testMalformedPercentEncodingShowsErrorPageWithoutRedirect() throws {
        try assertDatabaseUnchanged("bad percent escape") {
            let query = H.authorizationParameters().encoded + "&state=%zz"
            let response = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: query))
            XCTAssertEqual(response.status, 400)
            XCTAssertNil(response.location)
            XCTAssertTrue(response.bodyText.contains("malformed"))
        }
    }

    func testLoginHintIsForwardedPercentEncoded() throws {
        let response = harness.authorizeGET(H.authorizationParameters().setting("login_hint", "alice+work@example.com&x=<y>"))
        XCTAssertEqual(response.status, 303)
        let location = try XCTUnwrap(response.location)
        XCTAssertTrue(location.hasSuffix("&login_hint=alice%2Bwork%40example.com%26x%3D%3Cy%3E"), location)
        XCTAssertEqual(response.locationQuery["login_hint"], "alice+work@example.com&x=<y>")
        XCTAssertEqual(response.locationQuery.count, 3, "the hint cannot inject parameters (req, client_id, login_hint)")
    }

    // MARK: Untrusted client or redirect URI: error page, never a redirect

    func testUntrustedClientOrRedirectURIShowsErrorPageAndNeverRedirects() throws {
        let valid = H.authorizationParameters()
        let cases: [(String, RequestParameters, String)] = [
            ("missing client_id", valid.removing("client_id"), "has no client_id"),
            ("empty client_id", valid.setting("client_id", ""), "has no client_id"),
            ("repeated client_id", valid.adding("client_id", "mobile-app-001"), "client_id is repeated"),
            ("unknown client_id", valid.setting("client_id", "mobile-app-999"), "not registered"),
            // The outside review: "client_id=…%00x" was accepted as the client.
            ("client_id with a NUL", valid.setting("client_id", "mobile-app-001\u{0}x"), "client_id contains a control character"),
            ("client_id with a C1 control", valid.setting("client_id", "mobile-app-001\u{85}"), "client_id contains a control character"),
            ("missing redirect_uri", valid.removing("redirect_uri"), "has no redirect_uri"),
            ("repeated redirect_uri", valid.adding("redirect_uri", H.customSchemeRedirect), "redirect_uri is repeated"),
            ("redirect_uri with a NUL", valid.setting("redirect_uri", H.customSchemeRedirect + "\u{0}x"),
             "redirect_uri contains a control character"),
            ("redirect_uri with a tab", valid.setting("redirect_uri", H.customSchemeRedirect + "\t"), "redirect_uri contains a control character"),
            ("unregistered redirect_uri", valid.setting("redirect_uri", "https://evil.example/callback"), "not registered"),
            ("prefix of a registered URI", valid.setting("redirect_uri", "myapp:auth/callbackx"), "not registered"),
            ("registered URI plus query", valid.setting("redirect_uri", "myapp:auth/callback?x=1"), "not registered"),
            ("registered URI plus fragment", valid.setting("redirect_uri", "myapp:auth/callback#x"), "not registered"),
            ("case changed", valid.setting("redirect_uri", "MYAPP:auth/callback"), "not registered"),
            ("post-logout URI is not a login URI", valid.setting("redirect_uri", "myapp:auth/logout"), "not registered"),
        ]
        for (name, parameters, message) in cases {
            for method in ["GET", "POST"] {
                try assertDatabaseUnchanged("\(method) \(name)") {
                    let response = method == "GET" ? harness.authorizeGET(parameters) : harness.authorizePOST(parameters)
                    XCTAssertEqual(response.status, 400, "\(method) \(name)")
                    XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8", name)
                    XCTAssertEqual(response.header("Cache-Control"), "no-store", name)
                    XCTAssertNil(response.location, "\(method) \(name) must not redirect")
                    XCTAssertTrue(response.setCookieHeaders.isEmpty, name)
                    XCTAssertTrue(response.bodyText.contains(message), "\(name): \(response.bodyText)")
                }
            }
        }
    }

    /// For the app's developer: the error code, the parameter at fault, and
    /// the request id that the request's log line carries too.
    func testTheErrorPageNamesTheCodeTheParameterAndTheRequestID() throws {
        let valid = H.authorizationParameters()
        let cases: [(RequestParameters, String, String?)] = [
            (valid.setting("client_id", "mobile-app-999"), "invalid_client", "client_id"),
            (valid.removing("client_id"), "invalid_request", "client_id"),
            (valid.setting("redirect_uri", "https://evil.example/callback"), "invalid_request", "redirect_uri"),
            (valid.adding("redirect_uri", H.customSchemeRedirect), "invalid_request", "redirect_uri"),
            (valid.setting("client_id", "mobile-app-001").adding("request_uri", "urn:ietf:params:oauth:request_uri:nope"),
             "invalid_request", "request_uri"),
        ]
        for (parameters, code, parameter) in cases {
            let response = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: parameters.encoded,
                                                                  requestID: "4f1c9d0e8a7b6c5d"))
            XCTAssertEqual(response.status, 400)
            let page = response.bodyText
            XCTAssertTrue(page.contains("<dt>Error</dt><dd><code>\(code)</code></dd>"), page)
            if let parameter { XCTAssertTrue(page.contains("<dt>Parameter</dt><dd><code>\(parameter)</code></dd>"), page) }
            XCTAssertTrue(page.contains("<dt>Request ID</dt><dd><code>4f1c9d0e8a7b6c5d</code></dd>"), page)
        }
        let malformed = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: "client_id=%zz", requestID: "r1"))
        XCTAssertTrue(malformed.bodyText.contains("<dt>Error</dt><dd><code>invalid_request</code></dd>"), malformed.bodyText)
        XCTAssertFalse(malformed.bodyText.contains("<dt>Parameter</dt>"), "a query that cannot be read names no parameter")
        XCTAssertTrue(malformed.bodyText.contains("<code>r1</code>"))
        let german = harness.run(harness.authorize, Request(method: "GET", path: "/authorize", query: valid.setting("client_id", "x").encoded,
                                                            headers: ["accept-language": "de"], requestID: "r2"))
        XCTAssertTrue(german.bodyText.contains("<dt>Anfrage-ID</dt><dd><code>r2</code></dd>"), german.bodyText)
    }

    func testUnknownClientWithValidSessionStillGetsErrorPage() throws {
        let session = try harness.signIn().sessionSecret
        try assertDatabaseUnchanged("unknown client with a session") {
            let response = harness.authorizeGET(H.authorizationParameters(clientID: "nobody"), cookies: ["sso_session": session])
            XCTAssertEqual(response.status, 400)
            XCTAssertNil(response.location)
        }
    }

    func testErrorPageEscapesMarkupFromTheRequest() throws {
        let hostile = "<script>alert(1)</script>"
        for parameters in [H.authorizationParameters(clientID: hostile),
                           H.authorizationParameters(redirectURI: "https://x.example/\(hostile)"),
                           H.authorizationParameters(clientID: "mobile-app-001\"><img src=x onerror=alert(1)>")] {
            let response = harness.authorizeGET(parameters)
            XCTAssertEqual(response.status, 400)
            XCTAssertNil(response.location)
            XCTAssertFalse(response.bodyText.contains("<script"), response.bodyText)
            XCTAssertFalse(response.bodyText.contains("<img src=x"), response.bodyText)
            XCTAssertFalse(response.bodyText.contains("onerror"), response.bodyText)
            XCTAssertFalse(response.bodyText.contains("alert(1)"), "the page does not echo request values")
        }
    }

    // MARK: Loopback redirect URIs (RFC 8252 §7.3)

    func testLoopbackRedirectAcceptsAnyPortForTheRegisteredPath() throws {
        for port in [1, 8080, 51_234, 65_535] {
            let redirect = "http://127.0.0.1:\(port)/callback"
            let response = harness.authorizeGET(H.authorizationParameters(redirectURI: redirect))
            XCTAssertEqual(response.status, 303, redirect)
            XCTAssertEqual(response.locationBase, "/login.html", redirect)
            let stored = try harness.database.queryOne("SELECT redirect_uri FROM pending_authorizations ORDER BY created_at DESC, rowid DESC")
            XCTAssertEqual(stored?.string(0), redirect, "the exact requested URI, port included, is what the code is bound to")
        }
        let portless = harness.authorizeGET(H.authorizationParameters(redirectURI: H.loopbackRedirect))
        XCTAssertEqual(portless.status, 303, "the registered URI itself")
        XCTAssertEqual(portless.locationBase, "/login.html")
    }

    func testLoopbackLookalikesAreRefusedWithErrorPage() throws {
        let lookalikes = [
            "http://127.0.0.1.evil.com/callback",
            "http://127.0.0.1.evil.com:1234/callback",
            "http://localhost:1234/callback",
            "http://localhost/callback",
            "http://127.0.0.1:1234/other",
            "http://127.0.0.1:1234/callback/",
            "http://127.0.0.1:1234/callback/extra",
            "http://127.0.0.1:1234/Callback",
            "http://127.0.0.1:1234/callback?x=1",
            "http://127.0.0.1:1234/callback#f",
            "https://127.0.0.1:1234/callback",
            "http://[::1]:1234/callback",
            "http://127.0.0.2:1234/callback",
            "http://127.0.0.1:0/callback",
            "http://127.0.0.1:70000/callback",
            "http://evil.com@127.0.0.1:1234/callback",
            "http://127.0.0.1:1234@evil.com/callback",
            "http://127.0.0.1:1234/%63allback",
            "http://2130706433:1234/callback",
        ]
        for uri in lookalikes {
            try assertDatabaseUnchanged(uri) {
                let response = harness.authorizeGET(H.authorizationParameters(redirectURI: uri))
                XCTAssertEqual(response.status, 400, uri)
                XCTAssertNil(response.location, "\(uri) must never be redirected to")
                XCTAssertTrue(response.bodyText.contains("not registered"), uri)
            }
        }
    }

    func testLoopbackRedirectWithPortReceivesCodeWhenSessionIsLive() throws {
        let session = try harness.signIn().sessionSecret
        let redirect = "http://127.0.0.1:49152/callback"
        let response = harness.authorizeGET(H.authorizationParameters(redirectURI: redirect), cookies: ["sso_session": session])
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, redirect)
        XCTAssertNotNil(response.locationQuery["code"])
    }

    // MARK: Trusted redirect URI: errors go back to the client

    func testInvalidRequestsRedirectWithErrorStateAndIss() throws {
        let valid = H.authorizationParameters()
        let cases: [(String, RequestParameters, String)] = [
            ("missing response_type", valid.removing("response_type"), "invalid_request"),
            ("response_type=token", valid.setting("response_type", "token"), "unsupported_response_type"),
            ("response_type=id_token", valid.setting("response_type", "id_token"), "unsupported_response_type"),
            ("response_type=code id_token", valid.setting("response_type", "code id_token"), "unsupported_response_type"),
            ("response_mode=fragment", valid.adding("response_mode", "fragment"), "invalid_request"),
            ("missing code_challenge", valid.removing("code_challenge"), "invalid_request"),
            ("missing code_challenge_method", valid.removing("code_challenge_method"), "invalid_request"),
            ("code_challenge_method=plain", valid.setting("code_challenge_method", "plain"), "invalid_request"),
            ("code_challenge_method=s256", valid.setting("code_challenge_method", "s256"), "invalid_request"),
            ("challenge too short", valid.setting("code_challenge", "abc"), "invalid_request"),
            ("challenge too long", valid.setting("code_challenge", H.challenge + "A"), "invalid_request"),
            ("challenge with base64 '+'", valid.setting("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"), "invalid_request"),
            ("challenge with padding", valid.setting("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c="), "invalid_request"),
            ("challenge with stray bits", valid.setting("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"), "invalid_request"),
            ("plain verifier as challenge", valid.setting("code_challenge", H.verifier + "abc"), "invalid_request"),
            ("missing scope", valid.removing("scope"), "invalid_scope"),
            ("scope without openid", valid.setting("scope", "profile email"), "invalid_scope"),
            ("scope outside the client's", valid.setting("scope", "openid admin"), "invalid_scope"),
            ("scope case changed", valid.setting("scope", "OpenID"), "invalid_scope"),
            ("repeated scope", valid.adding("scope", "openid"), "invalid_request"),
            ("repeated response_type", valid.adding("response_type", "code"), "invalid_request"),
            ("repeated code_challenge", valid.adding("code_challenge", H.challenge), "invalid_request"),
            ("repeated nonce", valid.adding("nonce", "other"), "invalid_request"),
            ("request object", valid.adding("request", "eyJhbGciOiJub25lIn0.e30."), "invalid_request_object"),
            ("prompt=none login", valid.adding("prompt", "none login"), "invalid_request"),
            ("prompt=consent none", valid.adding("prompt", "consent none"), "invalid_request"),
            ("unknown prompt", valid.adding("prompt", "bogus"), "invalid_request"),
            ("max_age=-1", valid.adding("max_age", "-1"), "invalid_request"),
            ("max_age=abc", valid.adding("max_age", "abc"), "invalid_request"),
            ("max_age=1.5", valid.adding("max_age", "1.5"), "invalid_request"),
            ("max_age=99999999999", valid.adding("max_age", "99999999999"), "invalid_request"),
            ("max_age=0x10", valid.adding("max_age", "0x10"), "invalid_request"),
            ("nonce over 1024 bytes", valid.setting("nonce", String(repeating: "n", count: 1025)), "invalid_request"),
            ("login_hint over 254 bytes", valid.adding("login_hint", String(repeating: "h", count: 255)), "invalid_request"),
        ]
        for (name, parameters, expected) in cases {
            for method in ["GET", "POST"] {
                try assertDatabaseUnchanged("\(method) \(name)") {
                    let response = method == "GET" ? harness.authorizeGET(parameters) : harness.authorizePOST(parameters)
                    XCTAssertEqual(response.status, 303, "\(method) \(name)")
                    XCTAssertEqual(response.locationBase, H.customSchemeRedirect, name)
                    let query = response.locationQuery
                    XCTAssertEqual(query["error"], expected, "\(method) \(name): \(response.location ?? "")")
                    XCTAssertNotNil(query["error_description"], name)
                    XCTAssertEqual(query["state"], "state-123", name)
                    XCTAssertEqual(query["iss"], harness.issuerOrigin, name)
                    XCTAssertNil(query["code"], name)
                    XCTAssertTrue(response.setCookieHeaders.isEmpty, name)
                }
            }
        }
    }

    /// A refused scope is named when it reads as a scope name; anything
    /// else the request sent is never echoed.
    func testErrorDescriptionNamesARefusedScopeButEchoesNothingElse() throws {
        let response = harness.authorizeGET(H.authorizationParameters(scope: "openid <b>evil</b>"))
        XCTAssertEqual(response.locationQuery["error"], "invalid_scope")
        XCTAssertFalse(response.locationQuery["error_description"]?.contains("evil") ?? true)
        let named = harness.authorizeGET(H.authorizationParameters(scope: "openid profile api:serverC"))
        XCTAssertEqual(named.locationQuery["error"], "invalid_scope")
        XCTAssertEqual(named.locationQuery["error_description"], "scope api:serverC is unknown to this server")
        // Known (a registered API owns it) but not this client's.
        try harness.issuer.services.apis.add(audience: "https://orders.example.com", name: nil, scopes: ["orders:read"])
        let notAllowed = harness.authorizeGET(H.authorizationParameters(scope: "openid orders:read"))
        XCTAssertEqual(notAllowed.locationQuery["error_description"], "scope orders:read is not allowed for this client")
        let outsideSyntax = harness.authorizeGET(H.authorizationParameters(scope: "openid caf\u{E9}"))
        XCTAssertEqual(outsideSyntax.locationQuery["error"], "invalid_scope")
        XCTAssertEqual(outsideSyntax.locationQuery["error_description"], "scope holds a value that is not a scope token (RFC 6749 §3.3)")
    }

    func testErrorRedirectKeepsTheLoopbackPortAndOmitsAnOverlongState() throws {
        let redirect = "http://127.0.0.1:6000/callback"
        let response = harness.authorizeGET(H.authorizationParameters(redirectURI: redirect, state: String(repeating: "s", count: 1025)))
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, redirect)
        XCTAssertEqual(response.locationQuery["error"], "invalid_request")
        XCTAssertNil(response.locationQuery["state"], "a state too long to accept is not echoed either")
        XCTAssertEqual(response.locationQuery["iss"], harness.issuerOrigin)
    }

    func testPromptNoneWithoutSessionRedirectsWithLoginRequired() throws {
        try assertDatabaseUnchanged("prompt=none without a session") {
            let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none"))
            XCTAssertEqual(response.status, 303)
            XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
            XCTAssertEqual(response.locationQuery["error"], "login_required")
            XCTAssertEqual(response.locationQuery["state"], "state-123")
            XCTAssertEqual(response.locationQuery["iss"], harness.issuerOrigin)
            XCTAssertNil(response.cookie("gh_login"), "no login UI with prompt=none")
        }
        // A dead or forged session cookie is no session either.
        try assertDatabaseUnchanged("prompt=none with a forged session cookie") {
            let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none"), cookies: ["sso_session": "forged"])
            XCTAssertEqual(response.locationQuery["error"], "login_required")
        }
    }

    // MARK: Live session: straight back to the client with a code

    func testLiveSessionSkipsLoginAndRedirectsWithCodeStateAndIss() throws {
        let signedIn = try harness.signIn()
        clock.advance(30)
        let codesBefore = try issuer.count("authorization_codes")
        let response = harness.authorizeGET(H.authorizationParameters(state: "second"), cookies: ["sso_session": signedIn.sessionSecret])
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        let query = response.locationQuery
        let code = try XCTUnwrap(query["code"])
        XCTAssertNotEqual(code, signedIn.code)
        XCTAssertEqual(query["state"], "second")
        XCTAssertEqual(query["iss"], harness.issuerOrigin)
        XCTAssertEqual(Set(query.keys), ["code", "state", "iss"])
        XCTAssertTrue(response.setCookieHeaders.isEmpty, "no new session, no pending cookie")
        XCTAssertEqual(try issuer.count("authorization_codes"), codesBefore + 1)
        XCTAssertEqual(try issuer.count("pending_authorizations"), 0)

        // The code is bound to the existing session and its original auth_time.
        let session = try XCTUnwrap(harness.sessionRows().first)
        let row = try XCTUnwrap(harness.database.queryOne("SELECT sid, auth_time FROM authorization_codes WHERE code_hash = ?",
                                                          [.blob(SecretHash.of(code))]))
        XCTAssertEqual(row.string(0), session.sid)
        XCTAssertEqual(row.int(1), session.authTime)
        XCTAssertEqual(session.authTime, clock.now - 30)
    }

    func testLiveSessionViaPOSTAlsoIssuesCode() throws {
        let session = try harness.signIn().sessionSecret
        let response = harness.authorizePOST(H.authorizationParameters(), cookies: ["sso_session": session])
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
        XCTAssertNotNil(response.locationQuery["code"])
    }

    func testSessionWorksForTheOtherClientOfTheSameUser() throws {
        let session = try harness.signIn().sessionSecret
        let response = harness.authorizeGET(H.authorizationParameters(clientID: "mobile-app-002"), cookies: ["sso_session": session])
        XCTAssertEqual(response.status, 303)
        XCTAssertNotNil(response.locationQuery["code"])
        let row = try harness.database.queryOne("SELECT client_id FROM authorization_codes WHERE code_hash = ?",
                                                [.blob(SecretHash.of(try XCTUnwrap(response.locationQuery["code"])))])
        XCTAssertEqual(row?.string(0), "mobile-app-002")
    }

    func testPromptNoneWithLiveSessionIssuesCode() throws {
        let session = try harness.signIn().sessionSecret
        let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none"), cookies: ["sso_session": session])
        XCTAssertEqual(response.status, 303)
        XCTAssertNotNil(response.locationQuery["code"])
        XCTAssertNil(response.locationQuery["error"])
    }

    func testPromptLoginAndMaxAgeZeroShowLoginPageDespiteSession() throws {
        let session = try harness.signIn().sessionSecret
        let sid = try XCTUnwrap(harness.sessionRows().first?.sid)
        for (name, parameters) in [("prompt=login", H.authorizationParameters().adding("prompt", "login")),
                                   ("max_age=0", H.authorizationParameters().adding("max_age", "0")),
                                   // OIDC Core §3.1.2.1: the user selects the account by signing in with it.
                                   ("prompt=select_account", H.authorizationParameters().adding("prompt", "select_account"))] {
            let codesBefore = try issuer.count("authorization_codes")
            let response = harness.authorizeGET(parameters, cookies: ["sso_session": session])
            XCTAssertEqual(response.status, 303, name)
            XCTAssertEqual(response.locationBase, "/login.html", name)
            XCTAssertNotNil(response.cookie("gh_login"), name)
            XCTAssertEqual(try issuer.count("authorization_codes"), codesBefore, "\(name): no code without signing in again")
            let replaces = try harness.database.queryOne("SELECT replaces_sid FROM pending_authorizations ORDER BY rowid DESC")
            XCTAssertEqual(replaces?.optionalString(0), sid, "\(name): the new sign-in replaces the current session")
        }
    }

    func testPromptNoneWithMaxAgeExceededIsLoginRequired() throws {
        let session = try harness.signIn().sessionSecret
        clock.advance(100)
        try assertDatabaseUnchanged("prompt=none max_age=50") {
            let response = harness.authorizeGET(H.authorizationParameters().adding("prompt", "none").adding("max_age", "50"),
                                                cookies: ["sso_session": session])
            XCTAssertEqual(response.locationQuery["error"], "login_required")
            XCTAssertEqual(response.locationQuery["state"], "state-123")
        }
    }

    func testMaxAgeIsMeasuredFromAuthTimeWithTheClock() throws {
        let session = try harness.signIn().sessionSecret
        clock.advance(299)
        let fresh = harness.authorizeGET(H.authorizationParameters().adding("max_age", "300"), cookies: ["sso_session": session])
        XCTAssertNotNil(fresh.locationQuery["code"], "signed in 299 s ago satisfies max_age=300")
        clock.advance(2)
        let stale = harness.authorizeGET(H.authorizationParameters().adding("max_age", "300"), cookies: ["sso_session": session])
        XCTAssertEqual(stale.locationBase, "/login.html", "signed in 301 s ago does not")
        let stored = try harness.database.queryOne("SELECT max_age FROM pending_authorizations")
        XCTAssertEqual(stored?.optionalInt(0), 300)
    }

    func testExpiredEndedOrDisabledSessionsFallBackToLoginPage() throws {
        // Expired: the SSO session lifetime has passed.
        let first = try harness.signIn().sessionSecret
        clock.advance(Int64(issuer.config.ssoSessionLifetime))
        XCTAssertEqual(harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": first]).locationBase, "/login.html")

        // Ended: logged out (or replaced).
        let second = try harness.signIn().sessionSecret
        let sid = try XCTUnwrap(harness.sessionRows().last?.sid)
        try harness.endSession(sid)
        XCTAssertEqual(harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": second]).locationBase, "/login.html")

        // Disabled: the account was disabled after signing in.
        let third = try harness.signIn().sessionSecret
        try issuer.users.disable(email: DemoData.email)
        let response = harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": third])
        XCTAssertEqual(response.locationBase, "/login.html")
        XCTAssertNil(response.locationQuery["code"])

        // Garbage cookie values are no session.
        for value in ["", "x", String(repeating: "a", count: 200), third + "x"] {
            XCTAssertEqual(harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": value]).locationBase, "/login.html", value)
        }
    }

    // MARK: Output encoding

    func testStateWithDelimitersAndQuotesIsPercentEncodedInEveryLocation() throws {
        let state = "a&b=c#d?e/f \"'<>%+;,\\x"
        let encoded = "a%26b%3Dc%23d%3Fe%2Ff%20%22%27%3C%3E%25%2B%3B%2C%5Cx"
        // Error redirect.
        let error = harness.authorizeGET(H.authorizationParameters(state: state).setting("response_type", "token"))
        XCTAssertEqual(error.locationQuery["error"], "unsupported_response_type")
        XCTAssertEqual(error.locationQuery["state"], state)
        XCTAssertTrue(error.location?.contains("&state=\(encoded)&iss=") ?? false, error.location ?? "")
        // Login page (the state waits in the pending request), then the login's code redirect.
        let pending = try harness.startLogin(H.authorizationParameters(state: state))
        XCTAssertFalse(pending.response.location?.contains("state") ?? true, "the state is not put on the login page URL")
        let login = harness.submitLogin(pending)
        XCTAssertEqual(login.locationQuery["state"], state)
        XCTAssertTrue(login.location?.contains("&state=\(encoded)&iss=") ?? false, login.location ?? "")
        // Straight code redirect with a session.
        let session = try XCTUnwrap(login.cookie("sso_session")).value
        let success = harness.authorizeGET(H.authorizationParameters(state: state), cookies: ["sso_session": session])
        XCTAssertEqual(success.locationQuery["state"], state)
        XCTAssertTrue(success.location?.contains("&state=\(encoded)&iss=") ?? false, success.location ?? "")
        for response in [error, pending.response, login, success] {
            XCTAssertFalse(response.location?.contains("#") ?? true, "no raw fragment delimiter in \(response.location ?? "")")
            XCTAssertFalse(response.location?.contains("\"") ?? true)
        }
    }

    func testControlCharactersInStateNonceOrLoginHintAreRefusedWithoutRawLineBreaks() throws {
        let injected = "x\r\nSet-Cookie: sso_session=attacker\r\nLocation: https://evil.example"
        // RFC 6749 Appendix A.5: state is VSCHAR only. A refused state is not echoed.
        for state in [injected, "tab\there", "nul\u{0}byte", "caf\u{E9}", "del\u{7F}"] {
            try assertDatabaseUnchanged("state \(state.debugDescription)") {
                let response = harness.authorizeGET(H.authorizationParameters(state: state))
                XCTAssertEqual(response.status, 303)
                XCTAssertEqual(response.locationBase, H.customSchemeRedirect)
                XCTAssertEqual(response.locationQuery["error"], "invalid_request", state.debugDescription)
                XCTAssertNil(response.locationQuery["state"], "an invalid state is not echoed")
                XCTAssertEqual(response.locationQuery["iss"], harness.issuerOrigin)
                XCTAssertTrue(response.headersAreFreeOfLineBreaks)
                XCTAssertTrue(response.setCookieHeaders.isEmpty)
                let wire = String(decoding: response.serialized(), as: UTF8.self)
                XCTAssertFalse(wire.contains("\r\nSet-Cookie"), "the header block cannot be split")
                XCTAssertFalse(wire.contains("\r\nLocation: https://evil"))
            }
        }
        // nonce and login_hint follow the same rule; the (valid) state is still echoed.
        for name in ["nonce", "login_hint"] {
            try assertDatabaseUnchanged(name) {
                let response = harness.authorizeGET(H.authorizationParameters().setting(name, injected))
                XCTAssertEqual(response.locationQuery["error"], "invalid_request", name)
                XCTAssertEqual(response.locationQuery["state"], "state-123", name)
                XCTAssertTrue(response.headersAreFreeOfLineBreaks, name)
            }
        }
    }

    func testIssuerParameterIsExactlyTheConfiguredIssuer() throws {
        let response = harness.authorizeGET(H.authorizationParameters().setting("response_type", "token"))
        XCTAssertTrue(response.location?.hasSuffix("&iss=https%3A%2F%2Flocalhost%3A8443") ?? false, response.location ?? "")
    }

    // MARK: Methods

    func testOtherMethodsAreRefusedWith405() throws {
        for method in ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"] {
            try assertDatabaseUnchanged(method) {
                let response = harness.run(harness.authorize, Request(method: method, path: "/authorize", query: H.authorizationParameters().encoded))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "GET, POST", method)
                XCTAssertNil(response.location, method)
            }
        }
    }
}
