import XCTest
@testable import SSOCore

/// The HTTPS client's message handling without a network: the URL split,
/// the request it writes, the response head it parses. The exchanges over
/// real TLS are in ResourceServerTests' HTTPSClientTests, beside the JWKS
/// fetcher that shares their test server.
final class HTTPSMessageTests: XCTestCase {
    // MARK: response head

    func testParsesStatusHeadersAndBody() throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-Two:  spaced \r\n\r\n{\"keys\":[]}".utf8)
        let head = try XCTUnwrap(try HTTPResponseHead.parse(raw))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-type"], "application/json")
        XCTAssertEqual(head.headers["x-two"], "spaced")
        XCTAssertEqual(String(decoding: try head.response(from: raw).body, as: UTF8.self), "{\"keys\":[]}")
    }

    func testHeadIsIncompleteUntilTheBlankLine() throws {
        XCTAssertNil(try HTTPResponseHead.parse(Array("HTTP/1.0 200 ok\r\nA: b\r\n".utf8)))
        XCTAssertNil(try HTTPResponseHead.parse([]))
    }

    func testBodyWithoutContentLengthRunsToTheEnd() throws {
        let raw = Array("HTTP/1.0 404 Not Found\r\n\r\nnope".utf8)
        let response = try XCTUnwrap(try HTTPResponseHead.parse(raw)).response(from: raw)
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.body, Array("nope".utf8))
        XCTAssertFalse(response.isSuccess)
    }

    func testRepliesWithoutContentEndAtTheBlankLine() throws {
        // RFC 9110 §6.4.1 (204, 304) and §9.3.2 (a reply to HEAD).
        for (text, bodiless) in [("HTTP/1.1 204 No Content\r\n\r\n", false), ("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", false),
                                 ("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", true)] {
            let head = try XCTUnwrap(try HTTPResponseHead.parse(Array(text.utf8), bodiless: bodiless))
            XCTAssertEqual(head.contentLength, 0, text.debugDescription)
            XCTAssertEqual(try head.response(from: Array(text.utf8)).body, [], text.debugDescription)
        }
    }

    func testRefusesBrokenResponses() {
        let broken = [
            "HTTP/1.1 20 OK\r\n\r\n", "HTTP/2 200 OK\r\n\r\n", "ICY 200 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "HTTP/1.1 999 OK\r\n\r\n",
        ]
        for text in broken {
            XCTAssertThrowsError(try HTTPResponseHead.parse(Array(text.utf8)), text.debugDescription)
        }
        XCTAssertThrowsError(try HTTPResponseHead.parse([0x48, 0xff, 13, 10, 13, 10]))
        let truncated = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)
        XCTAssertThrowsError(try XCTUnwrap(try HTTPResponseHead.parse(truncated)).response(from: truncated))
    }

    // MARK: target

    func testTargets() throws {
        let target = try HTTPSTarget("https://localhost:8443/.well-known/jwks.json?x=1")
        XCTAssertEqual(target.host, "localhost")
        XCTAssertEqual(target.port, 8443)
        XCTAssertEqual(target.hostHeader, "localhost:8443")
        XCTAssertEqual(target.pathAndQuery, "/.well-known/jwks.json?x=1")
        XCTAssertEqual(target.origin, "https://localhost:8443")
        XCTAssertEqual(try HTTPSTarget("https://example.com").pathAndQuery, "/")
        XCTAssertEqual(try HTTPSTarget("https://example.com").hostHeader, "example.com")
        let v6 = try HTTPSTarget("https://[::1]:9443/a")
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.hostHeader, "[::1]:9443")
        for bad in ["http://localhost/", "https://", "ftp://x/", "https://user:pw@host/", "not a url", "https://host:0/"] {
            XCTAssertThrowsError(try HTTPSTarget(bad), bad) { XCTAssertEqual(($0 as? HTTPSClientError)?.code, .invalidURL, bad) }
        }
    }

    func testOriginLeavesOutThePathAndQuery() {
        XCTAssertEqual(HTTPSRequest(url: "https://issuer.test/logout?id_token_hint=secret").origin, "https://issuer.test")
        XCTAssertNil(HTTPSRequest(url: "http://issuer.test/").origin)
    }

    // MARK: request

    func message(_ request: HTTPSRequest) throws -> String {
        String(decoding: try request.message(for: try HTTPSTarget(request.url), userAgent: "test"), as: UTF8.self)
    }

    func testGetIsFramedByTheClient() throws {
        XCTAssertEqual(try message(HTTPSRequest(url: "https://localhost:8443/jwks.json?x=1")),
                       "GET /jwks.json?x=1 HTTP/1.0\r\nHost: localhost:8443\r\nUser-Agent: test\r\n"
                       + "Accept: application/json\r\nConnection: close\r\n\r\n")
    }

    func testFormPostCarriesItsLengthAndBody() throws {
        let request = HTTPSRequest.form("https://issuer.test/token", [("grant_type", "refresh_token"), ("refresh_token", "a b&c=d")])
        XCTAssertEqual(try message(request),
                       "POST /token HTTP/1.0\r\nHost: issuer.test\r\nUser-Agent: test\r\n"
                       + "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n"
                       + "Content-Length: 52\r\nConnection: close\r\n\r\ngrant_type=refresh_token&refresh_token=a%20b%26c%3Dd")
    }

    func testCallerHeadersKeepTheirOrderAndMayReplaceAccept() throws {
        let request = HTTPSRequest(method: "DELETE", url: "https://api.test/item/1",
                                   headers: [("Authorization", "Bearer abc"), ("accept", "text/plain")])
        XCTAssertEqual(try message(request),
                       "DELETE /item/1 HTTP/1.0\r\nHost: api.test\r\nUser-Agent: test\r\n"
                       + "Authorization: Bearer abc\r\naccept: text/plain\r\nConnection: close\r\n\r\n",
                       "no Content-Length for a DELETE without content (RFC 9110 §8.6)")
        XCTAssertTrue(try message(HTTPSRequest(method: "PUT", url: "https://api.test/", body: Array("{}".utf8)))
            .hasSuffix("Content-Length: 2\r\nConnection: close\r\n\r\n{}"))
        XCTAssertTrue(try message(HTTPSRequest(method: "POST", url: "https://api.test/")).contains("\r\nContent-Length: 0\r\n"))
    }

    func testRefusesWhatWouldBreakTheFraming() {
        let bad = [
            HTTPSRequest(method: "GE T", url: "https://api.test/"), HTTPSRequest(method: "", url: "https://api.test/"),
            HTTPSRequest(method: "GET\r\nX", url: "https://api.test/"),
            HTTPSRequest(url: "https://api.test/", headers: [("X-A", "1\r\nHost: evil")]),
            HTTPSRequest(url: "https://api.test/", headers: [("X-A", "1\nX-B: 2")]),
            HTTPSRequest(url: "https://api.test/", headers: [("X-A", "nul\u{0}")]),
            HTTPSRequest(url: "https://api.test/", headers: [("X A", "1")]), HTTPSRequest(url: "https://api.test/", headers: [("", "1")]),
            HTTPSRequest(url: "https://api.test/", headers: [("X-A:", "1")]),
            HTTPSRequest(url: "https://api.test/", headers: [("Host", "evil")]),
            HTTPSRequest(url: "https://api.test/", headers: [("content-length", "0")]),
            HTTPSRequest(url: "https://api.test/", headers: [("Transfer-Encoding", "chunked")]),
            HTTPSRequest(url: "https://api.test/", headers: [("Connection", "keep-alive")]),
        ]
        for request in bad {
            XCTAssertThrowsError(try message(request), "\(request.method) \(request.headers)") {
                XCTAssertEqual(($0 as? HTTPSClientError)?.code, .invalidRequest, "\($0)")
            }
        }
        XCTAssertNoThrow(try message(HTTPSRequest(url: "https://api.test/", headers: [("X-Tab", "a\tb"), ("X-UTF8", "été")])))
    }

    func testABadRequestFailsBeforeAnyConnection() {
        // Port 1 on a name that never resolves: only a check made before
        // resolving and connecting can give invalidRequest here.
        XCTAssertThrowsError(try HTTPSClient().send(HTTPSRequest(url: "https://no-such-host.invalid:1/", headers: [("X", "\r\n")]))) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .invalidRequest, "\($0)")
        }
        XCTAssertThrowsError(try HTTPSClient(caFile: "/nonexistent/ca.pem").get("https://no-such-host.invalid/")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .caFile, "\($0)")
        }
    }
}
