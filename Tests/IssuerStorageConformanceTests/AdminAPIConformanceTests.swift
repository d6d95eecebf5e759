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

    func insertUser(_ email: String, _ storage: any IssuerStorage) throws -> User {
        try storage.write {
            try $0.users.insert(NewUser(subject: "sub-" + UUID().uuidString, email: email, name: "0", passwordHash: "hash", roles: ["user"],
                                        createdAt: 100))
        }
    }
}
