import XCTest
@testable import AuthServer
import IssuerStorage
import SSOCore

/// Recovery codes: their form, the sign-in that takes one in place of a
/// TOTP code (single use, throttled, amr), and their life with the
/// enrolment.
final class RecoveryCodeTests: SignInTestCase {
    typealias H = SignInHarness
    let bob = "bob@example.com"

    // MARK: The codes themselves

    func testTenDistinctCodesOfEightyBitsInGroupsOfFour() {
        let codes = RecoveryCodes.generate()
        XCTAssertEqual(codes.count, 10)
        XCTAssertEqual(Set(codes).count, 10)
        for code in codes {
            XCTAssertNotNil(code.range(of: "^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$", options: .regularExpression), code)
        }
    }

    func testTypingIsForgivingButOnlyAboutCaseSeparatorsAndLookalikes() throws {
        let hash = try XCTUnwrap(RecoveryCodes.hash("0123-4567-89ab-cdef"))
        for typed in ["0123456789abcdef", "0123 4567 89AB CDEF", "o123-4567-89ab-cdef", "0I23-4567-89ab-cdef", "0l23-4567-89ab-cdef"] {
            XCTAssertEqual(RecoveryCodes.hash(typed), hash, typed)
        }
        for typed in ["", "0123-4567-89ab-cde", "0123-4567-89ab-cdef0", "0123-4567-89ab-cdeu", "0123-4567-89ab-cde\u{0}f",
                      "0123-4567-89ab-cdéf", String(repeating: "-", count: 100) + "0123456789abcdef"] {
            XCTAssertNil(RecoveryCodes.hash(typed), typed.debugDescription)
        }
    }

    // MARK: Signing in with one

    /// The password step, then a recovery code.
    func signInWithRecoveryCode(_ code: String, file: StaticString = #filePath, line: UInt = #line) throws -> (PendingLogin, Response) {
        let pending = try harness.startLogin(file: file, line: line)
        XCTAssertEqual(harness.login(pending, email: bob, password: H.otherPassword, file: file, line: line).location,
                       harness.codePage(pending), file: file, line: line)
        return (pending, harness.submitCode(pending, nil, extra: [("recovery_code", code)], file: file, line: line))
    }

    func enrolWithCodes() throws -> (User, [String]) {
        let (user, _) = try harness.addUser(bob, totp: true)
        return (user, try XCTUnwrap(harness.totpStore.newRecoveryCodes(userID: user.id)))
    }

    func testARecoveryCodeSignsInOnceWithAmrPwdMfa() throws {
        let (user, codes) = try enrolWithCodes()
        let (_, response) = try signInWithRecoveryCode(codes[3].uppercased())
        XCTAssertEqual(response.locationBase, H.customSchemeRedirect, response.location ?? "")
        let cookie = try XCTUnwrap(response.cookie("sso_session"))
        let session = try XCTUnwrap(harness.sessions.find(secret: cookie.value))
        XCTAssertEqual(session.amr, ["pwd", "mfa"])
        XCTAssertEqual(session.acr, "urn:gatehouse:mfa")
        XCTAssertEqual(try harness.totpStore.recoveryCodesLeft(userID: user.id), 9)

        let (pending, again) = try signInWithRecoveryCode(codes[3])
        XCTAssertEqual(again.location, harness.codePage(pending, error: "invalid_recovery_code") + "&recovery=1", "used once")
        XCTAssertNil(again.cookie("sso_session"))
        XCTAssertEqual(try harness.totpStore.recoveryCodesLeft(userID: user.id), 9)
    }

    func testAWrongCodeCountsAgainstTheAccountAndAMalformedOneChangesNothing() throws {
        let (_, codes) = try enrolWithCodes()
        let before = try issuer.count("sso_sessions")
        let (pending, wrong) = try signInWithRecoveryCode("zzzz-zzzz-zzzz-zzzz")
        XCTAssertEqual(wrong.location, harness.codePage(pending, error: "invalid_recovery_code") + "&recovery=1")
        XCTAssertEqual(try issuer.count("login_throttle") > 0, true, "the failure is counted")
        try assertDatabaseUnchanged("a malformed code is refused before the throttle") {
            XCTAssertEqual(harness.submitCode(pending, nil, extra: [("recovery_code", "not a code")]).location,
                           harness.codePage(pending, error: "invalid_recovery_code") + "&recovery=1")
        }
        XCTAssertEqual(try issuer.count("sso_sessions"), before)
        XCTAssertNotNil(try signInWithRecoveryCode(codes[0]).1.cookie("sso_session"), "a right code still works")
    }

    func testAnotherAccountsCodeAndTheOldSetAreRefused() throws {
        let (_, bobCodes) = try enrolWithCodes()
        let carol = try harness.addUser("carol@example.com", totp: true).user
        let carolCodes = try XCTUnwrap(harness.totpStore.newRecoveryCodes(userID: carol.id))
        XCTAssertEqual(try signInWithRecoveryCode(carolCodes[0]).1.locationQuery["code"], nil, "carol's code is not bob's")
        let bobID = try XCTUnwrap(issuer.users.find(email: bob)).id
        _ = try harness.totpStore.newRecoveryCodes(userID: bobID)
        XCTAssertNil(try signInWithRecoveryCode(bobCodes[1]).1.cookie("sso_session"), "a new set voids the old one")
    }

    func testRemovingTOTPRemovesTheCodesAndNewCodesNeedAnEnrolment() throws {
        let (user, _) = try enrolWithCodes()
        XCTAssertTrue(try harness.accountChanges.removeTOTP(email: bob).removed)
        XCTAssertEqual(try harness.totpStore.recoveryCodesLeft(userID: user.id), 0)
        XCTAssertNil(try harness.totpStore.newRecoveryCodes(userID: user.id), "no TOTP, no recovery codes")
        XCTAssertEqual(try issuer.count("totp_recovery_codes"), 0)
    }

    func testOnlyHashesAreStored() throws {
        let (_, codes) = try enrolWithCodes()
        let stored = try harness.database.query("SELECT code_hash FROM totp_recovery_codes").map { $0.bytes(0) }
        XCTAssertEqual(Set(stored), Set(codes.compactMap { RecoveryCodes.hash($0) }))
        for code in codes { XCTAssertFalse(stored.contains(Array(code.utf8))) }
    }
}
