import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// The login throttle through POST /login, in-process: per account (known
/// or not), per client address, lock escalation, reset, concurrency.
final class LoginThrottleTests: SignInTestCase {
    typealias H = SignInHarness
    let account = LoginThrottlePolicy.perAccount
    let address = LoginThrottlePolicy.perAddress

    private func fail(_ pending: PendingLogin, email: String = DemoData.email, from address: String = "127.0.0.1",
                      expect error: String = "invalid_credentials", retryMinutes: Int? = nil,
                      file: StaticString = #filePath, line: UInt = #line) {
        let response = harness.login(pending, email: email, password: "wrong password", address: address, file: file, line: line)
        XCTAssertEqual(response.location, harness.passwordPage(pending, error: error, retryMinutes: retryMinutes, email: email),
                       file: file, line: line)
        XCTAssertTrue(response.setCookieHeaders.isEmpty, file: file, line: line)
    }

    private func countersAndLocks() throws -> [[Int64]] {
        try harness.database.query("SELECT failures, window_started_at, locked_until FROM login_throttle ORDER BY key_hash").map {
            [$0.int(0), $0.int(1), $0.int(2)]
        }
    }

    // MARK: The numbers

    func testTheNumbersAreTheDocumentedOnes() {
        XCTAssertEqual([account.maximumFailures, account.window, account.firstLockDuration, account.longestLockDuration], [5, 900, 60, 3600])
        XCTAssertEqual([address.maximumFailures, address.window, address.firstLockDuration, address.longestLockDuration], [20, 900, 60, 3600])
        XCTAssertEqual((1...13).map { account.lockDuration(afterFailures: $0) },
                       [nil, nil, nil, nil, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600])
        XCTAssertEqual(account.lockDuration(afterFailures: 500), 3600, "no overflow")
        XCTAssertEqual(address.lockDuration(afterFailures: 19), nil)
        XCTAssertEqual(address.lockDuration(afterFailures: 20), 60)
    }

    // MARK: Per account

