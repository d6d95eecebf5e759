import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SQLiteClient
import SSOCore

/// `/account` signs a browser in through the issuer's own authorization
/// code flow with PKCE (AccountSignIn, AccountClient): the redirect and its
/// cookie, the callback's checks, what the account client may and may not
/// do, and how setup and `ssoctl client` treat it.
final class AccountSignInTests: SignInTestCase {
    typealias H = SignInHarness
    var account: AccountResponder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try AccountClient.ensure(harness.services)
        account = AccountResponder(services: harness.services)
    }

    var callbackURI: String { harness.issuerOrigin + AccountClient.callbackPath }

    func accountGET(_ cookies: [String: String] = [:]) -> Response {
        harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, headers: H.cookieHeader(cookies)))
    }

    /// GET /account signed out: the authorization request and the cookie
    /// holding its state and verifier.
    func start(file: StaticString = #filePath, line: UInt = #line) throws -> (parameters: RequestParameters, cookie: String) {
        let response = accountGET()
        XCTAssertEqual(response.status, 303, file: file, line: line)
        XCTAssertEqual(response.locationBase, "/authorize", file: file, line: line)
        let cookie = try XCTUnwrap(response.cookie(AccountSignIn.cookieName), file: file, line: line)
        let query = String(try XCTUnwrap(response.location?.split(separator: "?", maxSplits: 1).last, file: file, line: line))
        let parsed = try FormParser.parse(Array(query.utf8))
        return (RequestParameters(parsed.pairs.map { ($0.name, $0.value) }), cookie.value)
    }

    /// The browser's sign-in at the login page for that request: the
    /// callback URL it is sent to and its SSO cookie.
    func signIn(_ parameters: RequestParameters, email: String = DemoData.email, password: String = H.password,
                file: StaticString = #filePath, line: UInt = #line) throws -> (callback: String, session: String) {
        let pending = try harness.startLogin(parameters, file: file, line: line)
        XCTAssertEqual(pending.response.locationQuery["client_id"], AccountClient.id, "the login page knows whose sign-in it is")
        let response = harness.submitLogin(pending, email: email, password: password, file: file, line: line)
        XCTAssertEqual(response.status, 303, response.bodyText, file: file, line: line)
        let session = try XCTUnwrap(response.cookie(SSOSessions.cookieName), file: file, line: line).value
        return (try XCTUnwrap(response.location, file: file, line: line), session)
    }

    func callback(_ location: String, cookies: [String: String]) -> Response {
        let query = location.split(separator: "?", maxSplits: 1).count == 2 ? String(location.split(separator: "?", maxSplits: 1)[1]) : ""
        return harness.run(account, Request(method: "GET", path: AccountClient.callbackPath, query: query, headers: H.cookieHeader(cookies)))
    }

    func assertRefused(_ response: Response, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 400, file: file, line: line)
        XCTAssertTrue(response.bodyText.contains("id=\"signed-out\""), file: file, line: line)
        XCTAssertTrue(response.bodyText.contains("<a class=\"button\" id=\"sign-in\" href=\"/account\">Sign in</a>"), file: file, line: line)
        XCTAssertEqual(response.cookie(AccountSignIn.cookieName)?.maxAge, 0, "the sign-in's cookie goes", file: file, line: line)
    }

    // MARK: The request

    /// RFC 6749 §4.1.1 with PKCE S256 (RFC 7636 §4.3) and `state`, as the
    /// account page's client; state and verifier in a short-lived HttpOnly
    /// cookie scoped to the callback.
    func testSignedOutTheAccountPageStartsTheCodeFlowWithPKCE() throws {
        let (parameters, cookie) = try start()
        XCTAssertEqual(parameters.value("client_id"), "gatehouse-account")
        XCTAssertEqual(parameters.value("redirect_uri"), callbackURI)
        XCTAssertEqual(parameters.value("response_type"), "code")
        XCTAssertEqual(parameters.value("scope"), "openid")
        XCTAssertEqual(parameters.value("code_challenge_method"), "S256")
        let state = try XCTUnwrap(parameters.value("state"))
        XCTAssertGreaterThanOrEqual(state.utf8.count, 32)
        let parts = cookie.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 2)
        XCTAssertEqual(parts[0], state)
        XCTAssertTrue(PKCE.isValidVerifier(parts[1]))
        XCTAssertEqual(parameters.value("code_challenge"), PKCE.s256Challenge(verifier: parts[1]))
        let set = try XCTUnwrap(accountGET().cookie(AccountSignIn.cookieName))
        XCTAssertTrue(set.isHttpOnly && set.isSecure)
        XCTAssertEqual(set.sameSite, "Lax")
        XCTAssertEqual(set.path, "/account/callback")
        XCTAssertEqual(set.maxAge, 600)
        XCTAssertNotEqual(set.value, cookie, "a new state and verifier each time")
        // The issuer takes the request as any app's.
        XCTAssertEqual(harness.authorizeGET(parameters).locationBase, "/login.html")
    }

    // MARK: The whole flow

    func testTheBrowserSignsInAndLandsOnTheAccountPageWithNoTokenIssued() throws {
        let (parameters, cookie) = try start()
        let (location, session) = try signIn(parameters)
        XCTAssertTrue(location.hasPrefix(callbackURI + "?code="), location)
        let cookies = [AccountSignIn.cookieName: cookie, SSOSessions.cookieName: session]
        let finished = callback(location, cookies: cookies)
        XCTAssertEqual(finished.status, 303, finished.bodyText)
        XCTAssertEqual(finished.location, "/account")
        XCTAssertEqual(finished.cookie(AccountSignIn.cookieName)?.maxAge, 0)
        let page = accountGET([SSOSessions.cookieName: session])
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.bodyText.contains("<span id=\"account-email\">alice@example.com</span>"))
        // The code is spent, and nothing was issued for it.
        XCTAssertEqual(try issuer.count("authorization_codes", "client_id = ? AND used_at IS NOT NULL", [.text(AccountClient.id)]), 1)
        XCTAssertEqual(try issuer.count("refresh_tokens"), 0)
        XCTAssertEqual(try issuer.count("device_secrets"), 0)
        assertRefused(callback(location, cookies: cookies))
        let code = try XCTUnwrap(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
        let verifier = String(cookie.split(separator: ".")[1])
        let exchange = harness.tokenPOST(H.codeExchange(code: code, clientID: AccountClient.id, redirectURI: callbackURI, verifier: verifier))
        XCTAssertEqual(exchange.status, 400, "a spent code: the token endpoint gets nothing either")
        // Its session lists no app: the account page holds no token of the session.
        let sessions = try harness.services.sessions.liveListings(userID: harness.alice.id)
        XCTAssertEqual(sessions.first?.clientIDs, [])
    }

    // MARK: The callback's refusals

    func testTheCallbackRefusesWhatThisBrowserDidNotStartAndRedeemsNothing() throws {
        let (parameters, cookie) = try start()
        let (location, session) = try signIn(parameters)
        let state = try XCTUnwrap(parameters.value("state"))
        let verifier = String(cookie.split(separator: ".")[1])
        let unchanged: [(String, String, [String: String])] = [
            ("no cookie", location, [SSOSessions.cookieName: session]),
            ("another sign-in's state", location, [AccountSignIn.cookieName: SecureRandom.token() + "." + verifier, SSOSessions.cookieName: session]),
            ("another issuer", location.replacingOccurrences(of: "iss=", with: "iss=https%3A%2F%2Fevil.example&x="),
             [AccountSignIn.cookieName: cookie, SSOSessions.cookieName: session]),
            ("an error", callbackURI + "?error=access_denied&state=\(state)&iss=\(FormParser.encodeComponent(harness.issuerOrigin))",
             [AccountSignIn.cookieName: cookie, SSOSessions.cookieName: session]),
        ]
        for (what, url, cookies) in unchanged {
            try assertDatabaseUnchanged(what) { assertRefused(callback(url, cookies: cookies)) }
        }
        // A wrong verifier reaches the redemption, which refuses it and leaves the code usable.
        try assertDatabaseUnchanged("another verifier") {
            assertRefused(callback(location, cookies: [AccountSignIn.cookieName: state + "." + PKCE.makeVerifier(), SSOSessions.cookieName: session]))
        }
        // Without the session the code was issued in, the code is spent but nobody is signed in.
        assertRefused(callback(location, cookies: [AccountSignIn.cookieName: cookie]))
        assertRefused(callback(location, cookies: [AccountSignIn.cookieName: cookie, SSOSessions.cookieName: session]))
        XCTAssertEqual(harness.run(account, Request(method: "POST", path: AccountClient.callbackPath)).status, 405)
    }

    /// Login CSRF: a code from someone else's sign-in, carried to this
    /// browser with this browser's state, is not this browser's session.
    func testACodeOfAnotherBrowsersSessionDoesNotSignThisOneIn() throws {
        let (mine, myCookie) = try start()
        let (theirs, _) = try start()
        _ = try issuer.users.add(email: "mallory@example.com", name: "Mallory", password: "mallorys password")
        let (theirLocation, _) = try signIn(theirs, email: "mallory@example.com", password: "mallorys password")
        let (_, mySession) = try signIn(mine)
        let swapped = theirLocation.replacingOccurrences(of: "state=" + FormParser.encodeComponent(theirs.value("state")!),
                                                         with: "state=" + FormParser.encodeComponent(mine.value("state")!))
        let response = callback(swapped, cookies: [AccountSignIn.cookieName: myCookie, SSOSessions.cookieName: mySession])
        XCTAssertEqual(response.status, 400, "the verifier is mine, the code is theirs")
    }

    // MARK: The client itself

    func testSetupKeepsTheClientAndAdministratorsMayOnlyRenameIt() throws {
        let stored = try XCTUnwrap(issuer.clients.find(clientID: AccountClient.id))
        XCTAssertEqual(stored.redirectURIs, [callbackURI])
        XCTAssertEqual(stored.grantTypes, ["authorization_code"], "no refresh token, ever")
        XCTAssertEqual(stored.scopes, ["openid"])
        XCTAssertFalse(stored.isConfidential)
        XCTAssertNil(stored.nativeSSOGroup)
        XCTAssertFalse(try AccountClient.ensure(harness.services), "created once")

        let before = try issuer.snapshot()
        XCTAssertThrowsError(try issuer.clients.delete(clientID: AccountClient.id)) { error in
            XCTAssertTrue("\(error)".contains("account page's own sign-in client"), "\(error)")
        }
        var widen = ClientChanges()
        widen.addRedirectURIs = ["https://evil.example/cb"]
        XCTAssertThrowsError(try issuer.clients.update(clientID: AccountClient.id, widen))
        var offline = ClientChanges()
        offline.addGrantTypes = ["refresh_token"]
        offline.displayName = "Account"
        XCTAssertThrowsError(try issuer.clients.update(clientID: AccountClient.id, offline), "a name with other changes is still a change")
        XCTAssertThrowsError(try issuer.clients.add(ClientRegistration(clientID: AccountClient.id, redirectURIs: [callbackURI])))
        XCTAssertEqual(try issuer.snapshot(), before)

        var rename = ClientChanges()
        rename.displayName = "Konto"
        XCTAssertEqual(try issuer.clients.update(clientID: AccountClient.id, rename).displayName, "Konto")
        // A changed row (an older release's, a new issuer origin) is put back; the name stays.
        try harness.services.storage.write { tx in
            var changed = try XCTUnwrap(tx.clients.find(clientID: AccountClient.id))
            changed.redirectURIs = ["https://old.example/account/callback"]
            changed.grantTypes = ["authorization_code", "refresh_token"]
            _ = try tx.clients.update(changed)
        }
        XCTAssertFalse(try AccountClient.ensure(harness.services))
        let repaired = try XCTUnwrap(issuer.clients.find(clientID: AccountClient.id))
        XCTAssertEqual(repaired.redirectURIs, [callbackURI])
        XCTAssertEqual(repaired.grantTypes, ["authorization_code"])
        XCTAssertEqual(repaired.displayName, "Konto")
    }
}
