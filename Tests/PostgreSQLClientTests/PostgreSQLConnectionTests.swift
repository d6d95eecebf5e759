import Foundation
import XCTest
import PostgreSQLClient
import SSOCore

/// The libpq wrapper against a real PostgreSQL server: the private cluster
/// Scripts/test starts and names in GATEHOUSE_TEST_POSTGRES_URL.
final class PostgreSQLConnectionTests: XCTestCase {
    var connection: PostgreSQLConnection!
    var table = ""

    static var url: String? { ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"] }

    override func setUpWithError() throws {
        guard let url = Self.url else { throw XCTSkip("GATEHOUSE_TEST_POSTGRES_URL is not set (Scripts/test sets it)") }
        connection = try PostgreSQLConnection(url: url)
        table = "wire_\(UUID().uuidString.prefix(8).lowercased())"
        try connection.executeScript("CREATE TABLE \(table) (id BIGINT PRIMARY KEY, name TEXT, data BYTEA, flag BIGINT)")
    }

    override func tearDownWithError() throws {
        if connection != nil { try? connection.executeScript("DROP TABLE IF EXISTS \(table)") }
    }

    func testValuesRoundTripByteForByte() throws {
        let bytes: [UInt8] = [0, 1, 0x27, 0x5C, 0xFF, 0, 0x22]
        let values: [(Int64, String?, [UInt8]?)] = [
            (1, "plain", bytes), (-1, "é 😀 ' \\ \"", []), (Int64.min, "", nil), (Int64.max, nil, [0]),
        ]
        for (id, name, data) in values {
            XCTAssertEqual(try connection.execute("INSERT INTO \(table) (id, name, data) VALUES ($1, $2, $3)",
                                                  [.integer(id), PostgreSQLValue(name), PostgreSQLValue(data)]), 1)
        }
        let rows = try connection.query("SELECT id, name, data FROM \(table) ORDER BY id")
        XCTAssertEqual(rows.map { $0.int(0) }, [Int64.min, -1, 1, Int64.max])
        XCTAssertEqual(rows.map { $0.optionalString(1) }, ["", "é 😀 ' \\ \"", "plain", nil])
        XCTAssertEqual(rows.map { $0.optionalBytes(2) }, [nil, [], bytes, [0]])
        XCTAssertEqual(try connection.queryOne("SELECT count(*), 7::int4, 3::int2, true FROM \(table)")?.values,
                       [.integer(4), .integer(7), .integer(3), .integer(1)])
    }

    /// Parameters are values, never SQL: quotes and statement separators
    /// arrive as the bytes they are.
    func testParametersAreNeverSQL() throws {
        let hostile = "x'); DROP TABLE \(table); --"
        try connection.execute("INSERT INTO \(table) (id, name) VALUES ($1, $2)", [.integer(1), .text(hostile)])
        XCTAssertEqual(try connection.queryOne("SELECT name FROM \(table) WHERE name = $1", [.text(hostile)])?.string(0), hostile)
    }

    func testTransactionsCommitOrRollBack() throws {
        _ = try connection.transaction { try connection.execute("INSERT INTO \(table) (id) VALUES (1)") }
        struct Refused: Error {}
        XCTAssertThrowsError(try connection.transaction {
            try connection.execute("INSERT INTO \(table) (id) VALUES (2)")
            throw Refused()
        })
        XCTAssertEqual(try connection.query("SELECT id FROM \(table)").map { $0.int(0) }, [1])
    }

    func testServerErrorsCarryTheirSQLState() throws {
        try connection.execute("INSERT INTO \(table) (id) VALUES (1)")
        XCTAssertThrowsError(try connection.execute("INSERT INTO \(table) (id) VALUES (1)")) { error in
            let failure = error as? PostgreSQLError
            XCTAssertEqual(failure?.sqlState, "23505")
            XCTAssertTrue(failure?.isUniqueViolation ?? false)
            XCTAssertFalse(failure?.isTemporary ?? true)
            XCTAssertEqual(failure?.response.status, 500)
        }
        XCTAssertThrowsError(try connection.execute("SELECT * FROM no_such_table_here")) {
            XCTAssertEqual(($0 as? PostgreSQLError)?.sqlState, "42P01")
        }
        // The connection is still good after errors (and after an aborted transaction).
        XCTAssertThrowsError(try connection.transaction { try connection.execute("INSERT INTO \(table) (id) VALUES (1)") })
        XCTAssertEqual(try connection.queryOne("SELECT 1")?.int(0), 1)
    }

    /// A statement that outlives the reply deadline is abandoned: the call
    /// throws `unavailable` on time, and the next call reconnects.
    func testASlowReplyIsAbandonedOnTimeAndTheConnectionRecovers() throws {
        let impatient = try PostgreSQLConnection(url: try XCTUnwrap(Self.url), replyTimeoutMilliseconds: 1500)
        let started = Date()
        XCTAssertThrowsError(try impatient.query("SELECT pg_sleep(5)")) { error in
            XCTAssertTrue((error as? PostgreSQLError)?.isTemporary ?? false, "\(error)")
            XCTAssertEqual((error as? PostgreSQLError)?.response.status, 503)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3.5)
        XCTAssertEqual(try impatient.queryOne("SELECT 2")?.int(0), 2, "reconnected")
    }

    /// Nobody listening: refused at once, then refused without even trying
    /// until the backoff has passed (no connect storm, no waiting).
    func testAnUnreachableServerFailsFastWithBackoff() throws {
        let port = try unusedPort()
        let started = Date()
        XCTAssertThrowsError(try PostgreSQLConnection(url: "postgresql://gatehouse@127.0.0.1:\(port)/gatehouse")) { error in
            XCTAssertTrue((error as? PostgreSQLError)?.connectionLost ?? false)
            XCTAssertEqual((error as? PostgreSQLError)?.response.status, 503)
            XCTAssertEqual((error as? PostgreSQLError)?.response.header("Retry-After"), "2")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    /// The server ends this connection (as a restart or failover does): the
    /// call in flight fails as unavailable, the next one reconnects.
    func testATerminatedConnectionIsReplacedOnTheNextCall() throws {
        let pid = try XCTUnwrap(connection.queryOne("SELECT pg_backend_pid()")).int(0)
        let admin = try PostgreSQLConnection(url: try XCTUnwrap(Self.url))
        _ = try admin.query("SELECT pg_terminate_backend($1::int4)", [.integer(pid)])
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertThrowsError(try connection.query("SELECT 1")) {
            XCTAssertTrue(($0 as? PostgreSQLError)?.isTemporary ?? false, "\($0)")
        }
        XCTAssertEqual(try connection.queryOne("SELECT 3")?.int(0), 3)
        XCTAssertNotEqual(try connection.queryOne("SELECT pg_backend_pid()")?.int(0), pid)
    }

    /// `changesSeen` grows with each NOTIFY on a listened channel once the
    /// notifier commits (not before, and not for other channels), and with
    /// a reconnect, which may have missed some.
    func testChangesSeenCountsCommittedNotificationsAndReconnects() throws {
        try connection.listen("wire_changes")
        let notifier = try PostgreSQLConnection(url: try XCTUnwrap(Self.url))
        let start = try connection.changesSeen()
        func seen(after change: () throws -> Void) throws -> Int64 {
            try change()
            let deadline = Date().addingTimeInterval(2)
            var now = try connection.changesSeen()
            while now == start, Date() < deadline {
                usleep(1000)
                now = try connection.changesSeen()
            }
            return now
        }
        try notifier.transaction {
            try notifier.executeScript("NOTIFY wire_changes")
            Thread.sleep(forTimeInterval: 0.2)
            XCTAssertEqual(try connection.changesSeen(), start, "nothing before the commit")
        }
        XCTAssertEqual(try seen(after: {}), start + 1)
        try notifier.executeScript("NOTIFY other_channel")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(try connection.changesSeen(), start + 1, "another channel")
        let pid = try XCTUnwrap(connection.queryOne("SELECT pg_backend_pid()")).int(0)
        _ = try notifier.query("SELECT pg_terminate_backend($1::int4)", [.integer(pid)])
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertThrowsError(try connection.query("SELECT 1"), "the statement in flight learns of it")
        let afterReconnect = try connection.changesSeen()
        XCTAssertGreaterThan(afterReconnect, start + 1, "a new connection counts as a change")
        try notifier.executeScript("NOTIFY wire_changes")
        let deadline = Date().addingTimeInterval(2)
        while try connection.changesSeen() == afterReconnect, Date() < deadline { usleep(1000) }
        XCTAssertEqual(try connection.changesSeen(), afterReconnect + 1, "still listening after the reconnect")
    }

    /// A transaction's BEGIN on a connection the server already closed
    /// reconnects and begins again: nothing had been sent.
    func testATransactionOnADeadConnectionBeginsAgainOnANewOne() throws {
        let pid = try XCTUnwrap(connection.queryOne("SELECT pg_backend_pid()")).int(0)
        let admin = try PostgreSQLConnection(url: try XCTUnwrap(Self.url))
        _ = try admin.query("SELECT pg_terminate_backend($1::int4)", [.integer(pid)])
        Thread.sleep(forTimeInterval: 0.2)
        _ = try connection.transaction { try connection.execute("INSERT INTO \(table) (id) VALUES (9)") }
        XCTAssertEqual(try connection.queryOne("SELECT id FROM \(table)")?.int(0), 9)
    }

    private func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
