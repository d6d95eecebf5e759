import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `GET|POST /logout` in-process (OpenID Connect RP-Initiated Logout 1.0):
/// what ends, what is revoked, where the browser goes, and every request
/// that must show an error page and change nothing.
final class LogoutResponderTests: SessionEndpointsTestCase {
    static let appLogout = "myapp:auth/logout"
    var pageLogout: String { harness.issuerOrigin + "/mobile/postlogout.html" }

    func logoutParameters(_ tokens: IssuedTokens, redirect: String? = LogoutResponderTests.appLogout, state: String? = "logout-state",
                          clientID: String? = nil) throws -> RequestParameters {
        var pairs = [("id_token_hint", try XCTUnwrap(tokens.idToken))]
        if let clientID { pairs.append(("client_id", clientID)) }
        if let redirect { pairs.append(("post_logout_redirect_uri", redirect)) }
        if let state { pairs.append(("state", state)) }
        return RequestParameters(pairs)
    }

    func browser(_ tokens: IssuedTokens) -> [String: String] { [SSOSessions.cookieName: tokens.sessionSecret] }

    func assertCookieCleared(_ response: Response, file: StaticString = #filePath, line: UInt = #line) {
        let cookie = response.cookie(SSOSessions.cookieName)
        XCTAssertEqual(cookie?.value, "", file: file, line: line)
        XCTAssertEqual(cookie?.maxAge, 0, file: file, line: line)
        XCTAssertEqual(cookie?.path, "/", file: file, line: line)
        XCTAssertTrue(cookie?.isSecure ?? false, file: file, line: line)
        XCTAssertTrue(cookie?.isHttpOnly ?? false, file: file, line: line)
    }

    func assertErrorPage(_ response: Response, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 400, "\(message): \(response.bodyText)", file: file, line: line)
        XCTAssertNil(response.location, "\(message): never a redirect", file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8", message, file: file, line: line)
        XCTAssertTrue(response.bodyText.contains("Sign-out error"), message, file: file, line: line)
        XCTAssertTrue(response.setCookieHeaders.isEmpty, "\(message): the cookie stays", file: file, line: line)
    }

