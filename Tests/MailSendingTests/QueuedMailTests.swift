import SSOCore
import XCTest
@testable import MailSending

/// The envelope the sender reads back from stored bytes.
final class QueuedMailTests: XCTestCase {
    func testTheEnvelopeComesFromTheStoredHeaders() throws {
        let message = try MailMessage(from: MailAddress("no-reply@sso.example.com", displayName: "Ünïcode <Support> \"Team\", with a long name"),
                                      to: MailAddress("bob@example.org", displayName: "Bob"), subject: "Hi", text: "t", html: "h",
                                      date: 1_800_000_000, messageIDDomain: "sso.example.com")
        let queued = try QueuedMail(bytes: message.serialized(), recipient: "bob@example.org")
        XCTAssertEqual(queued.from.address, "no-reply@sso.example.com")
        XCTAssertNil(queued.from.displayName)
        XCTAssertEqual(queued.to.address, "bob@example.org")
        XCTAssertEqual(queued.messageID, message.messageID)
        XCTAssertEqual(queued.bytes, message.serialized())
    }

    func testFoldedAndBareFieldsAreRead() throws {
        let bytes = Array("Message-ID:\r\n <abc@example.com>\r\nfrom: a@example.com\r\n\r\nFrom: evil@example.net\r\n".utf8)
        let queued = try QueuedMail(bytes: bytes, recipient: "b@example.com")
        XCTAssertEqual(queued.messageID, "<abc@example.com>")
        XCTAssertEqual(queued.from.address, "a@example.com", "the body's lines are no headers")
    }

    func testWhatCannotBeSentIsRefused() {
        let cases: [(String, String)] = [
            ("Subject: x\r\n\r\n", "b@example.com"),
            ("From: a@example.com\r\n\r\n", "b@example.com"),
            ("From: a@example.com\r\nMessage-ID: <a b@c>\r\n\r\n", "b@example.com"),
            ("From: <a@example.com>\r\nMessage-ID: <x@y>\r\n\r\n", "b@example.com\r\nDATA"),
            ("From: <a@example.com\r\n .evil>\r\nMessage-ID: <x@y>\r\n\r\n", "b@example.com"),
        ]
        for (text, recipient) in cases {
            XCTAssertThrowsError(try QueuedMail(bytes: Array(text.utf8), recipient: recipient), text)
        }
    }
}
