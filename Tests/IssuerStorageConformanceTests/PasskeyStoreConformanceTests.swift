import Foundation
import IssuerStorage
import XCTest

/// Passkeys (WebAuthn credentials) and the single-use WebAuthn challenges:
/// credential ids are bytes, every change is scoped to the owner, a
/// signature counter is recorded only when it grows (of concurrent uses
/// with one count exactly one wins), a challenge is claimed once, for its
/// purpose, before it expires.
final class PasskeyStoreConformanceTests: ConformanceTestCase {
    static let racers = 50

    func user(_ email: String, _ storage: any IssuerStorage) throws -> User {
        try storage.write {
            try $0.users.insert(NewUser(subject: "sub-" + UUID().uuidString, email: email, name: "Test", passwordHash: "hash",
                                        roles: ["user"], createdAt: 100))
        }
    }

    static func passkey(_ id: [UInt8], userID: Int64, createdAt: Int64 = 1_000, signCount: Int64 = 0, name: String = "YubiKey 5C",
                        algorithm: Int = -7) -> PasskeyRecord {
        PasskeyRecord(credentialID: id, userID: userID, publicKeyCOSE: [0xA5, 0x01, 0x02, 0x03, 0x26, 0x00, 0xFF], algorithm: algorithm,
                      signCount: signCount, name: name, aaguid: [UInt8](repeating: 0, count: 15) + [0xFF], backupEligible: true,
                      backupState: false, transports: ["usb", "nfc"], createdAt: createdAt, lastUsedAt: nil)
    }

    func add(_ passkey: PasskeyRecord, _ storage: any IssuerStorage) throws -> Bool {
        try storage.write { try $0.passkeys.add(passkey) }
    }

    func recordUse(_ id: [UInt8], _ count: Int64, backupState: Bool = false, now: Int64 = 2_000, _ storage: any IssuerStorage) throws -> Bool {
        try storage.write { try $0.passkeys.recordUse(credentialID: id, signCount: count, backupState: backupState, now: now) }
    }

    // MARK: Passkeys

