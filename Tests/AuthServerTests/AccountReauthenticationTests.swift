import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// "Confirm it's you" on /account: one password entry opens a five-minute
/// window, bound to this session, in which the sensitive changes need no
/// password; outside it they take `current` as before; deleting the
/// account happens only inside one of the two, with the box ticked.
final class AccountReauthenticationTests: SignInTestCase {
    typealias H = SignInHarness
    let bobEmail = "bob@example.com"
    var account: AccountResponder!
    var password: AccountPasswordResponder!
    var totp: AccountTOTPResponder!
    var bob: User!

    override func setUpWithError() throws {
        try super.setUpWithError()
        account = AccountResponder(services: harness.services)
        password = AccountPasswordResponder(services: harness.services)
        totp = AccountTOTPResponder(services: harness.services)
        bob = try harness.addUser(bobEmail).user
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        super.tearDown()
    }

    func sessionCookie() throws -> String {
        try harness.services.storage.write { tx in try harness.services.sessions.create(userID: bob.id, lifetime: 3600, tx).secret }
    }

    func post(_ responder: Responder, _ path: String, session: String, sudo: String? = nil, _ fields: [(String, String)]) -> Response {
        var cookies = [SSOSessions.cookieName: session]
        cookies[AccountReauthentication.cookieName] = sudo
        let headers = ["origin": harness.issuerOrigin, "sec-fetch-site": "same-origin", "cookie": H.cookieHeader(cookies)["cookie"] ?? ""]
        return harness.run(responder, H.formRequest(path, RequestParameters([("csrf", AccountFormToken.expected(for: session))] + fields),
                                                    headers: headers))
    }

    func page(_ session: String, sudo: String? = nil) -> String {
        var cookies = [SSOSessions.cookieName: session]
        cookies[AccountReauthentication.cookieName] = sudo
        return harness.run(account, Request(method: "GET", path: AccountResponder.pagePath, headers: H.cookieHeader(cookies))).bodyText
    }

    func window(_ session: String) throws -> String {
        let response = post(account, AccountResponder.confirmPath, session: session, [("current", H.otherPassword)])
        XCTAssertEqual(response.location, "/account?done=confirmed")
        return try XCTUnwrap(response.cookie(AccountReauthentication.cookieName)?.value)
    }

    func testTheRightPasswordOpensAFiveMinuteWindowScopedToTheAccountPage() throws {
        let session = try sessionCookie()
        let response = post(account, AccountResponder.confirmPath, session: session, [("current", H.otherPassword)])
        XCTAssertEqual(response.location, "/account?done=confirmed")
        let header = try XCTUnwrap(response.setCookieHeaders.first { $0.hasPrefix("gh_sudo=") })
        for attribute in ["Path=/account", "Secure", "HttpOnly", "SameSite=Strict", "Max-Age=300"] {
            XCTAssertTrue(header.contains(attribute), header)
        }
        let wrong = post(account, AccountResponder.confirmPath, session: session, [("current", "not it")])
        XCTAssertEqual(wrong.location, "/account?done=confirm_wrong")
        XCTAssertTrue(wrong.setCookieHeaders.isEmpty)
        XCTAssertGreaterThan(try issuer.count("login_throttle"), 0, "a wrong password counts as a failed sign-in")
    }

    func testThePageShowsTheChangesOnlyInsideTheWindowAndNoPasswordFieldThere() throws {
        let session = try sessionCookie()
        let outside = page(session)
        XCTAssertTrue(outside.contains("action=\"\(AccountResponder.confirmPath)\""))
        for path in [AccountPasswordResponder.path, AccountResponder.deletePath, AccountTOTPResponder.startPath] {
            XCTAssertFalse(outside.contains("action=\"\(path)\""), path)
        }
        XCTAssertFalse(outside.contains("id=\"add-passkey\""))
        let inside = page(session, sudo: try window(session))
        XCTAssertFalse(inside.contains("action=\"\(AccountResponder.confirmPath)\""))
        XCTAssertTrue(inside.contains("id=\"confirmed-window\""))
        for path in [AccountPasswordResponder.path, AccountResponder.deletePath, AccountTOTPResponder.startPath] {
            XCTAssertTrue(inside.contains("action=\"\(path)\""), path)
        }
        XCTAssertTrue(inside.contains("id=\"add-passkey\""))
        XCTAssertFalse(inside.contains("name=\"current\""), "the window stands for every password field")
    }

    func testInsideTheWindowChangesNeedNoPassword() throws {
        let session = try sessionCookie()
        let sudo = try window(session)
        XCTAssertEqual(post(password, AccountPasswordResponder.path, session: session, sudo: sudo,
                            [("password", "a brand new password"), ("confirm", "a brand new password")]).location,
                       "/account?done=password_changed")
        XCTAssertTrue(harness.services.hasher.verify(password: "a brand new password",
                                                     against: try XCTUnwrap(issuer.users.find(email: bobEmail)).passwordHash))
        XCTAssertEqual(post(totp, AccountTOTPResponder.startPath, session: session, sudo: sudo, []).status, 200, "TOTP setup")
    }

    func testAWindowIsWorthNothingInAnotherSessionAfterFiveMinutesOrAltered() throws {
        let session = try sessionCookie(), other = try sessionCookie()
        let sudo = try window(session)
        var altered = Array(sudo.utf8)
        altered[altered.count / 2] = altered[altered.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let change = [("password", "a brand new password"), ("confirm", "a brand new password")]
        for (what, session, cookie) in [("another session", other, sudo), ("altered", session, String(decoding: altered, as: UTF8.self))] {
            try assertDatabaseUnchanged(what) {
                XCTAssertEqual(post(password, AccountPasswordResponder.path, session: session, sudo: cookie, change).location,
                               "/account?done=password_missing", what)
            }
            XCTAssertTrue(page(session, sudo: cookie).contains("action=\"\(AccountResponder.confirmPath)\""), what)
        }
        clock.advance(AccountReauthentication.lifetime)
        try assertDatabaseUnchanged("expired") {
            XCTAssertEqual(post(password, AccountPasswordResponder.path, session: session, sudo: sudo, change).location,
                           "/account?done=password_missing")
        }
    }

    func testDeletingTheAccountTakesTheBoxAndTheWindowOrThePasswordAndErasesIt() throws {
        let session = try sessionCookie()
        try assertDatabaseUnchanged("box not ticked") {
            XCTAssertEqual(post(account, AccountResponder.deletePath, session: session, [("current", H.otherPassword)]).location,
                           "/account?done=delete_unconfirmed")
        }
        try assertDatabaseUnchanged("no window, no password") {
            XCTAssertEqual(post(account, AccountResponder.deletePath, session: session, [("confirm", "delete")]).location,
                           "/account?done=password_missing")
        }
        let sudo = try window(session)
        let deleted = post(account, AccountResponder.deletePath, session: session, sudo: sudo, [("confirm", "delete")])
        XCTAssertEqual(deleted.status, 200)
        XCTAssertTrue(deleted.bodyText.contains("id=\"account-deleted\""))
        XCTAssertEqual(deleted.cookie(SSOSessions.cookieName)?.maxAge, 0)
        XCTAssertEqual(deleted.cookie(AccountReauthentication.cookieName)?.maxAge, 0)
        XCTAssertNil(try issuer.users.find(email: bobEmail))
        XCTAssertEqual(try issuer.count("sso_sessions", "user_id = ?", [.integer(bob.id)]), 0)
        XCTAssertEqual((AuditLog.recorded ?? []).filter { $0.event == "account_deleted" }.map(\.user), [bobEmail])
    }
}
