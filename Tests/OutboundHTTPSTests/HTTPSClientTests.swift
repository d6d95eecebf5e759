import Foundation
import ResourceServer
import SSOCore
import XCTest
@testable import OutboundHTTPS

/// The libcurl client, and the JWKS fetcher on top of it, against a real TLS
/// server on 127.0.0.1 with a CA made for the test (TLSTestServer): the
/// trust rules, the limits and the refusals of "Outbound HTTPS".
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

    func client(_ server: TLSTestServer, timeout: Double = 10, limit: Int = 1024 * 1024) -> HTTPSClient {
        HTTPSClient(trust: .only(server.caFile), timeout: timeout, maximumResponseBytes: limit, userAgent: "gatehouse-test")
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

    func assertFails(_ code: HTTPSClientError.Code, _ expression: @autoclosure () throws -> HTTPSResponse,
                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, code, "\($0)", file: file, line: line)
        }
    }

    // MARK: exchanges

    func testFetchesOverVerifiedTLS() throws {
        let server = try requireServer()
        let client = client(server)
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
        let echo = try echo(try client(server).postForm(server.url("/echo"), fields))
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.version, "HTTP/1.1")
        XCTAssertEqual(echo.body, FormParser.encode(fields))
        XCTAssertEqual(echo.header("content-type"), ["application/x-www-form-urlencoded"])
        XCTAssertEqual(echo.header("content-length"), [String(echo.body.utf8.count)])
        XCTAssertEqual(echo.header("host"), ["localhost:\(server.port)"])
        XCTAssertEqual(echo.header("accept"), ["application/json"])
        XCTAssertEqual(echo.header("expect"), [], "no 100-continue round trip")
        XCTAssertEqual(echo.header("user-agent"), ["gatehouse-test"])
    }

    func testSendsAnyMethodWithItsHeadersAndBody() throws {
        let server = try requireServer()
        let client = client(server)
        let put = try echo(try client.send(HTTPSRequest(method: "PUT", url: server.url("/echo"),
                                                        headers: [("Content-Type", "application/json"), ("X-Trace", "1")],
                                                        body: Array("{\"a\":1}".utf8))))
        XCTAssertEqual(put.method, "PUT")
        XCTAssertEqual(put.body, "{\"a\":1}")
        XCTAssertEqual(put.header("x-trace"), ["1"])
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
        let client = client(server)
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
        let client = client(server)
        XCTAssertEqual(try HTTPSJWKSFetcher(url: server.url("/jwks.json"), client: client).fetchKeySet(), JWKSet(keys: []))
        XCTAssertThrowsError(try HTTPSJWKSFetcher(url: server.url("/garbage.json"), client: client).fetchKeySet()) {
            XCTAssertTrue($0 is JWKSFetchError, "\($0)")
        }
        XCTAssertThrowsError(try HTTPSJWKSFetcher(url: server.url("/redirect"), client: client).fetchKeySet()) {
            XCTAssertTrue("\($0)".contains("answered 302"), "\($0)")
        }
    }

    // MARK: trust

    func testRefusesACertificateFromAnUnknownCA() throws {
        let server = try requireServer()
        assertFails(.certificate, try HTTPSClient(trust: .system).get(server.url("/jwks.json")))
        let unrelated = try XCTUnwrap(TLSTestServer.makeUnrelatedCA())
        assertFails(.certificate, try HTTPSClient(trust: .only(unrelated)).get(server.url("/jwks.json")))
        assertFails(.certificate, try HTTPSClient(trust: OutboundTrust(systemStore: true, caFiles: [unrelated]))
            .get(server.url("/jwks.json")))
    }

    func testRefusesACertificateForAnotherName() throws {
        let server = try requireServer()
        // The certificate names DNS:localhost only, not the IP address.
        assertFails(.certificate, try client(server).get("https://127.0.0.1:\(server.port)/jwks.json"))
    }

    func testGatehouseTrustAddsTheConfiguredAndTheLocalCAToTheSystemStore() throws {
        let server = try requireServer()
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-home-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/tls", withIntermediateDirectories: true)
        let unrelated = try XCTUnwrap(TLSTestServer.makeUnrelatedCA())

        XCTAssertEqual(OutboundTrust.gatehouse(home: home, environment: [:]), .system, "no local CA: the system's store alone")
        assertFails(.certificate, try HTTPSClient(trust: .gatehouse(home: home, environment: [:])).get(server.url("/jwks.json")))

        let viaEnvironment = OutboundTrust.gatehouse(home: home, environment: ["GATEHOUSE_CA_FILE": server.caFile])
        XCTAssertEqual(viaEnvironment, OutboundTrust(systemStore: true, caFiles: [server.caFile]))
        XCTAssertEqual(try HTTPSClient(trust: viaEnvironment).get(server.url("/jwks.json")).status, 200)

        // The development layout: a copy of the stack's tls/ca.pem in the home,
        // beside a GATEHOUSE_CA_FILE that names another CA; both count.
        try FileManager.default.copyItem(atPath: server.caFile, toPath: home + "/tls/ca.pem")
        let both = OutboundTrust.gatehouse(home: home, environment: ["GATEHOUSE_CA_FILE": unrelated])
        XCTAssertEqual(both, OutboundTrust(systemStore: true, caFiles: [unrelated, home + "/tls/ca.pem"]))
        XCTAssertEqual(try HTTPSClient(trust: both).get(server.url("/jwks.json")).status, 200)
    }

    func testMissingOrEmptyCAFileIsAnErrorBeforeAnyConnection() throws {
        let server = try requireServer()
        assertFails(.caFile, try HTTPSClient(trust: .only("/nonexistent/ca.pem")).get(server.url("/jwks.json")))
        let empty = server.folder + "/empty.pem"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        assertFails(.caFile, try HTTPSClient(trust: .gatehouse(home: "/nonexistent", environment: ["GATEHOUSE_CA_FILE": empty]))
            .get(server.url("/jwks.json")))
    }

    // MARK: refusals

    func testFollowsNoRedirect() throws {
        let server = try requireServer()
        let client = client(server)
        let before = try client.get(server.url("/hits")).body
        let redirect = try client.get(server.url("/redirect"))
        XCTAssertEqual(redirect.status, 302, "a 3xx is returned, not followed")
        XCTAssertEqual(redirect.headers["location"], "/jwks.json")
        XCTAssertEqual(try client.get(server.url("/hits")).body, before, "the target was never requested")
        let toFile = try client.get(server.url("/redirect-file"))
        XCTAssertEqual(toFile.status, 302)
        XCTAssertEqual(toFile.body, [], "nothing of file:///etc/passwd")
    }

    func testRefusesEveryURLButHTTPS() throws {
        let server = try requireServer()
        let client = client(server)
        for url in ["http://localhost:\(server.port)/jwks.json", "http://127.0.0.1/", "file:///etc/passwd",
                    "smtp://localhost:25/", "ftp://localhost/", "https:///nohost", "https://user:pw@localhost:\(server.port)/",
                    "https://localhost:\(server.port)/a b", "localhost:\(server.port)/jwks.json"] {
            assertFails(.invalidURL, try client.get(url))
        }
    }

    func testRefusesHeadersThatWouldBreakTheFraming() throws {
        let server = try requireServer()
        let client = client(server)
        for headers in [[("X-A", "1\r\nX-Injected: 2")], [("X-A", "nul\u{0}")], [("Bad Name", "x")], [("Host", "evil")],
                        [("Content-Length", "5")], [("Transfer-Encoding", "chunked")]] {
            assertFails(.invalidRequest, try client.get(server.url("/echo"), headers: headers.map { (name: $0.0, value: $0.1) }))
        }
        assertFails(.invalidRequest, try client.send(HTTPSRequest(method: "GET /x HTTP/1.1\r\n", url: server.url("/echo"))))
    }

    // MARK: limits

    func testCapsTheResponseSize() throws {
        let server = try requireServer()
        let client = client(server, limit: 1024)
        assertFails(.responseTooLarge, try client.get(server.url("/big.json")))
        assertFails(.responseTooLarge, try client.get(server.url("/big-unannounced")))
        XCTAssertEqual(try client.get(server.url("/jwks.json")).status, 200, "a small reply still fits")
    }

    func testTotalTimeoutBoundsAReplyThatTrickles() throws {
        // A byte every 0.2 s: only the bound on the whole exchange ends it.
        let server = try requireServer()
        let started = Date()
        assertFails(.timeout, try client(server, timeout: 1).get(server.url("/trickle")))
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testSilentServerTimesOut() throws {
        // Accepted by the kernel's backlog, never answered: the handshake
        // waits for a ServerHello that never comes.
        let listener = Listener()
        let started = Date()
        assertFails(.timeout, try HTTPSClient(trust: .system, timeout: 1).get("https://127.0.0.1:\(listener.port)/"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        withExtendedLifetime(listener) {}
    }

    func testTheDefaultBoundIsTenSeconds() {
        let client = HTTPSClient(trust: .system)
        XCTAssertEqual(client.timeout, 10)
        XCTAssertLessThanOrEqual(client.connectTimeout, client.timeout)
        XCTAssertEqual(client.maximumResponseBytes, 1024 * 1024)
    }

    func testRefusedConnectionFailsFast() {
        let started = Date()
        assertFails(.connect, try HTTPSClient(trust: .system).get("https://127.0.0.1:\(Self.freePort())/"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testUnresolvableHostIsAnError() {
        assertFails(.resolve, try HTTPSClient(trust: .system).get("https://no-such-host.invalid/"))
    }

    func testIgnoresProxyVariables() throws {
        // A proxy that does not exist: a client that used it could not connect.
        let server = try requireServer()
        let dead = "http://127.0.0.1:\(Self.freePort())"
        for name in ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] { setenv(name, dead, 1) }
        defer { for name in ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] { unsetenv(name) } }
        XCTAssertEqual(try client(server).get(server.url("/jwks.json")).status, 200)
    }

    // MARK: the library's lifetime

    func testUnloadsLibcurlWhenIdleIfAsked() throws {
        let server = try requireServer()
        var client = client(server)
        client.unloadsLibraryWhenIdle = true
        XCTAssertEqual(try client.get(server.url("/jwks.json")).status, 200)
        XCTAssertFalse(CurlLibrary.isLoaded, "unloaded after the transfer")
        XCTAssertEqual(try client.get(server.url("/jwks.json")).status, 200, "and loaded again for the next")
        XCTAssertFalse(CurlLibrary.isLoaded)
    }

    func testConcurrentTransfersShareTheLibrarySafely() throws {
        let server = try requireServer()
        var client = client(server)
        client.unloadsLibraryWhenIdle = true
        let statuses = LockedStatuses()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            statuses.append((try? client.get(server.url("/jwks.json")).status) ?? 0)
        }
        XCTAssertEqual(statuses.values, Array(repeating: 200, count: 16))
        XCTAssertFalse(CurlLibrary.isLoaded, "the last transfer let it go")
    }
}

final class LockedStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int] = []
    func append(_ value: Int) { lock.lock(); list.append(value); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return list }
}
