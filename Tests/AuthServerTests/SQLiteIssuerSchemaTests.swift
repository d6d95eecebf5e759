import Foundation
import IssuerStorageSQLite
import XCTest

/// How the issuer's SQLite file is opened, beyond its tables.
final class SQLiteIssuerSchemaTests: XCTestCase {
    /// The WAL is checkpointed every 4,000 pages, not SQLite's default 1,000,
    /// and the file is cut back to 64 MB after a checkpoint resets it.
    func testCheckpointsEvery4000PagesAndCapsTheWALFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-schema-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try SQLiteIssuerSchema.open(path: directory + "/gatehouse.sqlite")
        XCTAssertEqual(try database.queryOne("PRAGMA wal_autocheckpoint")?.int(0), 4000)
        XCTAssertEqual(try database.queryOne("PRAGMA journal_size_limit")?.int(0), 64 * 1024 * 1024)
        XCTAssertEqual(try database.queryOne("PRAGMA journal_mode")?.string(0), "wal")
    }
}
