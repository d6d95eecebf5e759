import XCTest
@testable import SSOCore

/// The per-request byte-level helpers rewritten from a profile: same answers
/// as the RFC grammar, on the edge cases.
final class HotPathSyntaxTests: XCTestCase {
    func testB64TokenFollowsRFC6750Grammar() {
        for valid in ["a", "abc.DEF-123_~+/", "abc=", "abc==", "eyJ.eyJ.sig"] {
            XCTAssertTrue(BearerSyntax.isB64Token(Substring(valid).utf8), valid)
        }
        for invalid in ["", "=", "==abc", "ab=c", "a b", "a,b", "é", "a\u{0}", "abc=\u{301}", "a=="+"x"] {
            XCTAssertFalse(BearerSyntax.isB64Token(Substring(invalid).utf8), invalid.debugDescription)
        }
        // A slice of a larger string (not starting at its first byte).
        let header = "Bearer abc.def="
        XCTAssertTrue(BearerSyntax.isB64Token(header.dropFirst(7).utf8))
        XCTAssertFalse(BearerSyntax.isB64Token(header.dropFirst(6).utf8))
    }

    func testHeaderNamesFromFastCGIParameters() {
        XCTAssertEqual(FastCGIServer.headerName(parameter: "HTTP_X_FORWARDED_FOR"), "x-forwarded-for")
        XCTAssertEqual(FastCGIServer.headerName(parameter: "HTTP_AUTHORIZATION"), "authorization")
        XCTAssertEqual(FastCGIServer.headerName(parameter: "HTTP_COOKIE"), "cookie")
        XCTAssertEqual(FastCGIServer.headerName(parameter: "HTTP_X_É"), "x-É")  // non-ASCII bytes untouched
    }
}
