import IssuerStorage
import XCTest

/// Users, TOTP, clients, native-SSO groups and signing keys: the same
/// answers from every backend.
final class AccountStoreConformanceTests: ConformanceTestCase {
    func user(_ email: String, subject: String = UUID().uuidString) -> NewUser {
        NewUser(subject: subject, email: email, name: "Test", passwordHash: "hash", roles: ["user", "admin"], createdAt: 100)
    }

    func testUsersAreFoundByEmailFoldingASCIICaseOnly() throws {
        try eachBackend { backend in
            let alice = try backend.storage.write { try $0.users.insert(user("Alice@Example.com", subject: "sub-alice")) }
            XCTAssertEqual(alice.email, "Alice@Example.com", backend.name)
            XCTAssertEqual(alice.roles, ["user", "admin"], backend.name)
            let read = backend.storage.read.users
            for spelling in ["alice@example.com", "ALICE@EXAMPLE.COM", "Alice@Example.com"] {
                XCTAssertEqual(try read.find(email: spelling)?.id, alice.id, "\(backend.name) \(spelling)")
            }
            for other in ["alice@example.com\u{0}", "alice@example.com\u{0}x", "\u{0130}lice@example.com", "alice@example.co"] {
                XCTAssertNil(try read.find(email: other), "\(backend.name) \(other.debugDescription): identifiers are bytes")
            }
            XCTAssertEqual(try read.find(subject: "sub-alice")?.id, alice.id)
            XCTAssertEqual(try read.find(id: alice.id)?.subject, "sub-alice")
            XCTAssertThrowsError(try backend.storage.write { try $0.users.insert(user("ALICE@example.com")) },
                                 "\(backend.name): one address, one account")
            _ = try backend.storage.write { try $0.users.insert(user("bob@example.com")) }
            XCTAssertEqual(try read.list().map(\.email), ["Alice@Example.com", "bob@example.com"], backend.name)
            try backend.storage.write { tx in
                try tx.users.setDisabled(true, userID: alice.id)
                try tx.users.setPasswordHash("new hash", userID: alice.id)
            }
            let changed = try XCTUnwrap(read.find(id: alice.id))
            XCTAssertTrue(changed.disabled, backend.name)
            XCTAssertEqual(changed.passwordHash, "new hash", backend.name)
        }
    }

