import IssuerStorage
import XCTest

/// Codes, refresh tokens, revoked access tokens and device secrets.
final class TokenStoreConformanceTests: ConformanceTestCase {
    static let code = AuthorizationCodeGrantRecord(clientID: "app", redirectURI: "myapp:/cb", codeChallenge: "ch", scope: ["openid"],
                                                   nonce: "n", sid: "sid", userID: 7, authTime: 50, amr: ["pwd", "otp"])

    func testACodeIsRedeemedOnceAndOnlyForWhatItWasIssuedFor() throws {
        try eachBackend { backend in
            try backend.storage.write { try $0.authorizationCodes.insert(codeHash: [1], Self.code, createdAt: 100, expiresAt: 160) }
            func redeem(_ client: String = "app", _ uri: String = "myapp:/cb", _ challenge: String = "ch", now: Int64 = 120) throws -> CodeRedemption {
                try backend.storage.write { try $0.authorizationCodes.redeem(codeHash: [1], clientID: client, redirectURI: uri,
                                                                             codeChallenge: challenge, now: now, issuing: Self.issuing) }
            }
            for (client, uri, challenge) in [("other", "myapp:/cb", "ch"), ("app", "myapp:/cb2", "ch"), ("app", "myapp:/cb", "c")] {
                guard case .refused(let existing?) = try redeem(client, uri, challenge) else { return XCTFail("\(backend.name): refused") }
                XCTAssertNil(existing.usedAt, "\(backend.name): a mismatch changes nothing")
            }
            guard case .refused(let late?) = try redeem(now: 160) else { return XCTFail("\(backend.name): expired") }
            XCTAssertEqual(late.expiresAt, 160, backend.name)
            guard case .refused(let unspent?) = try redeem("other") else { return XCTFail("\(backend.name): refused") }
            XCTAssertNil(unspent.issuedFamilyID, "\(backend.name): a refusal records nothing")
            XCTAssertEqual(try redeem(), .redeemed(Self.code), backend.name)
            guard case .refused(let spent?) = try redeem() else { return XCTFail("\(backend.name): spent") }
            XCTAssertEqual(spent.usedAt, 120, backend.name)
            XCTAssertEqual(spent.issuedFamilyID, "fam", backend.name)
            XCTAssertEqual(spent.issuedJTI, "jti", backend.name)
            XCTAssertEqual(try backend.storage.write { try $0.authorizationCodes.redeem(codeHash: [2], clientID: "app", redirectURI: "x",
                                                                                        codeChallenge: "ch", now: 120, issuing: Self.issuing) },
                           .refused(nil))
        }
    }

    static let issuing = CodeIssue(familyID: "fam", jti: "jti")

    static func refresh(_ family: String = "fam", client: String = "app", userID: Int64 = 7, sid: String = "sid",
                        expiresAt: Int64 = 1000) -> RefreshTokenRecord {
        RefreshTokenRecord(familyID: family, clientID: client, userID: userID, sid: sid, scope: ["openid", "offline_access"], authTime: 50,
                           expiresAt: expiresAt)
    }

    /// A user with a live SSO session `sid` (until 10 000): what a refresh
    /// token needs to be claimed. The user's id.
    static func liveSession(_ storage: any IssuerStorage, sid: String = "sid") throws -> Int64 {
        try storage.write { tx in
            let user = try tx.users.insert(NewUser(subject: UUID().uuidString, email: UUID().uuidString + "@example.com", name: "U",
                                                   passwordHash: "h", roles: [], createdAt: 1))
            try tx.sessions.insert(SSOSession(sid: sid, userID: user.id, authTime: 50, expiresAt: 10_000, amr: ["pwd"]),
                                   secretHash: Array(sid.utf8), createdAt: 1)
            return user.id
        }
    }

    func testARefreshTokenIsClaimedOnceRecordingItsOneSuccessor() throws {
        try eachBackend { backend in
            let userID = try Self.liveSession(backend.storage)
            try backend.storage.write { try $0.refreshTokens.insert(tokenHash: [1], Self.refresh(userID: userID), createdAt: 100) }
            let next = RefreshTokenSuccessor(tokenHash: [2], sealed: [0, 9, 0])
            func claim(_ client: String = "app", now: Int64 = 200) throws -> RefreshTokenRecord? {
                try backend.storage.write { try $0.refreshTokens.claim([1], clientID: client, successor: next, now: now) }
            }
            XCTAssertNil(try claim("other"), "\(backend.name): another client's")
            XCTAssertNil(try claim(now: 1000), "\(backend.name): expired")
            XCTAssertEqual(try claim(), Self.refresh(userID: userID), backend.name)
            XCTAssertNil(try claim(), "\(backend.name): spent")
            let spent = try XCTUnwrap(backend.storage.read.refreshTokens.details(tokenHash: [1]))
            XCTAssertEqual(spent.usedAt, 200, backend.name)
            XCTAssertEqual(spent.successorHash, [2], backend.name)
            XCTAssertEqual(spent.successorSealed, [0, 9, 0], backend.name)
            XCTAssertFalse(spent.isUsable(now: 200), backend.name)
        }
    }

