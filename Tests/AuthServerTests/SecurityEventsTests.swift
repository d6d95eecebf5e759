import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The issuer's security events through the real responders, in-process:
/// each is counted (`Metrics`, this process's in-memory counters) and, where
/// it concerns an account or a session, recorded as an audit event
/// (`AuditLog.recorded`). Counters are process-wide and other tests count
/// too, so every check is a difference taken around the request.
final class SecurityEventsTests: SessionEndpointsTestCase {
    static let wrongPassword = "Tr0ub4dor&3-not-the-password"

    override func setUpWithError() throws {
        try super.setUpWithError()
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        super.tearDown()
    }

    // MARK: Helpers

    var events: [AuditEvent] { AuditLog.recorded ?? [] }

    func events(named name: String) -> [AuditEvent] { events.filter { $0.event == name } }

    /// Every counter of every family, to show what one request changed.
    func counterSnapshot() -> [String: UInt64] {
        var values: [String: UInt64] = [:]
        for family in CounterFamily.allCases {
            for value in family.label == nil ? [""] : family.values + [MetricCatalogue.otherLabelValue] {
                values[family.name + "/" + value] = Metrics.value(family, value)
            }
        }
        return values
    }

    /// The counters that changed between two snapshots, by how much.
    func changes(from before: [String: UInt64], to after: [String: UInt64]) -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for (key, value) in after where value != before[key] { result[key] = value &- (before[key] ?? 0) }
        return result
    }

    /// Runs `body` and returns which counters it changed, by how much.
    func counted(_ body: () throws -> Void) rethrows -> [String: UInt64] {
        let before = counterSnapshot()
        try body()
        return changes(from: before, to: counterSnapshot())
    }

    /// The audit line as it would be written (JSON), for what must never be in it.
    func json(_ event: AuditEvent) throws -> String { String(decoding: try JSON.encode(event), as: UTF8.self) }

    func assertNoSecrets(_ secrets: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(events.isEmpty, "there are events to look at", file: file, line: line)
        for event in events {
            let text = try json(event)
            for secret in secrets where !secret.isEmpty {
                XCTAssertFalse(text.contains(secret), "\(event.event) holds a secret: \(text)", file: file, line: line)
            }
        }
    }

    func wrongPasswordAttempt(_ pending: PendingLogin, email: String = DemoData.email, address: String = "127.0.0.1",
                              file: StaticString = #filePath, line: UInt = #line) {
        let response = harness.login(pending, email: email, password: Self.wrongPassword, address: address, file: file, line: line)
        XCTAssertTrue(response.location?.contains("error=") ?? false, "refused: \(response.location ?? "nil")", file: file, line: line)
    }

    // MARK: Sign-in results

    func testAWrongPasswordRecordsOneFailureWithTheAccountClientAndAddress() throws {
        let pending = try harness.startLogin()
        XCTAssertEqual(events, [], "starting a sign-in records nothing")
        let delta = counted { wrongPasswordAttempt(pending, address: "198.51.100.23") }
        XCTAssertEqual(delta, ["gatehouse_logins_total/wrong_password": 1])
        XCTAssertEqual(events.count, 1)
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.event, "login_failure")
        XCTAssertEqual(event.reason, "wrong_password")
        XCTAssertEqual(event.user, DemoData.email)
        XCTAssertEqual(event.client, "mobile-app-001")
        XCTAssertEqual(event.ip, "198.51.100.23")
        XCTAssertNil(event.sid)
        XCTAssertNil(event.actor)
        XCTAssertNil(event.target)
        XCTAssertFalse(event.time.isEmpty)
        try assertNoSecrets([Self.wrongPassword, SignInHarness.password, pending.cookieSecret, pending.formToken])
    }

    func testTheStoredEmailIsRecordedNotTheSpellingTyped() throws {
        let pending = try harness.startLogin()
        wrongPasswordAttempt(pending, email: "ALICE@Example.COM")
        XCTAssertEqual(events.map(\.user), [DemoData.email])
        XCTAssertFalse(try json(XCTUnwrap(events.first)).contains("ALICE"))
    }

    func testAnUnknownEmailRecordsUnknownUserWithoutTheTypedName() throws {
        let pending = try harness.startLogin()
        // People type passwords into the name field: it must never be written.
        let typed = "hunter2-typed-in-the-wrong-box@example.com"
        let delta = counted { wrongPasswordAttempt(pending, email: typed, address: "203.0.113.5") }
        XCTAssertEqual(delta, ["gatehouse_logins_total/unknown_user": 1])
        XCTAssertEqual(events.count, 1)
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.event, "login_failure")
        XCTAssertEqual(event.reason, "unknown_user")
        XCTAssertNil(event.user, "no user field for an unknown name")
        XCTAssertEqual(event.client, "mobile-app-001")
        XCTAssertEqual(event.ip, "203.0.113.5")
        let text = try json(event)
        XCTAssertTrue(text.contains("\"user\":null"), "no user for an unknown name: \(text)")
        XCTAssertFalse(text.contains("hunter2"), text)
        XCTAssertFalse(text.contains("typed-in-the-wrong-box"), text)
        try assertNoSecrets([typed, Self.wrongPassword])
    }

    func testASuccessfulSignInRecordsLoginSuccessWithTheSession() throws {
        var signedIn: CompletedSignIn?
        let delta = try counted { signedIn = try harness.signIn() }
        XCTAssertEqual(delta, ["gatehouse_logins_total/success": 1])
        XCTAssertEqual(events.count, 1)
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.event, "login_success")
        XCTAssertNil(event.reason)
        XCTAssertEqual(event.user, DemoData.email)
        XCTAssertEqual(event.client, "mobile-app-001")
        XCTAssertEqual(event.ip, "127.0.0.1")
        let sid = try XCTUnwrap(event.sid, "login_success names its session")
        XCTAssertEqual(try harness.sessionRows().map(\.sid), [sid], "the sid is the session just made")
        let completed = try XCTUnwrap(signedIn)
        try assertNoSecrets([SignInHarness.password, completed.code, completed.sessionSecret])
    }

    func testADisabledAccountRecordsDisabled() throws {
        try issuer.users.disable(email: DemoData.email)
        let pending = try harness.startLogin()
        let delta = counted { _ = harness.login(pending) }
        XCTAssertEqual(delta, ["gatehouse_logins_total/disabled": 1])
        XCTAssertEqual(events.map(\.event), ["login_failure"])
        XCTAssertEqual(events.first?.reason, "disabled")
        XCTAssertEqual(events.first?.user, DemoData.email)
    }

    func testTheTOTPStepRecordsWrongCodesAndTheSuccessOnce() throws {
        let (user, secret) = try harness.addUser("bob@example.com", totp: true)
        let seed = try XCTUnwrap(secret)
        let pending = try harness.startLogin()
        // The right password alone completes nothing: no event yet.
        let first = counted { _ = harness.login(pending, email: user.email, password: SignInHarness.otherPassword) }
        XCTAssertEqual(first, [:])
        XCTAssertEqual(events, [])

        let wrongCode = harness.code(seed) == "000000" ? "111111" : "000000"
        let wrong = counted { _ = harness.submitCode(pending, wrongCode, address: "192.0.2.44") }
        XCTAssertEqual(wrong, ["gatehouse_logins_total/wrong_totp": 1])
        XCTAssertEqual(events.map(\.event), ["login_failure"])
        XCTAssertEqual(events.last?.reason, "wrong_totp")
        XCTAssertEqual(events.last?.user, "bob@example.com")
        XCTAssertEqual(events.last?.ip, "192.0.2.44")

        let right = counted { _ = harness.submitCode(pending, harness.code(seed)) }
        XCTAssertEqual(right, ["gatehouse_logins_total/success": 1])
        XCTAssertEqual(events.map(\.event), ["login_failure", "login_success"])
        XCTAssertNotNil(events.last?.sid)
        try assertNoSecrets([SignInHarness.otherPassword, harness.code(seed), wrongCode])
    }

    // MARK: Account lock

    func testTheFailureThatLocksRecordsOneAccountLockedAndLaterRefusalsNone() throws {
        let pending = try harness.startLogin()
        let limit = LoginThrottlePolicy.perAccount.maximumFailures
        let beforeLock = counted { for _ in 1..<limit { wrongPasswordAttempt(pending, address: "198.51.100.9") } }
        XCTAssertEqual(beforeLock, ["gatehouse_logins_total/wrong_password": UInt64(limit - 1)])
        XCTAssertEqual(events(named: "account_locked"), [], "no lock before the limit")

        let locking = counted { wrongPasswordAttempt(pending, address: "198.51.100.9") }
        XCTAssertEqual(locking, ["gatehouse_logins_total/wrong_password": 1, "gatehouse_account_locks_total/": 1])
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: DemoData.email))
        XCTAssertEqual(events.suffix(2).map(\.event), ["login_failure", "account_locked"], "the failure, then the lock it caused")
        let lock = try XCTUnwrap(events(named: "account_locked").first)
        XCTAssertEqual(events(named: "account_locked").count, 1)
        XCTAssertEqual(lock.user, DemoData.email)
        XCTAssertEqual(lock.client, "mobile-app-001")
        XCTAssertEqual(lock.ip, "198.51.100.9")
        XCTAssertNil(lock.reason)

        // While locked, even the right password is refused as `locked`, and
        // no further lock is recorded or counted.
        let countBefore = events.count
        let refused = counted {
            _ = harness.login(pending)
            wrongPasswordAttempt(pending)
        }
        XCTAssertEqual(refused, ["gatehouse_logins_total/locked": 2])
        XCTAssertEqual(events.dropFirst(countBefore).map(\.event), ["login_failure", "login_failure"])
        XCTAssertEqual(events.dropFirst(countBefore).map(\.reason), ["locked", "locked"])
        XCTAssertEqual(events.dropFirst(countBefore).map(\.user), [DemoData.email, DemoData.email])
        XCTAssertEqual(events(named: "account_locked").count, 1, "no second account_locked")
        try assertNoSecrets([Self.wrongPassword, SignInHarness.password])
    }

    func testAnUnknownNameLockingItsCounterRecordsNoAccountLock() throws {
        // There is no account to lock: the unknown name's counter locks
        // silently, and its refusals are `locked` without a user.
        let pending = try harness.startLogin()
        let typed = "nobody@example.com"
        let delta = counted {
            for _ in 1...LoginThrottlePolicy.perAccount.maximumFailures { wrongPasswordAttempt(pending, email: typed) }
            wrongPasswordAttempt(pending, email: typed)
        }
        XCTAssertEqual(delta, ["gatehouse_logins_total/unknown_user": UInt64(LoginThrottlePolicy.perAccount.maximumFailures),
                               "gatehouse_logins_total/locked": 1])
        XCTAssertEqual(events(named: "account_locked"), [])
        XCTAssertEqual(events.last?.reason, "locked")
        XCTAssertNil(events.last?.user)
        try assertNoSecrets([typed, Self.wrongPassword])
    }

    // MARK: Refresh tokens

    func firstTokens() throws -> (tokens: [String: Any], signedIn: CompletedSignIn) {
        let signedIn = try harness.signIn()
        let response = harness.tokenPOST(SignInHarness.codeExchange(code: signedIn.code))
        XCTAssertEqual(response.status, 200, response.bodyText)
        return (response.jsonObject(), signedIn)
    }

    func refresh(_ token: String, address: String = "127.0.0.1") -> Response {
        var request = SignInHarness.formRequest("/token", RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token),
                                                                             ("client_id", "mobile-app-001")]))
        request.remoteAddress = address
        return harness.run(harness.token, request)
    }

    func testTokensIssuedAreCountedByGrant() throws {
        var first: [String: Any] = [:]
        let exchange = try counted { first = try firstTokens().tokens }
        XCTAssertEqual(exchange, ["gatehouse_logins_total/success": 1, "gatehouse_tokens_issued_total/authorization_code": 1])
        let refreshed = counted { XCTAssertEqual(refresh(first["refresh_token"] as! String).status, 200) }
        XCTAssertEqual(refreshed, ["gatehouse_tokens_issued_total/refresh_token": 1])
        let refused = counted { XCTAssertEqual(refresh("not-a-refresh-token").status, 400) }
        XCTAssertEqual(refused, [:], "a refused grant issues nothing")
        let unsupported = counted {
            XCTAssertEqual(harness.tokenPOST(RequestParameters([("grant_type", "password"), ("client_id", "mobile-app-001")])).status, 400)
        }
        XCTAssertEqual(unsupported, [:])
    }

    func testRefreshTokenReuseIsAuditedAndCounted() throws {
        let (first, signedIn) = try firstTokens()
        let spent = try XCTUnwrap(first["refresh_token"] as? String)
        let rotated = refresh(spent)
        XCTAssertEqual(rotated.status, 200, rotated.bodyText)
        let successor = try XCTUnwrap(rotated.jsonObject()["refresh_token"] as? String)
        let familyID = try XCTUnwrap(refreshRow(spent)?.familyID)
        AuditLog.recorded = []

        clock.advance(Int64(harness.services.settings.lifetimes.refreshGracePeriod) + 1)
        let delta = counted {
            let reused = refresh(spent, address: "203.0.113.66")
            XCTAssertEqual(reused.status, 400)
            XCTAssertEqual(reused.jsonObject()["error"] as? String, "invalid_grant")
        }
        XCTAssertEqual(delta, ["gatehouse_refresh_reuse_detected_total/": 1])
        XCTAssertEqual(events.count, 1)
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.event, "refresh_reuse_detected")
        XCTAssertEqual(event.user, DemoData.email)
        XCTAssertEqual(event.client, "mobile-app-001")
        XCTAssertEqual(event.ip, "203.0.113.66")
        XCTAssertEqual(event.target, "family " + familyID)

        // The revoked family's other tokens are refused quietly: no second detection.
        let after = counted { XCTAssertEqual(refresh(successor).status, 400) }
        XCTAssertEqual(after["gatehouse_refresh_reuse_detected_total/"] ?? 0, 0, "a revoked token is not reuse")
        XCTAssertEqual(events(named: "refresh_reuse_detected").count, 1)
        try assertNoSecrets([spent, successor, signedIn.code, signedIn.sessionSecret, SignInHarness.password,
                             try XCTUnwrap(first["access_token"] as? String)])
    }

    func testARetryWithinTheGraceWindowIsCountedButNotAudited() throws {
        let (first, _) = try firstTokens()
        let spent = try XCTUnwrap(first["refresh_token"] as? String)
        let one = refresh(spent)
        XCTAssertEqual(one.status, 200)
        AuditLog.recorded = []
        clock.advance(1)
        let delta = counted {
            let again = refresh(spent)
            XCTAssertEqual(again.status, 200, again.bodyText)
            XCTAssertEqual(again.jsonObject()["refresh_token"] as? String, one.jsonObject()["refresh_token"] as? String)
        }
        XCTAssertEqual(delta, ["gatehouse_refresh_grace_retries_total/": 1, "gatehouse_tokens_issued_total/refresh_token": 1])
        XCTAssertEqual(events, [], "nothing was granted that had not been: no audit line")
    }

    // MARK: Logout

    func testLogoutIsAuditedWithItsSessionAndCounted() throws {
        let tokens = try signInAndExchange()
        AuditLog.recorded = []
        let delta = counted {
            let response = logoutGET(RequestParameters([("id_token_hint", tokens.idToken ?? ""),
                                                        ("post_logout_redirect_uri", "myapp:auth/logout")]),
                                     cookies: [SSOSessions.cookieName: tokens.sessionSecret])
            XCTAssertEqual(response.status, 303, response.bodyText)
        }
        XCTAssertEqual(delta, ["gatehouse_logouts_total/": 1])
        XCTAssertEqual(events.count, 1)
        let event = try XCTUnwrap(events.first)
        XCTAssertEqual(event.event, "logout")
        XCTAssertEqual(event.sid, tokens.sid)
        XCTAssertEqual(event.user, DemoData.email)
        XCTAssertEqual(event.client, "mobile-app-001")
        try assertNoSecrets([tokens.sessionSecret, tokens.idToken ?? "", tokens.accessToken, tokens.refreshToken ?? ""])
    }

    // MARK: DPoP

    func testRefusedDPoPProofsAreCountedByReasonAndNotAudited() throws {
        let (first, _) = try firstTokens()
        let token = try XCTUnwrap(first["refresh_token"] as? String)
        AuditLog.recorded = []
        let parameters = RequestParameters([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", "mobile-app-001")])
        let malformed = counted {
            let response = harness.tokenPOST(parameters, headers: ["dpop": "not-a-jwt"])
            XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_dpop_proof")
        }
        XCTAssertEqual(malformed, ["gatehouse_dpop_proofs_rejected_total/malformed": 1])
        let repeated = counted {
            let response = harness.tokenPOST(parameters, headers: ["dpop": "a.b.c, d.e.f"])
            XCTAssertEqual(response.jsonObject()["error"] as? String, "invalid_dpop_proof")
        }
        XCTAssertEqual(repeated, ["gatehouse_dpop_proofs_rejected_total/repeated": 1])
        XCTAssertEqual(events, [])
    }

    // MARK: Everything at once

    func testNoEventOfAWholeSessionHoldsAPasswordTokenOrCode() throws {
        // A failure, a sign-in, an exchange, a rotation, a reuse and a logout.
        let pending = try harness.startLogin()
        wrongPasswordAttempt(pending)
        let tokens = try signInAndExchange()
        let rotated = refresh(try XCTUnwrap(tokens.refreshToken))
        let successor = try XCTUnwrap(rotated.jsonObject()["refresh_token"] as? String)
        let freshAccess = try XCTUnwrap(rotated.jsonObject()["access_token"] as? String)
        clock.advance(60)
        XCTAssertEqual(refresh(try XCTUnwrap(tokens.refreshToken)).status, 400)
        let second = try signInAndExchange()
        _ = logoutGET(RequestParameters([("id_token_hint", second.idToken ?? "")]), cookies: [SSOSessions.cookieName: second.sessionSecret])

        XCTAssertEqual(Set(events.map(\.event)), ["login_failure", "login_success", "refresh_reuse_detected", "logout"])
        try assertNoSecrets([Self.wrongPassword, SignInHarness.password, pending.cookieSecret, pending.formToken,
                             tokens.sessionSecret, tokens.accessToken, tokens.idToken ?? "", tokens.refreshToken ?? "", successor, freshAccess,
                             second.sessionSecret, second.accessToken, second.refreshToken ?? "", second.idToken ?? ""])
        // And the code: the one in the redirect of a fresh sign-in.
        AuditLog.recorded = []
        let third = try harness.signIn()
        try assertNoSecrets([third.code, third.sessionSecret])
        // Every event is one JSON object whose keys are the documented ones.
        let allowed: Set<String> = ["time", "event", "user", "client", "ip", "reason", "sid", "actor", "target"]
        for event in events {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(JSON.encode(event))) as? [String: Any])
            XCTAssertTrue(Set(object.keys).isSubset(of: allowed), "\(object.keys)")
        }
    }
}