    func testRecoveryCodesAreSpentOnceReplacedAsASetAndGoWithTheEnrolment() throws {
        try eachBackend { backend in
            let alice = try backend.storage.write { try $0.users.insert(user("alice@example.com")) }
            let bob = try backend.storage.write { try $0.users.insert(user("bob@example.com")) }
            try backend.storage.write { tx in
                for who in [alice, bob] { try tx.totp.enrol(userID: who.id, sealedSecret: [1], at: 5) }
                try tx.totp.replaceRecoveryCodes(userID: alice.id, hashes: [[1, 0, 1], [2], [3]], at: 5)
                try tx.totp.replaceRecoveryCodes(userID: bob.id, hashes: [[9]], at: 5)
            }
            let read = backend.storage.read.totp
            XCTAssertEqual(try read.recoveryCodesLeft(userID: alice.id), 3, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.totp.useRecoveryCode(userID: alice.id, hash: [9]) }, "\(backend.name): bob's")
            XCTAssertFalse(try backend.storage.write { try $0.totp.useRecoveryCode(userID: alice.id, hash: [1, 0]) }, "\(backend.name): bytes")
            XCTAssertTrue(try backend.storage.write { try $0.totp.useRecoveryCode(userID: alice.id, hash: [1, 0, 1]) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.totp.useRecoveryCode(userID: alice.id, hash: [1, 0, 1]) }, "\(backend.name): once")
            XCTAssertEqual(try read.recoveryCodesLeft(userID: alice.id), 2, backend.name)
            try backend.storage.write { try $0.totp.replaceRecoveryCodes(userID: alice.id, hashes: [[4]], at: 6) }
            XCTAssertFalse(try backend.storage.write { try $0.totp.useRecoveryCode(userID: alice.id, hash: [2]) }, "\(backend.name): old set")
            XCTAssertEqual(try read.recoveryCodesLeft(userID: alice.id), 1, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.totp.remove(userID: alice.id) }, backend.name)
            XCTAssertEqual(try read.recoveryCodesLeft(userID: alice.id), 0, "\(backend.name): removed with TOTP")
            XCTAssertEqual(try read.recoveryCodesLeft(userID: bob.id), 1, "\(backend.name): bob's stay")
        }
    }

    func testTOTPStepsAreAcceptedOnceAndOnlyForward() throws {
        try eachBackend { backend in
            let id = try backend.storage.write { try $0.users.insert(user("t@example.com")).id }
            XCTAssertNil(try backend.storage.read.totp.credential(userID: id))
            try backend.storage.write { try $0.totp.enrol(userID: id, sealedSecret: [1, 0, 2], at: 5) }
            XCTAssertEqual(try backend.storage.read.totp.credential(userID: id), StoredTOTP(sealedSecret: [1, 0, 2], lastUsedStep: -1))
            XCTAssertTrue(try backend.storage.write { try $0.totp.accept(step: 10, userID: id) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.totp.accept(step: 10, userID: id) }, "\(backend.name): replay")
            XCTAssertFalse(try backend.storage.write { try $0.totp.accept(step: 9, userID: id) }, "\(backend.name): earlier step")
            try backend.storage.write { try $0.totp.enrol(userID: id, sealedSecret: [3], at: 6) }
            XCTAssertEqual(try backend.storage.read.totp.credential(userID: id)?.lastUsedStep, -1, "\(backend.name): re-enrolment resets")
        }
    }

    func testClientsAndTheirGroups() throws {
        try eachBackend { backend in
            let client = Client(clientID: "app-b", secretHash: nil, scopes: ["openid", "api:x"], nativeSSOGroup: "g",
                                redirectURIs: ["myapp:/b", "http://127.0.0.1/cb"], postLogoutRedirectURIs: ["myapp:/out"])
            try backend.storage.write { tx in
                try tx.clients.insert(client, at: 1)
                try tx.clients.insert(Client(clientID: "app-a", secretHash: "s", scopes: ["openid"], nativeSSOGroup: "g",
                                             redirectURIs: ["https://a.example/cb"], postLogoutRedirectURIs: []), at: 2)
            }
            let found = try XCTUnwrap(backend.storage.read.clients.find(clientID: "app-b"))
            XCTAssertEqual(found.scopes, ["openid", "api:x"], backend.name)
            XCTAssertEqual(Set(found.redirectURIs), Set(client.redirectURIs), backend.name)
            XCTAssertEqual(found.postLogoutRedirectURIs, ["myapp:/out"], backend.name)
            XCTAssertNil(try backend.storage.read.clients.find(clientID: "app-b\u{0}"), backend.name)
            XCTAssertEqual(try backend.storage.read.clients.list().map(\.clientID), ["app-a", "app-b"], backend.name)
            XCTAssertTrue(try XCTUnwrap(backend.storage.read.clients.find(clientID: "app-a")).isConfidential, backend.name)
            let groups = backend.storage.read.nativeSSOGroups
            XCTAssertEqual(try groups.members(group: "g"), ["app-a", "app-b"], backend.name)
            XCTAssertFalse(try groups.allowsDeviceID(group: "g"), "\(backend.name): off by default")
            try backend.storage.write { try $0.nativeSSOGroups.setAllowsDeviceID(true, group: "g") }
            XCTAssertTrue(try groups.allowsDeviceID(group: "g"), backend.name)
            try backend.storage.write { try $0.nativeSSOGroups.setAllowsDeviceID(false, group: "g") }
            XCTAssertFalse(try groups.allowsDeviceID(group: "g"), backend.name)
        }
    }

    func testAClientAddedElsewhereMovesTheChangeMarker() throws {
        try eachBackend { backend in
            let other = try backend.another()
            let before = try other.changeMarker()
            try backend.storage.write {
                try $0.clients.insert(Client(clientID: "late", secretHash: nil, scopes: ["openid"], nativeSSOGroup: nil,
                                             redirectURIs: ["myapp:/cb"], postLogoutRedirectURIs: []), at: 1)
            }
            XCTAssertTrue(try Self.markerMoves(from: before, other), "\(backend.name): a client cache learns of it")
        }
    }

    func testSigningKeysKeepTheirPrivatePartsUntilRetiredAndMoveTheChangeMarker() throws {
        try eachBackend { backend in
            let other = try backend.another()
            let before = try other.changeMarker()
            try backend.storage.write { tx in
                try tx.signingKeys.insert(StoredSigningKey(kid: "kid-one", publicPEM: "PUB1", createdAt: 1, activatesAt: 10), privateKeyPEM: [1, 2, 3])
                try tx.signingKeys.insert(StoredSigningKey(kid: "kid-two", publicPEM: "PUB2", createdAt: 2, activatesAt: 10,
                                                           algorithm: "ES256"), privateKeyPEM: [4, 5])
            }
            XCTAssertTrue(try Self.markerMoves(from: before, other), "\(backend.name): another process sees the change")
            XCTAssertEqual(try other.read.signingKeys.all().map(\.kid), ["kid-two", "kid-one"], "\(backend.name): newest, then insertion order")
            XCTAssertEqual(try other.read.signingKeys.privateKeyPEM(kid: "kid-one"), [1, 2, 3], backend.name)
            XCTAssertEqual(try other.read.signingKeys.all().map(\.algorithm), ["ES256", "RS256"], "\(backend.name): each key's alg")
            let marker = try other.changeMarker()
            try backend.storage.write { try $0.signingKeys.retire(kid: "kid-one", at: 50) }
            XCTAssertTrue(try Self.markerMoves(from: marker, other), backend.name)
            XCTAssertNil(try other.read.signingKeys.privateKeyPEM(kid: "kid-one"), "\(backend.name): retired keys lose their private part")
            XCTAssertEqual(try other.read.signingKeys.all().first { $0.kid == "kid-one" }?.retiredAt, 50, backend.name)
            XCTAssertNil(try other.read.signingKeys.privateKeyPEM(kid: "no-such-kid"), backend.name)
        }
    }

    /// Whether `storage`'s change marker leaves `before` within 2 s: a
    /// PostgreSQL notification reaches the other connection a moment after
    /// the commit, not with it.
    static func markerMoves(from before: Int64, _ storage: any IssuerStorage) throws -> Bool {
        let deadline = Date().addingTimeInterval(2)
        repeat {
            if try storage.changeMarker() != before { return true }
            usleep(1000)
        } while Date() < deadline
        return false
    }
}
