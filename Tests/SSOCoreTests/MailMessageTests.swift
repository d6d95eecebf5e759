import Foundation
import XCTest
@testable import SSOCore

final class MailMessageTests: XCTestCase {
    private let now: Int64 = 1_795_860_420  // Sat, 28 Nov 2026 10:07:00 UTC

    private func message(from: MailAddress? = nil, to: MailAddress? = nil, subject: String = "Verify your email address",
                         text: String = "Hello", html: String = "<p>Hello</p>") throws -> MailMessage {
        try MailMessage(from: from ?? MailAddress("no-reply@sso.example.com", displayName: "Gatehouse"),
                        to: to ?? MailAddress("alice@example.org"), subject: subject, text: text, html: html,
                        date: now, messageIDDomain: "sso.example.com")
    }

    func testStructureParsesBackToTheInputs() throws {
        let text = "Hallo Jürgen,\n\nbitte bestätigen Sie Ihre Adresse:\nhttps://sso.example.com/verify?t=abc\n"
        let html = "<p>Hallo J&uuml;rgen, bitte bestätigen Sie <a href=\"https://sso.example.com/verify?t=abc\">Ihre Adresse</a>.</p>"
        let mail = try message(to: MailAddress("juergen@example.org", displayName: "Jürgen Müller"),
                               subject: "Bitte bestätigen Sie Ihre Adresse", text: text, html: html)
        let parsed = try ParsedMail(mail.serialized())

        XCTAssertEqual(parsed.headerOrder, ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type"])
        XCTAssertEqual(parsed.headers["date"], "Sat, 28 Nov 2026 10:07:00 +0000")
        XCTAssertEqual(parsed.headers["from"], "Gatehouse <no-reply@sso.example.com>")
        XCTAssertEqual(try parsed.decoded("To"), "Jürgen Müller <juergen@example.org>")
        XCTAssertEqual(try parsed.decoded("Subject"), "Bitte bestätigen Sie Ihre Adresse")
        XCTAssertEqual(parsed.headers["message-id"], mail.messageID)
        XCTAssertEqual(parsed.headers["mime-version"], "1.0")
        XCTAssertTrue(parsed.headers["content-type"]!.hasPrefix("multipart/alternative; boundary=\""))

        XCTAssertEqual(parsed.parts.count, 2)
        XCTAssertEqual(parsed.parts[0].headers["content-type"], "text/plain; charset=utf-8")
        XCTAssertEqual(parsed.parts[1].headers["content-type"], "text/html; charset=utf-8")
        XCTAssertEqual(String(decoding: parsed.parts[0].body, as: UTF8.self), text.replacingOccurrences(of: "\n", with: "\r\n"))
        XCTAssertEqual(String(decoding: parsed.parts[1].body, as: UTF8.self), html)
    }

    /// Interop: Python's email package (another implementation, strict
    /// policy) reads the same subject, names and texts, with no defects.
    func testPythonsEmailParserReadsTheMessage() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let subject = String(repeating: "Grüße aus München ", count: 6) + "=?x?= \"q\""
        let text = "Hallo Jürgen,\n.\n" + String(repeating: "lang ", count: 40) + "\nEnde "
        let mail = try message(from: MailAddress("no-reply@localhost", displayName: "Doe, Jane"),
                               to: MailAddress("j@example.org", displayName: "Jürgen Müller-Lüdenscheidt"),
                               subject: subject, text: text, html: "<p>Grüße</p>")
        let script = """
            import email, email.policy, json, sys
            m = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.strict)
            parts = [p for p in m.walk() if not p.is_multipart()]
            defects = [str(d) for p in m.walk() for d in p.defects]
            print(json.dumps({"subject": str(m["subject"]), "from": [m["from"].addresses[0].display_name, m["from"].addresses[0].addr_spec],
                              "to": [m["to"].addresses[0].display_name, m["to"].addresses[0].addr_spec], "date": m["date"].datetime.timestamp(),
                              "types": [p.get_content_type() for p in parts], "texts": [p.get_content() for p in parts], "defects": defects}))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(mail.serialized()))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let read = try XCTUnwrap(JSONSerialization.jsonObject(with: printed) as? [String: Any])
        XCTAssertEqual(read["subject"] as? String, subject)
        XCTAssertEqual(read["from"] as? [String], ["Doe, Jane", "no-reply@localhost"])
        XCTAssertEqual(read["to"] as? [String], ["Jürgen Müller-Lüdenscheidt", "j@example.org"])
        XCTAssertEqual(read["date"] as? Double, Double(now))
        XCTAssertEqual(read["types"] as? [String], ["text/plain", "text/html"])
        // Quoted-printable's hard line breaks are CRLF, and stay CRLF decoded.
        XCTAssertEqual(read["texts"] as? [String], [text.replacingOccurrences(of: "\n", with: "\r\n"), "<p>Grüße</p>"])
        XCTAssertEqual(read["defects"] as? [String], [])
    }

    func testEveryLineEndsInCRLFAndFitsSeventySixCharacters() throws {
        let mail = try message(to: MailAddress("juergen@example.org", displayName: String(repeating: "Müller-Lüdenscheidt ", count: 6)),
                               subject: String(repeating: "Grüße aus München und Köln, ", count: 8),
                               text: String(repeating: "x", count: 500) + "\n" + String(repeating: "ÄÖÜß ", count: 80),
                               html: String(repeating: "<p>é</p>", count: 100))
        for line in try crlfLines(mail.serialized()) {
            XCTAssertLessThanOrEqual(line.utf8.count, 76, line)
        }
    }

    /// RFC 2047: non-ASCII text only in encoded-words of at most 75
    /// characters, each a whole number of characters, folded onto lines of
    /// at most 76.
    func testGermanUmlautsInSubjectAndNameAreEncodedWords() throws {
        let subject = String(repeating: "Bestätigung für Jürgen Größe ", count: 5)
        let name = "Jürgen Ä. Müller-Weiß"
        let mail = try message(to: MailAddress("j@example.org", displayName: name), subject: subject)
        let parsed = try ParsedMail(mail.serialized())
        XCTAssertEqual(try parsed.decoded("Subject"), subject)
        XCTAssertEqual(try parsed.decoded("To"), "\(name) <j@example.org>")

        let lines = try crlfLines(mail.serialized())
        let subjectLines = lines.drop { !$0.hasPrefix("Subject:") }.prefix { $0.hasPrefix("Subject:") || $0.hasPrefix(" ") }
        XCTAssertGreaterThan(subjectLines.count, 2, "a long subject folds")
        for line in subjectLines {
            XCTAssertTrue(line.utf8.allSatisfy { $0 < 128 }, line)
            for word in line.split(separator: " ") where word.hasPrefix("=?") {
                XCTAssertLessThanOrEqual(word.count, 75)
                XCTAssertTrue(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="), String(word))
                // Each word decodes on its own: no character split across words.
                let payload = word.dropFirst(10).dropLast(2)
                let bytes = try XCTUnwrap(Data(base64Encoded: String(payload)))
                XCTAssertNotNil(String(bytes: bytes, encoding: .utf8))
            }
        }
    }

    func testASCIIHeadersStayReadable() throws {
        let mail = try message(from: MailAddress("no-reply@localhost", displayName: "Doe, \"Jay\" \\ Co"),
                               to: MailAddress("bob@example.org", displayName: "Bob Smith"), subject: "Reset your password")
        let parsed = try ParsedMail(mail.serialized())
        XCTAssertEqual(parsed.headers["subject"], "Reset your password")
        XCTAssertEqual(parsed.headers["to"], "Bob Smith <bob@example.org>")
        XCTAssertEqual(parsed.headers["from"], "\"Doe, \\\"Jay\\\" \\\\ Co\" <no-reply@localhost>")
        // Text that looks like an encoded-word is encoded, so no client decodes it as one.
        let tricky = try ParsedMail(message(subject: "=?UTF-8?B?SGk=?=").serialized())
        XCTAssertNotEqual(tricky.headers["subject"], "=?UTF-8?B?SGk=?=")
        XCTAssertEqual(try tricky.decoded("Subject"), "=?UTF-8?B?SGk=?=")
        XCTAssertEqual(try ParsedMail(message(subject: "").serialized()).headers["subject"], "")
    }

    func testControlCharactersAreRefusedInEveryHeaderInput() throws {
        for control in ["\r", "\n", "\r\n", "\0", "\t", "\u{7F}", "\u{85}", "\u{2028}"] {
            let injected = "Hi\(control)Bcc: eve@evil.example"
            XCTAssertThrowsError(try message(subject: injected)) {
                XCTAssertEqual(($0 as? MailMessageError)?.code, .invalidSubject)
                XCTAssertFalse("\($0)".contains("evil"), "the detail does not repeat the refused value")
            }
            XCTAssertThrowsError(try MailAddress("a@example.org", displayName: injected)) {
                XCTAssertEqual(($0 as? MailMessageError)?.code, .invalidDisplayName)
            }
            XCTAssertThrowsError(try MailAddress("a\(control)@example.org"))
            XCTAssertThrowsError(try MailAddress("a@example.org\(control)"))
            XCTAssertThrowsError(try MailMessage(from: MailAddress("a@example.org"), to: MailAddress("b@example.org"), subject: "s",
                                                 text: "", html: "", date: now, messageIDDomain: "example.org\(control)x"))
        }
    }

    func testAddressesAreConservativeAddrSpecs() throws {
        let refused = ["", "a", "@example.org", "a@", "a b@example.org", "\"a\"@example.org", "<a@example.org>",
                       "a,b@example.org", "a@b@example.org", ".a@example.org", "a.@example.org", "a..b@example.org",
                       "a@example..org", "a@-example.org", "a@example-.org", "a@example.org.", "a@[192.0.2.1]",
                       "a@exa_mple.org", "jü@example.org", "a@bücher.de", "a@example.org>", "a(b)@example.org",
                       String(repeating: "a", count: 65) + "@example.org",
                       "a@" + String(repeating: "b", count: 64) + ".org",
                       "a@" + Array(repeating: String(repeating: "b", count: 60), count: 5).joined(separator: ".")]
        for address in refused {
            XCTAssertThrowsError(try MailAddress(address), address) {
                XCTAssertEqual(($0 as? MailMessageError)?.code, .invalidAddress, address)
            }
        }
        let accepted = ["no-reply@localhost", "o'brien+tag@mail.example.co.uk", "a@xn--bcher-kva.de", "A.B-c_d@Example.ORG",
                        String(repeating: "a", count: 64) + "@example.org"]
        for address in accepted {
            XCTAssertNoThrow(try MailAddress(address), address)
        }
        XCTAssertNil(try MailAddress("a@example.org", displayName: "").displayName)
    }

    func testMessageIDIsRandomAtTheGivenHost() throws {
        let first = try message(), second = try message()
        XCTAssertNotNil(first.messageID.range(of: "^<[A-Za-z0-9_-]{24}@sso\\.example\\.com>$", options: .regularExpression), first.messageID)
        XCTAssertNotEqual(first.messageID, second.messageID)
        XCTAssertNotEqual(try ParsedMail(first.serialized()).headers["content-type"],
                          try ParsedMail(second.serialized()).headers["content-type"], "a boundary per message")
    }

    func testLongLinesAreSoftBrokenAndDecodeToTheOriginal() throws {
        let text = String(repeating: "a", count: 300) + "\n" + String(repeating: "ü", count: 100) + "\n"
            + String(repeating: "b", count: 74) + "=" + "\n" + String(repeating: "c ", count: 60)
        let mail = try message(text: text)
        let parsed = try ParsedMail(mail.serialized())
        XCTAssertEqual(String(decoding: parsed.parts[0].body, as: UTF8.self), text.replacingOccurrences(of: "\n", with: "\r\n"))
        for line in try crlfLines(mail.serialized()) {
            XCTAssertLessThanOrEqual(line.utf8.count, 76)
            XCTAssertFalse(line.hasSuffix(" ") || line.hasSuffix("\t"), "RFC 2045 §6.7 (3): no trailing white space: \(line)")
        }
    }

    /// SMTP ends the data at a line that is only "." (RFC 5321 §4.5.2);
    /// no line of the message starts with one, so neither a missing
    /// dot-stuffing nor a file read back can cut it short.
    func testABodyLineThatIsOnlyADotSurvives() throws {
        let text = "first\n.\nlast\n..two dots\n" + String(repeating: "x", count: 75) + ".tail"
        let mail = try message(text: text, html: ".\n<p>.</p>")
        for line in try crlfLines(mail.serialized()) {
            XCTAssertFalse(line.hasPrefix("."), line)
        }
        let parsed = try ParsedMail(mail.serialized())
        XCTAssertEqual(String(decoding: parsed.parts[0].body, as: UTF8.self), text.replacingOccurrences(of: "\n", with: "\r\n"))
        XCTAssertEqual(String(decoding: parsed.parts[1].body, as: UTF8.self), ".\r\n<p>.</p>")
    }

    func testLineEndsOfEveryKindBecomeCRLF() throws {
        let parsed = try ParsedMail(message(text: "a\r\nb\rc\nd\r\n\r\ne").serialized())
        XCTAssertEqual(String(decoding: parsed.parts[0].body, as: UTF8.self), "a\r\nb\r\nc\r\nd\r\n\r\ne")
    }

    /// RFC 5322 §3.3 date-time, in UTC whatever the process's time zone.
    func testDateFormat() {
        XCTAssertEqual(MailDate.rfc5322(0), "Thu, 1 Jan 1970 00:00:00 +0000")
        XCTAssertEqual(MailDate.rfc5322(now), "Sat, 28 Nov 2026 10:07:00 +0000")
        XCTAssertEqual(MailDate.rfc5322(1_709_211_661), "Thu, 29 Feb 2024 13:01:01 +0000")
        XCTAssertEqual(MailDate.compact(1_709_211_661), "20240229T130101Z")
    }
}
