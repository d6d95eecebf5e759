import Foundation
import Glibc
import SSOCore
import XCTest
@testable import SMTPClient

final class SMTPTransportTests: XCTestCase {
    private func message() throws -> MailMessage {
        try MailMessage(from: MailAddress("no-reply@localhost", displayName: "Gatehouse"),
                        to: MailAddress("alice@example.org", displayName: "Älice"), subject: "Grüße",
                        text: "Hello\n.\nbye", html: "<p>Hello</p>", date: 1_795_860_420, messageIDDomain: "localhost")
    }

    // MARK: GATEHOUSE_SMTP_URL

    func testURLSchemesPortsAndTLS() throws {
        let submission = try SMTPServerURL("smtp://mailer:s3cr%40t@mail.example.com:587")
        XCTAssertEqual(submission.host, "mail.example.com")
        XCTAssertEqual(submission.port, 587)
        XCTAssertEqual(submission.security, .startTLSRequired)
        XCTAssertEqual(submission.username, "mailer")
        XCTAssertEqual(submission.password, "s3cr@t")
        XCTAssertEqual(submission.description, "smtp://mail.example.com:587")

        XCTAssertEqual(try SMTPServerURL("smtp://mail.example.com").port, 25)
        let implicit = try SMTPServerURL("SMTPS://mail.example.com")
        XCTAssertEqual(implicit.port, 465)
        XCTAssertEqual(implicit.security, .implicitTLS)
        XCTAssertEqual(try SMTPServerURL("smtps://127.0.0.1:465").security, .implicitTLS, "smtps is TLS even on loopback")
        XCTAssertEqual(try SMTPServerURL("smtp://127.0.0.1:2525/gatehouse.example").curlURL, "smtp://127.0.0.1:2525/gatehouse.example")
        XCTAssertNil(try SMTPServerURL("smtp://mail.example.com").username)
    }

    func testLoopbackServersGetSTARTTLSIfOfferedAndNoOtherDoes() throws {
        for host in ["127.0.0.1", "127.1.2.3", "[::1]", "localhost", "LocalHost", "[::ffff:127.0.0.1]"] {
            XCTAssertEqual(try SMTPServerURL("smtp://\(host):2525").security, .startTLSIfOffered, host)
        }
        for host in ["128.0.0.1", "10.0.0.1", "[::2]", "localhost.example.com", "mail.example.com", "127.0.0.1.nip.io", "0.0.0.0"] {
            XCTAssertEqual(try SMTPServerURL("smtp://\(host):2525").security, .startTLSRequired, host)
        }
        XCTAssertEqual(try SMTPServerURL("smtp://[::1]:2525").description, "smtp://[::1]:2525")
    }

    func testBadURLsAreRefusedWithoutRepeatingThem() {
        for url in ["", "http://mail.example.com", "smtp://", "smtp://:pw@/", "smtp://host:0", "smtp://host:70000",
                    "smtp://host?x=1", "smtp://host#f", "smtp://host/not a name", "mail.example.com:25",
                    "smtp://:hunter2@host"] {
            XCTAssertThrowsError(try SMTPServerURL(url), url) {
                XCTAssertFalse("\($0)".contains("hunter2"), "\($0)")
            }
        }
    }

    func testCredentialsNeverAppearInADescriptionOrADetail() throws {
        let transport = try SMTPTransport(url: "smtp://mailer:hunter2@127.0.0.1:\(closedPort())")
        XCTAssertEqual(transport.description, "SMTPTransport(smtp://127.0.0.1:\(transport.server.port), STARTTLS if offered, with credentials)")
        XCTAssertFalse("\(transport.server)".contains("hunter2"))
        XCTAssertFalse(String(reflecting: transport.server.description).contains("mailer"))
        guard case .temporaryFailure(let detail) = transport.deliver(try message()) else {
            return XCTFail("a closed port is a temporary failure")
        }
        XCTAssertFalse(detail.contains("hunter2") || detail.contains("mailer"), detail)
    }

    // MARK: Deliveries

