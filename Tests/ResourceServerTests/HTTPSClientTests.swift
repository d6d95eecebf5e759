import Foundation
import XCTest
import ResourceServer
import SSOCore

/// SSOCore's HTTPS client, and the JWKS fetcher on top of it, against a real
/// TLS server on 127.0.0.1 with a throwaway CA (TLSTestServer). The message
/// handling on its own is tested in SSOCoreTests' HTTPSMessageTests.
final class HTTPSClientTests: XCTestCase {
    static var server: TLSTestServer?

    override class func setUp() {
        super.setUp()
        server = TLSTestServer()
    }

    override class func tearDown() {
        server = nil
        super.tearDown()
    }

    func requireServer() throws -> TLSTestServer {
        guard let server = Self.server else { throw XCTSkip("openssl or python3 not available for the TLS test server") }
        return server
    }

    /// A port nothing listens on right now (bound to 0, read back, closed).
    static func freePort() -> Int { Listener().port }

    struct Echo: Decodable {
        let method: String
        let version: String
        let headers: [[String]]
        let body: String

        func header(_ name: String) -> [String] { headers.filter { $0.first?.lowercased() == name }.map { $0[1] } }
    }

    func echo(_ response: HTTPSResponse) throws -> Echo {
        XCTAssertEqual(response.status, 200)
        return try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }

    // MARK: exchanges

    func testFetchesOverVerifiedTLS() throws {
        let server = try requireServer()
        let client = HTTPSClient(caFile: server.caFile)
        let response = try client.get(server.url("/jwks.json"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "{\"keys\":[]}")
        XCTAssertEqual(response.headers["content-type"], "application/json")
        XCTAssertEqual(try client.get(server.url("/jwks.json")).body, response.body, "a second fetch works the same")
        XCTAssertEqual(try client.get(server.url("/missing")).status, 404, "a 4xx is an answer, not an error")
    }

    func testPostsAFormAndGetsTheReply() throws {
        let server = try requireServer()
        let fields = [("grant_type", "refresh_token"), ("refresh_token", "a b&c=d"), ("client_id", "été")]
        let echo = try echo(try HTTPSClient(caFile: server.caFile).send(.form(server.url("/echo"), fields)))
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.version, "HTTP/1.0")
        XCTAssertEqual(echo.body, FormParser.encode(fields))
        XCTAssertEqual(echo.header("content-type"), ["application/x-www-form-urlencoded"])
        XCTAssertEqual(echo.header("content-length"), [String(echo.body.utf8.count)])
        XCTAssertEqual(echo.header("host"), ["localhost:\(server.port)"])
        XCTAssertEqual(echo.header("accept"), ["application/json"])
        XCTAssertEqual(echo.header("connection"), ["close"])
    }

    func testSendsAnyMethodWithItsHeadersAndBody() throws {
        let server = try requireServer()
        let client = HTTPSClient(caFile: server.caFile, userAgent: "gatehouse-test")
        let put = try echo(try client.send(HTTPSRequest(method: "PUT", url: server.url("/echo"),
                                                        headers: [("Content-Type", "application/json"), ("X-Trace", "1")],
                                                        body: Array("{\"a\":1}".utf8))))
        XCTAssertEqual(put.method, "PUT")
        XCTAssertEqual(put.body, "{\"a\":1}")
        XCTAssertEqual(put.header("x-trace"), ["1"])
        XCTAssertEqual(put.header("user-agent"), ["gatehouse-test"])
        let delete = try echo(try client.send(HTTPSRequest(method: "DELETE", url: server.url("/echo"),
                                                           headers: [("Authorization", "Bearer abc")])))
        XCTAssertEqual(delete.method, "DELETE")
        XCTAssertEqual(delete.header("authorization"), ["Bearer abc"])
        XCTAssertEqual(delete.header("content-length"), [], "no content, no length")
        let get = try echo(try client.get(server.url("/echo"), headers: [("Accept", "text/plain")]))
        XCTAssertEqual(get.header("accept"), ["text/plain"], "the caller's Accept replaces the default")
    }

    func testRepliesWithoutContentEndAtTheirHeaders() throws {
        let server = try requireServer()
        let client = HTTPSClient(caFile: server.caFile)
        // Content-Length says 11, yet nothing follows a reply to HEAD.
        let head = try client.send(HTTPSRequest(method: "HEAD", url: server.url("/jwks.json")))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-length"], "11")
        XCTAssertEqual(head.body, [])
        let noContent = try client.send(HTTPSRequest(method: "DELETE", url: server.url("/no-content")))
        XCTAssertEqual(noContent.status, 204)
        XCTAssertEqual(noContent.body, [])
    }

    func testJWKSFetcherDecodesTheSetAndRefusesAnythingElse() throws {
        let server = try requireServer()
        let client = HTTPSClient(caFile: server.caFile)
        XCTAssertEqual(try HTTPSJWKSFetcher(url: server.url("/jwks.json"), client: client).fetchKeySet(), JWKSet(keys: []))
        XCTAssertThrowsError(try HTTPSJWKSFetcher(url: server.url("/garbage.json"), client: client).fetchKeySet()) {
            XCTAssertTrue($0 is JWKSFetchError, "\($0)")
        }
    }

    // MARK: trust

    func testRefusesACertificateFromAnUntrustedCA() throws {
        let server = try requireServer()
        XCTAssertThrowsError(try HTTPSClient(caFile: nil).get(server.url("/jwks.json"))) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .certificate, "\($0)")
        }
    }

    func testRefusesACertificateForAnotherName() throws {
        let server = try requireServer()
        // The certificate names DNS:localhost only, not the IP address.
        XCTAssertThrowsError(try HTTPSClient(caFile: server.caFile).get("https://127.0.0.1:\(server.port)/jwks.json")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .certificate, "\($0)")
        }
    }

    func testMissingCAFileIsAnError() throws {
        let server = try requireServer()
        XCTAssertThrowsError(try HTTPSClient(caFile: "/nonexistent/ca.pem").get(server.url("/jwks.json"))) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .caFile, "\($0)")
        }
    }

    // MARK: limits

    func testCapsTheResponseSize() throws {
        let server = try requireServer()
        let client = HTTPSClient(caFile: server.caFile, maximumResponseBytes: 1024)
        XCTAssertThrowsError(try client.get(server.url("/big.json"))) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .responseTooLarge, "\($0)")
        }
    }

    func testTotalTimeoutBoundsAReplyThatTrickles() throws {
        // A byte every 0.2 s never trips the 1 s wait for one read; only the
        // deadline on the whole exchange ends it.
        let server = try requireServer()
        let started = Date()
        XCTAssertThrowsError(try HTTPSClient(caFile: server.caFile, ioTimeout: 1, totalTimeout: 1.5).get(server.url("/trickle"))) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .timeout, "\($0)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testRefusedConnectionFailsFast() {
        let started = Date()
        XCTAssertThrowsError(try HTTPSClient().get("https://127.0.0.1:\(Self.freePort())/")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .connect, "\($0)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testSilentServerTimesOut() throws {
        // Accepted by the kernel's backlog, never answered: the handshake waits
        // for a ServerHello that never comes.
        let listener = Listener()
        let started = Date()
        XCTAssertThrowsError(try HTTPSClient(connectTimeout: 1, ioTimeout: 0.5, totalTimeout: 2).get("https://127.0.0.1:\(listener.port)/")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .timeout, "\($0)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        withExtendedLifetime(listener) {}
    }

    func testUnresolvableHostIsAnError() {
        XCTAssertThrowsError(try HTTPSClient().get("https://no-such-host.invalid/")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .resolve, "\($0)")
        }
    }
}
