import Foundation
import IssuerStorage
import XCTest

/// The DPoP proof jti store: a proof is accepted once, by any connection
/// (a responder process, a node), and its row can be taken over only once
/// it has expired.
final class DPoPProofStoreConformanceTests: ConformanceTestCase {
    func testAJtiIsRememberedUntilItExpiresAndThenMayBeSeenAgain() throws {
        try eachBackend { backend in
            let remember = { (now: Int64) in try backend.storage.write { try $0.dpopProofs.remember(jtiHash: [9, 0, 9], expiresAt: now + 180, now: now) } }
            XCTAssertTrue(try remember(100), backend.name)
            XCTAssertFalse(try remember(101), "\(backend.name): a replay within the window")
            XCTAssertFalse(try remember(279), "\(backend.name): still remembered")
            XCTAssertTrue(try remember(280), "\(backend.name): expired, so no proof with it is accepted anyway")
            XCTAssertTrue(try backend.storage.write { try $0.dpopProofs.remember(jtiHash: [9, 0], expiresAt: 500, now: 101) },
                          "\(backend.name): another hash")
        }
    }

    func testOfConcurrentCallersExactlyOneIsFirst() throws {
        try eachBackend { backend in
            let connections = try (0..<12).map { _ in try backend.another() }
            let outcomes = Locked<[Bool]>([])
            DispatchQueue.concurrentPerform(iterations: connections.count) { index in
                let first = (try? connections[index].write { try $0.dpopProofs.remember(jtiHash: [1, 2, 3], expiresAt: 1000, now: 10) }) ?? false
                outcomes.update { $0.append(first) }
            }
            XCTAssertEqual(outcomes.value.filter { $0 }.count, 1, "\(backend.name): \(outcomes.value)")
        }
    }
}