    func testAClosedLoopbackPortIsATemporaryFailure() throws {
        let port = try closedPort()
        let delivery = try SMTPTransport(url: "smtp://127.0.0.1:\(port)").deliver(message())
        guard case .temporaryFailure(let detail) = delivery else { return XCTFail("\(delivery)") }
        XCTAssertTrue(detail.contains("smtp://127.0.0.1:\(port)"), detail)
    }

    func testA250IsDeliveredWithTheMessageAsTheData() throws {
        let server = try TinySMTPServer(rcptReply: "250 OK", dataReply: "250 queued")
        let mail = try message()
        XCTAssertEqual(try SMTPTransport(url: "smtp://127.0.0.1:\(server.port)").deliver(mail), .delivered)
        let session = server.finish()
        XCTAssertTrue(session.commands.contains("MAIL FROM:<no-reply@localhost>"), "\(session.commands)")
        XCTAssertTrue(session.commands.contains("RCPT TO:<alice@example.org>"), "\(session.commands)")
        // The data as sent, SMTP's transparency undone (RFC 5321 §4.5.2), is the message.
        let data = try XCTUnwrap(session.data)
        XCTAssertTrue(data.hasSuffix("\r\n.\r\n"))
        let unstuffed = String(data.utf8.dropLast(3))!.replacingOccurrences(of: "\r\n..", with: "\r\n.")
        XCTAssertEqual(Array(unstuffed.utf8), mail.serialized())
    }

    /// The outbox's path: the stored bytes go out unchanged, the envelope
    /// read from them and the row (so a retry is the same message).
    func testAQueuedMessageIsSentAsStoredWithItsOwnEnvelope() throws {
        let stored = try message().serialized()
        let queued = try QueuedMail(bytes: stored, recipient: "bob@example.net")
        let server = try TinySMTPServer(rcptReply: "250 OK", dataReply: "250 queued")
        XCTAssertEqual(try SMTPTransport(url: "smtp://127.0.0.1:\(server.port)").deliver(queued), .delivered)
        let session = server.finish()
        XCTAssertTrue(session.commands.contains("MAIL FROM:<no-reply@localhost>"), "\(session.commands)")
        XCTAssertTrue(session.commands.contains("RCPT TO:<bob@example.net>"), "the row's recipient: \(session.commands)")
        let data = try XCTUnwrap(session.data)
        let unstuffed = String(data.utf8.dropLast(3))!.replacingOccurrences(of: "\r\n..", with: "\r\n.")
        XCTAssertEqual(Array(unstuffed.utf8), stored)
    }

    func testAnUnreadableCAFileIsATemporaryFailureNamingIt() throws {
        let transport = try SMTPTransport(url: "smtp://127.0.0.1:\(closedPort())", caFiles: ["/nonexistent/ca.pem"])
        guard case .temporaryFailure(let detail) = transport.deliver(try message()) else { return XCTFail("not temporary") }
        XCTAssertTrue(detail.contains("/nonexistent/ca.pem"), detail)
    }

    func testTrustedCAFilesAreTheConfiguredOneAndTheLocalCA() {
        XCTAssertEqual(TrustedCAFiles.of(home: "/h", environment: [:], fileExists: { _ in false }), [])
        XCTAssertEqual(TrustedCAFiles.of(home: "/h", environment: ["GATEHOUSE_CA_FILE": "/etc/x.pem"], fileExists: { _ in true }),
                       ["/etc/x.pem", "/h/tls/ca.pem"])
        XCTAssertEqual(TrustedCAFiles.of(home: "/h", environment: ["GATEHOUSE_CA_FILE": "/h/tls/ca.pem"], fileExists: { _ in true }),
                       ["/h/tls/ca.pem"])
    }

