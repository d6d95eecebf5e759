import Foundation
import Glibc
import XCTest
@testable import AuthServer
import IssuerComposition
import IssuerStorage
@testable import IssuerStorageSQLite
import SQLiteClient
@testable import SSOCore

/// The ops listener in-process: `/health/ready` writes to the database and
/// loads the signing key, `/health/live` probes the responder sockets,
/// `/metrics` renders the counter files of the metrics folder.
final class OpsResponderTests: XCTestCase {
    var clock: TestClock!
    var issuer: TemporaryIssuer!
    /// Short, so socket paths stay under sun_path's 108 bytes.
    var runDirectory = ""
    var metricsDirectory = ""
    var listeners: [Int32] = []

    override func setUpWithError() throws {
        clock = TestClock()
        issuer = try TemporaryIssuer(clock: clock.clock)
        let short = "/tmp/gh-ops-\(UUID().uuidString.prefix(8))"
        runDirectory = short + "/run"
        metricsDirectory = short + "/metrics"
        try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: metricsDirectory, withIntermediateDirectories: true)
        AuditLog.recorded = []
    }

    override func tearDown() {
        AuditLog.recorded = nil
        for fd in listeners { close(fd) }
        listeners = []
        try? FileManager.default.removeItem(atPath: (runDirectory as NSString).deletingLastPathComponent)
        issuer?.cleanUp()
    }

    // MARK: Helpers

    func ops(_ services: IssuerServices? = nil, node: String = "test-node") -> OpsResponder {
        OpsResponder(services: services ?? issuer.services,
                     settings: OpsSettings(metricsDirectory: metricsDirectory, socketDirectory: runDirectory, node: node))
    }

    func get(_ responder: OpsResponder, _ path: String, method: String = "GET", file: StaticString = #filePath, line: UInt = #line) -> Response {
        let (response, _) = ResponderOutcome.run(responder, Request(method: method, path: path))
        XCTAssertTrue(response.headersAreFreeOfLineBreaks, file: file, line: line)
        return response
    }

    /// A listening unix socket in the run folder (a live pool slot).
    func listen(_ name: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array((runDirectory + "/" + name).utf8)
        XCTAssertLessThan(bytes.count, MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, "bind: errno \(errno)")
        XCTAssertEqual(Glibc.listen(fd, 16), 0)
        listeners.append(fd)
    }

    func deadSocket(_ name: String) throws {
        try listen(name)
        close(listeners.removeLast())
    }

    func probeRows() throws -> [(node: String, writtenAt: Int64)] {
        // A second connection to the file: the row is committed, not only in this connection's view.
        let other = try SQLiteDatabase(path: issuer.config.databasePath, busyTimeoutMilliseconds: 10_000)
        return try other.query("SELECT node, written_at FROM readiness_probes ORDER BY node").map { ($0.string(0), $0.int(1)) }
    }

    // MARK: /health/ready

    func testReadyOnAWorkingIssuerAndTheProbeRowIsWritten() throws {
        let kid = try issuer.keys.rotate()
        let response = get(ops(), "/health/ready")
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "ready")
        XCTAssertNil(body["reason"])
        let checks = try XCTUnwrap(body["checks"] as? [String: String])
        XCTAssertEqual(checks["database_write"], "ok")
        XCTAssertEqual(checks["signing_key"], "ok (\(kid))")

        let rows = try probeRows()
        XCTAssertEqual(rows.map(\.node), ["test-node"])
        XCTAssertEqual(rows.first?.writtenAt, clock.now)

        // One row per node, moved forward by each probe.
        clock.advance(30)
        XCTAssertEqual(get(ops(), "/health/ready").status, 200)
        XCTAssertEqual(get(ops(node: "other-node"), "/health/ready").status, 200)
        let later = try probeRows()
        XCTAssertEqual(later.map(\.node), ["other-node", "test-node"])
        XCTAssertEqual(later.map(\.writtenAt), [clock.now, clock.now])
        XCTAssertEqual(get(ops(), "/health/ready", method: "HEAD").status, 200, "HEAD answers like GET")
        XCTAssertEqual(events(), [], "health checks are not security events")
    }

    func events() -> [AuditEvent] { AuditLog.recorded ?? [] }

    func testNotReadyWithoutASigningKey() throws {
        // A fresh home: the database works, no key was ever made.
        let response = get(ops(), "/health/ready")
        XCTAssertEqual(response.status, 503, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "not_ready")
        let reason = try XCTUnwrap(body["reason"] as? String)
        XCTAssertTrue(reason.contains("signing key"), reason)
        XCTAssertFalse(reason.contains("database"), "the database is fine: \(reason)")
        let checks = try XCTUnwrap(body["checks"] as? [String: String])
        XCTAssertEqual(checks["signing_key"], "failed")
        XCTAssertEqual(checks["database_write"], "ok")
        XCTAssertEqual(try probeRows().count, 1, "the database write was still proven")
    }

    func testNotReadyWhenTheActiveKeysPrivateKeyIsGone() throws {
        let kid = try issuer.keys.rotate()
        try FileManager.default.removeItem(atPath: issuer.privateKeyPath(kid))
        let response = get(ops(), "/health/ready")
        XCTAssertEqual(response.status, 503, response.bodyText)
        let reason = try XCTUnwrap(response.jsonObject()["reason"] as? String)
        XCTAssertTrue(reason.contains("signing key"), reason)
        XCTAssertTrue(reason.contains(kid), "names the key: \(reason)")
    }

    func testNotReadyWhenOnlyAFutureKeyExists() throws {
        // Pre-published, not yet signing: nothing can sign a token now.
        try issuer.keys.rotate(activationDelay: 3600)
        let response = get(ops(), "/health/ready")
        XCTAssertEqual(response.status, 503, response.bodyText)
        clock.advance(3600)
        XCTAssertEqual(get(ops(), "/health/ready").status, 200, "ready once it activates")
    }

    func testNotReadyWhenTheDatabaseRefusesWrites() throws {
        try issuer.keys.rotate()
        try issuer.database.executeScript("PRAGMA query_only = ON")
        let response = get(ops(), "/health/ready")
        XCTAssertEqual(response.status, 503, response.bodyText)
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "not_ready")
        XCTAssertTrue((body["reason"] as? String)?.contains("database write failed") ?? false, response.bodyText)
        let checks = try XCTUnwrap(body["checks"] as? [String: String])
        XCTAssertEqual(checks["database_write"], "failed")
        XCTAssertTrue(checks["signing_key"]?.hasPrefix("ok") ?? false)
        try issuer.database.executeScript("PRAGMA query_only = OFF")
        XCTAssertEqual(get(ops(), "/health/ready").status, 200, "ready again once writes work")
    }

    // MARK: /metrics

    func testMetricsRendersTheCounterFilesAndTheGauges() throws {
        try issuer.keys.rotate()
        // Two slots of one pool, each with its own file, as two responder processes keep them.
        let token1 = try CounterFile(path: metricsDirectory + "/token-1.metrics", endpoint: "token")
        let token2 = try CounterFile(path: metricsDirectory + "/token-2.metrics", endpoint: "token")
        token1.add(1, at: MetricCatalogue.statusSlot(200))
        token2.add(2, at: MetricCatalogue.statusSlot(200))
        token2.add(1, at: MetricCatalogue.slot(.logins, "success"))

        clock.advance(7200)
        let response = get(ops(), "/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertEqual(response.header("Content-Type"), MetricsExposition.contentType)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        let text = response.bodyText
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertTrue(text.contains("gatehouse_ready 1"), text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("gatehouse_ready ") && Double($0.dropFirst(16)) == 1 })
        XCTAssertTrue(text.contains("# TYPE gatehouse_ready gauge\n"))
        XCTAssertTrue(text.contains("gatehouse_signing_key_age_seconds"))
        let age = try XCTUnwrap(lines.first { $0.hasPrefix("gatehouse_signing_key_age_seconds ") })
        XCTAssertEqual(Double(age.split(separator: " ")[1]), 7200, "the key was made 7200 s ago on the test clock")
        XCTAssertTrue(lines.contains(#"gatehouse_http_requests_total{endpoint="token",code="200"} 3"#), text)
        XCTAssertTrue(lines.contains(#"gatehouse_logins_total{result="success"} 1"#), text)
        XCTAssertEqual(try probeRows().count, 1, "a scrape measures readiness too")
    }

    func testMetricsSaysNotReadyAndNoKeyAgeWithoutAKey() throws {
        let response = get(ops(), "/metrics")
        XCTAssertEqual(response.status, 200, "the scrape itself still works")
        let lines = response.bodyText.split(separator: "\n").map(String.init)
        let ready = try XCTUnwrap(lines.first { $0.hasPrefix("gatehouse_ready ") })
        XCTAssertEqual(Double(ready.dropFirst(16)), 0)
        XCTAssertFalse(response.bodyText.contains("gatehouse_signing_key_age_seconds"))
    }

    func testMetricsWithAMissingFolderStillAnswers() throws {
        try issuer.keys.rotate()
        try FileManager.default.removeItem(atPath: metricsDirectory)
        let response = get(ops(), "/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.bodyText.contains("# TYPE gatehouse_http_requests_total counter"))
    }

    // MARK: /health/live

    func testNotLiveWithNoSockets() throws {
        try issuer.keys.rotate()
        let response = get(ops(), "/health/live")
        XCTAssertEqual(response.status, 503, response.bodyText)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "down")
        let reason = try XCTUnwrap(body["reason"] as? String)
        XCTAssertTrue(reason.contains("no responder sockets"), reason)
        XCTAssertTrue(reason.contains(runDirectory), reason)

        try FileManager.default.removeItem(atPath: runDirectory)
        XCTAssertEqual(get(ops(), "/health/live").status, 503, "a missing folder is not live either")
    }

    func testLiveWhenEveryPoolHasAnAnsweringSlot() throws {
        try listen("token-1.sock")
        try deadSocket("token-2.sock")
        try listen("authorize-1.sock")
        let response = get(ops(), "/health/live")
        XCTAssertEqual(response.status, 200, response.bodyText)
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "live")
        XCTAssertNil(body["reason"])
        XCTAssertEqual(body["checks"] as? [String: String], ["token": "ok", "authorize": "ok"])
    }

    func testNotLiveWhenAPoolHasNoAnsweringSlot() throws {
        try listen("token-1.sock")
        try deadSocket("userinfo-1.sock")
        try deadSocket("userinfo-2.sock")
        let response = get(ops(), "/health/live")
        XCTAssertEqual(response.status, 503, response.bodyText)
        let body = response.jsonObject()
        XCTAssertEqual(body["status"] as? String, "down")
        XCTAssertEqual(body["reason"] as? String, "not answering: userinfo")
        XCTAssertEqual((body["checks"] as? [String: String])?["userinfo"], "no slot answers (2 slots)")
        XCTAssertEqual((body["checks"] as? [String: String])?["token"], "ok")
    }

    // MARK: Methods and paths

    func testOtherMethodsAreRefused() {
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            for path in ["/metrics", "/health/ready", "/health/live"] {
                let response = get(ops(), path, method: method)
                XCTAssertEqual(response.status, 405, "\(method) \(path)")
                XCTAssertEqual(response.header("Allow"), "GET, HEAD")
            }
            // A path the route table lacks is 404 whatever the method
            // (nginx forwards only the three).
            XCTAssertEqual(get(ops(), "/nowhere", method: method).status, 404, method)
        }
        XCTAssertEqual(try probeRows().count, 0, "a refused method does not probe")
    }

    func testUnknownPathsAreNotFound() {
        for path in ["/", "/health", "/health/", "/metrics/", "/health/ready/", "/Metrics", "/health/readyz", "/metrics.txt"] {
            let response = get(ops(), path)
            XCTAssertEqual(response.status, 404, path)
            XCTAssertEqual(response.header("Content-Type"), "application/json")
        }
    }
}
