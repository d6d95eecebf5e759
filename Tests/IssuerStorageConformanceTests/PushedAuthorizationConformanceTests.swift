import Foundation
import IssuerStorage
import XCTest

/// Pushed authorization requests (RFC 9126): stored by hash, bound to the
/// client that pushed them, claimed once.
final class PushedAuthorizationConformanceTests: ConformanceTestCase {
    static let parameters = "response_type=code&client_id=app&redirect_uri=myapp%3A%2Fcb&scope=openid&state=s"
    static let hash = [UInt8](repeating: 0xA5, count: 32)

    func push(_ storage: any IssuerStorage, hash: [UInt8] = hash, client: String = "app", expiresAt: Int64 = 190) throws {
        try storage.write { try $0.pushedAuthorizations.insert(requestURIHash: hash, clientID: client, parameters: Self.parameters,
                                                                createdAt: 100, expiresAt: expiresAt) }
    }

    func claim(_ storage: any IssuerStorage, hash: [UInt8] = hash, client: String = "app", now: Int64 = 120) throws -> PushedAuthorizationClaim {
        try storage.write { try $0.pushedAuthorizations.claim(requestURIHash: hash, clientID: client, now: now) }
    }

    func testAPushedRequestIsClaimedOnceByItsClientAndUntilItExpires() throws {
        try eachBackend { backend in
            try push(backend.storage)
            XCTAssertEqual(try backend.storage.read.pushedAuthorizations.find(requestURIHash: Self.hash),
                           PushedAuthorization(clientID: "app", parameters: Self.parameters, createdAt: 100, expiresAt: 190, usedAt: nil),
                           backend.name)

            // Refusals change nothing, and say why.
            XCTAssertEqual(try claim(backend.storage, client: "other"), .refused(.otherClient), backend.name)
            XCTAssertEqual(try claim(backend.storage, client: "APP"), .refused(.otherClient), "\(backend.name): client ids are bytes")
            XCTAssertEqual(try claim(backend.storage, client: "app\u{0}"), .refused(.otherClient), "\(backend.name): NUL names no client")
            XCTAssertEqual(try claim(backend.storage, now: 190), .refused(.expired), "\(backend.name): expires_at is exclusive")
            XCTAssertEqual(try claim(backend.storage, hash: [UInt8](repeating: 1, count: 32)), .refused(.unknown), backend.name)
            XCTAssertNil(try backend.storage.read.pushedAuthorizations.find(requestURIHash: Self.hash)?.usedAt, backend.name)

            XCTAssertEqual(try claim(backend.storage), .claimed(parameters: Self.parameters), backend.name)
            XCTAssertEqual(try backend.storage.read.pushedAuthorizations.find(requestURIHash: Self.hash)?.usedAt, 120, backend.name)
            XCTAssertEqual(try claim(backend.storage), .refused(.used), "\(backend.name): single use")
            XCTAssertEqual(try claim(backend.storage, now: 500), .refused(.used), "\(backend.name): used wins over expired")
            XCTAssertEqual(try claim(backend.storage, client: "other"), .refused(.otherClient),
                           "\(backend.name): another client learns nothing of its state")
        }
    }

    func testEachRequestIsItsOwnRowAndAClaimRolledBackLeavesItUnused() throws {
        try eachBackend { backend in
            let second = [UInt8](repeating: 0x5A, count: 32)
            try push(backend.storage)
            try push(backend.storage, hash: second, client: "other")
            XCTAssertEqual(try claim(backend.storage, hash: second, client: "other"), .claimed(parameters: Self.parameters), backend.name)
            XCTAssertNil(try backend.storage.read.pushedAuthorizations.find(requestURIHash: Self.hash)?.usedAt,
                         "\(backend.name): the other request is untouched")

            struct Abort: Error {}
            XCTAssertThrowsError(try backend.storage.write { tx in
                XCTAssertEqual(try tx.pushedAuthorizations.claim(requestURIHash: Self.hash, clientID: "app", now: 120),
                               .claimed(parameters: Self.parameters))
                throw Abort()
            })
            XCTAssertEqual(try claim(backend.storage), .claimed(parameters: Self.parameters), "\(backend.name): rolled back, so still unused")
        }
    }

    func testTheSameRequestURIHashCannotBeStoredTwice() throws {
        try eachBackend { backend in
            try push(backend.storage)
            XCTAssertThrowsError(try push(backend.storage, client: "other"), "\(backend.name): the hash is the primary key")
            XCTAssertEqual(try backend.storage.read.pushedAuthorizations.find(requestURIHash: Self.hash)?.clientID, "app", backend.name)
        }
    }

    static let racers = 20

    /// 20 threads, each on a connection of its own (as responder processes
    /// or nodes would be), claim one request_uri at once: exactly one gets
    /// the parameters, every other one is told it was used.
    func testOfTwentyConcurrentClaimsExactlyOneGetsTheParameters() throws {
        try eachBackend { backend in
            try push(backend.storage)
            let connections = try (0..<Self.racers).map { _ in try backend.another() }
            let outcomes = Locked<[Result<PushedAuthorizationClaim, Error>]>([])
            DispatchQueue.concurrentPerform(iterations: Self.racers) { index in
                let outcome = Result { try self.claim(connections[index]) }
                outcomes.update { $0.append(outcome) }
            }
            let results = outcomes.value
            XCTAssertEqual(results.count, Self.racers, backend.name)
            XCTAssertEqual(results.filter { (try? $0.get()) == .claimed(parameters: Self.parameters) }.count, 1, "\(backend.name): \(results)")
            XCTAssertEqual(results.filter { (try? $0.get()) == .refused(.used) }.count, Self.racers - 1, "\(backend.name): \(results)")
        }
    }
}
