import Foundation
import XCTest
@testable import SQLiteClient
@testable import SSOCore

final class SQLiteTests: XCTestCase {
    var path = ""

    override func setUp() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-sqlite-\(UUID().uuidString).db").path
    }

    override func tearDown() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    let migrations = [
        Migration(version: 1, sql: "CREATE TABLE codes (hash TEXT PRIMARY KEY, used INTEGER NOT NULL DEFAULT 0)"),
        Migration(version: 2, sql: "ALTER TABLE codes ADD COLUMN note TEXT"),
    ]

    func testMigrationsRunOnceAndInOrder() throws {
        let database = try SQLiteDatabase(path: path)
        XCTAssertEqual(try Migrator.migrate(database, component: "test", migrations: migrations), 2)
        XCTAssertEqual(try Migrator.migrate(database, component: "test", migrations: migrations), 2)
        XCTAssertEqual(try database.queryOne("PRAGMA journal_mode")?.string(0), "wal")
        try database.execute("INSERT INTO codes (hash, note) VALUES (?, ?)", ["h1", "n"])
        XCTAssertEqual(try database.queryOne("SELECT note FROM codes")?.string(0), "n")
    }

    func testSingleUseIsOneAtomicStatement() throws {
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "test", migrations: migrations)
        try database.execute("INSERT INTO codes (hash) VALUES (?)", ["h1"])
        let consume = "UPDATE codes SET used = 1 WHERE hash = ? AND used = 0 RETURNING hash"
        XCTAssertEqual(try database.query(consume, ["h1"]).count, 1)
        XCTAssertEqual(try database.query(consume, ["h1"]).count, 0)
    }

    func testTransactionRollsBackOnError() throws {
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "test", migrations: migrations)
        struct Abort: Error {}
        XCTAssertThrowsError(try database.transaction {
            try database.execute("INSERT INTO codes (hash) VALUES ('x')")
            throw Abort()
        })
        XCTAssertEqual(try database.queryOne("SELECT count(*) FROM codes")?.int(0), 0)
    }

    func testBindingsAreValuesNeverSQL() throws {
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "test", migrations: migrations)
        let hostile = "x'); DROP TABLE codes; --"
        try database.execute("INSERT INTO codes (hash) VALUES (?)", [.text(hostile)])
        XCTAssertEqual(try database.queryOne("SELECT hash FROM codes")?.string(0), hostile)
        try database.execute("INSERT INTO codes (hash, note) VALUES (?, ?)", [.text("b"), .blob([0, 1, 255])])
        XCTAssertEqual(try database.queryOne("SELECT note FROM codes WHERE hash = 'b'")?.bytes(0), [0, 1, 255])
        XCTAssertThrowsError(try database.execute("INSERT INTO codes (hash) VALUES (?)", []), "parameter count is checked")
    }

    func testConstraintErrorIsRecognised() throws {
        let database = try SQLiteDatabase(path: path)
        try Migrator.migrate(database, component: "test", migrations: migrations)
        try database.execute("INSERT INTO codes (hash) VALUES ('dup')")
        XCTAssertThrowsError(try database.execute("INSERT INTO codes (hash) VALUES ('dup')")) {
            XCTAssertTrue(($0 as? SQLiteError)?.isConstraint ?? false)
        }
    }

    /// A second connection holding the write lock past the busy timeout
    /// yields a busy error (which responders turn into 503), not a hang.
    func testWriteLockedDatabaseIsBusyNotHung() throws {
        let holder = try SQLiteDatabase(path: path)
        try Migrator.migrate(holder, component: "test", migrations: migrations)
        let waiter = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 100)
        try holder.execute("BEGIN IMMEDIATE")
        defer { _ = try? holder.execute("ROLLBACK") }
        let started = Date()
        XCTAssertThrowsError(try waiter.execute("INSERT INTO codes (hash) VALUES ('w')")) {
            XCTAssertTrue(($0 as? SQLiteError)?.isBusy ?? false)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    /// A full disk (SQLITE_FULL), a read-only file (SQLITE_READONLY) and a
    /// refused write (SQLITE_IOERR_WRITE, extended code 778) are retry-later
    /// 503s; an unexpected error stays a 500 with nothing on the wire.
    func testStorageFaultsMapTo503WithRetryAfterOthersTo500() {
        for code: Int32 in [13, 8, 778, 5, 6] {
            let response = SQLiteError(code: code, message: "x").response
            XCTAssertEqual(response.status, 503, "code \(code)")
            XCTAssertNotNil(response.headers.first { $0.name == "Retry-After" }, "code \(code)")
        }
        for code: Int32 in [1, 11, 19, 21] {
            let response = SQLiteError(code: code, message: "secret detail").response
            XCTAssertEqual(response.status, 500, "code \(code)")
            XCTAssertFalse(String(decoding: response.body, as: UTF8.self).contains("secret detail"))
        }
    }

    func testDataVersionChangesOnOtherConnectionsCommit() throws {
        let a = try SQLiteDatabase(path: path)
        try Migrator.migrate(a, component: "test", migrations: migrations)
        let b = try SQLiteDatabase(path: path)
        let before = try a.dataVersion()
        XCTAssertEqual(try a.dataVersion(), before)
        try b.execute("INSERT INTO codes (hash) VALUES ('v')")
        XCTAssertNotEqual(try a.dataVersion(), before)
    }
}
