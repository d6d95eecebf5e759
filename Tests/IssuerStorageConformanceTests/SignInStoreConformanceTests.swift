import IssuerStorage
import XCTest

/// SSO sessions, pending authorizations and the login throttle.
final class SignInStoreConformanceTests: ConformanceTestCase {
    func aUser(_ backend: TestBackend, _ email: String = "u@example.com") throws -> User {
        try backend.storage.write {
            try $0.users.insert(NewUser(subject: UUID().uuidString, email: email, name: "U", passwordHash: "h", roles: [], createdAt: 1))
        }
    }

    func testSessionsAreLiveUntilEndedExpiredOrTheirUserIsDisabled() throws {
        try eachBackend { backend in
            let user = try aUser(backend)
            let session = SSOSession(sid: "sid-1", userID: user.id, authTime: 100, expiresAt: 1000, amr: ["pwd", "otp"])
            try backend.storage.write { tx in
                try tx.sessions.insert(session, secretHash: [9, 0, 9], createdAt: 100)
                try tx.sessions.insert(SSOSession(sid: "sid-2", userID: user.id, authTime: 200, expiresAt: 1000, amr: ["pwd"]),
                                       secretHash: [8], createdAt: 200)
            }
            let read = backend.storage.read.sessions
            XCTAssertEqual(try read.live(secretHash: [9, 0, 9], now: 500), session, backend.name)
            XCTAssertNil(try read.live(secretHash: [9, 0], now: 500), "\(backend.name): hashes compare as bytes")
            XCTAssertEqual(try read.live(sid: "sid-1", now: 500)?.amr, ["pwd", "otp"], backend.name)
            XCTAssertEqual(try read.liveSignIn(sid: "sid-1", now: 500), LiveSignIn(session: session, user: user), backend.name)
            XCTAssertNil(try read.live(sid: "sid-1", now: 1000), "\(backend.name): expired")
            XCTAssertNil(try read.liveSignIn(sid: "sid-1", now: 1000), "\(backend.name): expired")
            XCTAssertNil(try read.liveSignIn(sid: "sid-1\u{0}", now: 500), "\(backend.name): sids compare as bytes")
            XCTAssertEqual(try read.list(userID: user.id, now: 500).map(\.sid), ["sid-2", "sid-1"], "\(backend.name): newest first")
            XCTAssertEqual(try read.list(userID: nil, now: 500).count, 2, backend.name)
            _ = try backend.storage.write { try $0.sessions.end(sid: "sid-1", at: 600) }
            XCTAssertNil(try read.live(sid: "sid-1", now: 601), backend.name)
            XCTAssertNil(try read.liveSignIn(sid: "sid-1", now: 601), "\(backend.name): ended")
            XCTAssertEqual(try read.listing(sid: "sid-1", now: 601)?.state, .ended, backend.name)
            XCTAssertEqual(try read.listing(sid: "sid-1", now: 601)?.endedAt, 600, backend.name)
            XCTAssertEqual(try read.listing(sid: "sid-2", now: 2000)?.state, .expired, backend.name)
            try backend.storage.write { try $0.users.setDisabled(true, userID: user.id) }
            XCTAssertNil(try read.live(sid: "sid-2", now: 601), "\(backend.name): a disabled user has no live session")
            XCTAssertNil(try read.liveSignIn(sid: "sid-2", now: 601), "\(backend.name): nor a sign-in")
            XCTAssertEqual(try read.listing(sid: "sid-2", now: 601)?.state, .userDisabled, backend.name)
            let ended = try backend.storage.write { try $0.sessions.endAll(userID: user.id, at: 700) }
            XCTAssertEqual(ended, ["sid-2"], "\(backend.name): only the one still open")
            XCTAssertEqual(Set(try read.sids(userID: user.id)), ["sid-1", "sid-2"], backend.name)
        }
    }

