import Foundation
@testable import IssuerStorageSQLite
import SQLiteClient
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

    /// Migration 17: every account made before it was made by an
    /// administrator and said `email_verified: true`; it keeps saying so.
    func testAccountsFromBeforeMigration17KeepTheirAddressVerified() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-schema-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/gatehouse.sqlite"
        let old = try SQLiteDatabase(path: path)
        _ = try Migrator.migrate(old, component: "issuer", migrations: Array(SQLiteIssuerSchema.migrations.prefix(16)))
        try old.execute("INSERT INTO users (subject, email, name, password_hash, roles, created_at) VALUES ('s', 'old@example.com', 'Old', 'h', 'user', 1)")
        let database = try SQLiteIssuerSchema.open(path: path)
        XCTAssertEqual(try database.queryOne("SELECT email_verified FROM users WHERE email = 'old@example.com'")?.int(0), 1)
        XCTAssertEqual(try database.queryOne("SELECT version FROM schema_migrations WHERE component = 'issuer'")?.int(0),
                       Int64(SQLiteIssuerSchema.migrations.last!.version), "every later migration applied too")
    }

    /// The outbox's claim, backlog and per-address count read their indexes
    /// (a partial one of the open messages, in the claim's order; one by
    /// recipient key and time), never the whole table of delivered mail.
    func testTheMailOutboxStatementsReadTheirIndexes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-schema-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try SQLiteIssuerSchema.open(path: directory + "/gatehouse.sqlite")
        func plan(_ sql: String, _ values: [SQLiteValue]) throws -> String {
            try database.query("EXPLAIN QUERY PLAN " + sql, values).map { $0.string(3) }.joined(separator: " | ")
        }
        typealias Store = SQLiteMailOutboxStore
        let claim = try plan(Store.claimSQL, [1, "node", 1, 10])
        XCTAssertTrue(claim.contains("USING INDEX mail_outbox_due (next_attempt_at<?)"), claim)
        XCTAssertFalse(claim.contains("TEMP B-TREE"), "the index's order is the claim's: \(claim)")
        XCTAssertEqual(try plan(Store.backlogSQL, [1]), "SEARCH mail_outbox USING INDEX mail_outbox_due (next_attempt_at<?)")
        XCTAssertEqual(try plan(Store.recentCountSQL, ["a@example.com", 1]),
                       "SEARCH mail_outbox USING COVERING INDEX mail_outbox_recipient (recipient_key=? AND created_at>?)")
    }
}
