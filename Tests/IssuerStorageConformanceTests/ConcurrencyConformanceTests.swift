import Foundation
import IssuerStorage
import XCTest

/// The one-time rules under concurrency, each caller on its own connection
/// (as separate responder processes, or nodes, would be): of concurrent
/// callers exactly one wins.
final class ConcurrencyConformanceTests: ConformanceTestCase {
    static let callers = 12

    /// Runs `body` once per caller, each on a connection of its own, all at
    /// once; returns what each returned (or the error it threw).
    func race<T>(_ backend: TestBackend, _ body: @escaping (any IssuerStorage) throws -> T) throws -> [Result<T, Error>] {
        let connections = try (0..<Self.callers).map { _ in try backend.another() }
        let results = Locked<[Result<T, Error>]>([])
        DispatchQueue.concurrentPerform(iterations: Self.callers) { index in
            let result = Result { try body(connections[index]) }
            results.update { $0.append(result) }
        }
        return results.value
    }

    func testConcurrentSendersNeverClaimOneMessageTwice() throws {
        try eachBackend { backend in
            try backend.storage.write { tx in
                for index in 0..<30 { _ = try tx.mailOutbox.enqueue(kind: .test, recipient: "r\(index)@example.com", message: [1], now: 10) }
            }
            let outcomes = try race(backend) { storage -> [Int64] in
                let claimer = "node-" + UUID().uuidString
                return try storage.write { try $0.mailOutbox.claimDue(limit: 4, now: 20, lease: 300, claimer: claimer) }.map(\.id)
            }
            let claimed = outcomes.compactMap { try? $0.get() }.flatMap { $0 }
            XCTAssertEqual(outcomes.filter { if case .failure = $0 { true } else { false } }.count, 0, "\(backend.name): \(outcomes)")
            XCTAssertEqual(claimed.count, Set(claimed).count, "\(backend.name): a message went to two senders: \(claimed.sorted())")
            XCTAssertEqual(claimed.count, 30, "\(backend.name): twelve senders of four take all thirty")
        }
    }

    /// The per-address mail limit's pattern (hold, count, enqueue) under
    /// twelve racing units for one address, spelt differently: five queue.
    func testHeldRecipientsKeepAPerAddressLimitUnderConcurrency() throws {
        try eachBackend { backend in
            let spellings = ["Alice@Example.com", "alice@example.com", "ALICE@EXAMPLE.COM"]
            let outcomes = try race(backend) { storage -> Bool in
                let recipient = spellings[Int.random(in: 0..<spellings.count)]
                return try storage.write { tx -> Bool in
                    try tx.mailOutbox.holdRecipient(recipient)
                    guard try tx.mailOutbox.recentCount(recipient: recipient, since: 0) < 5 else { return false }
                    _ = try tx.mailOutbox.enqueue(kind: .verification, recipient: recipient, message: [1], now: 10)
                    return true
                }
            }
            XCTAssertEqual(outcomes.filter { (try? $0.get()) == true }.count, 5, "\(backend.name): \(outcomes)")
            XCTAssertEqual(try backend.storage.read.mailOutbox.recentCount(recipient: "alice@example.com", since: 0), 5, backend.name)
        }
    }

    func testConcurrentRedemptionsOfOneCodeRedeemItOnce() throws {
        try eachBackend { backend in
            try backend.storage.write { try $0.authorizationCodes.insert(codeHash: [1], TokenStoreConformanceTests.code, createdAt: 1, expiresAt: 100) }
            let outcomes = try race(backend) { storage in
                try storage.write { try $0.authorizationCodes.redeem(codeHash: [1], clientID: "app", redirectURI: "myapp:/cb", codeChallenge: "ch",
                                                                      now: 10, issuing: TokenStoreConformanceTests.issuing) }
            }
            let redeemed = outcomes.filter { if case .success(.redeemed) = $0 { true } else { false } }
            XCTAssertEqual(redeemed.count, 1, "\(backend.name): \(outcomes)")
            XCTAssertTrue(outcomes.allSatisfy { if case .success = $0 { true } else { false } }, "\(backend.name): no errors: \(outcomes)")
        }
    }

