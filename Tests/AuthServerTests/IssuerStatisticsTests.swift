import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

/// `ssoctl stats`: each count follows the same rule as the store that owns
/// the rows, on a read-only connection, with plans that stay flat as the
/// refresh token table grows.
final class IssuerStatisticsTests: SignInTestCase {
    typealias H = SignInHarness

    /// Through a read-only connection, as ssoctl runs it: any write would throw.
    func stats() throws -> IssuerStatistics {
        let storage = try IssuerComposition.openStorageForInspection(issuer.config)
        var stats = try storage.maintenance.statistics(now: clock.now)
        stats.signingKeys = try SigningKeys(storage: storage, clock: clock.clock, tokenLifetime: issuer.config.signingKeyRetention).countsByState()
        return stats
    }

    func testAFreshIssuer() throws {
        let stats = try stats()
        XCTAssertEqual(stats.users, .init(total: 1, disabled: 0))
        XCTAssertEqual(stats.passkeys, 0)
        XCTAssertEqual(stats.clients, .init(total: 2, confidential: 0))
        XCTAssertEqual(stats.liveSSOSessions, 0)
        XCTAssertEqual(stats.refreshTokens, .init(live: 0, stored: 0))
        XCTAssertEqual(stats.outstandingAuthorizationCodes, 0)
        XCTAssertEqual(stats.revokedAccessTokens, 0)
        XCTAssertEqual(stats.signingKeys, ["next": 0, "active": 1, "published": 0, "expired": 0, "retired": 0])
        XCTAssertEqual(stats.liveDeviceSecrets, 0)
        XCTAssertEqual(stats.loginThrottle, .init(counters: 0, failures: 0, locked: 0))
        XCTAssertGreaterThan(stats.databaseBytes + stats.walBytes, 0)
    }

