import IssuerStorage
import XCTest

/// What the admin API asks of the stores: users a page at a time in the
/// order they were made, and administrative changes that never interleave.
final class AdminAPIConformanceTests: ConformanceTestCase {
    func testUsersComeAPageAtATimeByIDAndAUserAddedMeanwhileShiftsNoPage() throws {
        try eachBackend { backend in
            var ids: [Int64] = []
            for index in 0..<5 { ids.append(try insertUser("u\(index)@example.com", backend.storage).id) }
            let first = try backend.storage.read.users.page(afterID: 0, limit: 2)
            XCTAssertEqual(first.map(\.id), Array(ids[0..<2]), backend.name)
            _ = try insertUser("a-late@example.com", backend.storage)   // sorts first by email, last by id
            let second = try backend.storage.read.users.page(afterID: first.last!.id, limit: 2)
            XCTAssertEqual(second.map(\.id), Array(ids[2..<4]), backend.name)
            let rest = try backend.storage.read.users.page(afterID: second.last!.id, limit: 10)
            XCTAssertEqual(rest.map(\.email), ["u4@example.com", "a-late@example.com"], backend.name)
            XCTAssertEqual(try backend.storage.read.users.page(afterID: rest.last!.id, limit: 10), [], backend.name)
        }
    }

    /// Sessions newest first, ties by sid as bytes, a page at a time after
    /// a (created_at, sid) key, for everyone or one user.
    func testSessionsComeAPageAtATimeNewestFirstAndTiesBySidBytes() throws {
        try eachBackend { backend in
            let alice = try insertUser("alice@example.com", backend.storage)
            let bob = try insertUser("bob@example.com", backend.storage)
            try backend.storage.write { tx in
                for (sid, user, createdAt) in [("b", alice.id, 200), ("a", alice.id, 200), ("Z", bob.id, 200), ("c", alice.id, 300),
                                               ("d", bob.id, 100)] as [(String, Int64, Int64)] {
                    try tx.sessions.insert(SSOSession(sid: sid, userID: user, authTime: createdAt, expiresAt: 10_000, amr: ["pwd"]),
                                           secretHash: Array(sid.utf8), createdAt: createdAt)
                }
            }
            let read = backend.storage.read.sessions
            func walk(_ userID: Int64?) throws -> [String] {
                var seen: [String] = []
                var after: (createdAt: Int64, sid: String)?
                while true {
                    let page = try read.page(userID: userID, after: after, limit: 2, now: 50)
                    seen += page.map(\.sid)
                    guard page.count == 2, let last = page.last else { return seen }
                    after = (last.createdAt, last.sid)
                }
            }
            XCTAssertEqual(try walk(nil), ["c", "Z", "a", "b", "d"], "\(backend.name): newest first, then by sid as bytes (Z before a)")
            XCTAssertEqual(try walk(alice.id), ["c", "a", "b"], backend.name)
            XCTAssertEqual(try read.page(userID: nil, after: nil, limit: 10, now: 50).map(\.sid),
                           try read.list(userID: nil, now: 50).map(\.sid), "\(backend.name): the same order as list")
        }
    }

    func insertUser(_ email: String, _ storage: any IssuerStorage) throws -> User {
        try storage.write {
            try $0.users.insert(NewUser(subject: "sub-" + UUID().uuidString, email: email, name: "0", passwordHash: "hash", roles: ["user"],
                                        createdAt: 100))
        }
    }
}