    func testFiveFailuresLockTheAccountAndEvenTheRightPasswordIsRefused() throws {
        let pending = try harness.startLogin()
        for _ in 1...account.maximumFailures { fail(pending) }
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: DemoData.email))
        let throttleBefore = try countersAndLocks()
        try assertDatabaseUnchanged("right password while locked") {
            for _ in 0..<10 {
                let response = harness.login(pending)
                XCTAssertEqual(response.location, harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1))
                XCTAssertTrue(response.setCookieHeaders.isEmpty)
            }
        }
        XCTAssertEqual(try countersAndLocks(), throttleBefore, "refused attempts neither count nor extend the lock")
        clock.advance(59)
        XCTAssertEqual(harness.login(pending).location, harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1))
        clock.advance(1)
        XCTAssertNotNil(harness.login(pending).locationQuery["code"], "one minute later the same form signs in")
        XCTAssertFalse(try harness.throttle.isAccountLocked(email: DemoData.email))
    }

    func testEachFailureAfterALockDoublesItUpToAnHour() throws {
        let pending = try harness.startLogin()
        for _ in 1...account.maximumFailures { fail(pending) }
        for failures in (account.maximumFailures + 1)...(account.maximumFailures + 8) {
            let previous = Int64(try XCTUnwrap(account.lockDuration(afterFailures: failures - 1)))
            clock.advance(previous - 1)
            let pending = try harness.startLogin()  // pending requests live 10 minutes
            fail(pending, expect: "too_many_attempts", retryMinutes: 1)
            clock.advance(1)
            fail(pending)  // admitted, counted, wrong: locks again, longer
        }
        let lockedUntil = try XCTUnwrap(harness.database.queryOne("SELECT MAX(locked_until) FROM login_throttle")?.int(0))
        XCTAssertEqual(lockedUntil - clock.now, 3600, "capped at one hour")
        let locked = try harness.startLogin()
        XCTAssertEqual(harness.login(locked).location, harness.passwordPage(locked, error: "too_many_attempts", retryMinutes: 60),
                       "the page says how long the lock has left, not 'a minute'")
        clock.advance(3600 - 61)
        let later = try harness.startLogin()
        XCTAssertEqual(harness.login(later).location, harness.passwordPage(later, error: "too_many_attempts", retryMinutes: 2), "rounded up")
    }

    func testASuccessResetsTheAccountCount() throws {
        let pending = try harness.startLogin()
        for _ in 1..<account.maximumFailures { fail(pending) }
        XCTAssertNotNil(harness.login(pending).locationQuery["code"])
        let again = try harness.startLogin()
        for _ in 1..<account.maximumFailures { fail(again) }
        XCTAssertNotNil(harness.login(again).locationQuery["code"], "four more failures do not lock: the count started over")
    }

    func testFailuresOlderThanTheWindowAreForgotten() throws {
        let pending = try harness.startLogin()
        for _ in 1..<account.maximumFailures { fail(pending) }
        clock.advance(Int64(account.window))
        let later = try harness.startLogin()
        for _ in 1..<account.maximumFailures { fail(later) }
        XCTAssertFalse(try harness.throttle.isAccountLocked(email: DemoData.email))
        fail(later)
        XCTAssertTrue(try harness.throttle.isAccountLocked(email: DemoData.email))
    }

    /// An unknown email locks exactly like a known one, so the responses
    /// never tell which accounts exist; case does not make a new account.
    func testUnknownEmailsAreThrottledTheSameWay() throws {
        let pending = try harness.startLogin()
        let variants = ["mallory@example.com", "Mallory@Example.com", "MALLORY@EXAMPLE.COM", "mallory@EXAMPLE.com", "mallory@example.COM"]
        for email in variants { fail(pending, email: email) }
        fail(pending, email: "mallory@example.com", expect: "too_many_attempts", retryMinutes: 1)
        let known = try harness.startLogin()
        for email in ["alice@example.com", "Alice@Example.com", "ALICE@EXAMPLE.COM", "alice@EXAMPLE.com", "alice@example.COM"] {
            fail(known, email: email)
        }
        fail(known, expect: "too_many_attempts", retryMinutes: 1)
    }

    func testMissingFieldsAreNotCounted() throws {
        let pending = try harness.startLogin()
        for _ in 0..<10 {
            XCTAssertEqual(harness.login(pending, password: nil).location, harness.passwordPage(pending, error: "invalid_credentials"))
            XCTAssertEqual(harness.login(pending, email: nil).location, harness.passwordPage(pending, error: "invalid_credentials", email: nil))
            XCTAssertEqual(harness.login(pending, email: String(repeating: "a", count: 250) + "@example.com").location,
                           harness.passwordPage(pending, error: "invalid_credentials", email: nil), "too long to keep")
        }
        XCTAssertEqual(try harness.throttleRows(), [])
        XCTAssertNotNil(harness.login(pending).locationQuery["code"])
    }

    // MARK: Per address

    func testTwentyFailuresFromOneAddressLockThatAddressOnly() throws {
        let pending = try harness.startLogin()
        // Password spraying: one guess per account, many accounts, one address.
        for index in 0..<address.maximumFailures { fail(pending, email: "user\(index)@example.com", from: "198.51.100.7") }
        fail(pending, email: DemoData.email, from: "198.51.100.7", expect: "too_many_attempts", retryMinutes: 1)
        XCTAssertEqual(harness.login(pending, address: "198.51.100.7").location, harness.passwordPage(pending, error: "too_many_attempts", retryMinutes: 1))
        XCTAssertFalse(try harness.throttle.isAccountLocked(email: DemoData.email), "refused by address: alice's count untouched")
        XCTAssertNotNil(harness.login(pending, address: "198.51.100.8").locationQuery["code"], "another address signs in")
    }

    /// Behind one NAT address an attacker locks the account they attack,
    /// not everyone else: successes do not count against the address.
    func testOneAttackerBehindANATDoesNotLockOutTheOthers() throws {
        let attacker = try harness.startLogin()
        for _ in 1...account.maximumFailures { fail(attacker, email: "victim@example.com", from: "203.0.113.9") }
        fail(attacker, email: "victim@example.com", from: "203.0.113.9", expect: "too_many_attempts", retryMinutes: 1)
        for index in 0..<(address.maximumFailures * 2) {
            let user = "colleague\(index)@example.com"
            _ = try harness.addUser(user)
            let pending = try harness.startLogin()
            XCTAssertNotNil(harness.login(pending, email: user, password: H.otherPassword, address: "203.0.113.9").locationQuery["code"], user)
        }
    }

    func testIPv6ClientsAreKeyedByTheirSlash64() {
        XCTAssertEqual(LoginThrottle.addressBlock("2001:db8:1:2::1"), LoginThrottle.addressBlock("2001:db8:1:2:ffff:ffff:ffff:fffe"))
        XCTAssertNotEqual(LoginThrottle.addressBlock("2001:db8:1:2::1"), LoginThrottle.addressBlock("2001:db8:1:3::1"))
        XCTAssertEqual(LoginThrottle.addressBlock("::ffff:192.0.2.1"), "192.0.2.1")
        XCTAssertEqual(LoginThrottle.addressBlock("192.0.2.1"), "192.0.2.1")
        XCTAssertEqual(LoginThrottle.addressBlock("not an address"), "not an address")
    }

    func testThrottleRowsHoldNoEmailOrAddressInClear() throws {
        let pending = try harness.startLogin()
        fail(pending, email: "typed-my-password-here@example.com", from: "198.51.100.23")
        for row in try harness.database.query("SELECT * FROM login_throttle") {
            for value in row.values {
                if case .text(let text) = value { XCTFail("text in login_throttle: \(text)") }
            }
        }
        guard let data = FileManager.default.contents(atPath: issuer.config.databasePath + "-wal") else { return }
        XCTAssertNil(data.range(of: Data("typed-my-password-here".utf8)))
    }

    func testStaleRowsAreSwept() throws {
        let pending = try harness.startLogin()
        for index in 0..<10 { fail(pending, email: "spray\(index)@example.com", from: "198.51.100.\(index)") }
        XCTAssertEqual(try issuer.count("login_throttle"), 20)
        clock.advance(Int64(account.window))
        fail(try harness.startLogin(), email: "fresh@example.com", from: "198.51.100.99")
        XCTAssertEqual(try issuer.count("login_throttle"), 2, "only the fresh account and address remain")
    }

    // MARK: Concurrency

    /// Sixteen wrong passwords at once, each through its own connection and
    /// responder (as sixteen login processes would): the count is taken
    /// before any password is checked, so exactly five are checked and the
    /// lock holds.
    func testConcurrentGuessesGetNoMoreThanTheLimitOfPasswordChecks() throws {
        let count = 16
        let pendings = try (0..<count).map { _ in try harness.startLogin() }
        let responders = try pendings.map { _ in
            try LoginResponder(services: issuer.otherProcess(clock: clock.clock))
        }
        let results = ConcurrentResults()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let request = harness.loginRequest(pendings[index], password: "wrong password")
            results.append(ResponderOutcome.run(responders[index], request).0)
        }
        let errors = results.all.map { $0.locationQuery["error"] ?? "status \($0.status)" }
        XCTAssertEqual(errors.filter { $0 == "invalid_credentials" }.count, account.maximumFailures, "\(errors)")
        XCTAssertEqual(errors.filter { $0 == "too_many_attempts" }.count, count - account.maximumFailures, "\(errors)")
        XCTAssertEqual(harness.login(pendings[0]).location, harness.passwordPage(pendings[0], error: "too_many_attempts", retryMinutes: 1))
        XCTAssertEqual(try harness.database.queryOne("SELECT failures FROM login_throttle WHERE key_hash = ?",
                                                     [.blob(LoginThrottle.accountKey(.user(id: harness.alice.id)))])?.int(0), 5)
    }
}
