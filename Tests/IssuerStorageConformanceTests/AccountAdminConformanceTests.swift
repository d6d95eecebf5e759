import IssuerStorage
import XCTest

/// What `ssoctl user update`, `user totp --remove` and `user delete` ask of
/// the stores: the same answers from every backend, and an erasure that
/// leaves no row naming the user and touches no other user's.
final class AccountAdminConformanceTests: ConformanceTestCase {
    func user(_ email: String, _ storage: any IssuerStorage) throws -> User {
        try storage.write {
            try $0.users.insert(NewUser(subject: "sub-" + UUID().uuidString, email: email, name: "Test", passwordHash: "hash",
                                        roles: ["user"], createdAt: 100))
        }
    }

    func testUpdateChangesTheNameTheRolesOrBothOfOneUserOnly() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            func update(_ name: String?, _ roles: [String]?, _ id: Int64? = nil) throws -> User? {
                try backend.storage.write { try $0.users.update(name: name, roles: roles, userID: id ?? alice.id) }
            }
            let renamed = try XCTUnwrap(update("Alice Martin", nil), backend.name)
            XCTAssertEqual(renamed.name, "Alice Martin", backend.name)
            XCTAssertEqual(renamed.roles, ["user"], "\(backend.name): roles kept")
            let promoted = try XCTUnwrap(update(nil, ["admin", "auditor"]), backend.name)
            XCTAssertEqual(promoted.roles, ["admin", "auditor"], "\(backend.name): the list is replaced")
            XCTAssertEqual(promoted.name, "Alice Martin", "\(backend.name): name kept")
            XCTAssertEqual(try update("A. Martin", ["user"])?.name, "A. Martin", backend.name)
            let stored = try XCTUnwrap(backend.storage.read.users.find(id: alice.id))
            XCTAssertEqual(stored.roles, ["user"], backend.name)
            XCTAssertEqual(stored.subject, alice.subject, "\(backend.name): the sub never changes")
            XCTAssertEqual(stored.passwordHash, "hash", backend.name)
            XCTAssertNil(try update("Nobody", nil, alice.id + bob.id + 1000), "\(backend.name): no such user")
            XCTAssertEqual(try backend.storage.read.users.find(id: bob.id), bob, "\(backend.name): other users untouched")
        }
    }

    func testRemovingTOTPDeletesOnlyThatUsersSeed() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            try backend.storage.write { tx in
                try tx.totp.enrol(userID: alice.id, sealedSecret: [1], at: 5)
                try tx.totp.enrol(userID: bob.id, sealedSecret: [2], at: 5)
            }
            XCTAssertTrue(try backend.storage.write { try $0.totp.remove(userID: alice.id) }, backend.name)
            XCTAssertNil(try backend.storage.read.totp.credential(userID: alice.id), backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.totp.remove(userID: alice.id) }, "\(backend.name): none left")
            XCTAssertFalse(try backend.storage.write { try $0.totp.accept(step: 1, userID: alice.id) }, "\(backend.name): no code")
            XCTAssertEqual(try backend.storage.read.totp.credential(userID: bob.id)?.sealedSecret, [2], backend.name)
        }
    }

    /// Everything a signed-in user leaves behind, for `user` (distinct
    /// hashes and sids per `tag`).
    func leaveTraces(of user: User, tag: UInt8, _ storage: any IssuerStorage) throws {
        let sid = "sid-\(tag)"
        try storage.write { tx in
            try tx.sessions.insert(SSOSession(sid: sid, userID: user.id, authTime: 50, expiresAt: 10_000, amr: ["pwd"]),
                                   secretHash: [tag, 1], createdAt: 50)
            try tx.sessions.insert(SSOSession(sid: sid + "-old", userID: user.id, authTime: 10, expiresAt: 10_000, amr: ["pwd"]),
                                   secretHash: [tag, 2], createdAt: 10)
            try tx.sessions.end(sid: sid + "-old", at: 20)
            try tx.refreshTokens.insert(tokenHash: [tag, 3], RefreshTokenRecord(familyID: "fam-\(tag)", clientID: "app", userID: user.id,
                                                                             sid: sid, scope: ["openid"], authTime: 50, expiresAt: 9_000),
                                        createdAt: 50)
            try tx.refreshTokens.insert(tokenHash: [tag, 4], RefreshTokenRecord(familyID: "old-\(tag)", clientID: "app", userID: user.id,
                                                                             sid: sid + "-old", scope: ["openid"], authTime: 10,
                                                                             expiresAt: 9_000), createdAt: 10)
            try tx.refreshTokens.revokeAll(sid: sid + "-old", at: 20)
            try tx.deviceSecrets.insert(DeviceSecretRecord(secretHash: [tag, 5], sid: sid, userID: user.id, clientID: "app", deviceID: nil,
                                                           expiresAt: 9_000, scope: ["openid"]), codeHash: [tag, 6], createdAt: 50)
            try tx.authorizationCodes.insert(codeHash: [tag, 6], AuthorizationCodeGrantRecord(
                clientID: "app", redirectURI: "myapp:/cb", codeChallenge: "ch", scope: ["openid"], nonce: nil, sid: sid, userID: user.id,
                authTime: 50, amr: ["pwd"]), createdAt: 50, expiresAt: 9_000)
            let request = AuthorizationRequest(clientID: "app", redirectURI: "myapp:/cb", scope: ["openid"], state: nil, nonce: nil,
                                               codeChallenge: "ch", prompt: [], maxAge: nil, loginHint: nil)
            try tx.pendingAuthorizations.insert(PendingAuthorization(request: request, formTokenHash: [tag, 7], replacesSID: nil),
                                                secretHash: [tag, 7], createdAt: 50, expiresAt: 9_000)
            _ = try tx.pendingAuthorizations.mark(secretHash: [tag, 7], userID: user.id, now: 60)
            var hinted = request
            hinted.expectedSubject = user.subject
            try tx.pendingAuthorizations.insert(PendingAuthorization(request: hinted, formTokenHash: [tag, 8], replacesSID: nil),
                                                secretHash: [tag, 8], createdAt: 50, expiresAt: 9_000)
            try tx.totp.enrol(userID: user.id, sealedSecret: [tag], at: 50)
        }
    }

    /// What is left of `leaveTraces(of:tag:)`, read through the stores.
    func traces(_ tag: UInt8, userID: Int64, _ storage: any IssuerStorage) throws -> [String] {
        let read = storage.read
        var found: [String] = []
        found += try read.sessions.list(userID: userID, now: 100).map { "session \($0.sid)" }
        found += try [[tag, 3], [tag, 4]].compactMap { try read.refreshTokens.details(tokenHash: $0).map { "refresh \($0.familyID)" } }
        if try read.deviceSecrets.live(secretHash: [tag, 5], now: 100) != nil { found.append("device secret") }
        if case .refused(.none) = try storage.write({ try $0.authorizationCodes.redeem(codeHash: [tag, 6], clientID: "not-the-app",
                                                                                      redirectURI: "x", codeChallenge: "x", now: 100,
                                                                                      issuing: CodeIssue(familyID: "", jti: "")) }) {
        } else {
            found.append("code")
        }
        found += try [[tag, 7], [tag, 8]].compactMap { try read.pendingAuthorizations.find(secretHash: $0, now: 100).map { _ in "pending" } }
        if try read.totp.credential(userID: userID) != nil { found.append("totp") }
        return found
    }

    func testAUserWithSessionsCannotBeDeletedAloneAndTheRefusalChangesNothing() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            try leaveTraces(of: alice, tag: 1, backend.storage)
            let before = try traces(1, userID: alice.id, backend.storage)
            XCTAssertEqual(before.count, 9, backend.name)
            XCTAssertThrowsError(try backend.storage.write { tx in
                _ = try tx.refreshTokens.deleteAll(userID: alice.id)
                _ = try tx.users.delete(userID: alice.id)
            }, "\(backend.name): sso_sessions.user_id references users(id)")
            XCTAssertEqual(try traces(1, userID: alice.id, backend.storage), before, "\(backend.name): rolled back")
            XCTAssertEqual(try backend.storage.read.users.find(id: alice.id), alice, backend.name)
        }
    }

    func testErasureDeletesEveryRowThatNamesTheUserAndNoOtherUsers() throws {
        try eachBackend { backend in
            // Alice last: hers is the highest id, which SQLite hands out again.
            let bob = try user("bob@example.com", backend.storage)
            let alice = try user("alice@example.com", backend.storage)
            try leaveTraces(of: alice, tag: 1, backend.storage)
            try leaveTraces(of: bob, tag: 2, backend.storage)
            let bobsBefore = try traces(2, userID: bob.id, backend.storage)

            let counts = try backend.storage.write { tx in
                let ended = try tx.sessions.endAll(userID: alice.id, at: 100)
                let counts = [ended.count, try tx.sessions.deleteAll(userID: alice.id), try tx.refreshTokens.deleteAll(userID: alice.id),
                              try tx.deviceSecrets.deleteAll(userID: alice.id), try tx.authorizationCodes.deleteAll(userID: alice.id),
                              try tx.pendingAuthorizations.deleteAll(userID: alice.id, subject: alice.subject)]
                XCTAssertTrue(try tx.totp.remove(userID: alice.id), backend.name)
                XCTAssertTrue(try tx.users.delete(userID: alice.id), backend.name)
                return counts
            }
            XCTAssertEqual(counts, [1, 2, 2, 1, 1, 2], "\(backend.name): ended, sessions, refresh, device, codes, pending")
            XCTAssertEqual(try traces(1, userID: alice.id, backend.storage), [], backend.name)
            XCTAssertNil(try backend.storage.read.users.find(id: alice.id), backend.name)
            XCTAssertNil(try backend.storage.read.users.find(email: "alice@example.com"), backend.name)
            XCTAssertNil(try backend.storage.read.users.find(subject: alice.subject), backend.name)
            XCTAssertEqual(try traces(2, userID: bob.id, backend.storage), bobsBefore, "\(backend.name): bob keeps everything")
            XCTAssertEqual(try backend.storage.read.users.list().map(\.email), ["bob@example.com"], backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.users.delete(userID: alice.id) }, "\(backend.name): gone")

            // The address is free again; the new account inherits nothing,
            // even where the database hands out the old id again.
            let again = try user("ALICE@example.com", backend.storage)
            XCTAssertNotEqual(again.subject, alice.subject, backend.name)
            XCTAssertEqual(try traces(1, userID: again.id, backend.storage), [], backend.name)
        }
    }
}
