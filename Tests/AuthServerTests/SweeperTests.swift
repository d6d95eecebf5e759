import Foundation
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
import SSOCore

final class SweeperTests: SignInTestCase {
    typealias H = SignInHarness

    func count(_ table: String) throws -> Int64 { try issuer.database.queryOne("SELECT count(*) FROM \(table)")?.int(0) ?? -1 }

    func testSweepRemovesOnlyWhatCanNoLongerBeUsed() throws {
        let sweeper = Sweeper(settings: IssuerSettings(config: issuer.config), storage: issuer.storage, clock: clock.clock)
        let signedIn = try harness.signIn()
        let tokens = harness.tokenPOST(H.codeExchange(code: signedIn.code)).jsonObject()
        _ = try harness.startLogin()                         // a pending request
        let unused = try harness.signIn().code              // an unused code
        XCTAssertEqual(try sweeper.sweep().values.reduce(0, +), 0, "nothing is stale yet")

        clock.advance(601)                                   // codes and pending requests expire
        var removed = try sweeper.sweep()
        XCTAssertEqual(removed["pending_authorizations"], 1)
        XCTAssertEqual(removed["authorization_codes"], 1, "the unused code; the used one is kept for reuse detection")
        XCTAssertEqual(harness.tokenPOST(H.codeExchange(code: unused)).jsonObject()["error"] as? String, "invalid_grant")
        XCTAssertEqual(try count("refresh_tokens"), 1)

        // Refresh rotation leaves a sealed successor; past the grace window it goes.
        let refreshed = harness.tokenPOST(RequestParameters([("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"] as! String), ("client_id", "mobile-app-001")]))
        XCTAssertEqual(refreshed.status, 200)
        clock.advance(Int64(issuer.config.refreshGracePeriod) + 1)
        removed = try sweeper.sweep()
        XCTAssertEqual(removed["sealed successors"], 1)
        XCTAssertEqual(try issuer.database.queryOne("SELECT count(*) FROM refresh_tokens WHERE successor_sealed IS NOT NULL")?.int(0), 0)

        clock.advance(Int64(issuer.config.refreshTokenLifetime) + 60)
        removed = try sweeper.sweep()
        XCTAssertEqual(try count("refresh_tokens"), 0)
        XCTAssertEqual(try count("authorization_codes"), 0)
        clock.advance(Int64(issuer.config.ssoSessionLifetime) + 86_401)
        try sweeper.sweep()
        XCTAssertEqual(try count("sso_sessions"), 0)
        XCTAssertEqual(try count("users"), 1, "accounts are never swept")
    }

    func testSweepWorksInSmallBatches() throws {
        let sweeper = Sweeper(settings: IssuerSettings(config: issuer.config), storage: issuer.storage, clock: clock.clock)
        for index in 0..<1200 {
            try issuer.database.execute("INSERT INTO revoked_access_tokens (jti, expires_at) VALUES (?, ?)", [.text("j\(index)"), .integer(1)])
        }
        XCTAssertEqual(try sweeper.sweep(batch: 100)["revoked_access_tokens"], 1200)
    }
}
