import Foundation
import IssuerStorage
import XCTest

/// IssuerStorage.changeMarker: it moves for every change to what the
/// responders cache, and stays put for the sign-ins and tokens every
/// request writes (a marker that moved with every refresh made each
/// token request reload the client, the APIs and the signing keys).
final class ChangeMarkerConformanceTests: ConformanceTestCase {
    func testSignInsAndTokensWrittenElsewhereLeaveTheChangeMarker() throws {
        try eachBackend { backend in
            let other = try backend.another()
            try backend.storage.write { try $0.clients.insert(ClientAndAPIStoreConformanceTests.client("app"), at: 1) }
            // The marker once the client is seen (a PostgreSQL notification
            // arrives a moment after the commit).
            var before = try other.changeMarker()
            let settled = Date().addingTimeInterval(2)
            while try !Self.staysFor(0.2, at: before, other), Date() < settled { before = try other.changeMarker() }
            let userID = try TokenStoreConformanceTests.liveSession(backend.storage)
            try backend.storage.write { try $0.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(userID: userID), createdAt: 100) }
            let next = RefreshTokenSuccessor(tokenHash: [2], sealed: nil)
            let claimed = try backend.storage.write { try $0.refreshTokens.claim([1], clientID: "app", successor: next, now: 200) }
            XCTAssertNotNil(claimed, "\(backend.name): the rotation happened")
            XCTAssertEqual(try other.read.refreshTokens.details(tokenHash: [1])?.usedAt, 200, "\(backend.name): and the other connection sees it")
            XCTAssertTrue(try Self.staysFor(0.3, at: before, other), "\(backend.name): no cache is told to reload for a rotation")
        }
    }

    func testEveryChangeToACachedSettingElsewhereMovesTheChangeMarker() throws {
        try eachBackend { backend in
            let other = try backend.another()
            try backend.storage.write { tx in
                try tx.clients.insert(Client(clientID: "app", secretHash: nil, scopes: ["openid"], nativeSSOGroup: "g",
                                             redirectURIs: ["app:/cb"], postLogoutRedirectURIs: []), at: 1)
                try tx.apis.insert(RegisteredAPI(audience: "https://a.example", name: "A", scopes: ["a:read"]), at: 1)
            }
            let changes: [(String, (any IssuerWrites) throws -> Void)] = [
                ("a redirect URI edited", { tx in
                    var client = try XCTUnwrap(tx.clients.find(clientID: "app"))
                    client.redirectURIs = ["app:/other"]
                    XCTAssertTrue(try tx.clients.update(client))
                }),
                ("a Native SSO group's setting", { try $0.nativeSSOGroups.setAllowsDeviceID(true, group: "g") }),
                ("an API removed", { XCTAssertTrue(try $0.apis.remove(audience: "https://a.example")) }),
                ("a client deleted", { XCTAssertTrue(try $0.clients.delete(clientID: "app")) }),
            ]
            for (what, change) in changes {
                let before = try other.changeMarker()
                try backend.storage.write(change)
                XCTAssertTrue(try AccountStoreConformanceTests.markerMoves(from: before, other), "\(backend.name): \(what)")
            }
        }
    }

    /// Whether `storage`'s marker is still `marker` after `seconds`.
    static func staysFor(_ seconds: Double, at marker: Int64, _ storage: any IssuerStorage) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if try storage.changeMarker() != marker { return false }
            usleep(10_000)
        } while Date() < deadline
        return true
    }
}
