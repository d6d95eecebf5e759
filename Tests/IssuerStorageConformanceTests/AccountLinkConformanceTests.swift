import Foundation
import IssuerStorage
import XCTest

/// `email_verified` on users and the mailed links (AccountLinkStore): the
/// same answers from every backend, single use under concurrency, expiry,
/// voiding, sweeping.
final class AccountLinkConformanceTests: ConformanceTestCase {
    func newUser(_ tx: any IssuerWrites, _ email: String, verified: Bool = true) throws -> User {
        try tx.users.insert(NewUser(subject: UUID().uuidString, email: email, name: "U", passwordHash: "h", roles: [], createdAt: 1,
                                    emailVerified: verified))
    }

    func link(_ hash: [UInt8], _ purpose: AccountLinkPurpose, user: Int64, at now: Int64 = 100, lives: Int64 = 1800,
              pending: String? = nil) -> NewAccountLink {
        NewAccountLink(tokenHash: hash, purpose: purpose, userID: user, createdAt: now, expiresAt: now + lives, pendingRequest: pending)
    }

    /// An email change's link carries its address; used, it moves the
    /// account, which the new address (any ASCII case) then finds and the
    /// old one no longer does, verified.
    func testAnEmailChangeLinkCarriesItsAddressAndChangeEmailMovesTheAccount() throws {
        try eachBackend { backend in
            let user = try backend.storage.write { try newUser($0, "Old@example.com", verified: false) }
            let hash: [UInt8] = [9, 0, 9]
            try backend.storage.write {
                try $0.accountLinks.issue(NewAccountLink(tokenHash: hash, purpose: .emailChange, userID: user.id, createdAt: 100, expiresAt: 500,
                                                         targetEmail: "Nëw@exämple.com"), voidingEarlier: true)
            }
            let link = try backend.storage.write { try $0.accountLinks.redeem(tokenHash: hash, purpose: .emailChange, now: 200) }
            XCTAssertEqual(link?.targetEmail, "Nëw@exämple.com", "\(backend.name): bytes kept")
            let moved = try backend.storage.write { try $0.users.changeEmail("New@Example.com", userID: user.id) }
            XCTAssertEqual(moved?.email, "New@Example.com", backend.name)
            XCTAssertEqual(moved?.emailVerified, true, "\(backend.name): only a used link moves an account")
            XCTAssertEqual(try backend.storage.read.users.find(email: "new@example.COM")?.id, user.id, backend.name)
            XCTAssertNil(try backend.storage.read.users.find(email: "old@example.com"), backend.name)
            XCTAssertNil(try backend.storage.write { try $0.users.changeEmail("x@example.com", userID: user.id + 1000) }, backend.name)
            let other = try backend.storage.write { try newUser($0, "other@example.com") }
            XCTAssertThrowsError(try backend.storage.write { try $0.users.changeEmail("NEW@example.com", userID: other.id) },
                                 "\(backend.name): the unique key refuses a taken address")
            XCTAssertEqual(try backend.storage.read.users.find(email: "other@example.com")?.id, other.id, "\(backend.name): nothing changed")
        }
    }

