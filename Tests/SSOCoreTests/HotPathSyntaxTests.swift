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

    /// nginx 1.22 passes a header sent twice as two parameters of one name;
    /// both survive, combined the way nginx 1.23 combines them.
    func testAHeaderSentTwiceKeepsBothValues() {
        XCTAssertEqual(FastCGIRequestHandle.combinedHeader(name: "HTTP_DPOP", earlier: "a.b.c", later: "d.e.f"), "a.b.c, d.e.f")
        XCTAssertEqual(FastCGIRequestHandle.combinedHeader(name: "HTTP_COOKIE", earlier: "a=1", later: "b=2"), "a=1; b=2")
    }

    func testOnOffSettings() throws {
        XCTAssertFalse(try GatehouseConfig(home: "/tmp", values: [:]).apiDPoPNonces)
        for on in ["1", "true", "YES", "on"] {
            XCTAssertTrue(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_API_DPOP_NONCE": on]).apiDPoPNonces, on)
        }
        for off in ["", "0", "false", "No", "off"] {
            XCTAssertFalse(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_API_DPOP_NONCE": off]).apiDPoPNonces, off)
        }
        XCTAssertThrowsError(try GatehouseConfig(home: "/tmp", values: ["GATEHOUSE_API_DPOP_NONCE": "2"]))
    }
}
