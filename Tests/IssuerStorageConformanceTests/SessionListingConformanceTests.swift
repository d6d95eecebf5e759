import IssuerStorage
import XCTest

/// Where each SSO session came from (`sso_sessions.created_ip`,
/// `user_agent`: SQLite migration 12, PostgreSQL version 6) and the
/// account page's read of a user's live sessions with their apps
/// (`liveListings`): the same rows, values and order on both backends.
final class SessionListingConformanceTests: ConformanceTestCase {
    func aUser(_ backend: TestBackend, _ email: String) throws -> User {
        try backend.storage.write {
            try $0.users.insert(NewUser(subject: UUID().uuidString, email: email, name: "U", passwordHash: "h", roles: [], createdAt: 1))
        }
    }

    static func session(_ sid: String, _ userID: Int64, authTime: Int64 = 100, expiresAt: Int64 = 10_000, amr: [String] = ["pwd"]) -> SSOSession {
        SSOSession(sid: sid, userID: userID, authTime: authTime, expiresAt: expiresAt, amr: amr)
    }

    static func refresh(_ client: String, sid: String, userID: Int64, expiresAt: Int64 = 9_000) -> RefreshTokenRecord {
        RefreshTokenRecord(familyID: UUID().uuidString, clientID: client, userID: userID, sid: sid, scope: ["openid"], authTime: 100,
                           expiresAt: expiresAt)
    }

    static func deviceSecret(_ hash: [UInt8], _ client: String, sid: String, userID: Int64, expiresAt: Int64 = 9_000) -> DeviceSecretRecord {
        DeviceSecretRecord(secretHash: hash, sid: sid, userID: userID, clientID: client, deviceID: nil, expiresAt: expiresAt, scope: ["openid"])
    }

    func testASessionKeepsTheAddressAndUserAgentItWasMadeWith() throws {
        let agent = "Mozilla/5.0 (X11; Linux; ü 日本) <b>\"quoted\"</b> & 'single' \\ backslash"
        try eachBackend { backend in
            let user = try aUser(backend, "origin@example.com")
            try backend.storage.write { tx in
                try tx.sessions.insert(Self.session("with", user.id), secretHash: [1], createdAt: 100, address: "2001:db8::1", userAgent: agent)
                try tx.sessions.insert(Self.session("without", user.id), secretHash: [2], createdAt: 90)
                try tx.sessions.insert(Self.session("agent-only", user.id), secretHash: [3], createdAt: 80, address: nil, userAgent: "curl/8")
            }
            let read = backend.storage.read.sessions
            let with = try XCTUnwrap(read.listing(sid: "with", now: 200), backend.name)
            XCTAssertEqual(with.createdIP, "2001:db8::1", backend.name)
            XCTAssertEqual(with.userAgent, agent, "\(backend.name): stored byte for byte")
            XCTAssertNil(with.clientIDs, "\(backend.name): listing does not read the apps")
            let without = try XCTUnwrap(read.listing(sid: "without", now: 200), backend.name)
            XCTAssertNil(without.createdIP, backend.name)
            XCTAssertNil(without.userAgent, backend.name)
            XCTAssertEqual(try read.list(userID: user.id, now: 200).map(\.createdIP), ["2001:db8::1", nil, nil], backend.name)
            XCTAssertEqual(try read.list(userID: nil, now: 200).map(\.userAgent), [agent, nil, "curl/8"], backend.name)
            // The new columns leave the session itself as it was.
            XCTAssertEqual(try read.live(secretHash: [1], now: 200), Self.session("with", user.id), backend.name)
        }
    }