    func testConcurrentClaimsOfOneRefreshTokenLeaveOneSuccessor() throws {
        try eachBackend { backend in
            let userID = try TokenStoreConformanceTests.liveSession(backend.storage)
            try backend.storage.write { try $0.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(userID: userID), createdAt: 1) }
            let outcomes = try race(backend) { storage -> Bool in
                let successor = RefreshTokenSuccessor(tokenHash: Array(UUID().uuidString.utf8), sealed: nil)
                return try storage.write { tx in
                    guard try tx.refreshTokens.claim([1], clientID: "app", successor: successor, now: 10) != nil else { return false }
                    try tx.refreshTokens.insert(tokenHash: successor.tokenHash, TokenStoreConformanceTests.refresh(), createdAt: 10)
                    return true
                }
            }
            XCTAssertEqual(outcomes.filter { (try? $0.get()) == true }.count, 1, "\(backend.name): \(outcomes)")
            let spent = try XCTUnwrap(backend.storage.read.refreshTokens.details(tokenHash: [1]))
            let successor = try XCTUnwrap(spent.successorHash)
            XCTAssertNotNil(try backend.storage.read.refreshTokens.details(tokenHash: successor), "\(backend.name): the recorded successor exists")
        }
    }

    /// A revocation that meets a rotation in flight waits for it, and must
    /// then revoke the successor that rotation commits too: under
    /// PostgreSQL's READ COMMITTED a single UPDATE missed it (the row was
    /// inserted after the UPDATE began), and the thief's token lived on.
    /// Checked for each revocation: reuse of the family, a session's end,
    /// a user's sign-out everywhere.
    func testARevocationThatWaitsForARotationRevokesTheSuccessorToo() throws {
        let revocations: [(String, (any IssuerWrites) throws -> Void)] = [
            ("family", { try $0.refreshTokens.revokeFamily("fam", at: 11) }),
            ("session", { try $0.refreshTokens.revokeAll(sid: "sid", at: 11) }),
        ]
        for (name, revoke) in revocations {
            try eachBackend { backend in
                let userID = try TokenStoreConformanceTests.liveSession(backend.storage)
                try backend.storage.write { try $0.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(userID: userID), createdAt: 1) }
                try assertRevokesTheSuccessor(backend, userID: userID, "\(backend.name), \(name)", revoke)
            }
        }
        try eachBackend { backend in
            let userID = try TokenStoreConformanceTests.liveSession(backend.storage)
            try backend.storage.write { try $0.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(userID: userID), createdAt: 1) }
            try assertRevokesTheSuccessor(backend, userID: userID, "\(backend.name), user") { try $0.refreshTokens.revokeAll(userID: userID, at: 11) }
        }
    }

    /// Token [1] is claimed and its successor [2] inserted on one connection,
    /// which holds its unit open while `revoke` starts on another.
    func assertRevokesTheSuccessor(_ backend: TestBackend, userID: Int64, _ label: String,
                                   _ revoke: @escaping (any IssuerWrites) throws -> Void) throws {
        let (rotating, revoking) = (try backend.another(), try backend.another())
        let inserted = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let rotation = Locked<Result<Bool, Error>?>(nil)
        Thread.detachNewThread {
            let result = Result { try rotating.write { tx -> Bool in
                let claimed = try tx.refreshTokens.claim([1], clientID: "app", successor: RefreshTokenSuccessor(tokenHash: [2], sealed: nil), now: 10)
                try tx.refreshTokens.insert(tokenHash: [2], TokenStoreConformanceTests.refresh(userID: userID), createdAt: 10)
                inserted.signal()
                Thread.sleep(forTimeInterval: 0.4)  // the revocation starts meanwhile, and waits
                return claimed != nil
            } }
            rotation.update { $0 = result }
            finished.signal()
        }
        inserted.wait()
        try revoking.write(revoke)
        finished.wait()
        XCTAssertEqual(try rotation.value?.get(), true, "\(label): the rotation claimed the token")
        for hash: [UInt8] in [[1], [2]] {
            XCTAssertNotNil(try backend.storage.read.refreshTokens.details(tokenHash: hash)?.revokedAt, "\(label): token \(hash) revoked")
        }
    }

    func testConcurrentAttemptsAreAdmittedNoMoreThanTheLimit() throws {
        let policy = ThrottlePolicy(maximumFailures: 5, window: 900, firstLockDuration: 60, longestLockDuration: 3600)
        try eachBackend { backend in
            let outcomes = try race(backend) { storage in
                try storage.write { try $0.loginThrottle.reserve(key: [7], policy: policy, now: 100) }
            }
            XCTAssertEqual(outcomes.filter { if case .success(nil) = $0 { true } else { false } }.count, 5, "\(backend.name): \(outcomes)")
            XCTAssertEqual(outcomes.filter { if case .success(160?) = $0 { true } else { false } }.count, Self.callers - 5, backend.name)
        }
    }

    func testConcurrentUsesOfOneTOTPStepAcceptItOnce() throws {
        try eachBackend { backend in
            let id = try backend.storage.write { tx -> Int64 in
                let user = try tx.users.insert(NewUser(subject: "s", email: "t@example.com", name: "T", passwordHash: "h", roles: [], createdAt: 1))
                try tx.totp.enrol(userID: user.id, sealedSecret: [1], at: 1)
                return user.id
            }
            let outcomes = try race(backend) { storage in try storage.write { try $0.totp.accept(step: 5, userID: id) } }
            XCTAssertEqual(outcomes.filter { (try? $0.get()) == true }.count, 1, "\(backend.name): \(outcomes)")
        }
    }

    func testConcurrentUsesOfOneRecoveryCodeSpendItOnce() throws {
        try eachBackend { backend in
            let id = try backend.storage.write { tx -> Int64 in
                let user = try tx.users.insert(NewUser(subject: "s", email: "t@example.com", name: "T", passwordHash: "h", roles: [], createdAt: 1))
                try tx.totp.enrol(userID: user.id, sealedSecret: [1], at: 1)
                try tx.totp.replaceRecoveryCodes(userID: user.id, hashes: [[7, 7], [8, 8]], at: 1)
                return user.id
            }
            let outcomes = try race(backend) { storage in try storage.write { try $0.totp.useRecoveryCode(userID: id, hash: [7, 7]) } }
            XCTAssertEqual(outcomes.filter { (try? $0.get()) == true }.count, 1, "\(backend.name): \(outcomes)")
            XCTAssertEqual(try backend.storage.read.totp.recoveryCodesLeft(userID: id), 1, backend.name)
        }
    }

    /// Twelve racing read-check-write units, each reading a counter and
    /// writing it plus one after serializeAdministrativeChanges: no update
    /// is lost (at READ COMMITTED, without the lock, two would read the
    /// same value).
    func testSerializedAdministrativeChangesLoseNoUpdate() throws {
        try eachBackend { backend in
            let user = try backend.storage.write {
                try $0.users.insert(NewUser(subject: "sub-counter", email: "counter@example.com", name: "0", passwordHash: "hash", roles: ["user"],
                                            createdAt: 100))
            }
            let outcomes = try race(backend) { storage in
                try storage.write { tx in
                    try tx.serializeAdministrativeChanges()
                    let current = Int(try XCTUnwrap(tx.users.find(id: user.id)).name) ?? 0
                    Thread.sleep(forTimeInterval: 0.002)
                    _ = try tx.users.update(name: String(current + 1), roles: nil, userID: user.id)
                }
            }
            XCTAssertTrue(outcomes.allSatisfy { if case .success = $0 { true } else { false } }, "\(backend.name): \(outcomes)")
            XCTAssertEqual(try backend.storage.read.users.find(id: user.id)?.name, String(outcomes.count), backend.name)
        }
    }
}

/// A value shared by racing threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ change: (inout Value) -> Void) { lock.lock(); change(&stored); lock.unlock() }
}
