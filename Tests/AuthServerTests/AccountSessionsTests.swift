import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `/account`'s "Sessions and devices", in-process: the section (each live
/// session of the user with when, how, which apps and where from, and
/// which is this browser), `POST /account/sessions/end` and
/// `/account/sessions/end-all` through AccountSessionsResponder, and where
/// a sign-in's address and User-Agent come from (LoginResponder) and how
/// they are kept (SSOSessions.storedOrigin).
final class AccountSessionsTests: NativeSSOTestCase {
    static let bobPassword = "bobs password 1"
    static let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
    static let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"

    var account: AccountResponder!
    var sessionsResponder: AccountSessionsResponder!
    var bob: User!

    override func setUpWithError() throws {
        try super.setUpWithError()
        account = AccountResponder(services: harness.services)
        sessionsResponder = AccountSessionsResponder(services: harness.services)
        bob = try issuer.users.add(email: "bob@example.com", name: "Bob", password: Self.bobPassword)
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        super.tearDown()
    }

    // MARK: Helpers

    var alice: User { harness.alice }
    var events: [AuditEvent] { AuditLog.recorded ?? [] }
    func events(named name: String) -> [AuditEvent] { events.filter { $0.event == name } }

    /// One browser's sign-in through /authorize and /login (with its
    /// User-Agent and address), then the app's code exchange.
    struct BrowserSignIn {
        let cookie: String
        let sid: String
        let refreshToken: String
        let deviceSecret: String?
        let idToken: String
    }

    func signIn(email: String = DemoData.email, password: String = H.password, userAgent: String? = firefox,
                address: String = "203.0.113.7", clientID: String = "mobile-app-001", scope: String = NativeSSOTestCase.nativeScope,
                file: StaticString = #filePath, line: UInt = #line) throws -> BrowserSignIn {
        let pending = try harness.startLogin(H.authorizationParameters(clientID: clientID, scope: scope), file: file, line: line)
        var request = harness.loginRequest(pending, email: email, password: password,
                                           extraHeaders: userAgent.map { ["user-agent": $0] } ?? [:])
        request.remoteAddress = address
        let response = harness.run(harness.login, request, file: file, line: line)
        XCTAssertEqual(response.status, 303, response.bodyText, file: file, line: line)
        let code = try XCTUnwrap(response.locationQuery["code"], "no code in \(response.location ?? "nil")", file: file, line: line)
        let cookie = try XCTUnwrap(response.cookie(SSOSessions.cookieName), file: file, line: line).value
        var exchange = H.codeExchange(code: code, clientID: clientID)
        if scope.contains("device_sso") { exchange = exchange.adding("device_id", Self.deviceID) }
        let tokens = harness.tokenPOST(exchange, file: file, line: line)
        XCTAssertEqual(tokens.status, 200, tokens.bodyText, file: file, line: line)
        let body = tokens.jsonObject(file: file, line: line)
        let idToken = try XCTUnwrap(body["id_token"] as? String, file: file, line: line)
        let sid = try XCTUnwrap(harness.verifiedJWT(idToken).claims["sid"] as? String, file: file, line: line)
        return BrowserSignIn(cookie: cookie, sid: sid, refreshToken: try XCTUnwrap(body["refresh_token"] as? String, file: file, line: line),
                             deviceSecret: body["device_secret"] as? String, idToken: idToken)
    }

