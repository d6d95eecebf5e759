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
        // Every byte value, at every position of a 16-byte block and in the
        // tail after it: the vector and the byte-by-byte checks agree with the grammar.
        let allowed = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/".utf8))
        for byte in UInt8.min...UInt8.max {
            for position in [0, 7, 15, 16, 20] {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: 21)
                bytes[position] = byte
                let expected = allowed.contains(byte) || (byte == UInt8(ascii: "=") && position == 20)
                XCTAssertEqual(bytes.withUnsafeBufferPointer(BearerSyntax.isB64Token(buffer:)), expected, "\(byte) at \(position)")
            }
        }
        // A slice of a larger string (not starting at its first byte).
        let header = "Bearer abc.def="
        XCTAssertTrue(BearerSyntax.isB64Token(header.dropFirst(7).utf8))
        XCTAssertFalse(BearerSyntax.isB64Token(header.dropFirst(6).utf8))
    }

    func testHeaderNamesFromFastCGIParameters() {
        func headerName(_ parameter: String) -> String? {
            var parameters = RequestParameters()
            parameters.add(parameter + "=value")
            return parameters.headers.count == 1 ? parameters.headers.keys.first : nil
        }
        XCTAssertEqual(headerName("HTTP_X_FORWARDED_FOR"), "x-forwarded-for")
        XCTAssertEqual(headerName("HTTP_AUTHORIZATION"), "authorization")
        XCTAssertEqual(headerName("HTTP_COOKIE"), "cookie")
        XCTAssertEqual(headerName("HTTP_X_É"), "x-É")  // non-ASCII bytes untouched
    }

    /// nginx 1.22 passes a header sent twice as two parameters of one name;
    /// both survive, combined the way nginx 1.23 combines them.
    func testAHeaderSentTwiceKeepsBothValues() {
        XCTAssertEqual(FastCGIRequestHandle.combinedHeader(name: "dpop", earlier: "a.b.c", later: "d.e.f"), "a.b.c, d.e.f")
        XCTAssertEqual(FastCGIRequestHandle.combinedHeader(name: "cookie", earlier: "a=1", later: "b=2"), "a=1; b=2")
        var parameters = RequestParameters()
        for entry in ["HTTP_DPOP=a.b.c", "HTTP_COOKIE=a=1", "HTTP_DPOP=d.e.f", "HTTP_COOKIE=b=2"] { parameters.add(entry) }
        XCTAssertEqual(parameters.headers, ["dpop": "a.b.c, d.e.f", "cookie": "a=1; b=2"])
    }

    /// One pass over nginx's parameters: the ones a Request is made of, by
    /// their exact names; the rest skipped; a value split at its first "=".
    func testTheParametersARequestIsMadeOf() {
        var parameters = RequestParameters()
        for entry in ["REQUEST_METHOD=POST", "DOCUMENT_URI=/token", "SCRIPT_NAME=/ignored", "QUERY_STRING=a=1&b=2", "CONTENT_TYPE=text/plain",
                      "CONTENT_LENGTH=12", "REMOTE_ADDR=::1", "REQUEST_ID=abc", "SERVER_SOFTWARE=nginx", "REQUEST_METHODX=GET",
                      "REQUEST_METHO=GET", "HTTP_AUTHORIZATION=Bearer x=y", "HTTP_X_\u{301}=combining", "NO_EQUALS_SIGN", "HTTPS=on"] {
            parameters.add(entry)
        }
        XCTAssertEqual(parameters.method, "POST")
        XCTAssertEqual(parameters.documentURI, "/token")
        XCTAssertEqual(parameters.scriptName, "/ignored")
        XCTAssertEqual(parameters.query, "a=1&b=2")
        XCTAssertEqual(parameters.contentType, "text/plain")
        XCTAssertEqual(parameters.contentLength, "12")
        XCTAssertEqual(parameters.remoteAddress, "::1")
        XCTAssertEqual(parameters.requestID, "abc")
        XCTAssertEqual(parameters.headers, ["authorization": "Bearer x=y", "x-\u{301}": "combining"])
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
