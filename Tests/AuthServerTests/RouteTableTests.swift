import Foundation
@testable import AuthServer
import SSOCore
import XCTest

/// The route table is the one list of the issuer's paths: each process's
/// rows are consistent, and both nginx layouts send exactly those paths to
/// that process's pool (nginx's own choice of location: an exact match,
/// else the first regular expression that matches).
final class RouteTableTests: XCTestCase {
    var issuer: TemporaryIssuer!

    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }

    func tables() throws -> [(IssuerProcess, RouteTable)] {
        try IssuerProcess.allCases.map { ($0, try IssuerRouteTable.table($0, services: issuer.services, config: issuer.config)) }
    }

    func testEveryProcessHasPathsAndConsistentRows() throws {
        for (process, table) in try tables() {
            XCTAssertFalse(table.paths.isEmpty, process.rawValue)
            XCTAssertEqual(table.inconsistencies, [], process.rawValue)
        }
    }

    func testNoPathIsServedByTwoProcesses() throws {
        var owner: [String: IssuerProcess] = [:]
        for (process, table) in try tables() {
            for path in table.paths {
                XCTAssertNil(owner[path], "\(path) is in \(owner[path]?.rawValue ?? "") and \(process.rawValue)")
                owner[path] = process
            }
        }
    }

    func testAMethodOutsideTheRowIs405WithAllow() throws {
        for (process, table) in try tables() {
            for endpoint in table.endpoints {
                let response = try table.respond(to: Request(method: "TRACE", path: endpoint.path))
                XCTAssertEqual(response.status, 405, "\(process.rawValue) \(endpoint.path)")
                XCTAssertEqual(response.header("Allow"), endpoint.methods.names.joined(separator: ", "), endpoint.path)
            }
        }
    }

    /// RFC 9110 §9.3.2: every GET that only reads answers HEAD too; a GET
    /// that changes something (a code redeemed) does not.
    func testHEADGoesWithTheReadingGETs() throws {
        for (_, table) in try tables() {
            for endpoint in table.endpoints where endpoint.methods.names.contains("GET") {
                let reads = ["/.well-known/jwks.json", "/.well-known/openid-configuration", "/metrics", "/health/live", "/health/ready",
                             "/account"].contains(endpoint.path)
                XCTAssertEqual(endpoint.methods.names.contains("HEAD"), reads, endpoint.path)
            }
        }
    }

    func testAnUnknownPathIs404() throws {
        for (process, table) in try tables() {
            XCTAssertEqual(try table.respond(to: Request(method: "GET", path: "/nowhere")).status, 404, process.rawValue)
        }
    }

    // MARK: nginx

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The local layout (Scripts/run, the tests): the server template and
    /// the issuer's locations; its pools are named after the processes.
    func testTheLocalNginxLayoutMatchesTheTable() throws {
        let text = try ["nginx/gatehouse.conf.template", "nginx/issuer-locations.conf"].map {
            try String(contentsOf: Self.root.appendingPathComponent($0), encoding: .utf8)
        }.joined(separator: "\n")
        try assertLayout(NginxLocations(text), pool: { $0.rawValue }, "nginx/")
    }

    /// The production layout (deploy/nginx/gatehouse.conf): pools named `gatehouse_PROCESS`.
    func testTheProductionNginxLayoutMatchesTheTable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("deploy/nginx/gatehouse.conf"), encoding: .utf8)
        try assertLayout(NginxLocations(text), pool: { "gatehouse_" + $0.rawValue }, "deploy/nginx/gatehouse.conf")
    }

    func assertLayout(_ nginx: NginxLocations, pool: (IssuerProcess) -> String, _ layout: String) throws {
        let processByPool = Dictionary(uniqueKeysWithValues: IssuerProcess.allCases.map { (pool($0), $0) })
        var paths: [IssuerProcess: [String]] = [:]
        for (process, table) in try tables() {
            paths[process] = table.paths
            for path in table.paths {
                XCTAssertEqual(nginx.pool(for: path), pool(process), "\(layout): \(path) must reach the \(process.rawValue) pool")
            }
        }
        // Every location nginx passes to an issuer pool is a path of that
        // process (an exact one), or matches at least one (a pattern).
        for location in nginx.locations {
            guard let process = processByPool[location.pool] else { continue }
            let served = paths[process] ?? []
            switch location.match {
            case .exact(let path): XCTAssertTrue(served.contains(path), "\(layout): location = \(path) has no row in \(process.rawValue)")
            case .pattern(let pattern):
                XCTAssertTrue(served.contains { location.matches($0) }, "\(layout): location ~ \(pattern) matches no row of \(process.rawValue)")
            }
        }
    }

    func testTheNginxReaderSeesEveryIssuerLocation() throws {
        let nginx = NginxLocations("""
            location = /token {
                limit_req zone=token burst=200 nodelay;
                fastcgi_pass token;
            }
            location ~ ^/login/passkey(/options)?$ { fastcgi_pass login; }
            location / { try_files $uri =404; }
            """)
        XCTAssertEqual(nginx.locations.count, 2)
        XCTAssertEqual(nginx.pool(for: "/token"), "token")
        XCTAssertEqual(nginx.pool(for: "/login/passkey/options"), "login")
        XCTAssertNil(nginx.pool(for: "/login/passkey/other"))
    }
}

