import Foundation
import XCTest
@testable import SSOCore

final class MailDropDirectoryTests: XCTestCase {
    private var home = ""

    override func setUpWithError() throws {
        home = NSTemporaryDirectory() + "gatehouse-mail-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: home)
    }

    private func message() throws -> MailMessage {
        try MailMessage(from: MailAddress("no-reply@localhost"), to: MailAddress("alice@example.org"), subject: "Hi",
                        text: "Hello\n.\n", html: "<p>Hello</p>", date: 1_795_860_420, messageIDDomain: "localhost")
    }

    func testWritesOneRFC5322FilePerMessageMode0600() throws {
        let drop = MailDropDirectory(path: home + "/mail")
        let mail = try message()
        let file = try drop.write(mail)
        let name = (file as NSString).lastPathComponent
        XCTAssertTrue(name.hasPrefix("20261128T100700Z-"), name)
        XCTAssertTrue(name.hasSuffix("@localhost.eml"), name)
        XCTAssertNil(name.range(of: "[^A-Za-z0-9._@-]", options: .regularExpression), name)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), Data(mail.serialized()))
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: home + "/mail")
        XCTAssertEqual((directory[.posixPermissions] as? NSNumber)?.intValue, 0o700)

        // A retry of the same message replaces its file; another message is another file; no temporary files stay.
        XCTAssertEqual(try drop.write(mail), file)
        _ = try drop.write(message())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home + "/mail").sorted().count, 2)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: home + "/mail").allSatisfy { $0.hasSuffix(".eml") })
    }

    func testAnUnwritableDirectoryIsAnErrorWithThePath() throws {
        _ = FileManager.default.createFile(atPath: home + "/file", contents: Data())
        XCTAssertThrowsError(try MailDropDirectory(path: home + "/file/mail").write(message())) {
            XCTAssertTrue("\($0)".contains(home + "/file/mail"), "\($0)")
        }
    }
}
