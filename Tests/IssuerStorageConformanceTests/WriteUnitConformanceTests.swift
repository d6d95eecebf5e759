import IssuerStorage
import XCTest

/// A write unit is all or nothing, and the upkeep works the same way on
/// every backend.
final class WriteUnitConformanceTests: ConformanceTestCase {
    struct Refused: Error {}

    func testAThrowingWriteUnitLeavesNothingBehind() throws {
        try eachBackend { backend in
            XCTAssertThrowsError(try backend.storage.write { tx in
                _ = try tx.users.insert(NewUser(subject: "s", email: "a@example.com", name: "A", passwordHash: "h", roles: [], createdAt: 1))
                try tx.revokedAccessTokens.revoke(jti: "j", expiresAt: 10)
                throw Refused()
            })
            XCTAssertNil(try backend.storage.read.users.find(email: "a@example.com"), backend.name)
            XCTAssertFalse(try backend.storage.read.revokedAccessTokens.isRevoked(jti: "j"), backend.name)
            // A nested write unit joins the outer one: its work goes with it.
            XCTAssertThrowsError(try backend.storage.write { _ in
                try backend.storage.write { try $0.revokedAccessTokens.revoke(jti: "k", expiresAt: 10) }
                throw Refused()
            })
            XCTAssertFalse(try backend.storage.read.revokedAccessTokens.isRevoked(jti: "k"), backend.name)
        }
    }

    func testTheSweeperRemovesOnlyWhatCanNoLongerBeUsed() throws {
        try eachBackend { backend in
            let now: Int64 = 100_000
            try backend.storage.write { tx in
                try tx.authorizationCodes.insert(codeHash: [1], TokenStoreConformanceTests.code, createdAt: 1, expiresAt: now - 1)
                try tx.authorizationCodes.insert(codeHash: [2], TokenStoreConformanceTests.code, createdAt: 1, expiresAt: now + 60)
                try tx.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(expiresAt: now - 100), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [2], TokenStoreConformanceTests.refresh(expiresAt: now + 100), createdAt: 1)
                try tx.revokedAccessTokens.revoke(jti: "old", expiresAt: now - 1000)
                try tx.revokedAccessTokens.revoke(jti: "new", expiresAt: now + 10)
            }
            let removed = try backend.storage.maintenance.sweep(SweepPolicy(now: now, refreshTokenLifetime: 86_400, refreshGracePeriod: 10), batch: 1)
            XCTAssertEqual(removed["authorization_codes"], 1, "\(backend.name): \(removed)")
            XCTAssertEqual(removed["refresh_tokens"], 1, backend.name)
            XCTAssertEqual(removed["revoked_access_tokens"], 1, backend.name)
            XCTAssertNotNil(try backend.storage.read.refreshTokens.details(tokenHash: [2]), backend.name)
            XCTAssertNil(try backend.storage.read.refreshTokens.details(tokenHash: [1]), backend.name)
            XCTAssertTrue(try backend.storage.read.revokedAccessTokens.isRevoked(jti: "new"), backend.name)
        }
    }

    func testStatisticsAndDiagnosisAnswerOnEveryBackend() throws {
        try eachBackend { backend in
            _ = try backend.storage.write {
                try $0.users.insert(NewUser(subject: "s", email: "a@example.com", name: "A", passwordHash: "h", roles: [], createdAt: 1))
            }
            let stats = try backend.storage.maintenance.statistics(now: 10)
            XCTAssertEqual(stats.users, .init(total: 1, disabled: 0), backend.name)
            XCTAssertGreaterThan(stats.databaseBytes, 0, backend.name)
            let findings = backend.storage.maintenance.diagnose(quick: true)
            XCTAssertFalse(findings.contains { $0.status == .fail }, "\(backend.name): \(findings.map(\.line))")
            XCTAssertTrue(findings.contains { $0.check == "database.schema" && $0.detail.hasSuffix("up to date") }, backend.name)
        }
    }
}
