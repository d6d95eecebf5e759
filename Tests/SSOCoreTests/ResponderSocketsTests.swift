import Foundation
import Glibc
import XCTest
@testable import SSOCore

/// ResponderSockets: which files are pool slots, and whether a slot's
/// process takes connections, with real AF_UNIX sockets in a temporary folder.
final class ResponderSocketsTests: XCTestCase {
    var directory = ""
    /// Listening descriptors this test opened, closed in tearDown.
    var listeners: [Int32] = []

    override func setUpWithError() throws {
        // sun_path holds 108 bytes: keep the folder short.
        directory = "/tmp/gh-socks-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for fd in listeners { close(fd) }
        listeners = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    func path(_ name: String) -> String { directory + "/" + name }

    /// A bound, listening unix socket at `name`; returns its descriptor.
    @discardableResult
    func listen(_ name: String, backlog: Int32 = 16, file: StaticString = #filePath, line: UInt = #line) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path(name).utf8)
        XCTAssertLessThan(bytes.count, MemoryLayout.size(ofValue: address.sun_path), file: file, line: line)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, "bind \(name): errno \(errno)", file: file, line: line)
        XCTAssertEqual(Glibc.listen(fd, backlog), 0, "listen \(name): errno \(errno)", file: file, line: line)
        listeners.append(fd)
        return fd
    }

    /// A socket file whose listener has gone (what a crashed slot leaves).
    func deadSocket(_ name: String) throws {
        let fd = try listen(name)
        close(fd)
        listeners.removeAll { $0 == fd }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path(name)), "the socket file outlives its listener")
    }

    // MARK: Names

    func testEndpointOfSocketName() {
        let cases: [(String, String?)] = [
            ("token-1.sock", "token"),
            ("token-12.sock", "token"),
            ("api-a-12.sock", "api-a"),
            ("api-b-0.sock", "api-b"),
            ("well-known-3.sock", "well-known"),
            ("x.sock", nil),
            ("-1.sock", nil),
            ("token-.sock", nil),
            ("token-1a.sock", nil),
            ("token-a.sock", nil),
            ("token-1.socket", nil),
            ("token-1.sock.bak", nil),
            ("token-1.SOCK", nil),
            ("token-1", nil),
            (".sock", nil),
            ("-.sock", nil),
            ("token-١.sock", nil),   // an Arabic-Indic digit is a number, but not ASCII
            ("token-².sock", nil),
            ("token-1.5.sock", nil),
            ("token- 1.sock", nil),
            ("", nil),
            (".", nil),
            ("..", nil),
        ]
        for (name, expected) in cases {
            XCTAssertEqual(ResponderSockets.endpoint(ofSocket: name), expected, name.debugDescription)
        }
    }

    // MARK: One slot

    func testAListeningSocketIsAnswering() throws {
        try listen("token-1.sock")
        XCTAssertEqual(ResponderSockets.state(of: path("token-1.sock")), .answering)
        // The probe connects and closes: probing again still answers.
        XCTAssertEqual(ResponderSockets.state(of: path("token-1.sock")), .answering)
    }

    func testASocketWhoseListenerClosedIsRefusing() throws {
        try deadSocket("token-1.sock")
        XCTAssertEqual(ResponderSockets.state(of: path("token-1.sock")), .refusing(errno: ECONNREFUSED))
    }

    func testABusySlotWithAFullBacklogStillCountsAsAnswering() throws {
        // Nobody accepts: once the backlog is full a non-blocking connect says
        // EAGAIN, which means the process is there, only busy.
        try listen("token-1.sock", backlog: 0)
        for attempt in 0..<4 {
            XCTAssertEqual(ResponderSockets.state(of: path("token-1.sock")), .answering, "attempt \(attempt)")
        }
    }

    func testWhatIsNotASocketRefuses() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path("token-1.sock"), contents: Data()))
        XCTAssertEqual(ResponderSockets.state(of: path("token-1.sock")), .refusing(errno: ECONNREFUSED), "a regular file")
        XCTAssertEqual(ResponderSockets.state(of: path("missing-1.sock")), .refusing(errno: ENOENT))
        let long = "/tmp/" + String(repeating: "d", count: 200) + "/token-1.sock"
        XCTAssertEqual(ResponderSockets.state(of: long), .refusing(errno: ENAMETOOLONG), "longer than sun_path")
    }

    // MARK: A folder

    func testProbeGroupsSlotsByEndpoint() throws {
        try listen("token-1.sock")
        try deadSocket("token-2.sock")
        try listen("token-3.sock")
        try listen("authorize-1.sock")
        try deadSocket("userinfo-1.sock")
        try listen("api-a-1.sock")
        try listen("api-a-2.sock")
        // Not slots: ignored whatever they are.
        try listen("notaslot.sock")
        try listen("token-x.sock")
        XCTAssertTrue(FileManager.default.createFile(atPath: path("README"), contents: Data()))
        XCTAssertTrue(FileManager.default.createFile(atPath: path("token-4.sock.lock"), contents: Data()))

        let pools = ResponderSockets.probe(directory: directory)
        XCTAssertEqual(Set(pools.keys), ["token", "authorize", "userinfo", "api-a"])
        XCTAssertEqual(pools["token"]?.count, 3)
        XCTAssertEqual(pools["token"]?.filter { $0 == .answering }.count, 2)
        XCTAssertEqual(pools["token"]?.filter { $0 == .refusing(errno: ECONNREFUSED) }.count, 1)
        XCTAssertEqual(pools["authorize"], [.answering])
        XCTAssertEqual(pools["userinfo"], [.refusing(errno: ECONNREFUSED)])
        XCTAssertEqual(pools["api-a"], [.answering, .answering])
    }

    func testProbeOfAnEmptyOrMissingFolderIsEmpty() {
        XCTAssertTrue(ResponderSockets.probe(directory: directory).isEmpty)
        XCTAssertTrue(ResponderSockets.probe(directory: path("missing")).isEmpty)
    }
}
