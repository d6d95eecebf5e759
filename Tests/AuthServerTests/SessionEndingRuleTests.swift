import Foundation
import XCTest

/// The login responder once ended a replaced session with a bare
/// `tx.sessions.end`, which left its refresh tokens and device secrets
/// alive. Sessions end through SessionBoundCredentials only; no endpoint
/// calls the store's `end` or `endAll` itself.
final class SessionEndingRuleTests: XCTestCase {
    func testNoEndpointEndsASessionWithoutItsCredentials() throws {
        let endpoints = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/AuthServer/Endpoints")
        let files = try FileManager.default.contentsOfDirectory(atPath: endpoints.path).filter { $0.hasSuffix(".swift") }
        XCTAssertGreaterThan(files.count, 10)
        for file in files {
            let text = try String(contentsOf: endpoints.appendingPathComponent(file), encoding: .utf8)
            for bare in ["sessions.end(", "sessions.endAll("] {
                XCTAssertFalse(text.contains(bare), "\(file) calls \(bare)…); use SessionBoundCredentials")
            }
        }
    }
}