    func testSignInCodesRefreshRotationAndExpiry() throws {
        let signedIn = try harness.signIn()
        var stats = try stats()
        XCTAssertEqual(stats.liveSSOSessions, 1)
        XCTAssertEqual(stats.outstandingAuthorizationCodes, 1)
        let tokens = harness.tokenPOST(H.codeExchange(code: signedIn.code)).jsonObject()
        stats = try self.stats()
        XCTAssertEqual(stats.outstandingAuthorizationCodes, 0, "an exchanged code is spent")
        XCTAssertEqual(stats.refreshTokens, .init(live: 1, stored: 1))

        let refreshed = harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"),
            ("refresh_token", try XCTUnwrap(tokens["refresh_token"] as? String)), ("client_id", "mobile-app-001")]))
        XCTAssertEqual(refreshed.status, 200)
        XCTAssertEqual(try self.stats().refreshTokens, .init(live: 1, stored: 2), "the rotated one is spent, not live")

        clock.advance(61)
        _ = try harness.signIn()                               // the session cookie is not sent: a second session
        XCTAssertEqual(try self.stats().outstandingAuthorizationCodes, 1)
        clock.advance(Int64(issuer.config.authorizationCodeLifetime))
        XCTAssertEqual(try self.stats().outstandingAuthorizationCodes, 0, "expired")

        clock.advance(Int64(issuer.config.refreshTokenLifetime))
        stats = try self.stats()
        XCTAssertEqual(stats.refreshTokens, .init(live: 0, stored: 2), "expired but not swept yet")
        XCTAssertEqual(stats.liveSSOSessions, 2)
        clock.advance(Int64(issuer.config.ssoSessionLifetime))
        XCTAssertEqual(try self.stats().liveSSOSessions, 0)
    }

    func testDisablingAUserEndsWhatIsLive() throws {
        let signedIn = try harness.signIn()
        _ = harness.tokenPOST(H.codeExchange(code: signedIn.code))
        _ = try issuer.users.add(email: "bob@example.com", name: "Bob", password: "long enough password", roles: ["user"])
        XCTAssertEqual(try stats().users, .init(total: 2, disabled: 0))
        _ = try harness.services.accountChanges.disable(email: DemoData.email)
        let stats = try stats()
        XCTAssertEqual(stats.users, .init(total: 2, disabled: 1))
        XCTAssertEqual(stats.liveSSOSessions, 0)
        XCTAssertEqual(stats.refreshTokens, .init(live: 0, stored: 1))
    }

    func testASessionOfADisabledUserIsNotLiveEvenIfNotEnded() throws {
        _ = try harness.signIn()
        try issuer.database.execute("UPDATE users SET disabled = 1")
        XCTAssertEqual(try stats().liveSSOSessions, 0, "SSOSessionStore.find's rule")
    }

    func testRevokedAccessTokensCountUntilTheyExpire() throws {
        try issuer.storage.write { tx in
            try tx.revokedAccessTokens.revoke(jti: "a", expiresAt: clock.now + 100)
            try tx.revokedAccessTokens.revoke(jti: "b", expiresAt: clock.now + 900)
            try tx.revokedAccessTokens.revoke(jti: "c", expiresAt: clock.now - 1)
        }
        XCTAssertEqual(try stats().revokedAccessTokens, 2)
        clock.advance(100)
        XCTAssertEqual(try stats().revokedAccessTokens, 1)
    }

    func testSigningKeysByState() throws {
        let keys = issuer.keys
        let first = try XCTUnwrap(keys.activeKID())
        try keys.rotate(activationDelay: 600)
        XCTAssertEqual(try stats().signingKeys, ["next": 1, "active": 1, "published": 0, "expired": 0, "retired": 0])
        clock.advance(600)
        XCTAssertEqual(try stats().signingKeys, ["next": 0, "active": 1, "published": 1, "expired": 0, "retired": 0])
        try keys.rotate()
        try keys.retire(kid: first)
        XCTAssertEqual(try stats().signingKeys, ["next": 0, "active": 1, "published": 1, "expired": 0, "retired": 1])
        clock.advance(Int64(issuer.config.signingKeyRetention) + 1)
        XCTAssertEqual(try stats().signingKeys, ["next": 0, "active": 1, "published": 0, "expired": 1, "retired": 1])
    }

    func testLiveDeviceSecrets() throws {
        let devices = harness.services.deviceSecrets
        try issuer.storage.write { tx in
            _ = try devices.issue(sid: "s1", userID: harness.alice.id, clientID: "mobile-app-001", deviceID: nil, scope: ["openid", "device_sso"],
                                  codeHash: nil, expiresAt: clock.now + 1000, tx)
            _ = try devices.issue(sid: "s2", userID: harness.alice.id, clientID: "mobile-app-002", deviceID: "d", scope: ["openid", "device_sso"],
                                  codeHash: nil, expiresAt: clock.now + 10, tx)
        }
        XCTAssertEqual(try stats().liveDeviceSecrets, 2)
        try issuer.storage.write { try $0.deviceSecrets.revokeAll(sid: "s1", at: clock.now) }
        XCTAssertEqual(try stats().liveDeviceSecrets, 1)
        clock.advance(10)
        XCTAssertEqual(try stats().liveDeviceSecrets, 0)
    }

    /// Failures are counted per account and per address, not stored one by
    /// one: two wrong passwords show as 2 counters holding 4 failures.
    func testFailedSignInsFromTheThrottleCounters() throws {
        let throttle = harness.services.loginThrottle
        for _ in 0..<2 {
            guard case .admitted = try throttle.admit(.unknown(email: "alice@example.com"), address: "192.0.2.1") else { return XCTFail("admitted") }
        }
        XCTAssertEqual(try stats().loginThrottle, .init(counters: 2, failures: 4, locked: 0))
        for _ in 0..<3 { _ = try throttle.admit(.unknown(email: "alice@example.com"), address: "192.0.2.1") }
        XCTAssertEqual(try stats().loginThrottle, .init(counters: 2, failures: 10, locked: 1), "the account is locked after 5")
        // The per-account lock (first: 60 s) ends; the counters stay for the rest of the hour.
        clock.advance(61)
        XCTAssertEqual(try stats().loginThrottle, .init(counters: 2, failures: 10, locked: 0))
        clock.advance(3600)
        XCTAssertEqual(try stats().loginThrottle, .init(counters: 0, failures: 0, locked: 0), "windows older than an hour are not counted")
    }

    func testJSONUsesSnakeCaseKeys() throws {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(JSON.encode(try stats()))) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["users", "passkeys", "clients", "live_sso_sessions", "refresh_tokens", "outstanding_authorization_codes",
                                          "revoked_access_tokens", "signing_keys", "live_device_secrets", "login_throttle",
                                          "database_bytes", "wal_bytes"])
        XCTAssertEqual((object["refresh_tokens"] as? [String: Any])?.keys.sorted(), ["live", "stored"])
    }

    /// The plans that keep stats flat with 1 M refresh tokens (measured:
    /// about 0.1 s for the live count; the expiry index would be ~4x slower
    /// once the sweeper keeps nearly every row unexpired). No timed test
    /// (docs/ARCHITECTURE.md: benchmarks, never timed tests); the plans are what matters.
    func testQueryPlans() throws {
        func plan(_ sql: String, _ values: [SQLiteValue]) throws -> String {
            try issuer.database.query("EXPLAIN QUERY PLAN " + sql, values).map { $0.string(3) }.joined(separator: " | ")
        }
        let now = SQLiteValue.integer(clock.now)
        typealias Q = SQLiteStatisticsQuery
        XCTAssertEqual(try plan(Q.liveRefreshTokensSQL, [now]), "SCAN refresh_tokens", "one pass, no per-row table lookups")
        XCTAssertTrue(try plan(Q.storedRefreshTokensSQL, []).contains("COVERING INDEX"), "count(*) over an index, not the table")
        XCTAssertTrue(try plan(Q.passkeysSQL, []).contains("COVERING INDEX"), "count(*) over passkeys_user, not the table")
        XCTAssertEqual(try plan(Q.liveSSOSessionsSQL, [now]),
                       "SCAN s | CORRELATED SCALAR SUBQUERY 1 | SEARCH u USING INTEGER PRIMARY KEY (rowid=?)")
        XCTAssertEqual(try plan(Q.outstandingCodesSQL, [now]), "SEARCH authorization_codes USING INDEX authorization_codes_expiry (expires_at>?)")
        XCTAssertEqual(try plan(Q.liveDeviceSecretsSQL, [now]), "SEARCH device_secrets USING INDEX device_secrets_expiry (expires_at>?)")
    }
}