    func accountSignedOut(_ cookie: String, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, headers: H.cookieHeader([SSOSessions.cookieName: cookie])),
                    file: file, line: line).sendsToAccountSignIn
    }

    func accountPage(_ cookie: String?, query: String = "", file: StaticString = #filePath, line: UInt = #line) -> String {
        let headers = cookie.map { H.cookieHeader([SSOSessions.cookieName: $0]) } ?? [:]
        let response = harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, query: query, headers: headers),
                                   file: file, line: line)
        XCTAssertEqual(response.status, 200, file: file, line: line)
        return response.bodyText
    }

    /// A POST as the page's form makes it in a browser: same-origin, the
    /// session's form token unless `csrf` is given.
    func post(_ path: String, cookie: String?, fields: [(String, String)] = [], csrf: String? = nil,
              headers: [String: String]? = nil, file: StaticString = #filePath, line: UInt = #line) -> Response {
        var pairs = fields
        if let token = csrf ?? cookie.map(AccountFormToken.expected(for:)) { pairs.insert(("csrf", token), at: 0) }
        var allHeaders = headers ?? ["origin": harness.issuerOrigin, "sec-fetch-site": "same-origin"]
        if let cookie { allHeaders["cookie"] = H.cookieHeader([SSOSessions.cookieName: cookie])["cookie"] }
        var request = H.formRequest(path, RequestParameters(pairs), headers: allHeaders)
        request.remoteAddress = "192.0.2.50"
        return harness.run(sessionsResponder, request, file: file, line: line)
    }

    func end(_ sid: String, from cookie: String, file: StaticString = #filePath, line: UInt = #line) -> Response {
        post(AccountSessionsResponder.endPath, cookie: cookie, fields: [("sid", sid)], file: file, line: line)
    }

    /// The sids the page offers to sign out, in page order.
    func listedSIDs(_ page: String) -> [String] {
        let marker = "<input type=\"hidden\" name=\"sid\" value=\""
        return page.components(separatedBy: marker).dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    func refreshWorks(_ token: String, clientID: String = "mobile-app-001") -> Bool {
        refresh(token, clientID: clientID).status == 200
    }

    /// Every table of the sign-in flow, the device secrets and the passkeys.
    func snapshot() throws -> [String] {
        try nativeSnapshot() + (try harness.database.query("SELECT * FROM passkeys ORDER BY 1").map { "passkeys: \($0.values)" })
    }

    func liveSessions(of user: User) throws -> Int64 {
        try issuer.count("sso_sessions", "user_id = ? AND ended_at IS NULL", [.integer(user.id)])
    }

    // MARK: The section

    func testTheSectionListsExactlyTheUsersLiveSessionsWithWhereFromAndApps() throws {
        let laptop = try signIn(userAgent: Self.firefox, address: "203.0.113.7")
        // A second app in the laptop's session, by Native SSO.
        let exchanged = harness.tokenPOST(exchangeParameters(App1SignIn(idToken: laptop.idToken, deviceSecret: laptop.deviceSecret ?? "",
                                                                       deviceID: Self.deviceID, refreshToken: laptop.refreshToken,
                                                                       sessionSecret: laptop.cookie, sid: laptop.sid)))
        XCTAssertEqual(exchanged.status, 200, exchanged.bodyText)
        clock.advance(10)
        let phone = try signIn(userAgent: Self.iPhone, address: "2001:db8::7", scope: H.fullScope)
        clock.advance(10)
        let ended = try signIn(userAgent: "Ended/1.0", address: "198.51.100.1")
        try harness.endSession(ended.sid)
        let expiring = try harness.services.storage.write { tx in
            try harness.services.sessions.create(userID: alice.id, lifetime: 5, address: "198.51.100.2", userAgent: "Expired/1.0", tx).session
        }
        clock.advance(10)
        let bobs = try signIn(email: bob.email, password: Self.bobPassword, userAgent: "BobBrowser/1.0", address: "198.51.100.3")

        let page = accountPage(laptop.cookie)
        XCTAssertEqual(listedSIDs(page), [laptop.sid, phone.sid], "this browser first, then the others newest first; ended, expired and Bob's left out")
        XCTAssertEqual(page.components(separatedBy: "<li class=\"session").count - 1, 2)
        XCTAssertTrue(page.contains("<h2 id=\"sessions-heading\">Sessions and devices</h2>"))
        XCTAssertTrue(page.contains("<strong class=\"session-browser\">Firefox on Linux</strong> <span class=\"session-current\">this browser</span>"),
                      page)
        XCTAssertTrue(page.contains("<strong class=\"session-browser\">Safari on iPhone</strong>\n"), "only one row is this browser")
        XCTAssertEqual(page.components(separatedBy: "this browser</span>").count - 1, 1)
        XCTAssertTrue(page.contains("<span class=\"session-address\">203.0.113.7</span>"))
        XCTAssertTrue(page.contains("<span class=\"session-address\">2001:db8::7</span>"))
        // The apps by their display names (ssoctl client add --name), not their ids.
        XCTAssertTrue(page.contains("Apps: Demo Mobile App 1, Demo Mobile App 2"), "the laptop's session holds both apps' credentials")
        XCTAssertTrue(page.contains("<span class=\"small session-apps\">Apps: Demo Mobile App 1</span>"))
        XCTAssertFalse(page.contains("mobile-app-00"))
        var unnamed = ClientChanges()
        unnamed.displayName = ""
        try issuer.clients.update(clientID: "mobile-app-002", unnamed)
        XCTAssertTrue(accountPage(laptop.cookie).contains("Apps: Demo Mobile App 1, mobile-app-002"), "no name: the id")
        XCTAssertTrue(page.contains("<span class=\"session-method\">password</span>"))
        XCTAssertTrue(page.contains("Signed in \(AccountPage.date(clock.now - 30))"))
        for absent in ["Ended/1.0", "Expired/1.0", "BobBrowser", "198.51.100", ended.sid, expiring.sid, bobs.sid] {
            XCTAssertFalse(page.contains(absent), absent)
        }
        XCTAssertTrue(page.contains("action=\"/account/sessions/end-all\""))
        XCTAssertTrue(page.contains(AccountPage.tokenField(AccountFormToken.expected(for: laptop.cookie))))

        // From the phone, the phone is this browser.
        XCTAssertEqual(listedSIDs(accountPage(phone.cookie)), [phone.sid, laptop.sid])
        XCTAssertEqual(listedSIDs(accountPage(bobs.cookie)), [bobs.sid])

        // What the store read: where from, and the apps with live credentials only.
        let listings = try harness.services.sessions.liveListings(userID: alice.id)
        XCTAssertEqual(listings.map(\.sid), [phone.sid, laptop.sid])
        XCTAssertEqual(listings.map(\.userAgent), [Self.iPhone, Self.firefox])
        XCTAssertEqual(listings.map(\.createdIP), ["2001:db8::7", "203.0.113.7"])
        XCTAssertEqual(listings.map(\.clientIDs), [["mobile-app-001"], ["mobile-app-001", "mobile-app-002"]])
        // A rotated refresh token leaves its successor live: still one app.
        XCTAssertTrue(refreshWorks(phone.refreshToken))
        XCTAssertEqual(try harness.services.sessions.liveListings(userID: alice.id).first?.clientIDs, ["mobile-app-001"])
        try harness.services.storage.write { try $0.refreshTokens.revokeAll(sid: phone.sid, at: clock.now) }
        XCTAssertTrue(accountPage(laptop.cookie).contains("<span class=\"small session-apps\">No apps</span>"))
    }

    func testHowASessionSignedInAndWhichBrowserItIsAreShortAndPlain() {
        let english = PageCatalogues.english
        XCTAssertEqual(AccountSessionsSection.method(["pwd"], english), "password")
        XCTAssertEqual(AccountSessionsSection.method(["pwd", "otp"], english), "password + code")
        XCTAssertEqual(AccountSessionsSection.method(["hwk", "mfa"], english), "passkey")
        XCTAssertEqual(AccountSessionsSection.method(["swk", "mfa"], english), "passkey")
        let browsers: [(String?, String)] = [
            (Self.firefox, "Firefox on Linux"),
            (Self.iPhone, "Safari on iPhone"),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
             "Edge on Windows"),
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
             "Chrome on Android"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
             "Safari on macOS"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0 Mobile/15E148 Safari/604.1",
             "Chrome on iPhone"),
            ("curl/8.5.0", "curl/8.5.0"),
            (String(repeating: "x", count: 100), String(repeating: "x", count: 63) + "…"),
            (nil, "Unknown browser"),
        ]
        for (agent, expected) in browsers { XCTAssertEqual(AccountSessionsSection.browser(agent, english), expected, agent ?? "nil") }
        XCTAssertEqual(AccountSessionsSection.method(["pwd", "otp"], PageCatalogues.german), "Passwort + Code")
        XCTAssertEqual(AccountSessionsSection.browser(Self.firefox, PageCatalogues.german), "Firefox auf Linux")
        XCTAssertEqual(AccountSessionsSection.browser(nil, PageCatalogues.german), "Unbekannter Browser")
    }

    func testAUserAgentWithHTMLOrControlCharactersIsEscapedAndDropped() throws {
        let hostile = "<script>alert(\"x\")</script>\u{1}\u{7F}\u{9B}&\u{202E}'\r\nend"
        let signedIn = try signIn(userAgent: hostile, address: "203.0.113.9\u{0}<b>")
        let stored = try XCTUnwrap(harness.database.queryOne("SELECT created_ip, user_agent FROM sso_sessions WHERE sid = ?", [.text(signedIn.sid)]))
        XCTAssertEqual(stored.optionalString(1), "<script>alert(\"x\")</script>&'end", "control and bidi characters dropped")
        XCTAssertEqual(stored.optionalString(0), "203.0.113.9<b>")
        let page = accountPage(signedIn.cookie)
        XCTAssertTrue(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;end"), page)
        XCTAssertTrue(page.contains("203.0.113.9&lt;b&gt;"))
        XCTAssertFalse(page.contains("<script>alert"))
        XCTAssertFalse(page.contains("<b>"))

        // Bounded to 256 bytes, never inside a character.
        XCTAssertEqual(SSOSessions.storedOrigin(String(repeating: "a", count: 300))?.utf8.count, 256)
        XCTAssertEqual(SSOSessions.storedOrigin("a" + String(repeating: "é", count: 200)), "a" + String(repeating: "é", count: 127))
        XCTAssertEqual(SSOSessions.storedOrigin(String(repeating: "\u{1}", count: 300) + "ok"), "ok", "dropped before counting")
        XCTAssertNil(SSOSessions.storedOrigin("\u{0}\t\u{7F}"))
        XCTAssertNil(SSOSessions.storedOrigin(""))
        XCTAssertNil(SSOSessions.storedOrigin(nil))
        let long = try signIn(userAgent: "Mozilla/5.0 " + String(repeating: "ü", count: 300))
        let agent = try XCTUnwrap(harness.database.queryOne("SELECT user_agent FROM sso_sessions WHERE sid = ?", [.text(long.sid)])?.optionalString(0))
        XCTAssertEqual(agent.utf8.count, 256)
        XCTAssertTrue(agent.hasSuffix("ü"))

        // No User-Agent at all: stored as NULL, shown as unknown.
        let bare = try signIn(userAgent: nil)
        XCTAssertNil(try harness.database.queryOne("SELECT user_agent FROM sso_sessions WHERE sid = ?", [.text(bare.sid)])?.optionalString(0))
        XCTAssertTrue(accountPage(bare.cookie).contains("<strong class=\"session-browser\">Unknown browser</strong>"))
    }

    // MARK: Ending one session

    func testEndingAnotherSessionRevokesItsRefreshTokensAndDeviceSecrets() throws {
        let laptop = try signIn(userAgent: Self.firefox)
        let phone = try signIn(userAgent: Self.iPhone, address: "198.51.100.20")
        XCTAssertNotNil(phone.deviceSecret)

        let response = end(phone.sid, from: laptop.cookie)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.location, "/account?done=session_ended")
        XCTAssertNil(response.cookie(SSOSessions.cookieName), "this browser stays signed in")
        XCTAssertFalse(refreshWorks(phone.refreshToken), "the ended session's refresh token is refused")
        XCTAssertNotNil(try deviceSecretRevokedAt(phone.deviceSecret!) ?? nil, "its device secret is revoked")
        XCTAssertEqual(try issuer.count("refresh_tokens", "sid = ? AND revoked_at IS NULL", [.text(phone.sid)]), 0)
        XCTAssertNotNil(try harness.services.sessions.listing(sid: phone.sid)?.endedAt)
        XCTAssertTrue(accountSignedOut(phone.cookie), "the phone's browser is signed out")

        // This browser's session, its tokens and device secret are untouched.
        XCTAssertTrue(refreshWorks(laptop.refreshToken))
        XCTAssertNil(try deviceSecretRevokedAt(laptop.deviceSecret!) ?? nil)
        let page = accountPage(laptop.cookie, query: "done=session_ended")
        XCTAssertTrue(page.contains("The session was signed out"))
        XCTAssertEqual(listedSIDs(page), [laptop.sid])

        let ended = events(named: "session_ended")
        XCTAssertEqual(ended.count, 1)
        XCTAssertEqual(ended.first?.user, alice.email)
        XCTAssertEqual(ended.first?.sid, laptop.sid, "the session that asked")
        XCTAssertEqual(ended.first?.target, "session " + phone.sid)
        XCTAssertEqual(ended.first?.ip, "192.0.2.50")
    }

    func testEndingThisBrowsersSessionSignsItOut() throws {
        let laptop = try signIn()
        let phone = try signIn(userAgent: Self.iPhone)
        let response = end(laptop.sid, from: laptop.cookie)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.location, "/account")
        XCTAssertEqual(response.cookie(SSOSessions.cookieName)?.maxAge, 0, "the browser forgets its ended session")
        XCTAssertTrue(accountSignedOut(laptop.cookie))
        XCTAssertFalse(refreshWorks(laptop.refreshToken))
        XCTAssertNotNil(try deviceSecretRevokedAt(laptop.deviceSecret!) ?? nil)
        XCTAssertTrue(refreshWorks(phone.refreshToken), "the other session goes on")
        XCTAssertEqual(events(named: "session_ended").map(\.target), ["session " + laptop.sid])
    }

    func testAnotherUsersUnknownOrEndedSidChangesNothing() throws {
        let laptop = try signIn()
        let bobs = try signIn(email: bob.email, password: Self.bobPassword, userAgent: "BobBrowser/1.0")
        let old = try signIn()
        try harness.endSession(old.sid)
        for (what, sid) in [("Bob's", bobs.sid), ("unknown", SecureRandom.token(byteCount: 16)), ("empty", ""), ("ended", old.sid),
                            ("too long", String(repeating: "A", count: 65)), ("Bob's with a suffix", bobs.sid + "A")] {
            try assertDatabaseUnchangedWithDeviceSecrets(what) {
                let response = end(sid, from: laptop.cookie)
                XCTAssertEqual(response.status, 303, what)
                XCTAssertEqual(response.location, "/account?done=session_not_found", what)
                XCTAssertNil(response.cookie(SSOSessions.cookieName), what)
            }
        }
        try assertDatabaseUnchangedWithDeviceSecrets("no sid field") {
            XCTAssertEqual(post(AccountSessionsResponder.endPath, cookie: laptop.cookie).location, "/account?done=session_not_found")
        }
        XCTAssertTrue(refreshWorks(bobs.refreshToken), "Bob's session goes on")
        XCTAssertTrue(events(named: "session_ended").isEmpty)
    }

    // MARK: Sign out everywhere

    func testSignOutEverywhereEndsEverySessionAndTokenOfTheUserOnly() throws {
        let laptop = try signIn()
        let phone = try signIn(userAgent: Self.iPhone)
        let tablet = try signIn(userAgent: "Tablet/1.0", scope: H.fullScope)
        let bobs = try signIn(email: bob.email, password: Self.bobPassword, userAgent: "BobBrowser/1.0")
        // An ended session whose refresh token was somehow left live.
        let leftover = try signIn()
        try harness.endSession(leftover.sid)

        let response = post(AccountSessionsResponder.endAllPath, cookie: laptop.cookie)
        XCTAssertEqual(response.status, 303)
        XCTAssertEqual(response.location, "/account")
        XCTAssertEqual(response.cookie(SSOSessions.cookieName)?.maxAge, 0)
        XCTAssertEqual(try liveSessions(of: alice), 0)
        XCTAssertEqual(try issuer.count("refresh_tokens", "user_id = ? AND revoked_at IS NULL", [.integer(alice.id)]), 0)
        XCTAssertEqual(try issuer.count("device_secrets", "user_id = ? AND revoked_at IS NULL", [.integer(alice.id)]), 0)
        for signedIn in [laptop, phone, tablet, leftover] {
            XCTAssertFalse(refreshWorks(signedIn.refreshToken))
            XCTAssertTrue(accountSignedOut(signedIn.cookie))
        }

        // Bob is another user: nothing of his changed.
        XCTAssertEqual(try liveSessions(of: bob), 1)
        XCTAssertEqual(try issuer.count("device_secrets", "user_id = ? AND revoked_at IS NULL", [.integer(bob.id)]), 1)
        XCTAssertTrue(refreshWorks(bobs.refreshToken))
        XCTAssertEqual(listedSIDs(accountPage(bobs.cookie)), [bobs.sid])

        let audited = events(named: "signed_out_everywhere")
        XCTAssertEqual(audited.count, 1)
        XCTAssertEqual(audited.first?.user, alice.email)
        XCTAssertEqual(audited.first?.sid, laptop.sid)
        XCTAssertEqual(audited.first?.target, "3 sessions", "the three that were live")
    }

    // MARK: Refusals

    func testCrossSiteAndWrongFormTokensAreRefusedAndChangeNothing() throws {
        let laptop = try signIn()
        let phone = try signIn(userAgent: Self.iPhone)
        let bobs = try signIn(email: bob.email, password: Self.bobPassword, userAgent: "BobBrowser/1.0")
        let token = AccountFormToken.expected(for: laptop.cookie)
        for path in AccountSessionsResponder.paths {
            for (what, headers) in [("cross-site", ["sec-fetch-site": "cross-site"]), ("same-site", ["sec-fetch-site": "same-site"]),
                                    ("foreign origin", ["origin": "https://evil.example"]),
                                    ("foreign origin, same-origin fetch", ["origin": "https://evil.example", "sec-fetch-site": "same-origin"])] {
                try assertDatabaseUnchangedWithDeviceSecrets("\(path) \(what)") {
                    let response = post(path, cookie: laptop.cookie, fields: [("sid", phone.sid)], csrf: token, headers: headers)
                    XCTAssertEqual(response.status, 403, "\(path) \(what)")
                }
            }
            for (what, csrf) in [("missing", ""), ("random", SecureRandom.token()), ("the cookie itself", laptop.cookie),
                                 ("another session's", AccountFormToken.expected(for: phone.cookie)),
                                 ("another user's", AccountFormToken.expected(for: bobs.cookie)), ("with a suffix", token + "A")] {
                try assertDatabaseUnchangedWithDeviceSecrets("\(path) csrf \(what)") {
                    let response = post(path, cookie: laptop.cookie, fields: [("sid", phone.sid)], csrf: csrf)
                    XCTAssertEqual(response.status, 403, "\(path) csrf \(what)")
                    XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_request")
                }
            }
            try assertDatabaseUnchangedWithDeviceSecrets("\(path) signed out") {
                XCTAssertEqual(post(path, cookie: nil, fields: [("sid", phone.sid)], csrf: token).status, 401)
                XCTAssertEqual(post(path, cookie: "not-a-session", fields: [("sid", phone.sid)], csrf: token).status, 401)
            }
            try assertDatabaseUnchangedWithDeviceSecrets("\(path) GET") {
                let request = Request(method: "GET", path: path, query: "csrf=\(token)&sid=\(phone.sid)",
                                      headers: H.cookieHeader([SSOSessions.cookieName: laptop.cookie]))
                XCTAssertEqual(harness.run(sessionsResponder, request).status, 405)
            }
        }
        XCTAssertTrue(events(named: "session_ended").isEmpty)
        XCTAssertTrue(events(named: "signed_out_everywhere").isEmpty)
        XCTAssertEqual(try liveSessions(of: alice), 2)
    }

    // MARK: Storage

    /// Like assertDatabaseUnchanged, with the device secrets and passkeys too.
    func assertDatabaseUnchangedWithDeviceSecrets(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                                                  _ body: () throws -> Void) throws {
        let before = try snapshot()
        try body()
        let after = try snapshot()
        XCTAssertEqual(after.filter { !before.contains($0) }, [], "database changed by: \(what)", file: file, line: line)
        XCTAssertEqual(before.filter { !after.contains($0) }, [], "database changed by: \(what)", file: file, line: line)
    }

    func testTheSchemaHasTheOriginColumnsAndOlderSessionsShowWithoutThem() throws {
        let columns = try harness.database.query("PRAGMA table_info(sso_sessions)").map { $0.string(1) }
        XCTAssertTrue(columns.contains("created_ip") && columns.contains("user_agent"), "\(columns)")
        XCTAssertTrue(SQLiteIssuerSchema.migrations.contains { $0.version == 12 && $0.sql.contains("created_ip") })
        // A session made before migration 12 (or by ssoctl-less code paths): no address, no agent.
        let cookie = try harness.services.storage.write { tx in try harness.services.sessions.create(userID: alice.id, lifetime: 3600, tx).secret }
        let page = accountPage(cookie)
        XCTAssertTrue(page.contains("<strong class=\"session-browser\">Unknown browser</strong>"))
        XCTAssertFalse(page.contains("session-address"))
        XCTAssertTrue(page.contains("No apps"))
    }
}
