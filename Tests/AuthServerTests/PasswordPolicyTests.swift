import XCTest
@testable import AuthServer

/// NIST SP 800-63B §5.1.1.2 as PasswordPolicy applies it: length in Unicode
/// code points, 8 to 256; any character; no composition rules; the shipped
/// list of 10,000 common passwords and the account's email refused, case
/// folded.
final class PasswordPolicyTests: XCTestCase {
    let email = "Alice@Example.com"

    func reason(_ password: String) -> PasswordRefusal.Reason? { PasswordPolicy.refusal(of: password, email: email)?.reason }

    func testTheShippedListHoldsTenThousandDistinctPasswords() {
        XCTAssertEqual(CommonPasswords.all.count, 10_000)
        for common in ["password", "12345678", "baseball", "trustno1", "iloveyou"] {
            XCTAssertTrue(CommonPasswords.contains(common), common)
        }
    }

    func testLengthIsCountedInCodePointsFrom8To256() {
        XCTAssertEqual(reason("7 chars"), .tooShort)
        XCTAssertNil(reason("8 chars!"))
        // Four code points of four UTF-8 bytes each are still four characters.
        XCTAssertEqual(reason("𝄞𝄞𝄞𝄞𝄞𝄞𝄞"), .tooShort)
        XCTAssertNil(reason("𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞"))
        // "é" as e + combining accent is two code points (one grapheme).
        XCTAssertNil(reason(String(repeating: "e\u{301}", count: 4)), "8 code points, 4 graphemes")
        XCTAssertNil(reason(String(repeating: "x", count: 256)))
        XCTAssertEqual(reason(String(repeating: "x", count: 257)), .tooLong)
        XCTAssertNil(reason(String(repeating: "😀", count: 256)), "1,024 bytes, 256 code points")
    }

    func testAnyCharacterAndNoCompositionRules() {
        for fine in ["all lower case words", "ALLUPPERCASE", "0123456789012", "  spaces  ", "tab\tand\u{0}nul", "пароль-пароль", "密码密码密码密码"] {
            XCTAssertNil(reason(fine), fine.debugDescription)
        }
    }

    func testCommonPasswordsAndTheEmailAreRefusedWhateverTheirCase() {
        XCTAssertEqual(reason("password"), .common)
        XCTAssertEqual(reason("PassWord"), .common)
        XCTAssertEqual(reason("BASEBALL"), .common)
        XCTAssertEqual(reason("alice@example.com"), .email)
        XCTAssertEqual(reason("ALICE@EXAMPLE.COM"), .email)
        XCTAssertNil(reason("alice@example.com!"), "only the address itself")
        XCTAssertEqual(PasswordPolicy.refusal(of: "password", email: "")?.reason, .common)
    }

    func testEveryRefusalHasAMessageInBothCatalogues() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for language in ["en", "de"] {
            let data = try Data(contentsOf: root.appendingPathComponent("www/locales/\(language).json"))
            let texts = try JSONDecoder().decode([String: String].self, from: data)
            for reason in [PasswordRefusal.Reason.tooShort, .tooLong, .common, .email] {
                XCTAssertNotNil(texts[PasswordRefusal(reason: reason).messageKey], "\(language) \(reason)")
            }
        }
    }

    func testSSOCtlSeesTheReason() throws {
        XCTAssertThrowsError(try PasswordPolicy.check("letmein1", email: email)) { error in
            XCTAssertEqual("\(error)", "the password is one of the 10,000 most common passwords; choose another")
        }
    }
}