    func testLiveListingsAreTheUsersLiveSessionsNewestFirstWithTheAppsHoldingLiveCredentials() throws {
        try eachBackend { backend in
            let user = try aUser(backend, "apps@example.com"), other = try aUser(backend, "other@example.com")
            try backend.storage.write { tx in
                try tx.sessions.insert(Self.session("s1", user.id, amr: ["pwd", "otp"]), secretHash: [1], createdAt: 100,
                                       address: "203.0.113.1", userAgent: "Agent One")
                try tx.sessions.insert(Self.session("s2", user.id), secretHash: [2], createdAt: 200, address: "203.0.113.2", userAgent: "Agent Two")
                try tx.sessions.insert(Self.session("ended", user.id), secretHash: [3], createdAt: 300)
                try tx.sessions.end(sid: "ended", at: 310)
                try tx.sessions.insert(Self.session("expired", user.id, expiresAt: 400), secretHash: [4], createdAt: 150)
                try tx.sessions.insert(Self.session("others", other.id), secretHash: [5], createdAt: 250)
                // Same creation time: ordered by sid, byte for byte ("B" < "a").
                try tx.sessions.insert(Self.session("tie-a", user.id), secretHash: [6], createdAt: 50)
                try tx.sessions.insert(Self.session("tie-B", user.id), secretHash: [7], createdAt: 50)

                // s1: live tokens of three apps (two of one), and a used, a revoked and an expired one of others.
                try tx.refreshTokens.insert(tokenHash: [10], Self.refresh("b-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [11], Self.refresh("a-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [12], Self.refresh("a-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [13], Self.refresh("Z-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [14], Self.refresh("used-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [15], Self.refresh("expired-app", sid: "s1", userID: user.id, expiresAt: 500),
                                            createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [16], Self.refresh("revoked-app", sid: "s1", userID: user.id), createdAt: 100)
                try tx.refreshTokens.revokeFamily(try XCTUnwrap(tx.refreshTokens.details(tokenHash: [16])).familyID, at: 150)
                XCTAssertNotNil(try tx.refreshTokens.claim([14], clientID: "used-app", successor: RefreshTokenSuccessor(tokenHash: [99], sealed: nil),
                                                           now: 150))
                try tx.deviceSecrets.insert(Self.deviceSecret([20], "ds-app", sid: "s1", userID: user.id), codeHash: nil, createdAt: 100)
                try tx.deviceSecrets.insert(Self.deviceSecret([21], "a-app", sid: "s1", userID: user.id), codeHash: nil, createdAt: 100)
                try tx.deviceSecrets.insert(Self.deviceSecret([22], "ds-expired", sid: "s1", userID: user.id, expiresAt: 500), codeHash: nil,
                                            createdAt: 100)
                // s2: only a revoked device secret; the other user's session: a live token.
                try tx.deviceSecrets.insert(Self.deviceSecret([23], "ds-revoked", sid: "s2", userID: user.id), codeHash: nil, createdAt: 200)
                try tx.deviceSecrets.revokeAll(sid: "s2", at: 210)
                try tx.refreshTokens.insert(tokenHash: [30], Self.refresh("others-app", sid: "others", userID: other.id), createdAt: 250)
            }
            let read = backend.storage.read.sessions
            let listings = try read.liveListings(userID: user.id, now: 1000)
            XCTAssertEqual(listings.map(\.sid), ["s2", "s1", "tie-B", "tie-a"], "\(backend.name): live only, newest first")
            XCTAssertEqual(listings.map(\.clientIDs), [[], ["Z-app", "a-app", "b-app", "ds-app"], [], []],
                           "\(backend.name): each app once, sorted by bytes; used, revoked and expired credentials are not apps")
            XCTAssertEqual(listings.map(\.createdIP), ["203.0.113.2", "203.0.113.1", nil, nil], backend.name)
            XCTAssertEqual(listings.map(\.userAgent), ["Agent Two", "Agent One", nil, nil], backend.name)
            let first = try XCTUnwrap(listings.dropFirst().first)
            XCTAssertEqual(first.amr, ["pwd", "otp"], backend.name)
            XCTAssertEqual(first.state, .active, backend.name)
            XCTAssertEqual(first.email, "apps@example.com", backend.name)
            XCTAssertEqual(first.authTime, 100, backend.name)
            XCTAssertEqual(first.createdAt, 100, backend.name)
            XCTAssertEqual(first.expiresAt, 10_000, backend.name)
            XCTAssertNil(first.endedAt, backend.name)
            // Before the expired credentials expire, they are apps too.
            XCTAssertEqual(try read.liveListings(userID: user.id, now: 300).first { $0.sid == "s1" }?.clientIDs,
                           ["Z-app", "a-app", "b-app", "ds-app", "ds-expired", "expired-app"], backend.name)
            XCTAssertEqual(try read.liveListings(userID: user.id, now: 300).map(\.sid), ["s2", "expired", "s1", "tie-B", "tie-a"], backend.name)
            XCTAssertEqual(try read.liveListings(userID: other.id, now: 1000).map(\.clientIDs), [["others-app"]], backend.name)

            // Ending a session with its credentials takes it off; a disabled user has none.
            try backend.storage.write { tx in
                try tx.sessions.end(sid: "s1", at: 1100)
                try tx.refreshTokens.revokeAll(sid: "s1", at: 1100)
            }
            XCTAssertEqual(try read.liveListings(userID: user.id, now: 1200).map(\.sid), ["s2", "tie-B", "tie-a"], backend.name)
            try backend.storage.write { try $0.users.setDisabled(true, userID: user.id) }
            XCTAssertEqual(try read.liveListings(userID: user.id, now: 1200), [], "\(backend.name): a disabled user has no live session")
            XCTAssertEqual(try read.liveListings(userID: 987_654, now: 1200), [], "\(backend.name): an unknown user")
        }
    }

    func testTheListingsSplitAnAggregateIntoSortedDistinctClientIDs() {
        XCTAssertEqual(SSOSessionListing.clientIDs("b a b", nil, "c a"), ["a", "b", "c"])
        XCTAssertEqual(SSOSessionListing.clientIDs(nil, nil), [])
        XCTAssertEqual(SSOSessionListing.clientIDs("z", "Z ä"), ["Z", "z", "ä"], "by UTF-8 bytes")
    }
}