    func testAddFindListRenameAndRemoveAreScopedToTheUser() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            let first = Self.passkey([1, 2, 3, 4], userID: alice.id, createdAt: 1_000)
            let second = Self.passkey([0xFE, 0xED], userID: alice.id, createdAt: 1_500, name: "iPhone", algorithm: -8)
            let bobs = Self.passkey([9, 9, 9], userID: bob.id, createdAt: 500, algorithm: -257)
            // Added newest first: the list is oldest first all the same.
            XCTAssertTrue(try add(second, backend.storage), backend.name)
            XCTAssertTrue(try add(first, backend.storage), backend.name)
            XCTAssertTrue(try add(bobs, backend.storage), backend.name)

            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [1, 2, 3, 4]), first, "\(backend.name): every field round-trips")
            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [0xFE, 0xED]), second, backend.name)
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [1, 2, 3]), "\(backend.name): a prefix is another id")
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [1, 2, 3, 4, 0]), "\(backend.name): so is a longer one")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id), [first, second], "\(backend.name): oldest first")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: bob.id), [bobs], backend.name)
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id + bob.id + 1000), [], backend.name)

            // Another user's id changes nothing.
            XCTAssertFalse(try backend.storage.write { try $0.passkeys.rename(credentialID: [1, 2, 3, 4], userID: bob.id, name: "Mine") },
                           backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.passkeys.remove(credentialID: [1, 2, 3, 4], userID: bob.id) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.passkeys.rename(credentialID: [7], userID: alice.id, name: "Unknown") },
                           "\(backend.name): unknown")
            XCTAssertFalse(try backend.storage.write { try $0.passkeys.remove(credentialID: [7], userID: alice.id) }, "\(backend.name): unknown")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id), [first, second], "\(backend.name): unchanged")

            XCTAssertTrue(try backend.storage.write { try $0.passkeys.rename(credentialID: [1, 2, 3, 4], userID: alice.id, name: "Work key ✓") },
                          backend.name)
            var renamed = first
            renamed.name = "Work key ✓"
            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [1, 2, 3, 4]), renamed, "\(backend.name): only the name")

            XCTAssertTrue(try backend.storage.write { try $0.passkeys.remove(credentialID: [1, 2, 3, 4], userID: alice.id) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.passkeys.remove(credentialID: [1, 2, 3, 4], userID: alice.id) },
                           "\(backend.name): gone")
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [1, 2, 3, 4]), backend.name)
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id), [second], backend.name)
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: bob.id), [bobs], "\(backend.name): bob keeps his")
        }
    }

    func testACredentialIDIsRegisteredOnceToAnyone() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            let original = Self.passkey([5, 5, 5, 5], userID: alice.id)
            XCTAssertTrue(try add(original, backend.storage), backend.name)
            XCTAssertFalse(try add(Self.passkey([5, 5, 5, 5], userID: bob.id, name: "Stolen"), backend.storage),
                           "\(backend.name): another user")
            XCTAssertFalse(try add(Self.passkey([5, 5, 5, 5], userID: alice.id, name: "Again"), backend.storage), "\(backend.name): the same user")
            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [5, 5, 5, 5]), original, "\(backend.name): unchanged")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: bob.id), [], backend.name)
        }
    }

    func testCredentialIDsAreBytesNULAnd0xFFIncluded() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let ids: [[UInt8]] = [[0], [0, 0], [0xFF], [0x41, 0, 0x42], [0x41, 0, 0x43], [0xFF, 0xFE, 0, 0xFF],
                                  Array("text-looking".utf8), [UInt8](repeating: 0xFF, count: 1023), (0..<255).map { UInt8($0) }]
            for (index, id) in ids.enumerated() {
                XCTAssertTrue(try add(Self.passkey(id, userID: alice.id, createdAt: 1_000 + Int64(index)), backend.storage),
                              "\(backend.name): \(id.prefix(8))")
            }
            for id in ids {
                XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: id)?.credentialID, id, "\(backend.name): \(id.prefix(8))")
            }
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id).map(\.credentialID), ids, "\(backend.name): exact, in order")
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [0x41]), "\(backend.name): NUL does not end the id")
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [0x41, 0]), backend.name)
            XCTAssertTrue(try recordUse([0x41, 0, 0x42], 3, backend.storage), backend.name)
            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [0x41, 0, 0x43])?.signCount, 0,
                           "\(backend.name): the id past the NUL counts")
            XCTAssertTrue(try backend.storage.write { try $0.passkeys.remove(credentialID: [0x41, 0, 0x43], userID: alice.id) }, backend.name)
            XCTAssertNotNil(try backend.storage.read.passkeys.find(credentialID: [0x41, 0, 0x42]), backend.name)

            // Out of WebAuthn's bounds (1…1023 bytes): refused by the table.
            XCTAssertThrowsError(try add(Self.passkey([UInt8](repeating: 1, count: 1024), userID: alice.id), backend.storage), backend.name)
            XCTAssertThrowsError(try add(Self.passkey([], userID: alice.id), backend.storage), backend.name)
        }
    }

    func testRecordUseRecordsOnlyAGrowingCounterOrZeroAfterZero() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            XCTAssertTrue(try add(Self.passkey([1], userID: alice.id, signCount: 0), backend.storage), backend.name)
            XCTAssertTrue(try add(Self.passkey([2], userID: alice.id, signCount: 10), backend.storage), backend.name)
            let find = { (id: [UInt8]) in try XCTUnwrap(backend.storage.read.passkeys.find(credentialID: id), backend.name) }

            // 0 after 0: an authenticator without a counter, every time.
            XCTAssertTrue(try recordUse([1], 0, backupState: true, now: 2_000, backend.storage), "\(backend.name): 0/0")
            XCTAssertEqual(try find([1]).lastUsedAt, 2_000, backend.name)
            XCTAssertTrue(try find([1]).backupState, "\(backend.name): BS as last seen")
            XCTAssertTrue(try recordUse([1], 0, now: 2_100, backend.storage), "\(backend.name): 0/0 again")
            XCTAssertFalse(try find([1]).backupState, backend.name)
            // A counter that starts: greater wins; from then on 0 is a regression.
            XCTAssertTrue(try recordUse([1], 1, now: 2_200, backend.storage), backend.name)
            XCTAssertFalse(try recordUse([1], 0, now: 2_300, backend.storage), "\(backend.name): 0 after 1")
            XCTAssertEqual(try find([1]).signCount, 1, backend.name)
            XCTAssertEqual(try find([1]).lastUsedAt, 2_200, "\(backend.name): a refused use records nothing")

            XCTAssertFalse(try recordUse([2], 10, now: 3_000, backend.storage), "\(backend.name): equal loses")
            XCTAssertFalse(try recordUse([2], 9, now: 3_000, backend.storage), "\(backend.name): smaller loses")
            XCTAssertFalse(try recordUse([2], 0, now: 3_000, backend.storage), "\(backend.name): 0 after 10 loses")
            XCTAssertNil(try find([2]).lastUsedAt, "\(backend.name): nothing recorded")
            XCTAssertEqual(try find([2]).signCount, 10, backend.name)
            XCTAssertTrue(try recordUse([2], 11, backupState: true, now: 3_001, backend.storage), "\(backend.name): greater wins")
            XCTAssertFalse(try recordUse([2], 11, now: 3_002, backend.storage), "\(backend.name): a replay of it loses")
            XCTAssertTrue(try recordUse([2], 4_000_000_000, now: 3_003, backend.storage), "\(backend.name): beyond 32 bits signed")
            var expected = Self.passkey([2], userID: alice.id, signCount: 4_000_000_000)
            expected.lastUsedAt = 3_003
            XCTAssertEqual(try find([2]), expected, backend.name)
            XCTAssertFalse(try recordUse([3], 1, backend.storage), "\(backend.name): unknown credential")
        }
    }

    /// 50 threads, each on a connection of its own (as responder processes
    /// or nodes would be), record a use with one counter value at once:
    /// exactly one is recorded.
    func testOfFiftyConcurrentUsesWithOneCountExactlyOneIsRecorded() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            XCTAssertTrue(try add(Self.passkey([0, 0xFF, 0], userID: alice.id, signCount: 6), backend.storage), backend.name)
            let connections = try (0..<Self.racers).map { _ in try backend.another() }
            let outcomes = Locked<[Result<Bool, Error>]>([])
            DispatchQueue.concurrentPerform(iterations: Self.racers) { index in
                let outcome = Result { try self.recordUse([0, 0xFF, 0], 7, now: 5_000 + Int64(index), connections[index]) }
                outcomes.update { $0.append(outcome) }
            }
            let results = outcomes.value
            XCTAssertEqual(results.count, Self.racers, backend.name)
            XCTAssertEqual(results.filter { (try? $0.get()) == true }.count, 1, "\(backend.name): \(results)")
            XCTAssertEqual(results.filter { (try? $0.get()) == false }.count, Self.racers - 1, "\(backend.name): no errors: \(results)")
            XCTAssertEqual(try backend.storage.read.passkeys.find(credentialID: [0, 0xFF, 0])?.signCount, 7, backend.name)
        }
    }

    func testRemoveAllRemovesOneUsersPasskeysAndIsCounted() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            for id in [[1], [2], [3]] as [[UInt8]] { XCTAssertTrue(try add(Self.passkey(id, userID: alice.id), backend.storage), backend.name) }
            XCTAssertTrue(try add(Self.passkey([4], userID: bob.id), backend.storage), backend.name)
            XCTAssertEqual(try backend.storage.maintenance.statistics(now: 100).passkeys, 4, backend.name)
            XCTAssertEqual(try backend.storage.write { try $0.passkeys.removeAll(userID: alice.id) }, 3, backend.name)
            XCTAssertEqual(try backend.storage.write { try $0.passkeys.removeAll(userID: alice.id) }, 0, "\(backend.name): none left")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: alice.id), [], backend.name)
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: bob.id).map(\.credentialID), [[4]], "\(backend.name): bob keeps his")
            XCTAssertEqual(try backend.storage.maintenance.statistics(now: 100).passkeys, 1, backend.name)
        }
    }

    /// Erasure (AccountChanges.delete) removes the passkeys itself, to count
    /// them; the user row going takes what is left of them, and of the
    /// challenges issued to the user, along (ON DELETE CASCADE), so an
    /// account given the old id later inherits nothing.
    func testDeletingTheUserLeavesNoPasskeyOrChallengeOfIt() throws {
        try eachBackend { backend in
            let bob = try user("bob@example.com", backend.storage)
            let alice = try user("alice@example.com", backend.storage)
            XCTAssertTrue(try add(Self.passkey([1, 1], userID: alice.id), backend.storage), backend.name)
            XCTAssertTrue(try add(Self.passkey([1, 2], userID: alice.id), backend.storage), backend.name)
            XCTAssertTrue(try add(Self.passkey([2, 1], userID: bob.id), backend.storage), backend.name)
            try backend.storage.write { tx in
                try tx.webAuthnChallenges.issue(challengeHash: Self.hash(1), WebAuthnChallengeRecord(purpose: "register", userID: alice.id,
                                                                                                     binding: [1], expiresAt: 9_000))
                try tx.webAuthnChallenges.issue(challengeHash: Self.hash(2), WebAuthnChallengeRecord(purpose: "register", userID: bob.id,
                                                                                                     binding: [2], expiresAt: 9_000))
            }

            let removed = try backend.storage.write { tx -> Int in
                let removed = try tx.passkeys.removeAll(userID: alice.id)
                XCTAssertTrue(try tx.users.delete(userID: alice.id), backend.name)
                return removed
            }
            XCTAssertEqual(removed, 2, backend.name)
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [1, 1]), backend.name)

            // Without removeAll first: the cascade.
            let carol = try user("carol@example.com", backend.storage)
            XCTAssertTrue(try add(Self.passkey([3, 1], userID: carol.id), backend.storage), backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.users.delete(userID: carol.id) }, backend.name)
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [3, 1]), "\(backend.name): ON DELETE CASCADE")

            // SQLite hands the highest id out again: the new account has nothing.
            let again = try user("alice@example.com", backend.storage)
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: again.id), [], backend.name)
            XCTAssertNil(try backend.storage.write { try $0.webAuthnChallenges.claim(challengeHash: Self.hash(1), purpose: "register", now: 100) },
                         "\(backend.name): the challenge issued to the erased user is gone")
            XCTAssertEqual(try backend.storage.read.passkeys.list(userID: bob.id).map(\.credentialID), [[2, 1]], "\(backend.name): bob keeps his")
            XCTAssertNotNil(try backend.storage.write { try $0.webAuthnChallenges.claim(challengeHash: Self.hash(2), purpose: "register", now: 100) },
                            backend.name)
        }
    }

    func testAPasskeyNeedsAnExistingUser() throws {
        try eachBackend { backend in
            XCTAssertThrowsError(try add(Self.passkey([1], userID: 4242), backend.storage), "\(backend.name): user_id references users(id)")
            XCTAssertNil(try backend.storage.read.passkeys.find(credentialID: [1]), backend.name)
        }
    }

    // MARK: Challenges

    static func hash(_ seed: UInt8) -> [UInt8] { [seed] + [UInt8](repeating: 0, count: 30) + [0xFF] }

    func issue(_ storage: any IssuerStorage, _ hash: [UInt8], _ record: WebAuthnChallengeRecord) throws {
        try storage.write { try $0.webAuthnChallenges.issue(challengeHash: hash, record) }
    }

    func claim(_ storage: any IssuerStorage, _ hash: [UInt8], purpose: String = "authenticate", now: Int64 = 150) throws -> WebAuthnChallengeRecord? {
        try storage.write { try $0.webAuthnChallenges.claim(challengeHash: hash, purpose: purpose, now: now) }
    }

    func testAChallengeIsClaimedOnceForItsPurposeUntilItExpires() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let signIn = WebAuthnChallengeRecord(purpose: "authenticate", userID: nil, binding: [0, 0xFF, 0, 7], expiresAt: 400)
            let registration = WebAuthnChallengeRecord(purpose: "register", userID: alice.id, binding: [], expiresAt: 400)
            let unbound = WebAuthnChallengeRecord(purpose: "authenticate", userID: nil, binding: nil, expiresAt: 400)
            try issue(backend.storage, Self.hash(1), signIn)
            try issue(backend.storage, Self.hash(2), registration)
            try issue(backend.storage, Self.hash(3), unbound)
            try issue(backend.storage, Self.hash(4), signIn)

            // Refusals change nothing.
            XCTAssertNil(try claim(backend.storage, Self.hash(1), purpose: "register"), "\(backend.name): another purpose")
            XCTAssertNil(try claim(backend.storage, Self.hash(1), purpose: "Authenticate"), "\(backend.name): purposes are bytes")
            XCTAssertNil(try claim(backend.storage, Self.hash(1), purpose: "authenticate\u{0}"), "\(backend.name): NUL names no purpose")
            XCTAssertNil(try claim(backend.storage, Self.hash(1), now: 400), "\(backend.name): expires_at is exclusive")
            XCTAssertNil(try claim(backend.storage, Self.hash(9)), "\(backend.name): unknown")
            XCTAssertNil(try claim(backend.storage, Array(Self.hash(1).dropLast()) + [0xFE]), "\(backend.name): the hash is compared in full")

            XCTAssertEqual(try claim(backend.storage, Self.hash(1), now: 399), signIn, backend.name)
            XCTAssertNil(try claim(backend.storage, Self.hash(1), now: 399), "\(backend.name): single use")
            XCTAssertEqual(try claim(backend.storage, Self.hash(2), purpose: "register"), registration,
                           "\(backend.name): an empty binding stays empty, the user is kept")
            XCTAssertEqual(try claim(backend.storage, Self.hash(3)), unbound, "\(backend.name): no binding stays nil")
            XCTAssertEqual(try claim(backend.storage, Self.hash(4)), signIn, "\(backend.name): each challenge is its own row")

            struct Abort: Error {}
            try issue(backend.storage, Self.hash(5), signIn)
            XCTAssertThrowsError(try backend.storage.write { tx in
                XCTAssertEqual(try tx.webAuthnChallenges.claim(challengeHash: Self.hash(5), purpose: "authenticate", now: 150), signIn)
                throw Abort()
            })
            XCTAssertEqual(try claim(backend.storage, Self.hash(5)), signIn, "\(backend.name): rolled back, so still unused")
        }
    }

    func testAChallengeHashIsStoredOnceAndIsASHA256() throws {
        try eachBackend { backend in
            let record = WebAuthnChallengeRecord(purpose: "authenticate", userID: nil, binding: [1], expiresAt: 400)
            try issue(backend.storage, Self.hash(1), record)
            XCTAssertThrowsError(try issue(backend.storage, Self.hash(1), record), "\(backend.name): the hash is the primary key")
            XCTAssertThrowsError(try issue(backend.storage, [1, 2, 3], record), "\(backend.name): 32 bytes, never the challenge itself")
        }
    }

    /// 50 threads, each on a connection of its own, claim one challenge at
    /// once: exactly one gets the record.
    func testOfFiftyConcurrentClaimsExactlyOneWins() throws {
        try eachBackend { backend in
            let record = WebAuthnChallengeRecord(purpose: "authenticate", userID: nil, binding: [7, 7], expiresAt: 400)
            try issue(backend.storage, Self.hash(1), record)
            let connections = try (0..<Self.racers).map { _ in try backend.another() }
            let outcomes = Locked<[Result<WebAuthnChallengeRecord?, Error>]>([])
            DispatchQueue.concurrentPerform(iterations: Self.racers) { index in
                let outcome = Result { try self.claim(connections[index], Self.hash(1)) }
                outcomes.update { $0.append(outcome) }
            }
            let results = outcomes.value
            XCTAssertEqual(results.count, Self.racers, backend.name)
            XCTAssertEqual(results.filter { if case .success(record?) = $0 { true } else { false } }.count, 1, "\(backend.name): \(results)")
            XCTAssertEqual(results.filter { if case .success(nil) = $0 { true } else { false } }.count, Self.racers - 1,
                           "\(backend.name): no errors: \(results)")
        }
    }

    func testTheSweepDeletesExpiredAndUsedChallengesOnly() throws {
        try eachBackend { backend in
            let record = { (expiresAt: Int64) in WebAuthnChallengeRecord(purpose: "authenticate", userID: nil, binding: [1], expiresAt: expiresAt) }
            try issue(backend.storage, Self.hash(1), record(200))   // expired at the sweep
            try issue(backend.storage, Self.hash(2), record(900))   // used before it
            try issue(backend.storage, Self.hash(3), record(900))   // live
            XCTAssertNotNil(try claim(backend.storage, Self.hash(2)), backend.name)
            let removed = try backend.storage.maintenance.sweep(SweepPolicy(now: 200, refreshTokenLifetime: 1000, refreshGracePeriod: 10),
                                                                batch: 100)
            XCTAssertEqual(removed["webauthn_challenges"], 2, backend.name)
            XCTAssertEqual(try claim(backend.storage, Self.hash(3), now: 201), record(900), "\(backend.name): the live one stays")
        }
    }
}
