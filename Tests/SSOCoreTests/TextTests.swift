import XCTest
@testable import SSOCore

/// The two Foundation helpers replaced when the responders stopped linking
/// Foundation (ICU): they must behave as the originals did on what Gatehouse
/// feeds them.
final class TextTests: XCTestCase {
    func testTrimmingASCIIWhitespaceIsHTTPOptionalWhitespace() {
        XCTAssertEqual(" \tBasic abc \t".trimmingASCIIWhitespace(), "Basic abc")
        XCTAssertEqual("\r\nkey\r\n".trimmingASCIIWhitespace(), "\r\nkey\r\n")
        XCTAssertEqual("\r\n key \n".trimmingASCIIWhitespace(newlines: true), "key")
        XCTAssertEqual(" \t ".trimmingASCIIWhitespace(), "")
        XCTAssertEqual("".trimmingASCIIWhitespace(), "")
        // Not whitespace for HTTP (RFC 9110 §5.6.3): kept, as bytes.
        XCTAssertEqual("\u{A0}é\u{A0}".trimmingASCIIWhitespace(), "\u{A0}é\u{A0}")
        XCTAssertEqual("a b"[...].trimmingASCIIWhitespace(), "a b")
    }

    func testParentDirectory() {
        XCTAssertEqual(parentDirectory(of: "/var/lib/gatehouse/keys/k.pem"), "/var/lib/gatehouse/keys")
        XCTAssertEqual(parentDirectory(of: "var/cache/jwks.json"), "var/cache")
        XCTAssertEqual(parentDirectory(of: "jwks.json"), ".")
        XCTAssertEqual(parentDirectory(of: "/jwks.json"), "/")
    }
}