    func refreshGrant(_ refreshToken: String, clientID: String = "mobile-app-001", file: StaticString = #filePath, line: UInt = #line) -> Response {
        harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)]),
                          file: file, line: line)
    }

    /// Revoked in the database, and the refresh grant refuses it.
    func assertRefreshTokenUnusable(_ refreshToken: String, clientID: String = "mobile-app-001",
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNotNil(try refreshRow(refreshToken)?.revokedAt, "revoked in the database", file: file, line: line)
        let response = refreshGrant(refreshToken, clientID: clientID, file: file, line: line)
        XCTAssertEqual(response.status, 400, response.bodyText, file: file, line: line)
        XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_grant", response.bodyText, file: file, line: line)
    }

    // MARK: The normal logout

    func testLogoutWithHintEndsTheSessionRevokesItsRefreshTokensAndRedirectsWithState() throws {
        let tokens = try signInAndExchange()
        let sibling = try signInAndExchange(clientID: "mobile-app-002", cookies: browser(tokens))
        XCTAssertEqual(sibling.sid, tokens.sid, "SSO: the second app joined the same session")
        let elsewhere = try signInAndExchange()   // another browser, another session
        XCTAssertNotEqual(elsewhere.sid, tokens.sid)
        // The second app has already rotated its refresh token once.
        let rotated = refreshGrant(try XCTUnwrap(sibling.refreshToken), clientID: "mobile-app-002")
        XCTAssertEqual(rotated.status, 200, rotated.bodyText)
        let successor = try XCTUnwrap(rotated.jsonObject()["refresh_token"] as? String)

        let response = logoutGET(try logoutParameters(tokens), cookies: browser(tokens))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertEqual(response.location, "myapp:auth/logout?state=logout-state")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        assertCookieCleared(response)

        XCTAssertTrue(try sessionEnded(tokens.sid))
        XCTAssertNil(try harness.services.sessions.find(secret: tokens.sessionSecret))
        try assertRefreshTokenUnusable(try XCTUnwrap(tokens.refreshToken))
        try assertRefreshTokenUnusable(successor, clientID: "mobile-app-002")
        XCTAssertNil(try refreshRow(try XCTUnwrap(elsewhere.refreshToken))?.revokedAt, "other sessions keep their tokens")
        XCTAssertFalse(try sessionEnded(elsewhere.sid))
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 401, "the session's access tokens stop working at the issuer")
        XCTAssertEqual(userinfoGET(elsewhere.accessToken).status, 200)

        // The browser's cookie no longer signs in: /authorize asks for a login.
        let again = harness.authorizeGET(H.authorizationParameters(), cookies: browser(tokens))
        XCTAssertEqual(again.locationBase, "/login.html")
    }

    func testRedirectToTheInterstitialPageKeepsStateEncoded() throws {
        let tokens = try signInAndExchange()
        let state = "a b&c=d#e/?%"
        let response = logoutGET(try logoutParameters(tokens, redirect: pageLogout, state: state), cookies: browser(tokens))
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.locationBase, pageLogout)
        XCTAssertEqual(response.locationQuery, ["state": state])
        XCTAssertFalse(response.location?.contains("#") ?? true, "no raw fragment delimiter")
    }

    func testWithoutStateTheRedirectIsTheRegisteredURIExactly() throws {
        let tokens = try signInAndExchange()
        let response = logoutGET(try logoutParameters(tokens, state: nil), cookies: browser(tokens))
        XCTAssertEqual(response.location, Self.appLogout)
    }

    func testWithoutRedirectTheSignedOutPageIsShown() throws {
        let tokens = try signInAndExchange()
        let response = logoutGET(try logoutParameters(tokens, redirect: nil, state: "<script>alert(1)</script>"), cookies: browser(tokens))
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.location)
        XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertTrue(response.bodyText.contains("You are signed out"))
        XCTAssertFalse(response.bodyText.contains("<script"), "nothing of the request reaches the page")
        assertCookieCleared(response)
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    func testClientIDAloneIdentifiesTheClientForTheRedirect() throws {
        let tokens = try signInAndExchange()
        // No hint: the user confirms first (RP-Initiated Logout §6), then returns to the app.
        let parameters = RequestParameters([("client_id", "mobile-app-001"), ("post_logout_redirect_uri", Self.appLogout), ("state", "s1")])
        let confirm = try assertConfirmationPage(logoutGET(parameters, cookies: browser(tokens)))
        XCTAssertTrue(confirm.html.contains("<strong id=\"logout-app\">Demo Mobile App 1</strong> asked to sign you out of Gatehouse"),
                      "the app that asked, by its name")
        let response = post(logout, "/logout", confirm.fields, headers: H.cookieHeader(browser(tokens)))
        // After the page's form, a redirect to the app's scheme would be
        // blocked by form-action 'self': a link back instead.
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertTrue(response.bodyText.contains("<a class=\"button\" id=\"return-to-app\" href=\"myapp:auth/logout?state=s1\">"),
                      response.bodyText)
        assertCookieCleared(response)
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    func testExpiredIDTokenHintIsAccepted() throws {
        let tokens = try signInAndExchange()
        clock.advance(Int64(issuer.config.idTokenLifetime) * 5)
        let response = logoutGET(try logoutParameters(tokens), cookies: browser(tokens))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    func testHintSignedByAKeyThatLeftTheJWKSStillCountsButARetiredKeyDoesNot() throws {
        let tokens = try signInAndExchange()
        let store = try issuer.otherProcess(clock: clock.clock).signingKeys
        let oldKID = try XCTUnwrap(store.activeKID())
        try store.rotate()
        clock.advance(Int64(issuer.config.signingKeyRetention) + 1)
        XCTAssertEqual(try store.all().first { $0.kid == oldKID }?.state, .expired)
        XCTAssertFalse(try harness.publishedKeys().keys.contains { $0.kid == oldKID }, "gone from the JWKS")
        let response = logoutGET(try logoutParameters(tokens), cookies: browser(tokens))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertTrue(try sessionEnded(tokens.sid))

        let second = try signInAndExchange()
        let secondKID = try XCTUnwrap(store.activeKID())
        try store.rotate()
        try store.retire(kid: secondKID)
        try assertDatabaseUnchanged("hint signed by a retired key") {
            assertErrorPage(logoutGET(try logoutParameters(second), cookies: browser(second)), "retired key")
        }
        XCTAssertFalse(try sessionEnded(second.sid))
    }

    /// logout_hint is ignored; ui_locales only picks the pages' language.
    func testLogoutHintIsIgnoredAndUILocalesChangesNothingButTheLanguage() throws {
        let tokens = try signInAndExchange()
        let parameters = try logoutParameters(tokens).adding("logout_hint", "alice@example.com").adding("ui_locales", "fr de")
        XCTAssertEqual(logoutGET(parameters, cookies: browser(tokens)).status, 303)
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    func testPOSTWorksLikeGET() throws {
        let tokens = try signInAndExchange()
        let response = post(logout, "/logout", try logoutParameters(tokens), headers: H.cookieHeader(browser(tokens)))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertEqual(response.location, "myapp:auth/logout?state=logout-state")
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    // MARK: Idempotence

    func testLoggingOutTwiceIsFineAndChangesNothingTheSecondTime() throws {
        let tokens = try signInAndExchange()
        let parameters = try logoutParameters(tokens)
        XCTAssertEqual(logoutGET(parameters, cookies: browser(tokens)).status, 303)
        try assertDatabaseUnchanged("second logout") {
            let again = logoutGET(parameters, cookies: browser(tokens))
            XCTAssertEqual(again.status, 303)
            XCTAssertEqual(again.location, "myapp:auth/logout?state=logout-state")
            assertCookieCleared(again)
            let withoutCookie = logoutGET(parameters)
            XCTAssertEqual(withoutCookie.status, 303)
            let bare = logoutGET(RequestParameters([]))
            XCTAssertEqual(bare.status, 200, "nothing to end: signed out at once")
            XCTAssertTrue(bare.bodyText.contains("You are signed out"))
        }
    }

    // MARK: The hint's own session

    func testHintEndsItsOwnSessionEvenWithoutTheBrowserCookie() throws {
        // An app whose browser kept no cookie (ephemeral session) still ends
        // the session its ID token was issued in, and its refresh tokens.
        let tokens = try signInAndExchange()
        let response = logoutGET(try logoutParameters(tokens))
        XCTAssertEqual(response.status, 303)
        XCTAssertTrue(try sessionEnded(tokens.sid))
        try assertRefreshTokenUnusable(try XCTUnwrap(tokens.refreshToken))
    }

    func testHintNamingAnotherUsersSessionEndsNothingOfThatUser() throws {
        try issuer.users.add(email: "bob@example.com", name: "Bob Stone", password: H.password)
        let bob = try XCTUnwrap(issuer.users.find(email: "bob@example.com"))
        let alice = try signInAndExchange()
        // Signed by the issuer, but its sub is Bob and its sid Alice's session.
        let hint = try resigned(try XCTUnwrap(alice.idToken)) { $0["sub"] = bob.subject }
        try assertDatabaseUnchanged("hint whose sid belongs to someone else") {
            let response = logoutGET(RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", Self.appLogout)]))
            XCTAssertEqual(response.status, 303)
        }
        XCTAssertFalse(try sessionEnded(alice.sid))
    }

    // MARK: Confirmation (RP-Initiated Logout §6)

    /// Asserts a confirmation page and returns what its form posts.
    @discardableResult
    func assertConfirmationPage(_ response: Response, file: StaticString = #filePath,
                                line: UInt = #line) throws -> (fields: RequestParameters, html: String) {
        XCTAssertEqual(response.status, 200, response.bodyText, file: file, line: line)
        XCTAssertNil(response.location, file: file, line: line)
        XCTAssertTrue(response.setCookieHeaders.isEmpty, "nothing is cleared before the user confirms", file: file, line: line)
        let html = response.bodyText
        XCTAssertTrue(html.contains("Sign out?"), file: file, line: line)
        XCTAssertTrue(html.contains("<form method=\"post\" action=\"/logout\" class=\"logout-confirm\">"), "a form that posts, not a link", file: file, line: line)
        XCTAssertFalse(html.contains("href=\"/logout"), file: file, line: line)
        var fields: [(String, String)] = []
        var rest = Substring(html)
        while let field = rest.range(of: "<input type=\"hidden\" name=\"") {
            rest = rest[field.upperBound...]
            let name = String(rest.prefix { $0 != "\"" })
            let valueStart = try XCTUnwrap(rest.range(of: "value=\""), file: file, line: line)
            rest = rest[valueStart.upperBound...]
            let value = String(rest.prefix { $0 != "\"" })
            fields.append((Self.unescape(name), Self.unescape(value)))
        }
        return (RequestParameters(fields), html)
    }

    static func unescape(_ html: String) -> String {
        html.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    func testWithoutHintALiveSessionIsEndedOnlyAfterConfirmation() throws {
        let tokens = try signInAndExchange()
        var confirm: (fields: RequestParameters, html: String)!
        try assertDatabaseUnchanged("unconfirmed logout") {
            confirm = try assertConfirmationPage(logoutGET(RequestParameters([]), cookies: browser(tokens)))
        }
        XCTAssertFalse(confirm.html.contains(tokens.sessionSecret), "the form does not reveal the cookie")
        XCTAssertTrue(confirm.fields.pairs.contains { $0.0 == "confirm" })
        // Typed by the user: no app asked, and the page does not say one did.
        XCTAssertTrue(confirm.html.contains("You are about to sign out of Gatehouse on this device."), confirm.html)
        XCTAssertFalse(confirm.html.contains("asked"))

        // A forged or foreign confirmation only shows the page again.
        for forged in ["x", LogoutResponder.confirmation(for: "another-session-secret"), ""] {
            try assertDatabaseUnchanged("confirmation \(forged)") {
                try assertConfirmationPage(post(logout, "/logout", RequestParameters([("confirm", forged)]), headers: H.cookieHeader(browser(tokens))))
            }
        }
        // The right confirmation in a GET (a link followed, a prefetch) ends nothing.
        try assertDatabaseUnchanged("confirmation by GET") {
            try assertConfirmationPage(logoutGET(confirm.fields, cookies: browser(tokens)))
        }
        let response = post(logout, "/logout", confirm.fields, headers: H.cookieHeader(browser(tokens)))
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.bodyText.contains("You are signed out"))
        assertCookieCleared(response)
        XCTAssertTrue(try sessionEnded(tokens.sid))
        try assertRefreshTokenUnusable(try XCTUnwrap(tokens.refreshToken))
    }

    func testHintOfAnotherUserThanTheBrowsersAsksFirst() throws {
        try issuer.users.add(email: "bob@example.com", name: "Bob Stone", password: H.password)
        let alice = try signInAndExchange()
        // Bob signs in in a second browser.
        let pending = try harness.startLogin()
        let bobLogin = harness.submitLogin(pending, email: "bob@example.com")
        let bobSecret = try XCTUnwrap(bobLogin.cookie(SSOSessions.cookieName)?.value)
        let bobBrowser = [SSOSessions.cookieName: bobSecret]
        try assertDatabaseUnchanged("Alice's hint in Bob's browser") {
            try assertConfirmationPage(logoutGET(try logoutParameters(alice), cookies: bobBrowser))
        }
        let confirm = try assertConfirmationPage(logoutGET(try logoutParameters(alice), cookies: bobBrowser))
        XCTAssertTrue(confirm.fields.pairs.contains { $0.0 == "id_token_hint" }, "the form repeats the request")
        let response = post(logout, "/logout", confirm.fields, headers: H.cookieHeader(bobBrowser))
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.bodyText.contains("href=\"myapp:auth/logout?state=logout-state\""), response.bodyText)
        XCTAssertTrue(try sessionEnded(alice.sid))
        XCTAssertNil(try harness.services.sessions.find(secret: bobSecret))
    }

    func testConfirmationLinkEscapesEverythingItRepeats() throws {
        let tokens = try signInAndExchange()
        let state = "<b onclick=\"x\">'&amp;"
        let parameters = RequestParameters([("client_id", "mobile-app-001"), ("post_logout_redirect_uri", Self.appLogout), ("state", state)])
        let confirm = try assertConfirmationPage(logoutGET(parameters, cookies: browser(tokens)))
        XCTAssertFalse(confirm.html.contains("<b "))
        XCTAssertFalse(confirm.html.contains("onclick=\""))
        XCTAssertEqual(confirm.fields.pairs.first { $0.0 == "state" }?.1, state)
        let response = post(logout, "/logout", confirm.fields, headers: H.cookieHeader(browser(tokens)))
        XCTAssertFalse(response.bodyText.contains("<b "), "the link back escapes it too")
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    /// The issuer's own post-logout page (the demo's interstitial) is a
    /// redirect even after the form: form-action 'self' allows it.
    func testAfterTheConfirmationFormASameOriginReturnIsARedirect() throws {
        let tokens = try signInAndExchange()
        let interstitial = issuer.config.issuer + "/mobile/postlogout.html"
        let parameters = RequestParameters([("client_id", "mobile-app-001"), ("post_logout_redirect_uri", interstitial), ("state", "s2")])
        let confirm = try assertConfirmationPage(logoutGET(parameters, cookies: browser(tokens)))
        let response = post(logout, "/logout", confirm.fields, headers: H.cookieHeader(browser(tokens)))
        XCTAssertEqual(response.status, 303, response.bodyText)
        XCTAssertEqual(response.location, interstitial + "?state=s2")
        XCTAssertTrue(try sessionEnded(tokens.sid))
    }

    // MARK: Requests that show an error page and change nothing

    func testInvalidRequestsShowAnErrorPageAndChangeNothing() throws {
        try issuer.clients.add(clientID: "other-app", redirectURIs: ["other:callback"], postLogoutRedirectURIs: ["other:logout"],
                               scopes: ["openid"])
        let tokens = try signInAndExchange()
        let hint = try XCTUnwrap(tokens.idToken)
        let stranger = try RSAKey.generate()
        let cases: [(String, RequestParameters)] = [
            ("unregistered redirect", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "https://evil.example/")])),
            ("the login redirect URI", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "myapp:auth/callback")])),
            ("another client's redirect", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "other:logout")])),
            ("case differs", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "MYAPP:auth/logout")])),
            ("trailing slash", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "myapp:auth/logout/")])),
            ("extra query", RequestParameters([("id_token_hint", hint), ("post_logout_redirect_uri", "myapp:auth/logout?x=1")])),
            ("redirect without any client", RequestParameters([("post_logout_redirect_uri", Self.appLogout), ("state", "s")])),
            ("unknown client_id", RequestParameters([("client_id", "no-such-app"), ("post_logout_redirect_uri", Self.appLogout)])),
            ("unknown client_id alone", RequestParameters([("client_id", "no-such-app")])),
            ("client_id differs from the hint", RequestParameters([("id_token_hint", hint), ("client_id", "mobile-app-002")])),
            ("garbage hint", RequestParameters([("id_token_hint", "not.a.jwt"), ("post_logout_redirect_uri", Self.appLogout)])),
            ("hint signed by another key", RequestParameters([("id_token_hint", try resigned(hint, key: stranger))])),
            ("hint with unknown kid", RequestParameters([("id_token_hint", try resigned(hint, key: stranger, kid: "nope"))])),
            ("hint from another issuer", RequestParameters([("id_token_hint", try resigned(hint) { $0["iss"] = "https://evil.example" })])),
            ("access token as hint", RequestParameters([("id_token_hint", tokens.accessToken)])),
            ("hint with two audiences", RequestParameters([("id_token_hint", try resigned(hint) { $0["aud"] = ["mobile-app-001", "x"] })])),
            ("state with a control character", try logoutParameters(tokens, state: "a\nb")),
            ("state too long", try logoutParameters(tokens, state: String(repeating: "s", count: 1025))),
            ("repeated parameter", try logoutParameters(tokens).adding("state", "again")),
        ]
        for (name, parameters) in cases {
            try assertDatabaseUnchanged(name) {
                assertErrorPage(logoutGET(parameters, cookies: browser(tokens)), name)
            }
        }
        XCTAssertFalse(try sessionEnded(tokens.sid))
        XCTAssertNil(try refreshRow(try XCTUnwrap(tokens.refreshToken))?.revokedAt)
    }

    func testMalformedRequestsAndWrongMethods() throws {
        let tokens = try signInAndExchange()
        try assertDatabaseUnchanged("malformed") {
            for query in ["%zz", "state=%FF", "a=%0"] {
                let response = get(logout, "/logout", query: query, headers: H.cookieHeader(browser(tokens)))
                XCTAssertEqual(response.status, 400, query)
                XCTAssertNil(response.location)
            }
            let json = harness.run(logout, Request(method: "POST", path: "/logout", headers: ["content-type": "application/json"], body: Array("{}".utf8)))
            XCTAssertEqual(json.status, 415)
            for method in ["PUT", "DELETE", "PATCH", "HEAD"] {
                let response = harness.run(logout, Request(method: method, path: "/logout", headers: H.cookieHeader(browser(tokens))))
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "GET, POST")
            }
        }
    }
}
