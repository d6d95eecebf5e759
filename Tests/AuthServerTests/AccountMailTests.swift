import Foundation
import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// The getting-in mails as AccountMail builds them: both parts from the
/// pages' catalogues in the request's language, the link whole in both, the
/// sender from GATEHOUSE_MAIL_FROM, and nothing from outside in a header of
/// its own. And the link tokens' shape.
final class AccountMailTests: XCTestCase {
    func serialized(_ mail: AccountMail, _ messages: Messages, from: String = "no-reply@id.example.com") throws -> String {
        let message = try mail.message(messages: messages, from: from, brandName: "Gatehouse", host: "id.example.com", now: 1_800_000_000)
        return String(decoding: message.serialized(), as: UTF8.self)
    }

    func decodedParts(_ text: String) -> String {
        // Quoted-printable soft breaks and =XX, enough to read the bodies.
        var bytes: [UInt8] = []
        let raw = Array(text.replacingOccurrences(of: "=\r\n", with: "").utf8)
        var index = 0
        while index < raw.count {
            if raw[index] == UInt8(ascii: "="), index + 2 < raw.count, let value = UInt8(String(decoding: raw[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(raw[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func testEveryKindHasBothPartsInBothLanguagesWithTheWholeLink() throws {
        let link = "https://id.example.com/login/reset?token=AAAAAAAAAAAAAAAAAAAAAA"
        for kind in [AccountMail.Kind.verification, .passwordReset, .invitation, .signUpNotice, .emailChange, .emailChangedNotice,
                     .emailTakenNotice] {
            for messages in [PageCatalogues.english, PageCatalogues.german] {
                let mail = AccountMail(kind: kind, recipient: "zoe@example.com", name: "Zoë <b>", link: link, values: ["email": "new@example.com"])
                let text = try serialized(mail, messages)
                XCTAssertTrue(text.contains("Content-Type: text/plain; charset=utf-8"), "\(kind)")
                XCTAssertTrue(text.contains("Content-Type: text/html; charset=utf-8"), "\(kind)")
                let body = decodedParts(text)
                XCTAssertEqual(body.components(separatedBy: link).count - 1, 3, "\(kind) \(messages.language): text, button, and the link written out")
                XCTAssertTrue(body.contains("Zoë &lt;b&gt;"), "the name escaped in the HTML part")
                XCTAssertFalse(body.range(of: #"(mail|getting_in)\.[a-z_.]+"#, options: .regularExpression) != nil, "\(kind) \(messages.language): a key shows")
                XCTAssertTrue(body.contains("lang=\"\(messages.language)\""))
            }
        }
        let german = decodedParts(try serialized(AccountMail(kind: .passwordReset, recipient: "a@example.com", name: "A", link: link),
                                                  PageCatalogues.german))
        XCTAssertTrue(german.contains("Der Link funktioniert einmal, 30 Minuten lang."))
    }

    /// The old address's notice names the new one, as text in the text part
    /// and escaped in the HTML part.
    func testTheChangedNoticeNamesTheNewAddressInBothParts() throws {
        let link = "https://id.example.com/login/email-revert?token=AAAAAAAAAAAAAAAAAAAAAA"
        let mail = AccountMail(kind: .emailChangedNotice, recipient: "old@example.com", name: "Old", link: link,
                               values: ["email": "new<x>@example.com"])
        let body = decodedParts(try serialized(mail, PageCatalogues.english))
        XCTAssertTrue(body.contains("was changed to new<x>@example.com. You now sign in"), body)
        XCTAssertTrue(body.contains("was changed to new&lt;x&gt;@example.com."), body)
        XCTAssertFalse(body.contains("{email}"))
        XCTAssertEqual(mail.kind.outboxKind, .notice)
        XCTAssertEqual(AccountMail.Kind.emailChange.outboxKind, .emailChange)
        XCTAssertTrue(MailMetricLabels.kinds.contains(OutboxMessageKind.emailChange.rawValue), "a metric label for every kind")
    }

    func testTheSenderIsTheSettingOrNoReplyAtTheIssuersHost() throws {
        XCTAssertEqual(IssuerSettings(issuer: "https://id.example.com:8443", lifetimes: .init(config: try GatehouseConfig(home: "/tmp", values: [:])))
                        .mailFrom, "no-reply@id.example.com")
        XCTAssertEqual(try AccountMail.sender("no-reply@id.example.com", brandName: "Gatehouse"),
                       try MailAddress("no-reply@id.example.com", displayName: "Gatehouse"))
        XCTAssertEqual(try AccountMail.sender("\"Example ID\" <id@example.com>", brandName: "Gatehouse"),
                       try MailAddress("id@example.com", displayName: "Example ID"))
        XCTAssertEqual(try AccountMail.sender("<id@example.com>", brandName: "Gatehouse"), try MailAddress("id@example.com"))
        let mail = AccountMail(kind: .verification, recipient: "a@example.com", name: "A", link: "https://id.example.com/x")
        XCTAssertTrue(try serialized(mail, PageCatalogues.english, from: "Example ID <id@example.com>").contains("From: Example ID <id@example.com>\r\n"))
    }

    func testANameMailAddressRefusesNeverReachesAHeader() throws {
        let mail = AccountMail(kind: .verification, recipient: "a@example.com", name: "Eve\r\nBcc: victim@example.org", link: "https://x.example/y")
        let text = try serialized(mail, PageCatalogues.english)
        let head = text.components(separatedBy: "\r\n\r\n")[0]
        XCTAssertTrue(head.contains("\r\nTo: a@example.com\r\n"), head)
        XCTAssertFalse(head.lowercased().contains("bcc"), head)
        XCTAssertThrowsError(try serialized(AccountMail(kind: .verification, recipient: "a@example.com\r\nBcc: v@example.org", name: "A",
                                                        link: "https://x.example/y"), PageCatalogues.english))
    }

    func testLinkTokensAre128RandomBitsAndOnlyTheirShapeIsLookedUp() {
        let tokens = (0..<100).map { _ in AccountLinkTokens.make() }
        XCTAssertEqual(Set(tokens).count, 100)
        for token in tokens {
            XCTAssertEqual(token.utf8.count, 22)
            XCTAssertEqual(Base64URL.decode(token)?.count, 16)
            XCTAssertEqual(AccountLinkTokens.hash(token), SecretHash.of(token))
        }
        for malformed in ["", "short", String(repeating: "A", count: 23), String(repeating: "A", count: 21) + "\u{0}", String(repeating: "+", count: 22)] {
            XCTAssertNil(AccountLinkTokens.hash(malformed), malformed.debugDescription)
        }
        XCTAssertEqual(AccountLinkTokens.lifetime(.verification), 86_400)
        XCTAssertEqual(AccountLinkTokens.lifetime(.passwordReset), 1_800)
        XCTAssertEqual(AccountLinkTokens.lifetime(.invitation), 604_800)
    }
}