    func testEmailVerifiedIsStoredAsGivenAndMarkedOnce() throws {
        try eachBackend { backend in
            let (made, signedUp) = try backend.storage.write { tx in
                (try newUser(tx, "admin-made@example.com"), try newUser(tx, "signed-up@example.com", verified: false))
            }
            XCTAssertTrue(made.emailVerified, backend.name)
            XCTAssertFalse(signedUp.emailVerified, backend.name)
            XCTAssertFalse(try XCTUnwrap(backend.storage.read.users.find(id: signedUp.id)).emailVerified, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.users.markEmailVerified(userID: signedUp.id) }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.users.markEmailVerified(userID: signedUp.id) }, "\(backend.name): once")
            XCTAssertFalse(try backend.storage.write { try $0.users.markEmailVerified(userID: made.id) }, "\(backend.name): already")
            XCTAssertTrue(try XCTUnwrap(backend.storage.read.users.find(email: "SIGNED-UP@example.com")).emailVerified, backend.name)
            XCTAssertEqual(try backend.storage.read.users.list().map(\.emailVerified), [true, true], backend.name)
        }
    }

    func testALinkIsRedeemedOnceForItsPurposeUntilItExpires() throws {
        try eachBackend { backend in
            let user = try backend.storage.write { try newUser($0, "a@example.com") }
            let hash: [UInt8] = [0, 1, 2, 0, 255]
            try backend.storage.write { try $0.accountLinks.issue(link(hash, .verification, user: user.id, lives: 86_400, pending: "req-1"),
                                                                   voidingEarlier: false) }
            let links = backend.storage.read.accountLinks
            XCTAssertEqual(try links.live(tokenHash: hash, purpose: .verification, now: 200),
                           AccountLink(purpose: .verification, userID: user.id, expiresAt: 100 + 86_400, pendingRequest: "req-1"))
            XCTAssertNil(try links.live(tokenHash: hash, purpose: .passwordReset, now: 200), "\(backend.name): another purpose")
            XCTAssertNil(try links.live(tokenHash: [0, 1, 2, 0], purpose: .verification, now: 200), "\(backend.name): hashes are bytes")
            XCTAssertNil(try links.live(tokenHash: hash, purpose: .verification, now: 100 + 86_400), "\(backend.name): expired")
            XCTAssertNil(try backend.storage.write { try $0.accountLinks.redeem(tokenHash: hash, purpose: .invitation, now: 200) },
                         "\(backend.name): another purpose redeems nothing")
            XCTAssertNil(try backend.storage.write { try $0.accountLinks.redeem(tokenHash: hash, purpose: .verification, now: 100 + 86_400) },
                         "\(backend.name): expired")
            XCTAssertEqual(try backend.storage.write { try $0.accountLinks.redeem(tokenHash: hash, purpose: .verification, now: 300) }?.userID,
                           user.id, backend.name)
            XCTAssertNil(try backend.storage.write { try $0.accountLinks.redeem(tokenHash: hash, purpose: .verification, now: 301) },
                         "\(backend.name): single use")
            XCTAssertNil(try links.live(tokenHash: hash, purpose: .verification, now: 301), "\(backend.name): used")
        }
    }

    func testANewerResetLinkVoidsOlderOnesOfThatUserAndPurposeOnly() throws {
        try eachBackend { backend in
            let (alice, bob) = try backend.storage.write { (try newUser($0, "alice@example.com"), try newUser($0, "bob@example.com")) }
            try backend.storage.write { tx in
                try tx.accountLinks.issue(link([1], .passwordReset, user: alice.id), voidingEarlier: true)
                try tx.accountLinks.issue(link([2], .verification, user: alice.id), voidingEarlier: false)
                try tx.accountLinks.issue(link([3], .passwordReset, user: bob.id), voidingEarlier: true)
            }
            try backend.storage.write { try $0.accountLinks.issue(link([4], .passwordReset, user: alice.id, at: 110), voidingEarlier: true) }
            let links = backend.storage.read.accountLinks
            XCTAssertNil(try links.live(tokenHash: [1], purpose: .passwordReset, now: 120), "\(backend.name): voided by the newer")
            XCTAssertNotNil(try links.live(tokenHash: [4], purpose: .passwordReset, now: 120), backend.name)
            XCTAssertNotNil(try links.live(tokenHash: [2], purpose: .verification, now: 120), "\(backend.name): another purpose stays")
            XCTAssertNotNil(try links.live(tokenHash: [3], purpose: .passwordReset, now: 120), "\(backend.name): another user's stays")
            XCTAssertNil(try backend.storage.write { try $0.accountLinks.redeem(tokenHash: [1], purpose: .passwordReset, now: 120) },
                         "\(backend.name): a voided link never redeems")
            XCTAssertEqual(try backend.storage.write { try $0.accountLinks.voidAll(userID: alice.id, purpose: .passwordReset, now: 130) }, 1)
            XCTAssertNil(try links.live(tokenHash: [4], purpose: .passwordReset, now: 130), backend.name)
        }
    }

    func testConcurrentRedemptionsOfOneLinkRedeemItOnce() throws {
        try eachBackend { backend in
            let user = try backend.storage.write { try newUser($0, "race@example.com") }
            try backend.storage.write { try $0.accountLinks.issue(link([9, 9], .passwordReset, user: user.id), voidingEarlier: true) }
            let connections = try (0..<12).map { _ in try backend.another() }
            let results = Locked<[Result<AccountLink?, Error>]>([])
            DispatchQueue.concurrentPerform(iterations: connections.count) { index in
                let result = Result { try connections[index].write { try $0.accountLinks.redeem(tokenHash: [9, 9], purpose: .passwordReset, now: 150) } }
                results.update { $0.append(result) }
            }
            let outcomes = results.value
            XCTAssertTrue(outcomes.allSatisfy { if case .success = $0 { true } else { false } }, "\(backend.name): no errors: \(outcomes)")
            XCTAssertEqual(outcomes.compactMap { try? $0.get() }.count, 1, "\(backend.name): one winner: \(outcomes)")
        }
    }

    /// A sign-up never verified goes a week after it was made, once no
    /// link of it lives; a verified account, an invitation (no password)
    /// and a sign-up with a live link stay.
    func testNeverVerifiedSignUpsAreSweptOnceTheirLinksAreDead() throws {
        try eachBackend { backend in
            let week: Int64 = 7 * 86_400, now: Int64 = 10 * 86_400
            let (abandoned, pending, verified, invited) = try backend.storage.write { tx in
                (try newUser(tx, "abandoned@example.com", verified: false), try newUser(tx, "pending@example.com", verified: false),
                 try newUser(tx, "verified@example.com"),
                 try tx.users.insert(NewUser(subject: UUID().uuidString, email: "invited@example.com", name: "I", passwordHash: "", roles: [],
                                             createdAt: 1, emailVerified: false)))
            }
            try backend.storage.write { tx in
                try tx.accountLinks.issue(link([1], .verification, user: abandoned.id, at: 2, lives: 86_400), voidingEarlier: true)
                try tx.accountLinks.issue(link([2], .verification, user: pending.id, at: now - 10, lives: 86_400), voidingEarlier: true)
            }
            let sweep = { (at: Int64) in
                try backend.storage.maintenance.sweep(SweepPolicy(now: at, refreshTokenLifetime: 86_400, refreshGracePeriod: 10), batch: 1)["users"]
            }
            XCTAssertEqual(try sweep(1 + week - 1), 0, "\(backend.name): not before a week")
            XCTAssertEqual(try sweep(now), 1, backend.name)
            let users = backend.storage.read.users
            XCTAssertNil(try users.find(id: abandoned.id), backend.name)
            XCTAssertNil(try backend.storage.read.accountLinks.live(tokenHash: [1], purpose: .verification, now: 3), "\(backend.name): its links went with it")
            for kept in [pending, verified, invited] {
                XCTAssertNotNil(try users.find(id: kept.id), "\(backend.name): \(kept.email) stays")
            }
        }
    }

    func testExpiredLinksAreSweptAndLinksGoWithTheirAccount() throws {
        try eachBackend { backend in
            let user = try backend.storage.write { try newUser($0, "gone@example.com") }
            try backend.storage.write { tx in
                try tx.accountLinks.issue(link([5], .invitation, user: user.id, lives: 50), voidingEarlier: false)
                try tx.accountLinks.issue(link([6], .verification, user: user.id, lives: 500), voidingEarlier: false)
            }
            func sweep(at now: Int64) throws -> Int? {
                try backend.storage.maintenance.sweep(SweepPolicy(now: now, refreshTokenLifetime: 86_400, refreshGracePeriod: 10), batch: 1)["account_links"]
            }
            XCTAssertEqual(try sweep(at: 149), 0, backend.name)
            XCTAssertEqual(try sweep(at: 150), 1, "\(backend.name): the expired one")
            XCTAssertNotNil(try backend.storage.read.accountLinks.live(tokenHash: [6], purpose: .verification, now: 150), backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.users.delete(userID: user.id) }, backend.name)
            XCTAssertNil(try backend.storage.read.accountLinks.live(tokenHash: [6], purpose: .verification, now: 150), "\(backend.name): cascaded")
        }
    }
}