    func testARefreshTokenIsNotClaimedOnceItsSessionEndedOrItsUserIsDisabled() throws {
        try eachBackend { backend in
            let ended = try Self.liveSession(backend.storage, sid: "ended")
            let disabled = try Self.liveSession(backend.storage, sid: "disabled")
            let expiring = try Self.liveSession(backend.storage, sid: "expiring")
            try backend.storage.write { tx in
                try tx.refreshTokens.insert(tokenHash: [1], Self.refresh(userID: ended, sid: "ended", expiresAt: 20_000), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [2], Self.refresh(userID: disabled, sid: "disabled", expiresAt: 20_000), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [3], Self.refresh(userID: expiring, sid: "expiring", expiresAt: 20_000), createdAt: 1)
                try tx.sessions.end(sid: "ended", at: 100)
                try tx.users.setDisabled(true, userID: disabled)
            }
            for (token, now, why) in [(UInt8(1), Int64(200), "its session ended"), (2, 200, "its user is disabled"),
                                      (3, 10_000, "its session expired")] {
                let claimed = try backend.storage.write {
                    try $0.refreshTokens.claim([token], clientID: "app", successor: .init(tokenHash: [token, 0], sealed: nil), now: now)
                }
                XCTAssertNil(claimed, "\(backend.name): \(why)")
                XCTAssertNil(try backend.storage.read.refreshTokens.details(tokenHash: [token])?.usedAt, "\(backend.name): unchanged")
            }
        }
    }

    func testRevocationByFamilySessionAndUser() throws {
        try eachBackend { backend in
            try backend.storage.write { tx in
                try tx.refreshTokens.insert(tokenHash: [1], Self.refresh("a"), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [2], Self.refresh("a"), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [3], Self.refresh("b"), createdAt: 1)
            }
            try backend.storage.write { try $0.refreshTokens.revokeFamily("a", at: 5) }
            let read = backend.storage.read.refreshTokens
            XCTAssertEqual(try [1, 2, 3].map { try read.details(tokenHash: [UInt8($0)])?.revokedAt }, [5, 5, nil], backend.name)
            try backend.storage.write { try $0.refreshTokens.revokeAll(sid: "sid", at: 6) }
            XCTAssertEqual(try read.details(tokenHash: [3])?.revokedAt, 6, backend.name)
            XCTAssertEqual(try read.details(tokenHash: [1])?.revokedAt, 5, "\(backend.name): revoked once, the first time")
            XCTAssertNil(try backend.storage.write { try $0.refreshTokens.claim([3], clientID: "app", successor: .init(tokenHash: [4], sealed: nil),
                                                                                now: 7) }, "\(backend.name): a revoked token is not claimed")
            try backend.storage.write { tx in
                try tx.revokedAccessTokens.revoke(jti: "j", expiresAt: 10)
                try tx.revokedAccessTokens.revoke(jti: "j", expiresAt: 10)
            }
            XCTAssertTrue(try backend.storage.read.revokedAccessTokens.isRevoked(jti: "j"), backend.name)
            XCTAssertFalse(try backend.storage.read.revokedAccessTokens.isRevoked(jti: "k"), backend.name)
        }
    }

    func testDeviceSecretsAreLiveUntilRevokedOrExpired() throws {
        try eachBackend { backend in
            func secret(_ hash: UInt8, device: String?, scope: [String]?) -> DeviceSecretRecord {
                DeviceSecretRecord(secretHash: [hash], sid: "sid", userID: 7, clientID: "app", deviceID: device, expiresAt: 100, scope: scope)
            }
            try backend.storage.write { tx in
                try tx.deviceSecrets.insert(secret(1, device: "d1", scope: ["openid", "device_sso"]), codeHash: [9], createdAt: 1)
                try tx.deviceSecrets.insert(secret(2, device: nil, scope: nil), codeHash: nil, createdAt: 2)
            }
            let read = backend.storage.read.deviceSecrets
            XCTAssertEqual(try read.live(secretHash: [1], now: 50)?.scope, ["openid", "device_sso"], backend.name)
            XCTAssertNil(try read.live(secretHash: [2], now: 50)?.scope, "\(backend.name): no recorded scope")
            XCTAssertNil(try read.live(secretHash: [1], now: 100), "\(backend.name): expired")
            XCTAssertEqual(try read.newestLive(sid: "sid", clientID: "app", deviceID: nil, now: 50)?.secretHash, [2], backend.name)
            XCTAssertEqual(try read.newestLive(sid: "sid", clientID: "app", deviceID: "d1", now: 50)?.secretHash, [1], backend.name)
            XCTAssertNil(try read.newestLive(sid: "sid", clientID: "app", deviceID: "d2", now: 50), backend.name)
            try backend.storage.write { try $0.deviceSecrets.revokeAll(issuedByCodeHash: [9], at: 60) }
            XCTAssertNil(try read.live(secretHash: [1], now: 61), backend.name)
            XCTAssertNotNil(try read.live(secretHash: [2], now: 61), backend.name)
            try backend.storage.write { try $0.deviceSecrets.revokeAll(sid: "sid", at: 62) }
            XCTAssertNil(try read.live(secretHash: [2], now: 63), backend.name)
        }
    }
}
