import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// Password changes, disabling and session revocation end what they must
/// (sessions, refresh tokens) in one transaction, and nothing else.
final class AccountChangeTests: SignInTestCase {
    typealias H = SignInHarness

    /// Signs Alice in and redeems the code: her session cookie and refresh token.
    private func signedInAlice(file: StaticString = #filePath, line: UInt = #line) throws -> (session: String, sid: String, refresh: String) {
        let signIn = try harness.signIn(file: file, line: line)
        let tokens = harness.tokenPOST(H.codeExchange(code: signIn.code), file: file, line: line).jsonObject(file: file, line: line)
        let refresh = try XCTUnwrap(tokens["refresh_token"] as? String, file: file, line: line)
        let sid = try XCTUnwrap(harness.sessions.find(secret: signIn.sessionSecret)?.sid, file: file, line: line)
        return (signIn.sessionSecret, sid, refresh)
    }

    private func refreshRevoked(_ token: String) throws -> Bool {
        try harness.database.queryOne("SELECT revoked_at FROM refresh_tokens WHERE token_hash = ?",
                                      [.blob(SecretHash.of(token))])?.optionalInt(0) != nil
    }

    /// The cookie still skips the login page (a code comes straight back).
    private func cookieSkipsLogin(_ secret: String) -> Bool {
        harness.authorizeGET(H.authorizationParameters(), cookies: ["sso_session": secret]).locationQuery["code"] != nil
    }

    // MARK: Password change

    func testPasswordChangeEndsEverySessionAndRevokesEveryRefreshToken() throws {
        let first = try signedInAlice()
        clock.advance(10)
        let second = try signedInAlice()
        _ = try harness.addUser("bob@example.com")
        let bobPending = try harness.startLogin()
        let bobSession = try XCTUnwrap(harness.login(bobPending, email: "bob@example.com", password: H.otherPassword).cookie("sso_session")).value
        XCTAssertTrue(cookieSkipsLogin(first.session) && cookieSkipsLogin(second.session))

        clock.advance(10)
        let result = try harness.accountChanges.changePassword(email: "ALICE@example.com", password: "a new password for alice")
        XCTAssertEqual(Set(result.endedSessions), [first.sid, second.sid])
        XCTAssertEqual(result.user.email, DemoData.email)
        for (name, token) in [("first", first), ("second", second)] {
            XCTAssertFalse(cookieSkipsLogin(token.session), "\(name) cookie still signs in")
            XCTAssertTrue(try refreshRevoked(token.refresh), "\(name) refresh token")
            XCTAssertEqual(try harness.database.queryOne("SELECT ended_at FROM sso_sessions WHERE sid = ?", [.text(token.sid)])?.int(0), clock.now)
        }
        XCTAssertTrue(cookieSkipsLogin(bobSession), "other users are untouched")

        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending).location, harness.passwordPage(pending, error: "invalid_credentials"), "old password")
        XCTAssertNotNil(harness.login(pending, password: "a new password for alice").locationQuery["code"], "new password")
    }

    func testARefusedPasswordChangeChangesNothing() throws {
        let alice = try signedInAlice()
        for (name, email, password) in [("too short", DemoData.email, "short"), ("unknown user", "nobody@example.com", "long enough password"),
                                        ("too long", DemoData.email, String(repeating: "x", count: 1025))] {
            try assertDatabaseUnchanged(name) {
                XCTAssertThrowsError(try harness.accountChanges.changePassword(email: email, password: password), name)
            }
        }
        XCTAssertTrue(cookieSkipsLogin(alice.session))
        XCTAssertFalse(try refreshRevoked(alice.refresh))
    }

    // MARK: Disabling

    func testDisablingEndsSessionsRevokesTokensAndRefusesSignIn() throws {
        let alice = try signedInAlice()
        let result = try harness.accountChanges.disable(email: DemoData.email)
        XCTAssertEqual(result.endedSessions, [alice.sid])
        XCTAssertFalse(cookieSkipsLogin(alice.session))
        XCTAssertTrue(try refreshRevoked(alice.refresh))
        XCTAssertEqual(try harness.database.queryOne("SELECT disabled FROM users WHERE email = ?", [.text(DemoData.email)])?.int(0), 1)
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending).location, harness.passwordPage(pending, error: "invalid_credentials"))
        try assertDatabaseUnchanged("unknown user") {
            XCTAssertThrowsError(try harness.accountChanges.disable(email: "nobody@example.com"))
        }
    }

    // MARK: One session

    func testEndingOneSessionRevokesOnlyItsRefreshTokens() throws {
        let first = try signedInAlice()
        let second = try signedInAlice()
        let ended = try harness.accountChanges.endSession(sid: first.sid)
        XCTAssertEqual(ended.sid, first.sid)
        XCTAssertEqual(ended.state, .active, "the state it had")
        XCTAssertFalse(cookieSkipsLogin(first.session))
        XCTAssertTrue(try refreshRevoked(first.refresh))
        XCTAssertTrue(cookieSkipsLogin(second.session))
        XCTAssertFalse(try refreshRevoked(second.refresh))
        XCTAssertEqual(try harness.accountChanges.endSession(sid: first.sid).state, .ended, "again: harmless")
        for sid in ["", "no-such-sid", String(repeating: "a", count: 100), "' OR 1=1 --"] {
            try assertDatabaseUnchanged("sid \(sid.debugDescription)") {
                XCTAssertThrowsError(try harness.accountChanges.endSession(sid: sid))
            }
        }
    }

    func testSessionListingsShowStateAndMethods() throws {
        let ended = try signedInAlice()
        clock.advance(5)
        let live = try signedInAlice()
        try harness.accountChanges.endSession(sid: ended.sid)
        let (_, secret) = try harness.addUser("bob@example.com", totp: true)
        clock.advance(5)
        let bob = try harness.signInWithTOTP("bob@example.com", secret: XCTUnwrap(secret)).response
        XCTAssertNotNil(bob.cookie("sso_session"))

        let all = try harness.sessions.list()
        XCTAssertEqual(all.count, 3)
        XCTAssertEqual(all.first?.email, "bob@example.com", "newest first")
        XCTAssertEqual(all.first?.amr, ["pwd", "otp"])
        XCTAssertEqual(all.first?.state, .active)
        let alice = try harness.sessions.list(userID: harness.alice.id)
        XCTAssertEqual(alice.map(\.sid), [live.sid, ended.sid])
        XCTAssertEqual(alice.map(\.state), [.active, .ended])
        XCTAssertEqual(alice.map(\.amr), [["pwd"], ["pwd"]])
        XCTAssertEqual(alice.first?.expiresAt, (alice.first?.createdAt ?? 0) + Int64(issuer.config.ssoSessionLifetime))

        clock.advance(Int64(issuer.config.ssoSessionLifetime))
        XCTAssertEqual(try harness.sessions.listing(sid: live.sid)?.state, .expired)
        try issuer.users.disable(email: "bob@example.com")
        clock.advance(-Int64(issuer.config.ssoSessionLifetime))
        XCTAssertEqual(try harness.sessions.list().first?.state, .userDisabled)
    }
}
