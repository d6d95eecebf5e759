import Foundation
import XCTest
import ResourceServer
@testable import SSOCore

/// The response parser on its own, and the client against a real TLS
/// server (`openssl s_server -WWW` on 127.0.0.1 with a throwaway CA).
final class HTTPSClientTests: XCTestCase {
    // MARK: parsing

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

    func testTargets() throws {
        let target = try HTTPSTarget("https://localhost:8443/.well-known/jwks.json?x=1")
        XCTAssertEqual(target.host, "localhost")
        XCTAssertEqual(target.port, 8443)
        XCTAssertEqual(target.hostHeader, "localhost:8443")
        XCTAssertEqual(target.pathAndQuery, "/.well-known/jwks.json?x=1")
        XCTAssertEqual(try HTTPSTarget("https://example.com").pathAndQuery, "/")
        XCTAssertEqual(try HTTPSTarget("https://example.com").hostHeader, "example.com")
        let v6 = try HTTPSTarget("https://[::1]:9443/a")
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.hostHeader, "[::1]:9443")
        for bad in ["http://localhost/", "https://", "ftp://x/", "https://user:pw@host/", "not a url", "https://host:0/"] {
            XCTAssertThrowsError(try HTTPSTarget(bad), bad) { XCTAssertEqual(($0 as? HTTPSClientError)?.code, .invalidURL, bad) }
        }
    }

    // MARK: against a real TLS server

    static var server: Process?
    static var folder = ""
    static var port = 0

    override class func setUp() {
        super.setUp()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { return }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-tls-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test CA",
                            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
            && openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
                        "-out", "server.csr", "-subj", "/CN=localhost"])
            && FileManager.default.createFile(atPath: folder + "/ext", contents: Data("subjectAltName=DNS:localhost\n".utf8))
            && openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                        "-out", "server.pem", "-days", "2", "-extfile", "ext"])
        guard made else { return }
        _ = FileManager.default.createFile(atPath: folder + "/jwks.json", contents: Data("{\"keys\":[]}".utf8))
        _ = FileManager.default.createFile(atPath: folder + "/garbage.json", contents: Data("<html>".utf8))
        _ = FileManager.default.createFile(atPath: folder + "/big.json", contents: Data(repeating: UInt8(ascii: "x"), count: 4096))
        port = freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", "server.pem", "-key", "server.key", "-WWW", "-quiet"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        server = process
        for _ in 0..<100 where !canConnect(port: port) { usleep(50_000) }
    }

    override class func tearDown() {
        if let server, server.isRunning { server.terminate(); server.waitUntilExit() }
        server = nil
        try? FileManager.default.removeItem(atPath: folder)
        super.tearDown()
    }

    static func openssl(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A port nothing listens on right now (bound to 0, read back, closed).
    static func freePort() -> Int {
        let listener = Listener()
        return listener.port
    }

    static func canConnect(port: Int) -> Bool {
        (try? TCPSocket.connect(host: "127.0.0.1", port: port, connectTimeout: 0.2, ioTimeout: 0.2)) != nil
    }

    func requireServer() throws {
        guard Self.server?.isRunning == true else { throw XCTSkip("openssl s_server not available") }
    }

    func testFetchesOverVerifiedTLS() throws {
        try requireServer()
        let client = HTTPSClient(caFile: Self.folder + "/ca.pem")
        let response = try client.get("https://localhost:\(Self.port)/jwks.json")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "{\"keys\":[]}")
        XCTAssertEqual(response.headers["content-type"], "text/plain")
        XCTAssertEqual(try client.get("https://localhost:\(Self.port)/jwks.json").body, response.body, "a second fetch works the same")
    }

    func testJWKSFetcherDecodesTheSetAndRefusesAnythingElse() throws {
        try requireServer()
        let client = HTTPSClient(caFile: Self.folder + "/ca.pem")
        XCTAssertEqual(try HTTPSJWKSFetcher(url: "https://localhost:\(Self.port)/jwks.json", client: client).fetchKeySet(),
                       JWKSet(keys: []))
        XCTAssertThrowsError(try HTTPSJWKSFetcher(url: "https://localhost:\(Self.port)/garbage.json", client: client).fetchKeySet()) {
            XCTAssertTrue($0 is JWKSFetchError, "\($0)")
        }
    }

    func testRefusesACertificateFromAnUntrustedCA() throws {
        try requireServer()
        XCTAssertThrowsError(try HTTPSClient(caFile: nil).get("https://localhost:\(Self.port)/jwks.json")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .certificate, "\($0)")
        }
    }

    func testRefusesACertificateForAnotherName() throws {
        try requireServer()
        // The certificate names DNS:localhost only, not the IP address.
        XCTAssertThrowsError(try HTTPSClient(caFile: Self.folder + "/ca.pem").get("https://127.0.0.1:\(Self.port)/jwks.json")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .certificate, "\($0)")
        }
    }

    func testMissingCAFileIsAnError() throws {
        XCTAssertThrowsError(try HTTPSClient(caFile: "/nonexistent/ca.pem").get("https://localhost:\(Self.port)/jwks.json"))
    }

    func testCapsTheResponseSize() throws {
        try requireServer()
        let client = HTTPSClient(caFile: Self.folder + "/ca.pem", maximumResponseBytes: 1024)
        XCTAssertThrowsError(try client.get("https://localhost:\(Self.port)/big.json")) {
            XCTAssertEqual(($0 as? HTTPSClientError)?.code, .responseTooLarge, "\($0)")
        }
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

/// A listening TCP socket on 127.0.0.1 that never accepts.
final class Listener {
    let descriptor: Int32
    let port: Int

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = listen(fd, 8)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