/// The `location` blocks of an nginx configuration that pass to a FastCGI
/// pool, read well enough for these files (no nested locations).
struct NginxLocations {
    enum Match { case exact(String), pattern(String) }

    struct Location {
        let match: Match
        let pool: String

        func matches(_ path: String) -> Bool {
            switch match {
            case .exact(let exact): return exact == path
            case .pattern(let pattern):
                guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
                return regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
            }
        }
    }

    let locations: [Location]

    init(_ text: String) {
        var found: [Location] = []
        let header = try! NSRegularExpression(pattern: #"location\s+(=|~)\s+(\S+)\s*\{"#)
        let pass = try! NSRegularExpression(pattern: #"fastcgi_pass\s+([A-Za-z0-9_]+)\s*;"#)
        let whole = NSRange(text.startIndex..., in: text)
        for match in header.matches(in: text, range: whole) {
            guard let kind = Range(match.range(at: 1), in: text), let target = Range(match.range(at: 2), in: text),
                  let open = Range(match.range, in: text) else { continue }
            let body = text[open.upperBound...].prefix { $0 != "}" }
            let bodyText = String(body)
            guard let passed = pass.firstMatch(in: bodyText, range: NSRange(bodyText.startIndex..., in: bodyText)),
                  let name = Range(passed.range(at: 1), in: bodyText) else { continue }
            let value = String(text[target])
            found.append(Location(match: text[kind] == "=" ? .exact(value) : .pattern(value), pool: String(bodyText[name])))
        }
        locations = found
    }

    /// The pool nginx sends `path` to: an exact location first, else the
    /// first pattern that matches (nginx's order for these two kinds).
    func pool(for path: String) -> String? {
        if let exact = locations.first(where: { if case .exact(path) = $0.match { true } else { false } }) { return exact.pool }
        return locations.first { if case .pattern = $0.match { $0.matches(path) } else { false } }?.pool
    }
}

/// docs/ARCHITECTURE.md prints the route table as the issuer's map; this
/// keeps the printed one the built one.
final class RouteTableDocumentationTests: XCTestCase {
    static func rows(_ tables: [(IssuerProcess, RouteTable)]) -> [String] {
        tables.flatMap { process, table in
            table.endpoints.map { endpoint in
                let guards = endpoint.guards.map { String(describing: type(of: $0)) }.joined(separator: ", ")
                let path = "`\(endpoint.path)`" + (endpoint.selector.map { " with `\($0)`" } ?? "")
                return "| \(process.rawValue) | \(endpoint.methods.names.joined(separator: ", ")) | \(path) | \(endpoint.input) | "
                    + "\(guards.isEmpty ? "–" : guards) | \(type(of: endpoint.errors)) | \(endpoint.cache) |"
            }
        }
    }

    func testTheArchitectureDocumentPrintsTheRouteTable() throws {
        let issuer = try TemporaryIssuer()
        defer { issuer.cleanUp() }
        let tables = try IssuerProcess.allCases.map { ($0, try IssuerRouteTable.table($0, services: issuer.services, config: issuer.config)) }
        let document = try String(contentsOf: RouteTableTests.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let expected = Self.rows(tables)
        let printed = document.split(separator: "\n").map(String.init).filter { line in
            IssuerProcess.allCases.contains { line.hasPrefix("| \($0.rawValue) |") }
        }
        XCTAssertEqual(printed, expected, "docs/ARCHITECTURE.md's route table should read:\n" + expected.joined(separator: "\n"))
    }
}
