import IssuerStorage
import XCTest

/// Client administration (update, delete, scope removal) and the API
/// registry: the same answers from every backend.
final class ClientAndAPIStoreConformanceTests: ConformanceTestCase {
    static func client(_ id: String, scopes: [String] = ["openid", "orders:read"]) -> Client {
        Client(clientID: id, secretHash: nil, scopes: scopes, nativeSSOGroup: nil, redirectURIs: ["app:/cb"], postLogoutRedirectURIs: [])
    }

    func testEverySettingOfAClientIsStoredAndUpdatedWhole() throws {
        try eachBackend { backend in
            try backend.storage.write { try $0.clients.insert(Self.client("app"), at: 1) }
            let stored = try XCTUnwrap(backend.storage.read.clients.find(clientID: "app"))
            XCTAssertEqual(stored.grantTypes, ["authorization_code", "refresh_token"], backend.name)
            XCTAssertFalse(stored.requireDPoP || stored.requirePAR, backend.name)
            XCTAssertNil(stored.accessTokenLifetime, backend.name)
            XCTAssertNil(stored.displayName, "\(backend.name): no display name unless given")
            var changed = stored
            changed.secretHash = "hash"
            changed.redirectURIs = ["app:/two", "app:/one"]
            changed.postLogoutRedirectURIs = ["app:/bye"]
            changed.grantTypes = ["client_credentials"]
            changed.requireDPoP = true
            changed.requirePAR = true
            changed.accessTokenLifetime = 120
            changed.refreshTokenLifetime = 3600
            changed.iosAppID = "ABCDE12345.com.example.app"
            changed.androidPackage = "com.example.app"
            changed.androidCertificateFingerprints = ["AA:BB", "CC:DD"]
            changed.displayName = "Acme Shöp <&> 🛒"
            changed.backchannelLogoutURI = "https://backend.example/logout?tenant=a&b=1"
            XCTAssertTrue(try backend.storage.write { try $0.clients.update(changed) }, backend.name)
            changed.redirectURIs.sort()
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "app"), changed, backend.name)
            XCTAssertEqual(try backend.storage.read.clients.list().first?.displayName, "Acme Shöp <&> 🛒", "\(backend.name): listed too")
            changed.displayName = nil
            XCTAssertTrue(try backend.storage.write { try $0.clients.update(changed) }, backend.name)
            XCTAssertNil(try backend.storage.read.clients.find(clientID: "app")?.displayName, "\(backend.name): removed again")
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "app")?.backchannelLogoutURI, "https://backend.example/logout?tenant=a&b=1",
                           backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.clients.update(Self.client("nobody")) }, "\(backend.name): no such client")
            XCTAssertNil(try backend.storage.read.clients.find(clientID: "nobody"), backend.name)
        }
    }

    /// Review R4: a registration's id is stored as given, kept by every
    /// update (whatever the value passed), and only a new registration of
    /// the same client id has another.
    func testARegistrationKeepsItsIDThroughUpdatesAndANewOneHasItsOwn() throws {
        try eachBackend { backend in
            var first = Self.client("reborn")
            first.registrationID = "registration-one"
            try backend.storage.write { try $0.clients.insert(first, at: 1) }
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "reborn")?.registrationID, "registration-one", backend.name)
            var changed = first
            changed.registrationID = "not-stored-by-an-update"
            changed.scopes = ["openid"]
            XCTAssertTrue(try backend.storage.write { try $0.clients.update(changed) }, backend.name)
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "reborn")?.registrationID, "registration-one", backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.clients.delete(clientID: "reborn") }, backend.name)
            var second = Self.client("reborn")
            second.registrationID = "registration-two"
            try backend.storage.write { try $0.clients.insert(second, at: 2) }
            XCTAssertEqual(try backend.storage.read.clients.list().map(\.registrationID), ["registration-two"], backend.name)
        }
    }

    func testDeletingAClientErasesWhatWasIssuedToItOnly() throws {
        try eachBackend { backend in
            try backend.storage.write { tx in
                try tx.clients.insert(Self.client("gone"), at: 1)
                try tx.clients.insert(Self.client("kept"), at: 1)
                try tx.refreshTokens.insert(tokenHash: [1], TokenStoreConformanceTests.refresh(client: "gone"), createdAt: 1)
                try tx.refreshTokens.insert(tokenHash: [2], TokenStoreConformanceTests.refresh(client: "kept"), createdAt: 1)
            }
            XCTAssertTrue(try backend.storage.write { try $0.clients.delete(clientID: "gone") }, backend.name)
            XCTAssertNil(try backend.storage.read.clients.find(clientID: "gone"), backend.name)
            XCTAssertNil(try backend.storage.read.refreshTokens.details(tokenHash: [1]), "\(backend.name): its refresh tokens go")
            XCTAssertNotNil(try backend.storage.read.refreshTokens.details(tokenHash: [2]), "\(backend.name): another client's stay")
            XCTAssertFalse(try backend.storage.write { try $0.clients.delete(clientID: "gone") }, "\(backend.name): deleted once")
            XCTAssertEqual(try backend.storage.read.clients.list().map(\.clientID), ["kept"], backend.name)
        }
    }

    func testRemovingAScopeTakesItFromTheClientsThatHoldIt() throws {
        try eachBackend { backend in
            try backend.storage.write { tx in
                try tx.clients.insert(Self.client("a"), at: 1)
                try tx.clients.insert(Self.client("b", scopes: ["openid"]), at: 1)
            }
            XCTAssertEqual(try backend.storage.write { try $0.clients.removeScope("orders:read") }, ["a"], backend.name)
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "a")?.scopes, ["openid"], backend.name)
            XCTAssertEqual(try backend.storage.read.clients.find(clientID: "a")?.redirectURIs, ["app:/cb"], "\(backend.name): nothing else")
        }
    }

    func testAPIsAreListedByAudienceWithTheirScopesAndEachScopeHasOneOwner() throws {
        try eachBackend { backend in
            try backend.storage.write { tx in
                try tx.apis.insert(RegisteredAPI(audience: "https://b.example", name: "B", scopes: ["b:write", "b:read"]), at: 1)
                try tx.apis.insert(RegisteredAPI(audience: "https://a.example", name: "A", scopes: ["a:read"]), at: 1)
            }
            XCTAssertEqual(try backend.storage.read.apis.list(), [
                RegisteredAPI(audience: "https://a.example", name: "A", scopes: ["a:read"]),
                RegisteredAPI(audience: "https://b.example", name: "B", scopes: ["b:read", "b:write"]),
            ], backend.name)
            XCTAssertThrowsError(try backend.storage.write { tx in
                try tx.apis.insert(RegisteredAPI(audience: "https://c.example", name: "C", scopes: ["a:read"]), at: 1)
            }, "\(backend.name): a scope has one owner")
            XCTAssertThrowsError(try backend.storage.write { tx in
                try tx.apis.insert(RegisteredAPI(audience: "https://a.example", name: "again", scopes: ["x:y"]), at: 1)
            }, "\(backend.name): an audience is registered once")
            XCTAssertEqual(try backend.storage.read.apis.list().count, 2, "\(backend.name): the refusals rolled back")
            XCTAssertTrue(try backend.storage.write { try $0.apis.remove(audience: "https://b.example") }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.apis.remove(audience: "https://b.example") }, backend.name)
            XCTAssertEqual(try backend.storage.read.apis.list().map(\.audience), ["https://a.example"], backend.name)
            try backend.storage.write { tx in
                try tx.apis.insert(RegisteredAPI(audience: "https://b.example", name: "B", scopes: ["b:read"]), at: 2)
            }
            XCTAssertEqual(try backend.storage.read.apis.list().last?.scopes, ["b:read"], "\(backend.name): its scopes were freed")
        }
    }

    func testAnAPIChangeMovesTheChangeMarkerOfAnotherConnection() throws {
        try eachBackend { backend in
            let other = try backend.another()
            let before = try other.changeMarker()
            try backend.storage.write { tx in
                try tx.apis.insert(RegisteredAPI(audience: "https://a.example", name: "A", scopes: ["a:read"]), at: 1)
            }
            // PostgreSQL delivers the notification asynchronously.
            let deadline = Date().addingTimeInterval(5)
            while try other.changeMarker() == before && Date() < deadline { usleep(20_000) }
            XCTAssertNotEqual(try other.changeMarker(), before, backend.name)
            XCTAssertEqual(try other.read.apis.list().map(\.audience), ["https://a.example"], backend.name)
        }
    }
}
