import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The administrative changes of an account `ssoctl user` makes (enable,
/// unlock, update, totp --remove, delete): each takes effect for running
/// responders at once, and each refusal names the bad value and changes
/// nothing in any table.
final class AccountAdministrationTests: SessionEndpointsTestCase {
    var changes: AccountChanges { harness.accountChanges }

    /// Every row of every table (the sign-in snapshot leaves out TOTP, the
    /// throttle and device secrets, which these changes touch).
    func everyRow() throws -> [String] {
        let tables = try harness.database.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { $0.string(0) }
        return try tables.flatMap { table in
            try harness.database.query("SELECT * FROM \(table) ORDER BY 1").map { "\(table): \($0.values)" }
        }
    }

    func assertRefused(_ what: String, naming value: String, file: StaticString = #filePath, line: UInt = #line,
                       _ body: () throws -> Void) throws {
        let before = try everyRow()
        XCTAssertThrowsError(try body(), what, file: file, line: line) { error in
            XCTAssertTrue(error is ValidationError, "\(what): \(error)", file: file, line: line)
            XCTAssertTrue("\(error)".contains(value), "\(what): \(error) names \(value)", file: file, line: line)
        }
        XCTAssertEqual(try everyRow(), before, "\(what): the database is unchanged", file: file, line: line)
    }

    func refreshGrant(_ token: String) -> Response {
        harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", "mobile-app-001")]))
    }

    func signsIn(_ email: String = DemoData.email, password: String = H.password) throws -> Bool {
        harness.login(try harness.startLogin(), email: email, password: password).locationQuery["code"] != nil
    }

    // MARK: Enable

    func testEnablingLetsADisabledUserSignInAgain() throws {
        try changes.disable(email: DemoData.email)
        XCTAssertFalse(try signsIn())
        let result = try changes.enable(email: "ALICE@example.com")
        XCTAssertTrue(result.wasDisabled)
        XCTAssertEqual(result.user.id, harness.alice.id)
        XCTAssertTrue(try signsIn(), "at once, for the running login responder")
        let before = try everyRow()
        XCTAssertFalse(try changes.enable(email: DemoData.email).wasDisabled, "nothing to undo")
        XCTAssertEqual(try everyRow(), before)
    }

    // MARK: Unlock

    func testUnlockingClearsTheAccountsLockAndLeavesTheAddressCounter() throws {
        let pending = try harness.startLogin()
        for _ in 1...LoginThrottlePolicy.perAccount.maximumFailures {
            _ = harness.login(pending, email: DemoData.email, password: "wrong password")
        }
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: DemoData.email))
        let addressKey = LoginThrottle.addressKey("127.0.0.1")
        let addressRow = try harness.database.queryOne("SELECT failures, locked_until FROM login_throttle WHERE key_hash = ?", [.blob(addressKey)])
        XCTAssertEqual(addressRow?.int(0), Int64(LoginThrottlePolicy.perAccount.maximumFailures))

        let result = try changes.unlock(email: "Alice@Example.com")
        XCTAssertEqual(result.lockedUntil, clock.now + Int64(LoginThrottlePolicy.perAccount.firstLockDuration))
        XCTAssertFalse(try harness.throttle.isAccountLocked(email: DemoData.email))
        XCTAssertEqual(try harness.database.queryOne("SELECT failures, locked_until FROM login_throttle WHERE key_hash = ?",
                                                     [.blob(addressKey)])?.values, addressRow?.values, "per-address counters stay")
        XCTAssertNotNil(harness.login(pending, email: DemoData.email, password: H.password).locationQuery["code"], "signs in at once")
        XCTAssertNil(try changes.unlock(email: DemoData.email).lockedUntil, "not locked")
    }

    func testUnlockingForgetsTheCountTowardsALockToo() throws {
        let pending = try harness.startLogin()
        for _ in 1..<LoginThrottlePolicy.perAccount.maximumFailures {
            _ = harness.login(pending, email: DemoData.email, password: "wrong password")
        }
        XCTAssertNil(try changes.unlock(email: DemoData.email).lockedUntil)
        _ = harness.login(pending, email: DemoData.email, password: "wrong password")
        XCTAssertFalse(try harness.throttle.isAccountLocked(email: DemoData.email), "the count started over")
    }

    // MARK: Update

    func testUpdateChangesTheNameAndRolesOfTheNextTokens() throws {
        let user = try changes.update(email: DemoData.email, name: "Alice Martin-Dupont", roles: ["admin", "user"])
        XCTAssertEqual(user.name, "Alice Martin-Dupont")
        XCTAssertEqual(user.roles, ["admin", "user"])
        XCTAssertEqual(user.subject, harness.alice.subject)
        let tokens = try signInAndExchange()
        XCTAssertEqual(try harness.verifiedJWT(XCTUnwrap(tokens.idToken)).claims["name"] as? String, "Alice Martin-Dupont")
        XCTAssertEqual(try harness.verifiedJWT(tokens.accessToken).claims["roles"] as? [String], ["admin", "user"])
        XCTAssertEqual(userinfoGET(tokens.accessToken).jsonObject()["name"] as? String, "Alice Martin-Dupont")

        XCTAssertEqual(try changes.update(email: DemoData.email, name: nil, roles: ["user"]).name, "Alice Martin-Dupont", "name kept")
        XCTAssertEqual(try changes.update(email: DemoData.email, name: "Alice", roles: nil).roles, ["user"], "roles kept")
    }

    func testARefusedUpdateNamesTheValueAndChangesNothing() throws {
        try assertRefused("no option", naming: DemoData.email) { try changes.update(email: DemoData.email, name: nil, roles: nil) }
        try assertRefused("bad role", naming: "\"bad role\"") { try changes.update(email: DemoData.email, name: nil, roles: ["user", "bad role"]) }
        try assertRefused("empty name", naming: "name") { try changes.update(email: DemoData.email, name: " ", roles: nil) }
        try assertRefused("control character in the name", naming: "name") {
            try changes.update(email: DemoData.email, name: "Alice\u{7}", roles: nil)
        }
        try assertRefused("unknown user", naming: "nobody@example.com") {
            try changes.update(email: "nobody@example.com", name: "X", roles: nil)
        }
    }

    // MARK: TOTP removal

    func testRemovingTOTPLetsThePasswordAloneSignIn() throws {
        let (bob, secret) = try harness.addUser("bob@example.com", totp: true)
        XCTAssertNotNil(secret)
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending, email: "bob@example.com", password: H.otherPassword).location, harness.codePage(pending))

        let result = try changes.removeTOTP(email: "bob@example.com")
        XCTAssertTrue(result.removed)
        XCTAssertEqual(result.user.id, bob.id)
        XCTAssertEqual(harness.submitCode(pending, harness.code(try XCTUnwrap(secret))).location, harness.codePage(pending, error: "expired"),
                       "a sign-in waiting for a code cannot complete with the removed seed")
        XCTAssertTrue(try signsIn("bob@example.com", password: H.otherPassword), "password only")
        let before = try everyRow()
        XCTAssertFalse(try changes.removeTOTP(email: "bob@example.com").removed)
        XCTAssertEqual(try everyRow(), before)
    }

    // MARK: Erasure

    func testDeletingAUserErasesEveryRowAndTheRunningIssuerRefusesItsTokensAtOnce() throws {
        // A responder process of its own: nothing is cached that outlives the erasure.
        let other = try issuer.otherProcess(clock: clock.clock)
        let otherUserInfo = try UserInfoResponder(services: other)
        let otherToken = try TokenResponder(services: other)
        let tokens = try signInAndExchange(scope: H.fullScope + " device_sso")
        let refresh = try XCTUnwrap(tokens.refreshToken)
        XCTAssertEqual(get(otherUserInfo, "/userinfo", headers: bearer(tokens.accessToken)).status, 200)
        // A half-finished two-step sign-in and a failure on the account's counter.
        _ = try harness.totpStore.enrol(userID: harness.alice.id)
        let pending = try harness.startLogin()
        XCTAssertEqual(harness.login(pending).location, harness.codePage(pending))
        _ = harness.login(try harness.startLogin(), password: "wrong password")
        let (bob, _) = try harness.addUser("bob@example.com", totp: true)
        let bobsTokens = try signInAndExchangeAs("bob@example.com")
        // Two passkeys of alice's, one of bob's.
        func passkey(_ id: [UInt8], _ userID: Int64) -> PasskeyRecord {
            PasskeyRecord(credentialID: id, userID: userID, publicKeyCOSE: [0xA5], algorithm: -7, signCount: 0, name: "Key",
                          aaguid: [UInt8](repeating: 0, count: 16), backupEligible: false, backupState: false, transports: ["usb"],
                          createdAt: clock.now)
        }
        try issuer.storage.write { tx in
            for (id, userID) in [([0, 1, 0xFF], harness.alice.id), ([0, 2], harness.alice.id), ([0, 3], bob.id)] as [([UInt8], Int64)] {
                XCTAssertTrue(try tx.passkeys.add(passkey(id, userID)))
            }
        }

        let erased = try changes.delete(email: "ALICE@example.com")
        XCTAssertEqual(erased.user, harness.alice)
        XCTAssertEqual(erased.endedSessions, 1)
        XCTAssertEqual(erased.sessions, 1)
        XCTAssertEqual(erased.refreshTokens, 1)
        XCTAssertEqual(erased.deviceSecrets, 1)
        XCTAssertEqual(erased.authorizationCodes, 1)
        XCTAssertEqual(erased.pendingAuthorizations, 1)
        XCTAssertTrue(erased.totp)
        XCTAssertEqual(erased.passkeys, 2)
        for row in try everyRow() {
            XCTAssertFalse(row.contains(harness.alice.subject) || row.contains(DemoData.email), "left behind: \(row)")
        }
        for table in ["sso_sessions", "refresh_tokens", "device_secrets", "authorization_codes", "totp_credentials", "passkeys"] {
            XCTAssertEqual(try issuer.count(table, "user_id = ?", [.integer(harness.alice.id)]), 0, table)
        }
        XCTAssertEqual(try issuer.count("pending_authorizations", "password_verified_user_id = ?", [.integer(harness.alice.id)]), 0)
        XCTAssertEqual(try issuer.count("login_throttle", "key_hash = ?", [.blob(LoginThrottle.accountKey(.user(id: harness.alice.id)))]), 0)

        // RFC 6749 §5.2 invalid_grant: the refresh token is unknown now.
        for responder in [harness.token, otherToken] as [Responder] {
            let refused = harness.run(responder, H.formRequest("/token", RequestParameters([
                ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "mobile-app-001")])))
            XCTAssertEqual(refused.status, 400)
            XCTAssertEqual(refused.jsonObject()["error"] as? String, "invalid_grant")
        }
        XCTAssertEqual(get(otherUserInfo, "/userinfo", headers: bearer(tokens.accessToken)).status, 401)
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 401)
        XCTAssertEqual(introspect(tokens.accessToken).bodyText, #"{"active":false}"#)
        XCTAssertEqual(introspect(refresh).bodyText, #"{"active":false}"#)
        XCTAssertEqual(harness.submitCode(pending, "123456").location, "/login.html?error=expired", "the pending sign-in is gone")
        XCTAssertFalse(try signsIn(), "no account")

        // Bob keeps everything.
        XCTAssertEqual(userinfoGET(bobsTokens.accessToken).status, 200)
        XCTAssertEqual(refreshGrant(try XCTUnwrap(bobsTokens.refreshToken)).status, 200)
        XCTAssertTrue(try harness.totpStore.isEnrolled(userID: bob.id))
        XCTAssertEqual(try issuer.storage.read.passkeys.list(userID: bob.id).map(\.credentialID), [[0, 3]])

        // The address again: a new account, a new sub, none of the old tokens.
        let again = try issuer.users.add(email: DemoData.email, name: DemoData.name, password: H.password)
        XCTAssertNotEqual(again.subject, harness.alice.subject)
        XCTAssertEqual(userinfoGET(tokens.accessToken).status, 401)
        XCTAssertEqual(refreshGrant(refresh).status, 400)
        XCTAssertEqual(try harness.sessions.list(userID: again.id), [])
        XCTAssertFalse(try harness.totpStore.isEnrolled(userID: again.id))
        XCTAssertEqual(try issuer.storage.read.passkeys.list(userID: again.id), [])
        XCTAssertEqual(try harness.verifiedJWT(try signInAndExchange().accessToken).claims["sub"] as? String, again.subject)
    }

    /// Bob (no TOTP step here: his seed is only there to be kept) signs in
    /// for mobile-app-001 by password, then the seed step.
    func signInAndExchangeAs(_ email: String) throws -> IssuedTokens {
        let secret = try XCTUnwrap(harness.totpStore.credential(userID: XCTUnwrap(issuer.users.find(email: email)).id)?.secret)
        let (_, response) = try harness.signInWithTOTP(email, secret: secret)
        let code = try XCTUnwrap(response.locationQuery["code"])
        let body = harness.tokenPOST(H.codeExchange(code: code)).jsonObject()
        return IssuedTokens(accessToken: try XCTUnwrap(body["access_token"] as? String), idToken: body["id_token"] as? String,
                            refreshToken: body["refresh_token"] as? String, sessionSecret: "", sid: "")
    }

    func testARefusedDeletionNamesTheValueAndChangesNothing() throws {
        _ = try signInAndExchange()
        try assertRefused("unknown user", naming: "nobody@example.com") { try changes.delete(email: "nobody@example.com") }
        try assertRefused("a near miss", naming: "alice@example.co") { try changes.delete(email: "alice@example.co") }
        XCTAssertTrue(try signsIn())
    }

    // MARK: Identifiers are bytes

    func testAnEmailWithAControlCharacterIsRefusedBeforeAnyLookup() throws {
        for variant in ["alice@example.com\u{0}", "alice@example.com\n", "\u{7F}alice@example.com", "alice@example.com\u{85}"] {
            let named = variant.debugDescription
            try assertRefused("existing", naming: named) { _ = try issuer.users.existing(email: variant) }
            try assertRefused("enable", naming: named) { try changes.enable(email: variant) }
            try assertRefused("unlock", naming: named) { try changes.unlock(email: variant) }
            try assertRefused("update", naming: named) { try changes.update(email: variant, name: "X", roles: nil) }
            try assertRefused("totp remove", naming: named) { try changes.removeTOTP(email: variant) }
            try assertRefused("delete", naming: named) { try changes.delete(email: variant) }
            try assertRefused("disable", naming: named) { try changes.disable(email: variant) }
            try assertRefused("passwd", naming: named) { try changes.changePassword(email: variant, password: "long enough password") }
        }
        XCTAssertTrue(try signsIn())
    }
}
