import Foundation
import IssuerStorage
import IssuerStoragePostgreSQL
import IssuerStorageSQLite
import PostgreSQLClient
import SQLiteClient
import XCTest

/// One empty issuer database per test, on each backend: a temporary SQLite
/// file, and a fresh database on the private PostgreSQL cluster that
/// Scripts/test starts (GATEHOUSE_TEST_POSTGRES_URL). `another()` opens a
/// second connection to the same data, as another responder process (or
/// another node) would.
protocol TestBackend: AnyObject {
    var name: String { get }
    var storage: any IssuerStorage { get }
    func another() throws -> any IssuerStorage
    func cleanUp()
}

final class SQLiteTestBackend: TestBackend {
    let name = "SQLite"
    let directory: String
    let storage: any IssuerStorage

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-conformance-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        storage = try SQLiteIssuerStorage(databasePath: directory + "/gatehouse.sqlite", keysDirectory: directory + "/keys")
    }

    func another() throws -> any IssuerStorage {
        SQLiteIssuerStorage(database: try SQLiteDatabase(path: directory + "/gatehouse.sqlite", busyTimeoutMilliseconds: 10_000),
                            keysDirectory: directory + "/keys")
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }
}

final class PostgreSQLTestBackend: TestBackend {
    static let masterKey = [UInt8](repeating: 7, count: 32)
    let name = "PostgreSQL"
    let admin: PostgreSQLConnection
    let database: String
    let url: String
    let storage: any IssuerStorage

    init(serverURL: String) throws {
        admin = try PostgreSQLConnection(url: serverURL)
        database = "conformance_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_"))"
        try admin.executeScript("CREATE DATABASE \(database)")
        url = Self.url(serverURL, database: database)
        storage = try PostgreSQLIssuerStorage(url: url, masterKey: Self.masterKey)
    }

    func another() throws -> any IssuerStorage {
        try PostgreSQLIssuerStorage(connection: try PostgreSQLConnection(url: url), masterKey: Self.masterKey)
    }

    func cleanUp() { try? admin.executeScript("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }

    /// The server URL with another database name (its path).
    static func url(_ serverURL: String, database: String) -> String {
        guard let slash = serverURL.range(of: "/", options: .backwards, range: serverURL.range(of: "://")!.upperBound..<serverURL.endIndex) else {
            return serverURL + "/" + database
        }
        let query = serverURL[slash.upperBound...].firstIndex(of: "?").map { String(serverURL[$0...]) } ?? ""
        return String(serverURL[..<slash.upperBound]) + database + query
    }
}

/// Every test here runs once per backend.
class ConformanceTestCase: XCTestCase {
    static var postgresURL: String? { ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"] }

    func eachBackend(file: StaticString = #filePath, line: UInt = #line, _ body: (TestBackend) throws -> Void) throws {
        var backends: [() throws -> TestBackend] = [{ try SQLiteTestBackend() }]
        if let url = Self.postgresURL { backends.append({ try PostgreSQLTestBackend(serverURL: url) }) }
        for make in backends {
            let backend = try make()
            defer { backend.cleanUp() }
            do { try body(backend) } catch {
                XCTFail("\(backend.name): \(error)", file: file, line: line)
            }
        }
    }
}

/// Scripts/test sets GATEHOUSE_REQUIRE_POSTGRES, so the PostgreSQL half of
/// this suite can never be skipped there without failing.
final class ConformanceSetupTests: XCTestCase {
    func testPostgreSQLRunsWhereScriptsTestRequiresIt() throws {
        guard ProcessInfo.processInfo.environment["GATEHOUSE_REQUIRE_POSTGRES"] == "1" else {
            throw XCTSkip("GATEHOUSE_REQUIRE_POSTGRES is not set: outside Scripts/test, PostgreSQL is optional")
        }
        XCTAssertNotNil(ConformanceTestCase.postgresURL, "Scripts/test must pass GATEHOUSE_TEST_POSTGRES_URL")
    }
}
