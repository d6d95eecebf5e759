import IssuerStorage
import XCTest

/// Links to upstream accounts and the trips there: the same answers from
/// every backend; (issuer, sub) as bytes; a trip taken once, only while
/// live; a link offer taken only by its user in its pending request.
final class FederatedIdentityConformanceTests: ConformanceTestCase {
    func user(_ email: String, _ storage: any IssuerStorage) throws -> User {
        try storage.write {
            try $0.users.insert(NewUser(subject: "sub-" + UUID().uuidString, email: email, name: "Test", passwordHash: "",
                                        roles: ["user"], createdAt: 100))
        }
    }

    func request(_ state: UInt8, pending: UInt8 = 9, expiresAt: Int64 = 700) -> FederationRequest {
        FederationRequest(stateHash: [state, 1], bindingHash: [state, 2], provider: "corp", pendingHash: [pending], createdAt: 100,
                          expiresAt: expiresAt)
    }

    func testLinksAreFoundByIssuerAndSubjectAsBytesAndGoWithTheirUser() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            let link = FederatedIdentity(issuer: "https://id.example", subject: "248289761001", userID: alice.id, provider: "corp",
                                         email: "alice@corp.example", linkedAt: 200)
            try backend.storage.write { tx in
                try tx.federatedIdentities.insert(link)
                try tx.federatedIdentities.insert(FederatedIdentity(issuer: "https://id.example/", subject: "248289761001", userID: bob.id,
                                                                    provider: "corp2", email: "bob@corp.example", linkedAt: 300))
            }
            XCTAssertThrowsError(try backend.storage.write { try $0.federatedIdentities.insert(link) }, "\(backend.name): one link per (iss, sub)")
            let read = backend.storage.read.federatedIdentities
            XCTAssertEqual(try read.find(issuer: "https://id.example", subject: "248289761001"), link, backend.name)
            XCTAssertNil(try read.find(issuer: "https://id.example", subject: "248289761001\u{0}"), "\(backend.name): subjects are bytes")
            XCTAssertNil(try read.find(issuer: "https://ID.example", subject: "248289761001"), "\(backend.name): issuers are bytes")
            try backend.storage.write { try $0.federatedIdentities.touch(issuer: link.issuer, subject: link.subject, at: 400) }
            XCTAssertEqual(try read.list(userID: alice.id).map(\.lastUsedAt), [400], backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.federatedIdentities.remove(userID: bob.id, issuer: link.issuer, subject: link.subject) },
                           "\(backend.name): only its own user unlinks it")
            _ = try backend.storage.write { try $0.users.delete(userID: alice.id) }
            XCTAssertNil(try read.find(issuer: link.issuer, subject: link.subject), "\(backend.name): links go with their user")
            XCTAssertEqual(try read.list(userID: bob.id).map(\.provider), ["corp2"], backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.federatedIdentities.remove(userID: bob.id, issuer: "https://id.example/",
                                                                                         subject: "248289761001") }, backend.name)
        }
    }

    func testATripIsTakenOnceWhileLiveAndItsOfferOnlyByItsUserInItsPendingRequest() throws {
        try eachBackend { backend in
            let alice = try user("alice@example.com", backend.storage)
            let bob = try user("bob@example.com", backend.storage)
            try backend.storage.write { tx in
                try tx.federatedIdentities.insertRequest(request(1))
                try tx.federatedIdentities.insertRequest(request(2, expiresAt: 150))
            }
            func take(_ state: UInt8, at now: Int64 = 120) throws -> FederationRequest? {
                try backend.storage.write { try $0.federatedIdentities.takeRequest(stateHash: [state, 1], now: now) }
            }
            XCTAssertNil(try take(2, at: 150), "\(backend.name): expired")
            XCTAssertEqual(try take(1), request(1), backend.name)
            XCTAssertNil(try take(1), "\(backend.name): single use")
            XCTAssertNil(try take(3), "\(backend.name): unknown")
            let offer = FederatedLinkOffer(userID: alice.id, provider: "corp", issuer: "https://id.example", subject: "s1", email: "alice@example.com")
            try backend.storage.write { try $0.federatedIdentities.offerLink(stateHash: [1, 1], offer) }
            func takeOffer(pending: UInt8, user: Int64, at now: Int64 = 130) throws -> FederatedLinkOffer? {
                try backend.storage.write { try $0.federatedIdentities.takeLinkOffer(pendingHash: [pending], userID: user, now: now) }
            }
            XCTAssertNil(try takeOffer(pending: 9, user: bob.id), "\(backend.name): another user signing in links nothing")
            XCTAssertNil(try takeOffer(pending: 8, user: alice.id), "\(backend.name): another pending request links nothing")
            XCTAssertNil(try takeOffer(pending: 9, user: alice.id, at: 700), "\(backend.name): expired")
            XCTAssertEqual(try takeOffer(pending: 9, user: alice.id), offer, backend.name)
            XCTAssertNil(try takeOffer(pending: 9, user: alice.id), "\(backend.name): once")
        }
    }
}