    /// Back-channel logout: why a session ended is kept (the refused
    /// refresh's `reason`), only the first end counts, and the clients
    /// issued tokens in it are those noted plus those holding its refresh
    /// tokens or device secrets, each once, compared as bytes.
    func testASessionKeepsWhyItEndedAndTheClientsIssuedTokensInIt() throws {
        try eachBackend { backend in
            let user = try aUser(backend)
            try backend.storage.write { tx in
                for sid in ["a", "b"] {
                    try tx.sessions.insert(SSOSession(sid: sid, userID: user.id, authTime: 100, expiresAt: 10_000, amr: ["pwd"]),
                                           secretHash: Array(sid.utf8), createdAt: 100)
                }
                try tx.sessions.recordClient("web", sid: "a")
                try tx.sessions.recordClient("web", sid: "a")
                try tx.sessions.recordClient("we", sid: "a")
                try tx.sessions.recordClient("web", sid: "a\u{0}")
                try tx.refreshTokens.insert(tokenHash: [1], RefreshTokenRecord(familyID: "f", clientID: "app", userID: user.id, sid: "a",
                                                                            scope: ["openid"], authTime: 100, expiresAt: 9_000), createdAt: 100)
                try tx.refreshTokens.insert(tokenHash: [2], RefreshTokenRecord(familyID: "f", clientID: "app", userID: user.id, sid: "a",
                                                                            scope: ["openid"], authTime: 100, expiresAt: 9_000), createdAt: 100)
                try tx.deviceSecrets.insert(DeviceSecretRecord(secretHash: [3], sid: "a", userID: user.id, clientID: "second-app", deviceID: nil,
                                                               expiresAt: 9_000, scope: ["openid"]), codeHash: nil, createdAt: 100)
            }
            let read = backend.storage.read.sessions
            XCTAssertEqual(try read.clientsIssuedTokens(sid: "a"), ["app", "second-app", "we", "web"], backend.name)
            XCTAssertEqual(try read.clientsIssuedTokens(sid: "b"), [], backend.name)
            XCTAssertEqual(try read.clientsIssuedTokens(sid: "a\u{0}"), [], "\(backend.name): sids compare as bytes")
            XCTAssertNil(try read.listing(sid: "a", now: 200)?.endedReason, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.sessions.end(sid: "a", at: 200, reason: .passwordChanged) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.sessions.end(sid: "a", at: 300, reason: .userDisabled) },
                           "\(backend.name): the first end counts")
            XCTAssertFalse(try backend.storage.write { try $0.sessions.end(sid: "nobody", at: 300, reason: .userDisabled) }, backend.name)
            XCTAssertEqual(try read.listing(sid: "a", now: 400)?.endedReason, .passwordChanged, backend.name)
            XCTAssertEqual(try read.listing(sid: "a", now: 400)?.endedAt, 200, backend.name)
            XCTAssertEqual(try backend.storage.write { try $0.sessions.endAll(userID: user.id, at: 500, reason: .refreshTokenReused) }, ["b"],
                           backend.name)
            XCTAssertEqual(try read.listing(sid: "b", now: 600)?.endedReason, .refreshTokenReused, backend.name)
            XCTAssertEqual(try read.clientsIssuedTokens(sid: "a"), ["app", "second-app", "we", "web"], "\(backend.name): kept after the end")
        }
    }

    func testAPendingAuthorizationIsTakenOnceAndItsMarkGuardsTheSecondStep() throws {
        try eachBackend { backend in
            let request = AuthorizationRequest(clientID: "c", redirectURI: "myapp:/cb", scope: ["openid", "email"], state: "s", nonce: nil,
                                               codeChallenge: "challenge", prompt: ["login"], maxAge: 30, loginHint: "x",
                                               expectedSubject: "sub-1")
            let pending = PendingAuthorization(request: request, formTokenHash: [1, 2], replacesSID: "old")
            try backend.storage.write { try $0.pendingAuthorizations.insert(pending, secretHash: [5], createdAt: 100, expiresAt: 700) }
            let found = try XCTUnwrap(backend.storage.read.pendingAuthorizations.find(secretHash: [5], now: 200))
            XCTAssertEqual(found.request.scope, ["openid", "email"], backend.name)
            XCTAssertEqual(found.request.maxAge, 30, backend.name)
            XCTAssertEqual(found.request.expectedSubject, "sub-1", backend.name)
            XCTAssertEqual(found.request.prompt, [], "\(backend.name): prompt and login hint are spent")
            XCTAssertEqual(found.replacesSID, "old", backend.name)
            XCTAssertEqual(found.formTokenHash, [1, 2], backend.name)
            XCTAssertNil(try backend.storage.read.pendingAuthorizations.find(secretHash: [5], now: 700), "\(backend.name): expired")

            XCTAssertTrue(try backend.storage.write { try $0.pendingAuthorizations.mark(secretHash: [5], userID: 42, now: 300) }, backend.name)
            XCTAssertEqual(try backend.storage.read.pendingAuthorizations.markedUserID(secretHash: [5], now: 310, markedAfter: 299), 42)
            XCTAssertNil(try backend.storage.read.pendingAuthorizations.markedUserID(secretHash: [5], now: 310, markedAfter: 300), "stale")
            XCTAssertNil(try backend.storage.write { try $0.pendingAuthorizations.consumeMarked(secretHash: [5], userID: 43, now: 310,
                                                                                                markedAfter: 0) }, "\(backend.name): another user")
            try backend.storage.write { try $0.pendingAuthorizations.clearMarks(userID: 42) }
            XCTAssertNil(try backend.storage.read.pendingAuthorizations.markedUserID(secretHash: [5], now: 310, markedAfter: 0), backend.name)
            XCTAssertNotNil(try backend.storage.write { try $0.pendingAuthorizations.consume(secretHash: [5], now: 320) }, backend.name)
            XCTAssertNil(try backend.storage.write { try $0.pendingAuthorizations.consume(secretHash: [5], now: 320) }, "\(backend.name): once")
            XCTAssertFalse(try backend.storage.write { try $0.pendingAuthorizations.mark(secretHash: [5], userID: 42, now: 330) }, backend.name)
        }
    }

    func testTheThrottleCountsLocksDoublesRefundsAndForgets() throws {
        let policy = ThrottlePolicy(maximumFailures: 3, window: 100, firstLockDuration: 10, longestLockDuration: 40)
        try eachBackend { backend in
            func reserve(_ now: Int64) throws -> Int64? { try backend.storage.write { try $0.loginThrottle.reserve(key: [1], policy: policy, now: now) } }
            XCTAssertNil(try reserve(1), backend.name)
            XCTAssertNil(try reserve(2), backend.name)
            XCTAssertNil(try reserve(3), "\(backend.name): the third failure is admitted, and locks")
            XCTAssertEqual(try reserve(4), 13, "\(backend.name): locked for 10 s from the third")
            XCTAssertEqual(try backend.storage.read.loginThrottle.lockedUntil(key: [1], now: 12), 13, backend.name)
            XCTAssertNil(try reserve(13), "\(backend.name): the lock ended; the fourth failure locks twice as long")
            XCTAssertEqual(try reserve(14), 33, backend.name)
            try backend.storage.write { try $0.loginThrottle.reset(key: [1]) }
            XCTAssertNil(try backend.storage.read.loginThrottle.lockedUntil(key: [1], now: 14), backend.name)
            XCTAssertNil(try reserve(20), backend.name)
            XCTAssertNil(try reserve(21), backend.name)
            try backend.storage.write { try $0.loginThrottle.refund(key: [1], policy: policy, now: 21) }
            XCTAssertNil(try reserve(22), backend.name)
            XCTAssertNil(try reserve(23), "\(backend.name): the refunded attempt did not count, so this is the third")
            XCTAssertEqual(try reserve(24), 33, backend.name)
            try backend.storage.write { try $0.loginThrottle.sweep(horizon: 200) }
            XCTAssertNil(try reserve(300), backend.name)
            XCTAssertNil(try reserve(301), "\(backend.name): swept, the count started over")
        }
    }

    /// Found by review: at or over the limit, once a lock had ended, the next
    /// admitted attempt set a doubled lock, and giving that attempt back (a
    /// right password) left the lock: each right password of the real user
    /// locked them out for longer.
    func testARefundEndsTheLockItsOwnAttemptSet() throws {
        let policy = ThrottlePolicy(maximumFailures: 3, window: 100, firstLockDuration: 10, longestLockDuration: 40)
        try eachBackend { backend in
            func reserve(_ now: Int64) throws -> Int64? { try backend.storage.write { try $0.loginThrottle.reserve(key: [1], policy: policy, now: now) } }
            for now: Int64 in 1...3 { XCTAssertNil(try reserve(now), backend.name) }
            XCTAssertEqual(try reserve(4), 13, "\(backend.name): locked by the third failure")
            XCTAssertNil(try reserve(13), "\(backend.name): the lock ended; this attempt is admitted and sets a doubled lock")
            XCTAssertEqual(try backend.storage.read.loginThrottle.lockedUntil(key: [1], now: 13), 33, backend.name)
            try backend.storage.write { try $0.loginThrottle.refund(key: [1], policy: policy, now: 13) }
            XCTAssertNil(try backend.storage.read.loginThrottle.lockedUntil(key: [1], now: 13), "\(backend.name): the right password's lock is gone")
            XCTAssertNil(try reserve(14), "\(backend.name): the next attempt is admitted")
            XCTAssertEqual(try reserve(15), 34, "\(backend.name): and, a failure, locks as the refunded one would have")
        }
    }
}