    /// RFC 5321 §4.2.1: a 4yz reply (to RCPT, or after the data) is worth
    /// a retry; a 5yz reply is final.
    func testTheServersReplyDecidesTemporaryOrPermanent() throws {
        let cases: [(rcpt: String, data: String, permanent: Bool, code: String)] = [
            ("451 4.3.0 try later", "250 queued", false, "451"),
            ("250 OK", "452 4.3.1 out of space", false, "452"),
            ("550 5.1.1 no such user", "250 queued", true, "550"),
            ("250 OK", "554 5.6.0 refused", true, "554"),
        ]
        for scenario in cases {
            let server = try TinySMTPServer(rcptReply: scenario.rcpt, dataReply: scenario.data)
            let delivery = try SMTPTransport(url: "smtp://127.0.0.1:\(server.port)").deliver(message())
            _ = server.finish()
            switch delivery {
            case .temporaryFailure(let detail) where !scenario.permanent, .permanentFailure(let detail) where scenario.permanent:
                XCTAssertTrue(detail.contains(scenario.code), detail)
            default:
                XCTFail("\(scenario.code): \(delivery)")
            }
        }
    }

    func testSTARTTLSIsRequiredAwayFromLoopback() {
        // The classification a refused STARTTLS gets; the requirement
        // itself is CURLUSESSL_ALL, set for every non-loopback smtp URL.
        XCTAssertEqual(SMTPTransport.classify(reply: 250, loginRefused: false, detail: "d"), .temporaryFailure(detail: "d"))
        XCTAssertEqual(SMTPTransport.classify(reply: 0, loginRefused: false, detail: "d"), .temporaryFailure(detail: "d"))
        XCTAssertEqual(SMTPTransport.classify(reply: 535, loginRefused: true, detail: "d"), .temporaryFailure(detail: "d"))
        XCTAssertEqual(SMTPTransport.classify(reply: 554, loginRefused: false, detail: "d"), .permanentFailure(detail: "d"))
    }

    /// A loopback port nothing listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let listener = try TinySMTPServer.listeningSocket()
        defer { close(listener.fd) }
        return listener.port
    }
}

/// Just enough of an SMTP server (RFC 5321) for one session on a thread:
/// 220 greeting, EHLO without STARTTLS or AUTH, MAIL, RCPT with the reply
/// given, DATA to the lone "." line, the reply given, QUIT.
private final class TinySMTPServer {
    struct Session {
        var commands: [String] = []
        var data: String?
    }

    let port: Int
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private var session = Session()

    init(rcptReply: String, dataReply: String) throws {
        (listener, port) = try Self.listeningSocket()
        let thread = Thread { [self] in
            serve(rcptReply: rcptReply, dataReply: dataReply)
            done.signal()
        }
        thread.start()
    }

    /// Waits for the session to end (10 s at most) and returns what the client sent.
    func finish() -> Session {
        _ = done.wait(timeout: .now() + 10)
        close(listener)
        return session
    }

    static func listeningSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ParseFailure("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { close(fd); throw ParseFailure("bind") }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private func serve(rcptReply: String, dataReply: String) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func send(_ line: String) { _ = Array((line + "\r\n").utf8).withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        var buffer: [UInt8] = []
        func receive() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            buffer += chunk.prefix(count)
            return true
        }
        func line() -> String? {
            while true {
                if let end = buffer.firstIndex(of: 10), end > 0, buffer[end - 1] == 13 {
                    let text = String(decoding: buffer[..<(end - 1)], as: UTF8.self)
                    buffer.removeSubrange(...end)
                    return text
                }
                guard receive() else { return nil }
            }
        }
        send("220 tiny ESMTP")
        while let command = line() {
            session.commands.append(command)
            let verb = command.prefix(4).uppercased()
            switch verb {
            case "EHLO": send("250-tiny"); send("250 8BITMIME")
            case "HELO", "RSET", "NOOP": send("250 OK")
            case "MAIL": send("250 OK")
            case "RCPT": send(rcptReply)
            case "DATA":
                send("354 go ahead")
                let end = Array("\r\n.\r\n".utf8)
                while !(buffer.count >= end.count && Array(buffer.suffix(end.count)) == end) {
                    guard receive() else { return }
                }
                session.data = String(decoding: buffer, as: UTF8.self)
                buffer = []
                send(dataReply)
            case "QUIT": send("221 bye"); return
            default: send("502 not here")
            }
        }
    }
}

private struct ParseFailure: Error {
    let what: String
    init(_ what: String) { self.what = what }
}
