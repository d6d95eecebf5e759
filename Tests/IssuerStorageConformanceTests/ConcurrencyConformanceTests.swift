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
}

/// A value shared by racing threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ change: (inout Value) -> Void) { lock.lock(); change(&stored); lock.unlock() }
}
